"""ember.nn.functional spatial ops: convolution, pooling, pad, interpolate, fold/unfold, embedding.

Values are compared with torch where it is installed (same inputs copied in) and with numpy
references otherwise; gradients with gradcheck in float64.
"""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck


def E(a, grad=False):
    return ember.tensor(np.ascontiguousarray(a), requires_grad=grad)


def rand(*shape, dtype=np.float64):
    return np.random.randn(*shape).astype(dtype)


def check(e, t, atol=1e-5, rtol=1e-4):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)
    assert tuple(e.shape) == tuple(t.shape)


def run_both(torch, fn_name, arrays, grad=True, atol=1e-5, **kw):
    """Runs F.<fn_name> in ember and torch on the same arrays; compares outputs and gradients."""
    import torch.nn.functional as TF

    es = [E(a, grad) if a is not None else None for a in arrays]
    ts = [torch.tensor(a, requires_grad=grad) if a is not None else None for a in arrays]
    eo = getattr(F, fn_name)(*es, **kw)
    to = getattr(TF, fn_name)(*ts, **kw)
    check(eo, to, atol=atol)
    if grad:
        g = rand(*to.shape).astype(to.detach().numpy().dtype)
        eo.backward(E(g))
        to.backward(torch.tensor(g))
        for e, t in zip(es, ts):
            if e is not None:
                check(e.grad, t.grad, atol=atol)
    return eo


def gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """Second derivatives: the gradient of s(x) = <d fn / dx [go], v> from a create_graph
    backward against central differences of s (go and v fixed random)."""
    out = fn(*inputs)
    go = ember.randn(*out.shape, dtype=out.dtype)
    vs = [ember.randn(*x.shape, dtype=x.dtype) for x in inputs]

    def s(*xs):
        grads = ember.autograd.grad(fn(*xs), xs, go, create_graph=True, allow_unused=True)
        total = ember.zeros((), dtype=ember.float64)
        for g, v in zip(grads, vs):
            total = total + (g * v).sum() if g is not None else total
        return total

    total = s(*inputs)
    # A gradient that does not depend on the inputs (piecewise-linear ops) has zero derivative.
    analytical = (
        ember.autograd.grad(total, inputs, allow_unused=True)
        if total.requires_grad
        else [None] * len(inputs)
    )
    for x, a in zip(inputs, analytical):
        base = x.detach().numpy().copy()
        num = np.zeros(base.size)
        for i in range(base.size):
            vals = []
            for d in (eps, -eps):
                moved = base.reshape(-1).copy()
                moved[i] += d
                xs = [E(moved.reshape(base.shape), True) if y is x else y for y in inputs]
                vals.append(s(*xs).item())
            num[i] = (vals[0] - vals[1]) / (2 * eps)
        got = np.zeros(base.size) if a is None else a.detach().numpy().reshape(-1)
        np.testing.assert_allclose(got, num, atol=atol, rtol=rtol)
    return True


def numpy_conv2d(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * padding - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * stride : i * stride + dilation * (kh - 1) + 1 : dilation,
                    j * stride : j * stride + dilation * (kw - 1) + 1 : dilation,
                ]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


# ---------------------------------------------------------------------------------------------
# convolution


