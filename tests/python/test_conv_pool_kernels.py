"""The fast CPU paths of conv2d and max_pool2d: chunked im2col + GEMM with whole-run column rows
(unit strides, output as wide as the input) and the 2x2 / stride-2 float32 max pool.

Each case targets one path or its edge (padding, dilation, groups, chunk remainders, NaN, ties);
values and gradients are compared with torch where installed and with numpy otherwise, and the
results must not depend on the thread count.
"""

import numpy as np
import pytest

import ember
import ember.nn.functional as F


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def fwd_bwd(lib, fn, arrays, seed=1, **kw):
    """Output and input gradients of lib's F.<fn> for a fixed random output gradient."""
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = getattr(lib.nn.functional, fn)(*ts, **kw)
    out.backward(lib.tensor(rand(*out.shape, dtype=arrays[0].dtype, seed=seed)))
    return [out.detach().numpy()] + [t.grad.numpy() for t in ts]


def runs_per_thread_count(fn):
    """fn() run with 1, 2 and 3 threads; the thread count is restored afterwards."""
    saved = ember.get_num_threads()
    try:
        runs = []
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            runs.append(fn())
        return runs
    finally:
        ember.set_num_threads(saved)


# (input shape, weight shape, kwargs): whole-run rows need stride 1 and 2 * padding equal to
# dilation * (kernel - 1) along the width; the others take the per-row im2col.
CONV_CASES = [
    ((37, 8, 10, 9), (16, 8, 3, 3), dict(padding=1)),
    ((5, 3, 7, 11), (4, 3, 5, 5), dict(padding=2)),
    ((4, 4, 9, 8), (6, 4, 3, 3), dict(padding=2, dilation=2)),
    ((3, 4, 6, 7), (4, 2, 3, 1), dict(padding=(0, 0), groups=2)),
    ((3, 6, 5, 6), (6, 2, 1, 3), dict(padding=(2, 1), groups=3)),
    ((2, 5, 4, 4), (3, 5, 1, 1), dict()),
    ((3, 2, 3, 3), (2, 2, 3, 3), dict(padding=(3, 1))),
    ((4, 3, 8, 8), (5, 3, 3, 3), dict(padding=1, stride=2)),
    ((2, 3, 6, 9), (4, 3, 2, 3), dict(padding=(1, 0))),
]


@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_paths_match_torch(xs, ws, kw, dtype):
    torch = pytest.importorskip("torch")
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype, seed=2)
    atol = 1e-3 if dtype == np.float32 else 1e-10
    for e, t in zip(fwd_bwd(ember, "conv2d", [x, w], **kw), fwd_bwd(torch, "conv2d", [x, w], **kw)):
        np.testing.assert_allclose(e, t, atol=atol, rtol=1e-4)


def numpy_conv2d_same(x, w):
    """conv2d with stride 1 and padding (k - 1) // 2 by shifted sums (odd square kernels)."""
    k = w.shape[2]
    p = (k - 1) // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    H, W = x.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], H, W))
    for i in range(k):
        for j in range(k):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + H, j:j + W], w[:, :, i, j])
    return out


def test_conv2d_whole_run_rows_match_numpy():
    x, w = rand(6, 3, 5, 7, dtype=np.float64), rand(4, 3, 3, 3, dtype=np.float64, seed=3)
    out = F.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    np.testing.assert_allclose(out.numpy(), numpy_conv2d_same(x, w), atol=1e-10)


@pytest.mark.parametrize("n", [64, 2])  # chunks on the thread pool; chunks in order
def test_conv2d_results_independent_of_threads(n):
    x, w = rand(n, 8, 12, 12), rand(16, 8, 3, 3, seed=2)
    runs = runs_per_thread_count(lambda: fwd_bwd(ember, "conv2d", [x, w], padding=1))
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            np.testing.assert_array_equal(a, b)


def max_pool_both(torch, x, **kw):
    """Values, indices and input gradient of max_pool2d in ember and torch."""
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        out, idx = lib.nn.functional.max_pool2d(t, return_indices=True, **kw)
        out.backward(lib.tensor(rand(*out.shape, seed=5)))
        results.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    return results


@pytest.mark.parametrize("shape,kw", [
    ((3, 4, 8, 8), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=2)),
    ((2, 3, 9, 7), dict(kernel_size=2, ceil_mode=True)),
    ((2, 3, 8, 8), dict(kernel_size=2, stride=2, dilation=2)),
    ((2, 3, 8, 8), dict(kernel_size=2, stride=2, padding=1)),
    ((2, 3, 8, 8), dict(kernel_size=(2, 1), stride=(2, 1))),
    ((1, 2, 2, 30), dict(kernel_size=2)),
])
def test_max_pool2d_float32_matches_torch(shape, kw):
    torch = pytest.importorskip("torch")
    x = rand(*shape)
    (eo, ei, eg), (to, ti, tg) = max_pool_both(torch, x, **kw)
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_array_equal(ei, ti)
    np.testing.assert_allclose(eg, tg, atol=1e-6)


def test_max_pool2d_2x2_ties_nan_inf_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(7).integers(-2, 3, (2, 3, 10, 12)).astype(np.float32)
    x[0, 0, 0, :4] = [np.nan, 1, np.nan, np.nan]
    x[0, 0, 1, :4] = [5, np.nan, 1, 2]
    x[0, 1, :2, :2] = -np.inf
    x[1, 2, 4:6, 4:6] = [[np.inf, np.inf], [1, np.inf]]
    (eo, ei, _), (to, ti, _) = max_pool_both(torch, x, kernel_size=2)
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_array_equal(ei, ti)


def test_max_pool2d_2x2_matches_numpy_with_first_tie():
    x = np.zeros((1, 1, 4, 6), dtype=np.float32)
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = 3  # a tie: the first in row-major order wins
    x[0, 0, 2, 4] = -1
    out, idx = F.max_pool2d(ember.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), x.reshape(1, 1, 2, 2, 3, 2).max(axis=(3, 5)))
    assert idx.numpy()[0, 0, 0, 0] == 1 and idx.numpy()[0, 0, 1, 2] == 2 * 6 + 5
    assert idx.numpy()[0, 0, 0, 1] == 2


def test_max_pool2d_results_independent_of_threads():
    x = rand(16, 8, 14, 14)
    runs = runs_per_thread_count(lambda: fwd_bwd(ember, "max_pool2d", [x], kernel_size=2))
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            np.testing.assert_array_equal(a, b)
