"""Session 13's compute-bound kernels against float64 references, at every edge they have.

- Depthwise convolution's direct forward (Note [Depthwise forward]): kernels 1x1 to 5x5 and
  non-square, strides 1-3, padding up to past the kernel's reach, dilation, odd sizes, batch 1
  (ember's own kernels) and larger (where oneDNN would run), float32 and float64, with and without
  bias, channels-last input; bitwise the same at 1, 2 and 3 threads.
- oneDNN's forward and input gradient share one reordered weight over all chunks of a call
  (Note [oneDNN float32 convolution]): batches whose last chunk is shorter, groups, 1-D; bitwise
  the same at any thread count and the same as with ember's kernels up to rounding.
- bmm / baddbmm with transposed operands and skinny shapes (M or N <= 64).
The references are float64 NumPy loops written out tap by tap."""

import numpy as np
import pytest
from _conv_ref import close as _close
from _conv_ref import conv_ref

import ember

F = ember.nn.functional


# (N, C, spatial, kernel, stride, padding, dilation)
DEPTHWISE = [
    (1, 3, (7, 9), (3, 3), (1, 1), (1, 1), (1, 1)),  # batch 1, odd sizes
    (4, 16, (56, 56), (3, 3), (1, 1), (1, 1), (1, 1)),  # the benchmark's shape, smaller
    (2, 5, (11, 8), (3, 3), (2, 2), (1, 1), (1, 1)),  # stride 2, odd rows
    (3, 4, (10, 13), (5, 5), (3, 2), (2, 3), (1, 1)),  # stride 3, wider padding
    (2, 6, (12, 12), (3, 3), (1, 1), (2, 2), (2, 2)),  # dilation 2
    (2, 2, (9, 7), (2, 5), (1, 2), (0, 4), (3, 1)),  # non-square, padding past the reach
    (2, 8, (6, 6), (1, 1), (1, 1), (0, 0), (1, 1)),  # 1x1
    (1, 7, (5, 6), (5, 5), (1, 1), (0, 0), (1, 1)),  # kernel as large as the input
    (2, 3, (3, 3), (3, 3), (1, 1), (3, 3), (1, 1)),  # padding larger than the input
    (2, 4, (1, 17), (1, 3), (1, 1), (0, 1), (1, 2)),  # a height of 1 (conv1d's shape)
]


def _dw_id(case):
    n, c, sp, k, s, p, d = case
    return f"n{n}c{c}s{sp[0]}x{sp[1]}k{k[0]}x{k[1]}st{s[0]}{s[1]}p{p[0]}{p[1]}d{d[0]}{d[1]}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", DEPTHWISE, ids=_dw_id)
def test_depthwise_forward_matches_float64(case, dtype, route):
    n, c, sp, k, s, p, d = case
    rng = np.random.default_rng(sum(sp) + c)
    x = rng.standard_normal((n, c, *sp))
    w = rng.standard_normal((c, 1, *k))
    b = rng.standard_normal(c)
    y_ref, _, _ = conv_ref(x, w, None, s, p, d, c)
    rel = 1e-5 if dtype == "float32" else 1e-12
    for bias in (False, True):
        xs, ws = ember.tensor(x.astype(dtype)), ember.tensor(w.astype(dtype))
        bs = ember.tensor(b.astype(dtype)) if bias else None
        y = F.conv2d(xs, ws, bs, s, p, d, c)
        assert y.dtype == getattr(ember, dtype)
        ref = y_ref + (b.reshape(1, -1, 1, 1) if bias else 0)
        _close(y.numpy(), ref, f"{route} {dtype} bias={bias}", rel)