@pytest.mark.parametrize(
    "stride,padding,dilation,groups,bias",
    [
        (1, 0, 1, 1, True),
        (2, 1, 1, 1, False),
        (1, 2, 2, 1, True),
        (3, 1, 1, 2, True),
        (1, 1, 1, 4, False),
        ((2, 1), (0, 1), (1, 2), 1, True),
    ],
)
def test_conv2d_matches_numpy(stride, padding, dilation, groups, bias):
    x, w = rand(2, 4, 7, 8), rand(4, 4 // groups, 3, 3)
    b = rand(4) if bias else None
    out = F.conv2d(E(x), E(w), E(b) if bias else None, stride, padding, dilation, groups)
    if isinstance(stride, int):
        np.testing.assert_allclose(
            out.numpy(), numpy_conv2d(x, w, b, stride, padding, dilation, groups), atol=1e-10
        )
    else:
        assert tuple(out.shape) == (2, 4, 3, 6)  # (7 - 2 - 1) // 2 + 1, (8 + 2 - 4 - 1) + 1


@pytest.mark.parametrize(
    "stride,padding,dilation,groups,bias",
    [
        (1, 0, 1, 1, True),
        (2, 1, 1, 1, False),
        (1, 2, 2, 1, True),
        (3, 1, 1, 2, True),
        (1, 1, 1, 4, False),
        ((2, 1), (0, 1), (1, 2), 1, True),
        (1, "same", 1, 1, True),
        (1, "same", 2, 2, False),
        (1, "valid", 1, 1, True),
        (1, 0, 1, 1, False),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_matches_torch(torch, stride, padding, dilation, groups, bias, dtype):
    x, w = (
        rand(3, 4, 9, 8, dtype=dtype),
        rand(6 if groups < 4 else 4, 4 // groups, 3, 2, dtype=dtype),
    )
    b = rand(w.shape[0], dtype=dtype) if bias else None
    atol = 1e-4 if dtype == np.float32 else 1e-10
    run_both(
        torch,
        "conv2d",
        [x, w, b],
        atol=atol,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
    )


@pytest.mark.parametrize(
    "shape,wshape",
    [
        ((5, 16, 28, 28), (8, 16, 3, 3)),
        ((4, 1, 28, 28), (6, 1, 3, 3)),
        ((3, 8, 6, 6), (4, 8, 1, 1)),
        ((2, 3, 4, 5), (2, 3, 4, 5)),
    ],
)
def test_conv2d_training_shapes_match_torch(torch, shape, wshape):
    run_both(
        torch,
        "conv2d",
        [
            rand(*shape, dtype=np.float32),
            rand(*wshape, dtype=np.float32),
            rand(wshape[0], dtype=np.float32),
        ],
        atol=1e-3,
        padding=0,
    )
    run_both(torch, "conv2d", [rand(*shape), rand(*wshape), None], atol=1e-10, padding="same")


def test_conv2d_noncontiguous_and_unbatched(torch):
    x, w, b = rand(2, 3, 6, 7), rand(4, 3, 3, 3), rand(4)
    xt = E(x).transpose(2, 3)  # (2, 3, 7, 6), non-contiguous
    out = F.conv2d(xt, E(w), E(b), padding=1)
    ref = torch.nn.functional.conv2d(
        torch.tensor(x).transpose(2, 3), torch.tensor(w), torch.tensor(b), padding=1
    )
    check(out, ref, atol=1e-10)
    un = F.conv2d(E(x[0]), E(w), E(b), stride=2)
    check(
        un,
        torch.nn.functional.conv2d(torch.tensor(x[0]), torch.tensor(w), torch.tensor(b), stride=2),
        atol=1e-10,
    )
    assert un.dim() == 3


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2, padding=1),
        dict(dilation=2, groups=2),
        dict(padding="same"),
        dict(padding="valid", stride=1),
    ],
)
def test_conv1d_matches_torch(torch, kw):
    run_both(
        torch,
        "conv1d",
        [rand(2, 4, 11), rand(6, 4 // kw.get("groups", 1), 3), rand(6)],
        atol=1e-10,
        **kw,
    )
    run_both(
        torch, "conv1d", [rand(4, 11), rand(6, 4 // kw.get("groups", 1), 4), None], atol=1e-10, **kw
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2),
        dict(stride=2, padding=1, output_padding=1),
        dict(groups=2, dilation=2),
        dict(stride=(2, 3), padding=(1, 0)),
        dict(stride=2, dilation=3, output_padding=2),
    ],
)
def test_conv_transpose2d_matches_torch(torch, kw):
    run_both(
        torch,
        "conv_transpose2d",
        [rand(2, 4, 5, 4), rand(4, 3, 3, 2), rand(3 * kw.get("groups", 1))],
        atol=1e-10,
        **kw,
    )
    run_both(torch, "conv_transpose2d", [rand(4, 5, 4), rand(4, 3, 3, 2), None], atol=1e-10, **kw)


@pytest.mark.parametrize(
    "kw", [dict(), dict(stride=3, padding=1, output_padding=2), dict(groups=2)]
)
def test_conv_transpose1d_matches_torch(torch, kw):
    run_both(
        torch,
        "conv_transpose1d",
        [rand(2, 4, 6), rand(4, 2, 3), rand(2 * kw.get("groups", 1))],
        atol=1e-10,
        **kw,
    )


def test_conv_gradcheck():
    x, w, b = E(rand(2, 4, 5, 5), True), E(rand(4, 2, 3, 3), True), E(rand(4), True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2), (x, w, b))
    assert gradcheck(lambda x, w: F.conv2d(x, w, dilation=2, padding="same", groups=2), (x, w))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), (x, w, b))
    x1, w1 = E(rand(2, 3, 7), True), E(rand(2, 3, 3), True)
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1), (x1, w1))
    xt, wt = E(rand(1, 4, 3, 3), True), E(rand(4, 2, 2, 3), True)
    assert gradcheck(
        lambda x, w, b: F.conv_transpose2d(
            x, w, b[:4], stride=2, padding=1, output_padding=1, groups=2
        ),
        (xt, wt, b),
    )
    assert gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2), (xt, wt))
    assert gradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=2), (x1, E(rand(3, 2, 3), True)))


