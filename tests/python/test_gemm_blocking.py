"""float32 GEMM across the edges of sgemm's cache blocks (Note [SGEMM blocking]): the blocks are
sized from the core's L2, so each product here runs with the blocks of a 512 KB (Zen 2/3), 1 MB
(Zen 4) and 2 MB (Sapphire Rapids) L2 (EMBER_L2_CACHE_BYTES, in subprocesses), on the AVX2 tier
too, at 1-3 threads: float64 references, and the same bits everywhere."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import ember

HERE = os.path.dirname(os.path.abspath(__file__))

# kc is 256 (k up to 320 stays one block; past it, equal blocks); mc is 126 or 192 rows; nc is
# 256, 512 or 1024 columns. Each shape straddles some of those edges, one past or one short.
SHAPES = [
    (127, 1025, 321),
    (193, 257, 513),
    (253, 513, 255),
    (125, 1089, 769),
    (385, 300, 320),
    (7, 2049, 257),
    (1030, 63, 600),
]


def _operands(m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    return a, b, c


def _products(m, n, k, seed):
    """(ember result, float64 reference, float64 magnitude) of each product of one shape."""
    a, b, c = _operands(m, n, k, seed)
    ta, tb, tc = ember.tensor(a), ember.tensor(b), ember.tensor(c)
    at = ember.tensor(np.ascontiguousarray(a.T)).t()  # a transposed in memory
    bt = ember.tensor(np.ascontiguousarray(b.T)).t()
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    mag = np.abs(a64) @ np.abs(b64)
    ref = a64 @ b64
    return [
        (ta @ tb, ref, mag),
        (at @ tb, ref, mag),
        (ta @ bt, ref, mag),
        (
            ember.addmm(tc, ta, tb, beta=0.5, alpha=2.0),
            0.5 * c64 + 2.0 * ref,
            2 * mag + np.abs(c64),
        ),
        (ember.bmm(ta.unsqueeze(0), tb.unsqueeze(0))[0], ref, mag),
    ]


def _digest():
    """sha256 of every product at 1, 2 and 3 threads, one per thread count."""
    saved = ember.get_num_threads()
    out = []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            h = hashlib.sha256()
            for seed, shape in enumerate(SHAPES):
                for got, _, _ in _products(*shape, seed):
                    h.update(got.numpy().tobytes())
            out.append(h.hexdigest())
    finally:
        ember.set_num_threads(saved)
    return out


@pytest.mark.parametrize("seed,shape", list(enumerate(SHAPES)))
def test_block_edges_match_float64(seed, shape):
    for got, ref, mag in _products(*shape, seed):
        err = np.abs(got.numpy().astype(np.float64) - ref)
        np.testing.assert_array_less(err, 1e-5 * mag + 1e-6)


@pytest.mark.parametrize("cap", [None, "avx2"])
@pytest.mark.parametrize("l2", [512 << 10, 1 << 20, 2 << 20])
def test_every_blocking_gives_the_same_bits(l2, cap):
    env = dict(os.environ, EMBER_L2_CACHE_BYTES=str(l2))
    env.pop("ATEN_CPU_CAPABILITY", None)
    if cap:
        env["ATEN_CPU_CAPABILITY"] = cap
    code = (
        f"import sys; sys.path.insert(0, {HERE!r}); import ember, test_gemm_blocking as t; "
        "print(ember.backends.cpu.get_cpu_capability(), *t._digest())"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    tier, *digests = out.stdout.split()
    if tier == "DEFAULT":
        pytest.skip("this CPU has neither AVX2 nor AVX-512: no sgemm")
    if cap:
        assert tier == "AVX2"
    expected = _digest()
    assert len(set(expected)) == 1  # this process's blocking, at 1, 2 and 3 threads
    assert digests == expected
