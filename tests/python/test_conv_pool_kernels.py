"""The fast CPU paths of conv2d and max_pool2d: chunked im2col + GEMM with whole-run column rows
(unit strides, output as wide as the input), the float32 forward whose column matrix sgemm
computes panel by panel, the 2x2 / stride-2 float32 max pool, and nn.Sequential's fused
BatchNorm2d -> ReLU -> MaxPool2d(2) block (same bits as the modules one by one).

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
            out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + H, j : j + W], w[:, :, i, j])
    return out


def test_conv2d_whole_run_rows_match_numpy():
    x, w = rand(6, 3, 5, 7, dtype=np.float64), rand(4, 3, 3, 3, dtype=np.float64, seed=3)
    out = F.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    np.testing.assert_allclose(out.numpy(), numpy_conv2d_same(x, w), atol=1e-10)


def numpy_conv2d(x, w, stride, padding, dilation, groups):
    """conv2d in float64 by explicit windows: the reference for any geometry."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                win = xs[
                    :,
                    :,
                    i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                    j * dw : j * dw + sw * (ow - 1) + 1 : sw,
                ]
                out[:, g * og : (g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", win, w[g * og : (g + 1) * og, :, i, j].astype(np.float64)
                )
    return out


# Column panels of 64 that cross image rows and images (small outputs, several images per GEMM),
# rows wider than 16 and 64 with padding at both ends, one image per GEMM (>= 1024 output pixels),
# strides, dilation, groups, taps wholly in the padding, and pointwise kernels (runs that cross
# output rows; a large image read as a plain matrix).
PANEL_CASES = [
    ((6, 5, 7, 9), (7, 5, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 3, 9, 70), (4, 3, 3, 5), (1, 1), (1, 2), (1, 1), 1),
    ((2, 4, 36, 40), (8, 4, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((3, 4, 11, 13), (6, 2, 3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((2, 6, 10, 33), (6, 3, 3, 3), (1, 1), (2, 2), (2, 2), 2),
    ((3, 2, 5, 5), (3, 2, 3, 3), (1, 1), (3, 3), (1, 1), 1),
    ((4, 16, 14, 14), (8, 16, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((2, 8, 32, 33), (6, 4, 1, 1), (1, 1), (0, 0), (1, 1), 2),
    ((2, 6, 9, 9), (4, 6, 1, 1), (2, 2), (0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", PANEL_CASES)
def test_conv2d_float32_panels_match_numpy(xs, ws, stride, padding, dilation, groups):
    x, w = rand(*xs), rand(*ws, seed=4)
    out = F.conv2d(ember.tensor(x), ember.tensor(w), None, stride, padding, dilation, groups)
    ref = numpy_conv2d(x, w, stride, padding, dilation, groups)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


# Unit strides, at most 64 output channels per group and no fewer input ones: the float32 input
# gradient is a convolution with the turned weight (Note [Input gradient as a convolution]; on
# AVX2 CPUs at unit dilation, over padded planes or, for a depthwise conv, the depthwise kernel);
# float64 builds it by col2im, tested against torch and gradcheck.
TURNED_CASES = [
    ((2, 8, 9, 11), (8, 8, 3, 3), dict(padding=1)),
    ((2, 8, 6, 9), (4, 8, 3, 5), dict(padding=(0, 2))),
    ((2, 6, 9, 9), (4, 6, 3, 3), dict(padding=1, dilation=2)),
    ((2, 8, 7, 7), (4, 4, 3, 3), dict(padding=1, groups=2)),
    ((3, 8, 5, 6), (4, 8, 1, 1), dict()),
    ((2, 6, 9, 10), (6, 1, 3, 3), dict(padding=1, groups=6)),  # depthwise
    ((2, 8, 8, 8), (4, 2, 3, 3), dict(padding=2, groups=4)),  # one output per group of two
]


@pytest.mark.parametrize("xs,ws,kw", TURNED_CASES)
def test_conv2d_float32_input_gradient_matches_float64(xs, ws, kw):
    x, w = rand(*xs, dtype=np.float64), rand(*ws, dtype=np.float64, seed=2)
    grads = [
        fwd_bwd(ember, "conv2d", [x.astype(dt), w.astype(dt)], **kw)[1]
        for dt in (np.float32, np.float64)
    ]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [64, 2])  # chunks on the thread pool; chunks in order
@pytest.mark.parametrize("o", [16, 8])  # 8: the input gradient by the turned weight
def test_conv2d_results_independent_of_threads(n, o):
    x, w = rand(n, 8, 12, 12), rand(o, 8, 3, 3, seed=2)
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


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((3, 4, 8, 8), dict(kernel_size=2)),
        ((2, 3, 9, 7), dict(kernel_size=2)),
        ((2, 3, 9, 7), dict(kernel_size=2, ceil_mode=True)),
        ((2, 3, 8, 8), dict(kernel_size=2, stride=2, dilation=2)),
        ((2, 3, 8, 8), dict(kernel_size=2, stride=2, padding=1)),
        ((2, 3, 8, 8), dict(kernel_size=(2, 1), stride=(2, 1))),
        ((1, 2, 2, 30), dict(kernel_size=2)),
    ],
)
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


@pytest.mark.parametrize("ow", [1, 8, 15, 16, 17, 40])
def test_max_pool2d_2x2_rows_of_any_width_match_numpy(ow):
    # Rows of 16 outputs and their remainders (the float kernel's vector width), odd sizes
    # cropped, NaNs (the last NaN of a window wins) and ties (the first maximum wins).
    rng = np.random.default_rng(ow)
    x = rng.integers(-2, 3, (2, 3, 7, 2 * ow + 1)).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    out, idx = F.max_pool2d(ember.tensor(x), 2, return_indices=True)
    oh = x.shape[2] // 2
    best = x[:, :, 0 : 2 * oh : 2, 0 : 2 * ow : 2].copy()
    h = np.arange(oh)[:, None] * 2
    w = np.arange(ow)[None, :] * 2
    arg = np.broadcast_to(h * x.shape[3] + w, best.shape).copy()
    for dh, dw in ((0, 1), (1, 0), (1, 1)):
        v = x[:, :, dh : 2 * oh : 2, dw : 2 * ow + dw : 2][..., :ow]
        up = (v > best) | np.isnan(v)
        best = np.where(up, v, best)
        arg = np.where(up, (h + dh) * x.shape[3] + w + dw, arg)
    np.testing.assert_array_equal(out.numpy(), best)
    np.testing.assert_array_equal(idx.numpy(), arg)


def test_max_pool2d_results_independent_of_threads():
    x = rand(16, 8, 14, 14)
    runs = runs_per_thread_count(lambda: fwd_bwd(ember, "max_pool2d", [x], kernel_size=2))
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            np.testing.assert_array_equal(a, b)


# Stride-1 and -2 float pools sweep their full windows a row at a time (Note [Pool rows] in
# cpu/pool.cpp); the clipped windows at each row's ends and other strides take the generic loop.
ROW_POOLS = [
    ((2, 3, 17, 23), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 17, 23), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 2, 9, 40), dict(kernel_size=3, stride=1)),
    ((1, 2, 9, 41), dict(kernel_size=(2, 5), stride=(1, 2), padding=(1, 2))),
    ((2, 2, 11, 37), dict(kernel_size=3, stride=2, dilation=2, padding=1)),
    ((1, 1, 7, 35), dict(kernel_size=(3, 1), stride=1, dilation=(1, 3))),
    ((1, 2, 8, 33), dict(kernel_size=4, stride=(2, 1), padding=2, ceil_mode=True)),
    ((1, 1, 5, 5), dict(kernel_size=5, stride=2, padding=2)),  # no full window: generic only
    ((1, 2, 12, 30), dict(kernel_size=3, stride=3, padding=1)),  # stride 3: generic only
]


@pytest.mark.parametrize("shape,kw", ROW_POOLS)
def test_max_pool2d_rows_match_torch(shape, kw):
    torch = pytest.importorskip("torch")
    x = rand(*shape)
    x[0, 0, 1, 2:9] = np.nan  # NaN propagates: the last NaN of a window wins
    x[0, -1, 3, :5] = [np.inf, -np.inf, np.nan, 1, np.inf]
    x[-1, 0, 2:5, :] = np.round(x[-1, 0, 2:5, :])  # ties keep the first in scan order
    (eo, ei, eg), (to, ti, tg) = max_pool_both(torch, x, **kw)
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_array_equal(ei, ti)
    np.testing.assert_allclose(eg, tg, atol=1e-6)


def test_max_pool2d_row_wholly_in_padding_is_minus_inf():
    torch = pytest.importorskip("torch")
    x = rand(1, 1, 2, 20)  # with ceil_mode the last output row's window lies in the padding
    kw = dict(kernel_size=2, stride=2, padding=1, ceil_mode=True, return_indices=True)
    eo, ei = F.max_pool2d(ember.tensor(x), **kw)
    to, ti = torch.nn.functional.max_pool2d(torch.tensor(x), **kw)
    np.testing.assert_array_equal(eo.numpy(), to.numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor_override", [None, 3])
@pytest.mark.parametrize("shape,kw", [(s, k) for s, k in ROW_POOLS if "dilation" not in k])
def test_avg_pool2d_rows_match_torch(shape, kw, count_include_pad, divisor_override):
    torch = pytest.importorskip("torch")
    x = rand(*shape)
    kw = dict(kw, count_include_pad=count_include_pad, divisor_override=divisor_override)
    eo, eg = fwd_bwd(ember, "avg_pool2d", [x], **kw)
    to, tg = fwd_bwd(torch, "avg_pool2d", [x], **kw)
    np.testing.assert_allclose(eo, to, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(eg, tg, rtol=1e-6, atol=1e-6)


def test_pool_rows_match_the_generic_loop_in_float64():
    """float64 takes the generic loop: the float32 row sweep must give the same values and
    indices on float32-representable data (sums of 4 small integers are exact)."""
    x = np.random.default_rng(3).integers(-8, 8, (2, 3, 13, 29)).astype(np.float32)
    for kw in (dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, stride=1)):
        o32, i32 = F.max_pool2d(ember.tensor(x), return_indices=True, **kw)
        o64, i64 = F.max_pool2d(ember.tensor(x.astype(np.float64)), return_indices=True, **kw)
        np.testing.assert_array_equal(o32.numpy(), o64.numpy())
        np.testing.assert_array_equal(i32.numpy(), i64.numpy())
        a32 = F.avg_pool2d(ember.tensor(x), **kw).numpy()
        a64 = F.avg_pool2d(ember.tensor(x.astype(np.float64)), **kw).numpy()
        np.testing.assert_allclose(a32, a64, rtol=1e-6)


def test_pool_rows_independent_of_threads():
    x = rand(8, 8, 15, 31)
    for fn in ("max_pool2d", "avg_pool2d"):
        runs = runs_per_thread_count(
            lambda: fwd_bwd(ember, fn, [x], kernel_size=3, stride=2, padding=1)
        )
        for run in runs[1:]:
            for a, b in zip(runs[0], run):
                np.testing.assert_array_equal(a, b)


# nn.Sequential's fused BatchNorm2d -> ReLU -> MaxPool2d(2) block (ember/nn/modules/_fused_block.py)


def block_data(shape, seed=0):
    """Input with ties (small integers, so windows repeat values), windows all <= 0, a NaN, and
    a constant channel."""
    x = np.random.default_rng(seed).integers(-3, 4, shape).astype(np.float32)
    x[0, 0, 0, 0] = np.nan
    x[:, -1] = 1.5
    return x


def run_block(lib, x, seed=1, fused=True, create_graph=False, affine=True, **bn_kw):
    """Output, gradients (x, weight, bias), running stats and the output's grad_fn name of
    Sequential(BatchNorm2d, ReLU, MaxPool2d(2)) after one training step; fused=False keeps
    ember's Sequential on the modules one by one (a no-op forward hook on the ReLU)."""
    c = x.shape[1]
    bn = lib.nn.BatchNorm2d(c, affine=affine, **bn_kw)
    if affine:
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(rand(c, seed=seed) + 1))
            bn.bias.copy_(lib.tensor(rand(c, seed=seed + 1)))
    relu = lib.nn.ReLU()
    if not fused:
        relu.register_forward_hook(lambda m, i, o: None)
    model = lib.nn.Sequential(lib.nn.Conv2d(c, c, 1, bias=False), bn, relu, lib.nn.MaxPool2d(2))
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(np.eye(c, dtype=np.float32).reshape(c, c, 1, 1)))
    t = lib.tensor(x, requires_grad=True)
    out = model(t)
    g = lib.tensor(rand(*out.shape, seed=seed + 2))
    params = [t] + ([bn.weight, bn.bias] if affine else [])
    grads = lib.autograd.grad(out, params, g, create_graph=create_graph)
    if create_graph:  # the gradient of sum(grads^2) through the backward
        grads = lib.autograd.grad(sum((q * q).sum() for q in grads), params)
    stats = [s.numpy() for s in (bn.running_mean, bn.running_var) if s is not None]
    arrays = [out.detach().numpy()] + [q.detach().numpy() for q in grads] + stats
    return arrays, out.grad_fn.name()


BLOCK_CASES = [
    ((3, 4, 6, 10), {}),  # 60 pixels a plane: a tail after the 8-lane blocks
    ((2, 3, 4, 4), dict(momentum=None)),
    ((2, 3, 8, 2), dict(track_running_stats=False)),
    ((2, 3, 4, 6), dict(affine=False)),
]


@pytest.mark.parametrize("shape,kw", BLOCK_CASES)
def test_fused_block_same_bits_as_the_modules_one_by_one(shape, kw):
    x = block_data(shape)
    fused, name = run_block(ember, x, **kw)
    plain, plain_name = run_block(ember, x, fused=False, **kw)
    assert "BatchNormReluMaxPool" in name and "MaxPool2D" in plain_name
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape,kw", BLOCK_CASES)
def test_fused_block_matches_torch(shape, kw):
    torch = pytest.importorskip("torch")
    x = block_data(shape)
    x[0, 0, 0, 0] = 0.25  # torch's NaN gradients differ from its own max_pool2d by tap order
    # A constant channel normalizes to exactly 0 in ember (relu passes no gradient) and to its
    # mean's rounding / sqrt(eps) in torch (which relu passes, times 1 / sqrt(eps))
    x[:, -1] = rand(*x[:, -1].shape)
    for e, t in zip(run_block(ember, x, **kw)[0], run_block(torch, x, **kw)[0]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5)


def test_fused_block_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    x = rand(2, 3, 4, 6)
    e, name = run_block(ember, x, create_graph=True)
    assert "BatchNormReluMaxPool" in name
    for a, b in zip(e, run_block(torch, x, create_graph=True)[0]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_fused_block_independent_of_threads():
    x = block_data((4, 5, 6, 10))
    runs = runs_per_thread_count(lambda: run_block(ember, x)[0])
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            np.testing.assert_array_equal(a, b)


def test_fused_block_only_where_nothing_observes_the_ops():
    """Hooks, evaluation mode, odd sizes, other pools and modes keep the modules one by one."""

    def pool_node(model, x):
        return model(x.requires_grad_()).grad_fn.name()

    x = ember.tensor(rand(2, 3, 4, 6))
    nn = ember.nn
    seen = []
    relu = nn.ReLU()
    relu.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    hooked = nn.Sequential(nn.BatchNorm2d(3), relu, nn.MaxPool2d(2))
    assert "MaxPool2D" in pool_node(hooked, x.detach())
    assert seen == [(2, 3, 4, 6)]
    model = nn.Sequential(nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2))
    assert "BatchNormReluMaxPool" in pool_node(model, x.detach())
    assert "MaxPool2D" in pool_node(model, ember.tensor(rand(2, 3, 5, 6)))
    channels_last = x.detach().contiguous(memory_format=ember.channels_last)
    assert "MaxPool2D" in pool_node(model, channels_last)
    wide = nn.Sequential(nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(3, 2))
    assert "MaxPool2D" in pool_node(wide, x.detach())
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        assert "MaxPool2D" in pool_node(model, x.detach())
    model.eval()
    assert "MaxPool2D" in pool_node(model, x.detach())


def test_fused_block_kernel_refuses_bad_input():
    nn_ops = ember._C._nn
    x = ember.tensor(rand(2, 3, 4, 6))
    with pytest.raises(RuntimeError, match="per-channel tensors of 3"):
        nn_ops._batch_norm_relu_max_pool2x2(x, ember.ones(2), None, None, None, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="even height and width"):
        nn_ops._batch_norm_relu_max_pool2x2(x[:, :, :3], None, None, None, None, 0.1, 1e-5)
    out, slots, mean, invstd = nn_ops._batch_norm_relu_max_pool2x2(
        x, None, None, None, None, 0.1, 1e-5
    )
    with pytest.raises(RuntimeError, match="pooled output's shape"):
        nn_ops._batch_norm_relu_max_pool2x2_backward(x, x, slots, None, mean, invstd)