def test_conv_zero_batch():
    out = F.conv2d(ember.zeros(0, 3, 5, 5), ember.ones(2, 3, 3, 3))
    assert tuple(out.shape) == (0, 2, 3, 3)


def test_conv_errors():
    x, w = ember.zeros(2, 3, 5, 5), ember.zeros(4, 3, 3, 3)
    with pytest.raises(RuntimeError):
        F.conv2d(ember.zeros(3, 5), w)  # wrong rank
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(ember.zeros(2, 2, 5, 5), w)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(ember.zeros(1, 3, 2, 2), w)
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, ember.zeros(3))  # bias size
    with pytest.raises(RuntimeError):
        F.conv2d(x, ember.zeros(4, 1, 3, 3), groups=2)  # 4 out channels ok, 3 in channels not
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, stride=0)
    with pytest.raises(RuntimeError, match="strided"):
        F.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string"):
        F.conv2d(x, w, padding="full")
    with pytest.raises(RuntimeError):
        F.conv2d(x.to(ember.bool), w.to(ember.bool))
    with pytest.raises(RuntimeError):
        F.conv_transpose2d(x, ember.zeros(4, 2, 3, 3))  # input has 3 channels, weight wants 4
    with pytest.raises(RuntimeError):
        F.conv_transpose2d(ember.zeros(1, 4, 3, 3), ember.zeros(4, 2, 3, 3), output_padding=1)


# ---------------------------------------------------------------------------------------------
# pooling


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)),
        dict(kernel_size=3, stride=2, ceil_mode=True),
        dict(kernel_size=2, stride=2, padding=1, ceil_mode=True),
    ],
)
def test_max_pool2d_matches_torch(torch, kw):
    x = rand(2, 3, 9, 8)
    run_both(torch, "max_pool2d", [x], **kw)
    eo, ei = F.max_pool2d(E(x[0]), return_indices=True, **kw)
    to, ti = torch.nn.functional.max_pool2d(torch.tensor(x[0]), return_indices=True, **kw)
    check(eo, to)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, dilation=2),
        dict(kernel_size=4, stride=3, ceil_mode=True),
    ],
)
def test_max_pool1d_matches_torch(torch, kw):
    x = rand(2, 3, 13)
    run_both(torch, "max_pool1d", [x], **kw)
    eo, ei = F.max_pool1d(E(x), return_indices=True, **kw)
    _, ti = torch.nn.functional.max_pool1d(torch.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


def test_max_pool2d_numpy_and_nan():
    x = rand(2, 3, 6, 6)
    out = F.max_pool2d(E(x), 2)
    np.testing.assert_allclose(out.numpy(), x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    x[0, 0, 0, 1] = np.nan
    assert np.isnan(F.max_pool2d(E(x), 2).numpy()[0, 0, 0, 0])


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
        dict(kernel_size=3, stride=2, ceil_mode=True),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        dict(kernel_size=(2, 3), divisor_override=5),
    ],
)
def test_avg_pool2d_matches_torch(torch, kw):
    run_both(torch, "avg_pool2d", [rand(2, 3, 9, 8)], **kw)
    run_both(torch, "avg_pool2d", [rand(3, 7, 7)], **kw)


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
        dict(kernel_size=3, ceil_mode=True),
    ],
)
def test_avg_pool1d_matches_torch(torch, kw):
    run_both(torch, "avg_pool1d", [rand(2, 3, 10)], **kw)


