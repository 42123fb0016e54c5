"""float32 matrix products (ember's sgemm on AVX2 and AVX-512 CPUs, Note [SGEMM]) against numpy in
float64: odd shapes, transposed/sliced/broadcast operands, alpha/beta, beta=0 over NaN, batch
broadcast, linear and conv gradients, and bitwise equality across thread counts and CPU tiers."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(5)
SIZES = [1, 2, 5, 6, 7, 13, 16, 17, 31, 64, 65, 97, 131, 257, 300]


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def assert_close(got, ref, mag):
    # Error bound proportional to sum |a b| per output: float32 rounding over k terms.
    np.testing.assert_array_less(
        np.abs(got.detach().numpy().astype(np.float64) - ref), 1e-5 * mag + 1e-6
    )


def operand(rows, cols, layout):
    """A (rows, cols) ember view in the given layout and the same values in numpy."""
    if layout == "contiguous":
        x = randn(rows, cols)
        return ember.tensor(x), x
    if layout == "transposed":
        x = randn(cols, rows)
        return ember.tensor(x).t(), x.T
    if layout == "sliced":  # a column window with an offset, every other row
        x = randn(2 * rows, cols + 3)
        return ember.tensor(x)[::2, 1 : cols + 1], x[::2, 1 : cols + 1]
    x = randn(1, cols)  # broadcast rows: stride 0
    return ember.tensor(x).expand(rows, cols), np.broadcast_to(x, (rows, cols))


SHAPES = [tuple(RNG.choice(SIZES, 3)) for _ in range(12)] + [(64, 256, 784), (128, 10, 256)]
LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast"]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS[:3])
def test_matmul_layouts(m, n, k, la, lb):
    a, an = operand(m, k, la)
    b, bn = operand(k, n, lb)
    ref = an.astype(np.float64) @ bn.astype(np.float64)
    assert_close(a @ b, ref, np.abs(an).astype(np.float64) @ np.abs(bn))


@pytest.mark.parametrize("beta,alpha", [(0.0, 1.0), (0.0, 2.5), (1.0, 1.0), (-0.5, 3.0)])
def test_addmm_alpha_beta(beta, alpha):
    m, n, k = 37, 131, 257
    a, b = randn(m, k), randn(k, n)
    c = randn(m, n)
    if beta == 0:
        c[:] = np.nan  # beta == 0 ignores self, NaN included
    got = ember.addmm(ember.tensor(c), ember.tensor(a), ember.tensor(b), beta=beta, alpha=alpha)
    ref = (0.0 if beta == 0 else beta * c.astype(np.float64)) + alpha * (a.astype(np.float64) @ b)
    mag = np.abs(beta * np.nan_to_num(c)) + abs(alpha) * (np.abs(a) @ np.abs(b))
    assert_close(got, ref, mag)


def test_baddbmm_broadcast_batch():
    a, b, c = randn(1, 17, 65), randn(5, 65, 33), randn(5, 17, 33)
    at = ember.tensor(a).expand(5, 17, 65)  # batch stride 0
    got = ember.baddbmm(ember.tensor(c), at, ember.tensor(b), beta=0.5, alpha=-2.0)
    ref = 0.5 * c.astype(np.float64) - 2.0 * (a.astype(np.float64) @ b)
    assert_close(got, ref, np.abs(0.5 * c) + 2.0 * (np.abs(a) @ np.abs(b)))
    got = ember.matmul(at, ember.tensor(b))
    assert_close(got, a.astype(np.float64) @ b, np.abs(a) @ np.abs(b))


def test_linear_gradients():
    x, w, bias, g = randn(33, 70), randn(45, 70), randn(45), randn(33, 45)
    xe, we = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    be = ember.tensor(bias, requires_grad=True)
    y = ember.nn.functional.linear(xe, we, be)
    y.backward(ember.tensor(g))
    x64, w64, g64 = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    assert_close(y, x64 @ w64.T + bias, np.abs(x) @ np.abs(w.T) + np.abs(bias))
    assert_close(xe.grad, g64 @ w64, np.abs(g) @ np.abs(w))
    assert_close(we.grad, g64.T @ x64, np.abs(g.T) @ np.abs(x))


def _products():
    """Products large enough to split over threads: matmul, linear fwd+bwd, bmm, conv fwd+bwd."""
    rng = np.random.default_rng(9)
    a = ember.tensor(rng.standard_normal((300, 517)).astype(np.float32))
    b = ember.tensor(rng.standard_normal((517, 1029)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((130, 517)).astype(np.float32), requires_grad=True)
    x = ember.tensor(rng.standard_normal((2, 64, 14, 14)).astype(np.float32), requires_grad=True)
    k = ember.tensor(rng.standard_normal((96, 64, 3, 3)).astype(np.float32), requires_grad=True)
    out = [
        a @ b,
        a.t().matmul(a),
        ember.bmm(a.reshape(3, 100, 517), b[:, :400].expand(3, 517, 400)),
    ]
    y = ember.nn.functional.linear(a, w)
    y.sum().backward()
    z = ember.nn.functional.conv2d(x, k, padding=1)
    (z * z).sum().backward()
    return [t.detach().numpy() for t in out + [y, w.grad, z, x.grad, k.grad]]


def test_bitwise_equal_across_thread_counts():
    original = ember.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            results.append(_products())
    finally:
        ember.set_num_threads(original)
    for other in results[1:]:
        for x, y in zip(results[0], other):
            assert x.tobytes() == y.tobytes()


_TIER_PRODUCTS = """
import hashlib, numpy as np, ember
rng = np.random.default_rng(1)
h = hashlib.sha256()
for m, n, k in [(7, 300, 131), (257, 65, 97), (64, 1024, 512), (300, 17, 1000)]:
    a = ember.tensor(rng.standard_normal((m, k)).astype(np.float32))
    b = ember.tensor(rng.standard_normal((k, n)).astype(np.float32))
    for x in (a @ b, a @ b[:, :n - 1], ember.addmm(a @ b, a, b, beta=0.5, alpha=2.0),
              (b.t() @ a.t()).contiguous()):
        h.update(x.numpy().tobytes())
print(ember.backends.cpu.get_cpu_capability(), h.hexdigest())
"""


def test_avx2_tier_gives_the_default_tiers_bits():
    def run(cap):
        env = dict(os.environ)
        env.pop("ATEN_CPU_CAPABILITY", None)
        if cap:
            env["ATEN_CPU_CAPABILITY"] = cap
        out = subprocess.run(
            [sys.executable, "-c", _TIER_PRODUCTS], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    best, avx2 = run(None), run("avx2")
    if best[0] == "DEFAULT":
        pytest.skip("this CPU has neither AVX2 nor AVX-512")
    assert avx2[0] == "AVX2"
    assert avx2[1] == best[1]
