"""float32 matrix products at skinny and transposed shapes against a float64 reference.

Skinny products (M or N at most 64: Linear layers at a small batch, their weight gradients) and
transposed or sliced operands reach every remainder of sgemm's blocking (Note [SGEMM]): row tiles
of 6, column panels of 64 and vectors of 16, k blocks of 256, row blocks of 192, column blocks of
1024, and the serial / threaded split. Results must also be bitwise the same at 1, 2 and 3
threads."""

import numpy as np
import pytest

import ember

# (M, N, K): remainders of 6 rows, 16 / 64 columns, 256 k, 192 rows, 1024 columns.
SHAPES = [
    (1, 1, 1),
    (5, 17, 3),
    (6, 64, 256),
    (7, 65, 257),
    (13, 33, 511),
    (16, 1024, 1024),
    (32, 1500, 300),
    (64, 64, 4096),
    (193, 15, 129),
    (1024, 16, 1024),
    (2048, 64, 64),
    (600, 31, 700),
    (3, 2100, 40),
    (385, 1030, 260),
]


def _operands(m, n, k, ta, tb, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    a_ = a.T if ta else a
    b_ = b.T if tb else b
    ea, eb = ember.tensor(a), ember.tensor(b)
    return (
        (ea.t() if ta else ea),
        (eb.t() if tb else eb),
        a_.astype(np.float64) @ b_.astype(np.float64),
        np.abs(a_).astype(np.float64) @ np.abs(b_).astype(np.float64),
    )


def _check(got, ref, bound):
    # float32 accumulation: each output is within a few k * eps of the sum of |terms|.
    k_eps = 4e-7 * 64
    assert got.shape == ref.shape
    err = np.abs(got.astype(np.float64) - ref)
    assert (err <= k_eps * bound + 1e-6).all(), float((err / (bound + 1e-30)).max())


@pytest.mark.parametrize("ta", [False, True], ids=["a", "aT"])
@pytest.mark.parametrize("tb", [False, True], ids=["b", "bT"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_matches_float64(shape, ta, tb):
    m, n, k = shape
    a, b, ref, bound = _operands(m, n, k, ta, tb, 0)
    _check(ember.mm(a, b).numpy(), ref, bound)


@pytest.mark.parametrize("shape", [(7, 65, 257), (64, 64, 4096), (1024, 16, 1024), (3, 2100, 40)])
def test_addmm_and_sliced_operands(shape):
    m, n, k = shape
    rng = np.random.default_rng(1)
    big_a = rng.standard_normal((m + 3, k + 5)).astype(np.float32)
    big_b = rng.standard_normal((k + 2, n + 7)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    a, b = big_a[1 : m + 1, 2 : k + 2], big_b[2:, 3 : n + 3]
    got = ember.addmm(
        ember.tensor(c),
        ember.tensor(big_a)[1 : m + 1, 2 : k + 2],
        ember.tensor(big_b)[2:, 3 : n + 3],
        beta=0.5,
        alpha=2.0,
    ).numpy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = 0.5 * c + 2.0 * (a64 @ b64)
    _check(got, ref, 0.5 * np.abs(c) + 2.0 * (np.abs(a64) @ np.abs(b64)))


@pytest.mark.parametrize("shape", [(5, 3, 17, 65), (4, 64, 31, 200), (2, 130, 64, 70)])
def test_bmm_transposed_matches_float64(shape):
    bsz, m, n, k = shape
    rng = np.random.default_rng(2)
    a = rng.standard_normal((bsz, k, m)).astype(np.float32)
    b = rng.standard_normal((bsz, n, k)).astype(np.float32)
    got = ember.bmm(ember.tensor(a).transpose(1, 2), ember.tensor(b).transpose(1, 2)).numpy()
    a64, b64 = a.transpose(0, 2, 1).astype(np.float64), b.transpose(0, 2, 1).astype(np.float64)
    _check(got, a64 @ b64, np.abs(a64) @ np.abs(b64))


def test_skinny_products_bitwise_equal_across_threads():
    saved = ember.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            out = []
            for m, n, k in [(16, 1024, 1024), (1024, 16, 1024), (64, 64, 4096), (2048, 64, 64)]:
                for ta, tb in [(False, False), (True, False), (False, True)]:
                    a, b, _, _ = _operands(m, n, k, ta, tb, 3)
                    out.append(ember.mm(a, b).numpy().tobytes())
            results.append(out)
    finally:
        ember.set_num_threads(saved)
    assert results[0] == results[1] == results[2]