@pytest.mark.parametrize("size", [1, 3, (2, 5), (None, 4), (7, 6)])
def test_adaptive_pool2d_matches_torch(torch, size):
    x = rand(2, 3, 7, 6)
    run_both(torch, "adaptive_avg_pool2d", [x], output_size=size)
    run_both(torch, "adaptive_max_pool2d", [x], output_size=size)
    _, ei = F.adaptive_max_pool2d(E(x), size, return_indices=True)
    _, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), size, return_indices=True)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


@pytest.mark.parametrize("size", [1, 3, 5])
def test_adaptive_pool1d_matches_torch(torch, size):
    run_both(torch, "adaptive_avg_pool1d", [rand(2, 3, 7)], output_size=size)
    run_both(torch, "adaptive_max_pool1d", [rand(2, 3, 7)], output_size=size)


def test_adaptive_avg_pool_numpy():
    x = rand(2, 3, 6, 4)
    np.testing.assert_allclose(
        F.adaptive_avg_pool2d(E(x), 1).numpy(), x.mean(axis=(2, 3), keepdims=True)
    )
    np.testing.assert_allclose(
        F.adaptive_avg_pool2d(E(x), (3, 2)).numpy(), x.reshape(2, 3, 3, 2, 2, 2).mean(axis=(3, 5))
    )


def test_pool_gradcheck():
    x = E(rand(2, 2, 5, 6), True)
    assert gradcheck(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (x,))
    assert gradgradcheck(lambda x: F.max_pool2d(x, 2), (x,))
    assert gradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (x,))
    assert gradgradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (x,))
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (x,))
    assert gradgradcheck(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (x,))
    assert gradcheck(lambda x: F.adaptive_max_pool2d(x, (2, 4)), (x,))
    x1 = E(rand(2, 3, 7), True)
    assert gradcheck(lambda x: F.max_pool1d(x, 3, 2, 1), (x1,))
    assert gradcheck(lambda x: F.avg_pool1d(x, 3, 2), (x1,))
    assert gradcheck(lambda x: F.adaptive_avg_pool1d(x, 3), (x1,))
    assert gradcheck(lambda x: F.adaptive_max_pool1d(x, 3), (x1,))


def test_pool_noncontiguous_and_zero_batch():
    x = rand(2, 3, 6, 8)
    xt = E(x).transpose(2, 3)  # (2, 3, 8, 6) non-contiguous
    xs = np.ascontiguousarray(x.transpose(0, 1, 3, 2))
    np.testing.assert_allclose(
        F.max_pool2d(xt, 2).numpy(), xs.reshape(2, 3, 4, 2, 3, 2).max(axis=(3, 5))
    )
    np.testing.assert_allclose(
        F.avg_pool2d(xt, 2).numpy(), xs.reshape(2, 3, 4, 2, 3, 2).mean(axis=(3, 5))
    )
    np.testing.assert_allclose(
        F.adaptive_avg_pool2d(xt, 1).numpy(), xs.mean(axis=(2, 3), keepdims=True)
    )
    assert tuple(F.max_pool2d(ember.zeros(0, 3, 4, 4), 2).shape) == (0, 3, 2, 2)
    assert tuple(F.avg_pool2d(ember.zeros(0, 3, 4, 4), 2).shape) == (0, 3, 2, 2)


def test_pool_errors():
    x = ember.zeros(1, 1, 4, 4)
    with pytest.raises(RuntimeError):
        F.max_pool2d(ember.zeros(4, 4, 4, 4, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="too small"):
        F.max_pool2d(x, 5)
    with pytest.raises(RuntimeError):
        F.avg_pool2d(x, 0)
    with pytest.raises(RuntimeError):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError):
        F.adaptive_avg_pool2d(ember.zeros(1, 1, 0, 4), 2)