def test_depthwise_gradients_and_channels_last(route):
    """Gradients through the direct forward (autograd's backward is unchanged) and an NHWC
    input, whose output stays channels-last."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 6, 9, 10)).astype(np.float32)
    w = rng.standard_normal((6, 1, 3, 3)).astype(np.float32)
    gy = rng.standard_normal((3, 6, 5, 5)).astype(np.float32)
    y_ref, gx_ref, gw_ref = conv_ref(x, w, gy, (2, 2), (1, 1), (1, 1), 6)
    xs = ember.tensor(x).contiguous(memory_format=ember.channels_last).requires_grad_()
    ws = ember.tensor(w, requires_grad=True)
    y = F.conv2d(xs, ws, None, 2, 1, 1, 6)
    assert y.is_contiguous(memory_format=ember.channels_last)
    y.backward(ember.tensor(gy))
    _close(y.detach().numpy(), y_ref, "output")
    _close(xs.grad.numpy(), gx_ref, "input grad")
    _close(ws.grad.numpy(), gw_ref, "weight grad")


def test_depthwise_module_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 15, 15)).astype(np.float32)
    w = rng.standard_normal((8, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    got = F.conv2d(ember.tensor(x), ember.tensor(w), ember.tensor(b), 2, 1, 1, 8).numpy()
    want = torch.nn.functional.conv2d(
        torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1, 1, 8
    ).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _run_conv(case, seed):
    """ember's (output, input grad, weight grad) and the float64 reference's, bias included."""
    n, c, o, sp, k, s, p, d, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *sp)).astype(np.float32)
    w = rng.standard_normal((o, c // g, *k)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    y_ref, _, _ = conv_ref(x, w, None, s, p, d, g)
    gy = rng.standard_normal(y_ref.shape).astype(np.float32)
    _, gx_ref, gw_ref = conv_ref(x, w, gy, s, p, d, g)
    conv = {1: F.conv1d, 2: F.conv2d}[len(sp)]
    xs = ember.tensor(x, requires_grad=True)
    ws = ember.tensor(w, requires_grad=True)
    y = conv(xs, ws, ember.tensor(b), s, p, d, g)
    y.backward(ember.tensor(gy))
    ref = (y_ref + b.reshape(1, -1, *([1] * len(sp))), gx_ref, gw_ref)
    return (y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy()), ref


# Batches cut into chunks whose last one is shorter (the shared weight was reordered for the
# first chunk's shape), groups, 1-D, stride and dilation.
CHUNKED = [
    (17, 16, 16, (9, 9), (3, 3), (1, 1), (1, 1), (1, 1), 1),  # chunks of 2, the last of 1
    (35, 8, 24, (7, 6), (3, 3), (2, 2), (1, 1), (1, 1), 4),  # chunks of 3, the last of 2
    (9, 32, 32, (5, 5), (3, 3), (1, 1), (2, 2), (2, 2), 1),  # one image per chunk
    (20, 16, 32, (30,), (5,), (2,), (2,), (1,), 1),  # 1-D
]


@pytest.mark.parametrize("case", CHUNKED, ids=lambda c: f"n{c[0]}c{c[1]}o{c[2]}g{c[8]}")
def test_chunked_passes_match_float64_and_threads(case, route):
    saved = ember.get_num_threads()
    runs = []
    try:
        for t in (1, 2, 3):
            ember.set_num_threads(t)
            runs.append(_run_conv(case, 11))
    finally:
        ember.set_num_threads(saved)
    got, ref = runs[0]
    for a, r, what in zip(got, ref, ("output", "input grad", "weight grad")):
        _close(a, r, f"{route} {what}", 2e-5)
    for other, _ in runs[1:]:
        for a, b in zip(got, other):
            assert a.tobytes() == b.tobytes()


def test_depthwise_bitwise_across_threads():
    rng = np.random.default_rng(7)
    x = ember.tensor(rng.standard_normal((3, 10, 23, 19)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((10, 1, 3, 3)).astype(np.float32))
    saved = ember.get_num_threads()
    outs = []
    try:
        for t in (1, 2, 3):
            ember.set_num_threads(t)
            outs.append(F.conv2d(x, w, None, 1, 1, 1, 10).numpy().tobytes())
    finally:
        ember.set_num_threads(saved)
    assert outs[0] == outs[1] == outs[2]


# (B, M, N, K): skinny in M or N, remainders of the blocking, batch 1 and more.
BMM = [(3, 5, 64, 17), (2, 64, 7, 300), (1, 1, 129, 65), (4, 33, 33, 1), (2, 70, 1, 40)]


@pytest.mark.parametrize("ta", [False, True], ids=["a", "aT"])
@pytest.mark.parametrize("tb", [False, True], ids=["b", "bT"])
@pytest.mark.parametrize("shape", BMM, ids=lambda s: "x".join(map(str, s)))
def test_bmm_baddbmm_transposed_match_float64(shape, ta, tb):
    bsz, m, n, k = shape
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((bsz, k, m) if ta else (bsz, m, k)).astype(np.float32)
    b = rng.standard_normal((bsz, n, k) if tb else (bsz, k, n)).astype(np.float32)
    c = rng.standard_normal((bsz, m, n)).astype(np.float32)
    a64 = np.swapaxes(a, 1, 2) if ta else a
    b64 = np.swapaxes(b, 1, 2) if tb else b
    prod = a64.astype(np.float64) @ b64.astype(np.float64)
    bound = np.abs(a64).astype(np.float64) @ np.abs(b64).astype(np.float64)
    ea = ember.tensor(a).transpose(1, 2) if ta else ember.tensor(a)
    eb = ember.tensor(b).transpose(1, 2) if tb else ember.tensor(b)
    tol = 4e-7 * 64 * (bound + np.abs(c)) + 1e-6
    got = ember.bmm(ea, eb).numpy().astype(np.float64)
    assert (np.abs(got - prod) <= tol).all()
    got = ember.baddbmm(ember.tensor(c), ea, eb, beta=0.5, alpha=-2.0).numpy().astype(np.float64)
    assert (np.abs(got - (0.5 * c - 2.0 * prod)) <= 2 * tol).all()