# ---------------------------------------------------------------------------------------------
# pad, interpolate, fold / unfold


@pytest.mark.parametrize(
    "mode,pads,shape",
    [
        ("constant", (1, 2), (2, 3, 4)),
        ("constant", (1, -1, 2, 0, 0, 1), (2, 3, 4)),
        ("reflect", (2, 3), (2, 3, 5)),
        ("reflect", (1, 2, 3, 0), (2, 3, 4, 5)),
        ("replicate", (2, 1, 0, 3), (2, 4, 5)),
        ("replicate", (1, 1, 1, 1, 1, 1), (1, 2, 3, 4, 2)),
        ("circular", (2, 1), (2, 3, 4)),
        ("circular", (1, 2, 3, 1), (1, 2, 4, 5)),
        ("reflect", (-1, 2), (2, 3, 5)),
    ],
)
def test_pad_matches_torch(torch, mode, pads, shape):
    run_both(torch, "pad", [rand(*shape)], pad=pads, mode=mode)


def test_pad_value_and_numpy():
    x = rand(2, 3)
    out = F.pad(E(x), (1, 2, 0, 1), value=7.0)
    np.testing.assert_allclose(out.numpy(), np.pad(x, ((0, 1), (1, 2)), constant_values=7.0))
    np.testing.assert_allclose(
        F.pad(E(x), (2, 1), mode="reflect").numpy(), np.pad(x, ((0, 0), (2, 1)), mode="reflect")
    )
    np.testing.assert_allclose(
        F.pad(E(x), (2, 1), mode="replicate").numpy(), np.pad(x, ((0, 0), (2, 1)), mode="edge")
    )
    np.testing.assert_allclose(
        F.pad(E(x), (2, 1), mode="circular").numpy(), np.pad(x, ((0, 0), (2, 1)), mode="wrap")
    )
    x = E(rand(1, 2, 4, 3), True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert gradcheck(lambda x: F.pad(x, (1, 2, 2, 1), mode=mode), (x,))


def test_pad_errors():
    x = ember.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError):
        F.pad(x, (4, 4), mode="reflect")
    with pytest.raises(NotImplementedError):
        F.pad(ember.zeros(4), (1, 1), mode="reflect")
    with pytest.raises(NotImplementedError):
        F.pad(x, (1, 1), mode="bogus")
    with pytest.raises(RuntimeError, match="wrapping"):
        F.pad(x, (5, 5), mode="circular")


@pytest.mark.parametrize(
    "kw",
    [
        dict(size=(7, 5), mode="nearest"),
        dict(scale_factor=2, mode="nearest"),
        dict(scale_factor=(1.5, 0.7), mode="nearest"),
        dict(size=(3, 9), mode="nearest-exact"),
        dict(size=(7, 5), mode="bilinear"),
        dict(size=(7, 5), mode="bilinear", align_corners=True),
        dict(scale_factor=1.7, mode="bilinear"),
        dict(scale_factor=0.5, mode="bilinear", align_corners=True),
        dict(scale_factor=2.3, mode="bilinear", recompute_scale_factor=True),
        dict(size=(2, 3), mode="area"),
        dict(size=(7, 5), mode="bicubic"),
        dict(size=(9, 2), mode="bicubic", align_corners=True),
        dict(scale_factor=(1.7, 0.6), mode="bicubic"),
        dict(size=(1, 1), mode="bicubic"),
        dict(scale_factor=0.5, mode="bicubic", recompute_scale_factor=True),
    ],
)
def test_interpolate2d_matches_torch(torch, kw):
    run_both(torch, "interpolate", [rand(2, 3, 4, 6)], **kw)


@pytest.mark.parametrize(
    "kw",
    [
        dict(size=9, mode="nearest"),
        dict(scale_factor=2.5, mode="linear"),
        dict(size=4, mode="linear", align_corners=True),
        dict(size=3, mode="area"),
    ],
)
def test_interpolate1d_matches_torch(torch, kw):
    run_both(torch, "interpolate", [rand(2, 3, 6)], **kw)


@pytest.mark.parametrize(
    "kw",
    [
        dict(scale_factor=2, mode="nearest"),
        dict(size=(3, 5, 2), mode="trilinear"),
        dict(scale_factor=1.5, mode="trilinear", align_corners=True),
    ],
)
def test_interpolate3d_matches_torch(torch, kw):
    run_both(torch, "interpolate", [rand(1, 2, 2, 3, 4)], **kw)


def test_integer_inputs_match_torch(torch):
    x = np.random.randint(-9, 9, size=(2, 3, 6, 6))
    w = np.random.randint(-3, 3, size=(4, 3, 3, 3))
    tx, tw = torch.tensor(x), torch.tensor(w)
    TF = torch.nn.functional
    for e, t in [
        (F.conv2d(ember.tensor(x), ember.tensor(w), padding=1), TF.conv2d(tx, tw, padding=1)),
        (F.max_pool2d(ember.tensor(x), 2), TF.max_pool2d(tx, 2)),
        (F.avg_pool2d(ember.tensor(x), 3, 2, 1), TF.avg_pool2d(tx, 3, 2, 1)),
    ]:
        assert e.dtype == ember.int64
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_interpolate_numpy_and_grad():
    x = rand(1, 1, 2, 3)
    np.testing.assert_allclose(
        F.interpolate(E(x), scale_factor=2).numpy(), x.repeat(2, axis=2).repeat(2, axis=3)
    )
    x = E(rand(1, 2, 3, 4), True)
    assert gradcheck(lambda x: F.interpolate(x, size=(5, 7), mode="bilinear"), (x,))
    assert gradcheck(
        lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True), (x,)
    )
    assert gradcheck(lambda x: F.interpolate(x, scale_factor=2), (x,))
    assert gradcheck(lambda x: F.interpolate(x, size=(5, 2), mode="bicubic"), (x,))
    # cubic convolution's four weights sum to 1, so a constant image stays constant
    flat = F.interpolate(ember.full((1, 1, 3, 4), 2.5), scale_factor=2.5, mode="bicubic")
    np.testing.assert_allclose(flat.numpy(), np.full((1, 1, 7, 10), 2.5), rtol=1e-6)
    with pytest.raises(ValueError):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError):
        F.interpolate(x)
    with pytest.raises(ValueError):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(NotImplementedError):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(NotImplementedError):
        F.interpolate(ember.zeros(2, 2), scale_factor=2)


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=(2, 3), stride=2, padding=1),
        dict(kernel_size=3, dilation=2, padding=(0, 2)),
    ],
)
def test_unfold_fold_match_torch(torch, kw):
    x = rand(2, 3, 7, 8)
    cols = run_both(torch, "unfold", [x], **kw)
    run_both(torch, "fold", [rand(*cols.shape)], output_size=(7, 8), **kw)
    run_both(torch, "unfold", [x[0]], **kw)


def test_unfold_fold_numpy_and_grad():
    x = rand(1, 2, 3, 3)
    cols = F.unfold(E(x), 2)
    np.testing.assert_allclose(cols.numpy()[0, :, 0], x[0, :, :2, :2].reshape(2, 4).reshape(-1))
    # fold(unfold(x)) multiplies every pixel by the number of blocks covering it
    ones = F.fold(F.unfold(ember.ones(1, 1, 3, 3), 2), (3, 3), 2)
    np.testing.assert_allclose(ones.numpy()[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    xg = E(rand(1, 2, 4, 5), True)
    assert gradcheck(lambda x: F.unfold(x, (2, 3), padding=1, stride=(1, 2)), (xg,))
    cg = E(rand(1, 12, 15), True)
    assert gradcheck(lambda c: F.fold(c, (4, 5), (2, 3), padding=1, stride=(1, 2)), (cg,))
    with pytest.raises(RuntimeError):
        F.fold(E(rand(1, 12, 14)), (4, 5), (2, 3), padding=1, stride=(1, 2))
    with pytest.raises(RuntimeError):
        F.unfold(E(rand(1, 1, 2, 2)), 3)


# ---------------------------------------------------------------------------------------------
# embeddings


def test_embedding_numpy_and_padding_grad():
    w = rand(5, 3)
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    ew = E(w, True)
    out = F.embedding(ember.tensor(idx), ew, padding_idx=2)
    np.testing.assert_allclose(out.detach().numpy(), w[idx])
    out.sum().backward()
    expected = np.zeros_like(w)
    np.add.at(expected, idx.reshape(-1), 1.0)
    expected[2] = 0
    np.testing.assert_allclose(ew.grad.numpy(), expected)
    assert gradcheck(lambda w: F.embedding(ember.tensor(idx), w), (E(w, True),))
    with pytest.raises(IndexError):
        F.embedding(ember.tensor([7]), ew)
    with pytest.raises(RuntimeError):
        F.embedding(ember.tensor([1.0]), ew)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(padding_idx=1),
        dict(scale_grad_by_freq=True),
        dict(padding_idx=-2, scale_grad_by_freq=True),
    ],
)
def test_embedding_matches_torch(torch, kw):
    w = rand(6, 4)
    idx = np.array([[1, 3, 3], [5, 1, 0]])
    ew, tw = E(w, True), torch.tensor(w, requires_grad=True)
    eo = F.embedding(ember.tensor(idx), ew, **kw)
    to = torch.nn.functional.embedding(torch.tensor(idx), tw, **kw)
    check(eo, to)
    g = rand(*to.shape)
    eo.backward(E(g))
    to.backward(torch.tensor(g))
    check(ew.grad, tw.grad)


def test_embedding_max_norm_matches_torch(torch):
    w = rand(5, 3) * 3
    idx = np.array([0, 3, 3])
    ew, tw = E(w), torch.tensor(w)
    check(
        F.embedding(ember.tensor(idx), ew, max_norm=1.0),
        torch.nn.functional.embedding(torch.tensor(idx), tw, max_norm=1.0),
    )
    check(ew, tw)  # rows renormalized in place, the unused ones untouched


@pytest.mark.parametrize(
    "kw",
    [
        dict(mode="sum"),
        dict(mode="mean"),
        dict(mode="max"),
        dict(mode="sum", include_last_offset=True),
        dict(mode="mean", padding_idx=2),
        dict(mode="sum", per_sample_weights=True),
    ],
)
def test_embedding_bag_matches_torch(torch, kw):
    w = rand(6, 3)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 0])
    offsets = np.array([0, 2, 2, 5])
    kw = dict(kw)
    psw = rand(len(idx)) if kw.pop("per_sample_weights", False) else None
    ew, tw = E(w, True), torch.tensor(w, requires_grad=True)
    eo = F.embedding_bag(
        ember.tensor(idx),
        ew,
        ember.tensor(offsets),
        per_sample_weights=None if psw is None else E(psw),
        **kw,
    )
    to = torch.nn.functional.embedding_bag(
        torch.tensor(idx),
        tw,
        torch.tensor(offsets),
        per_sample_weights=None if psw is None else torch.tensor(psw),
        **kw,
    )
    check(eo, to)
    g = rand(*to.shape)
    eo.backward(E(g))
    to.backward(torch.tensor(g))
    check(ew.grad, tw.grad)
    idx2 = idx.reshape(2, 4)
    check(
        F.embedding_bag(ember.tensor(idx2), E(w), mode=kw["mode"]),
        torch.nn.functional.embedding_bag(torch.tensor(idx2), tw.detach(), mode=kw["mode"]),
    )


def test_embedding_bag_numpy_and_errors():
    w = rand(4, 2)
    out = F.embedding_bag(ember.tensor([0, 1, 3, 3]), E(w), ember.tensor([0, 1, 1]), mode="sum")
    np.testing.assert_allclose(out.numpy(), [w[0], np.zeros(2), w[1] + 2 * w[3]])
    with pytest.raises(ValueError):
        F.embedding_bag(ember.tensor([0, 1]), E(w))
    with pytest.raises(ValueError):
        F.embedding_bag(ember.tensor([[0, 1]]), E(w), ember.tensor([0]))
    with pytest.raises(NotImplementedError):
        F.embedding_bag(ember.tensor([[0, 1]]), E(w), mode="mean", per_sample_weights=E(rand(1, 2)))
