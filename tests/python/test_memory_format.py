"""Memory formats (channels_last, channels_last_3d, preserve_format): strides of contiguous(),
empty/empty_like/*_like/clone/to, is_contiguous answers (size-1 dims included), the layout of
elementwise results, conv/pool/batch-norm outputs and gradients, and leaf gradients' layout.
Each case is checked against strides worked out by hand, and against torch 2.13 where it is
installed (the same code runs on both modules)."""

import numpy as np
import pytest

import ember

CL = ember.channels_last
CL3 = ember.channels_last_3d


def _arange(m, *shape):
    n = 1
    for s in shape:
        n *= s
    return m.arange(n, dtype=m.float32).reshape(*shape)


def _randn(m, *shape, seed=0):
    """The same normal draws for ember and torch (their generators differ)."""
    data = np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(np.float32)
    return m.tensor(data)


def _close(a, b, atol=1e-4):
    """Values of an ember result and a torch one agree (any layouts)."""
    return np.allclose(np.array(a.tolist()), np.array(b.tolist()), atol=atol, rtol=1e-5)


def _torch():
    return pytest.importorskip("torch")


# --- strides worked out by hand -----------------------------------------------------------------


def test_contiguous_channels_last_strides():
    x = _arange(ember, 2, 3, 4, 5)
    y = x.contiguous(memory_format=CL)
    # NHWC: C fastest (1), then W (C = 3), H (W * C = 15), N (H * W * C = 60)
    assert y.stride() == (60, 1, 15, 3)
    assert y.is_contiguous(memory_format=CL) and not y.is_contiguous()
    assert y.tolist() == x.tolist()
    assert y.contiguous(memory_format=CL) is y
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1) and back.tolist() == x.tolist()


def test_contiguous_channels_last_3d_strides():
    x = _arange(ember, 2, 3, 4, 5, 6)
    y = x.contiguous(memory_format=CL3)
    assert y.stride() == (360, 1, 90, 18, 3)
    assert y.is_contiguous(memory_format=CL3)
    assert not y.is_contiguous(memory_format=CL) and not y.is_contiguous()
    assert y.tolist() == x.tolist()


def test_empty_in_a_format():
    assert ember.empty(2, 3, 4, 5, memory_format=CL).stride() == (60, 1, 15, 3)
    assert ember.empty((2, 3, 4, 5, 6), memory_format=CL3).stride() == (360, 1, 90, 18, 3)
    assert ember.empty(2, 3, 4, 5, memory_format=ember.contiguous_format).stride() == (
        60,
        20,
        5,
        1,
    )
    # sizes multiply as they are, so a zero-size dim zeroes the slower strides (as torch's)
    assert ember.empty(2, 0, 4, 5, memory_format=CL).stride() == (0, 1, 0, 0)
    assert ember.empty(2, 3, 0, 5, memory_format=CL).stride() == (0, 1, 15, 3)


def test_format_errors():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        ember.empty(2, 3, 4, memory_format=CL)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        ember.zeros(2, 3, 4).contiguous(memory_format=CL)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        ember.zeros(2, 3, 4, 5).contiguous(memory_format=CL3)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        ember.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous(memory_format=ember.preserve_format)
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        ember.empty(2, 3, 4, 5, memory_format=ember.preserve_format)
    with pytest.raises(TypeError, match="must be torch.memory_format, not str"):
        ember.zeros(2, 3, 4, 5).contiguous(memory_format="channels_last")
    # a contiguous tensor is returned as is whatever preserve_format would mean
    x = ember.zeros(2, 3, 4, 5)
    assert x.contiguous(memory_format=ember.preserve_format) is x
    assert not ember.zeros(2, 3, 4).is_contiguous(memory_format=CL)


# is_contiguous answers: (shape, how the tensor is made, [contiguous, channels_last]).
IS_CONTIGUOUS_CASES = [
    ((2, 3, 4, 5), "nchw", [True, False]),
    ((2, 3, 4, 5), "cl", [False, True]),
    ((1, 3, 4, 5), "cl", [False, True]),  # batch of 1 in NHWC is not row-major
    ((2, 1, 4, 5), "nchw", [True, True]),  # one channel: both orders agree
    ((2, 3, 1, 1), "nchw", [True, True]),  # 1x1 spatial: both orders agree
    ((1, 3, 1, 1), "nchw", [True, True]),
    ((1, 1, 4, 5), "nchw", [True, True]),
    ((2, 0, 4, 5), "nchw", [True, False]),  # empty: row-major always, NHWC by its strides
    ((0, 3, 4, 5), "nchw", [True, False]),
    ((2, 3, 8, 10), "cl_sliced", [False, False]),  # NHWC with gaps
]


def _make(m, shape, how):
    x = m.zeros(*shape)
    if how == "cl":
        return x.contiguous(memory_format=m.channels_last)
    if how == "cl_sliced":
        return x.contiguous(memory_format=m.channels_last)[:, :, ::2, ::2]
    return x


@pytest.mark.parametrize("shape,how,expected", IS_CONTIGUOUS_CASES)
def test_is_contiguous_size_one_dims(shape, how, expected):
    x = _make(ember, shape, how)
    got = [x.is_contiguous(), x.is_contiguous(memory_format=CL)]
    assert got == expected
    assert x.is_contiguous(memory_format=ember.preserve_format) == got[0]


@pytest.mark.parametrize("shape,how,expected", IS_CONTIGUOUS_CASES)
def test_is_contiguous_matches_torch(shape, how, expected):
    torch = _torch()
    t = _make(torch, shape, how)
    assert [t.is_contiguous(), t.is_contiguous(memory_format=torch.channels_last)] == expected
    e = _make(ember, shape, how)
    assert e.stride() == t.stride()
    for shape2 in [(2, 3, 4, 5), (1, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 1, 1, 1)]:
        a = ember.zeros(*shape2).contiguous(memory_format=CL)
        b = torch.zeros(*shape2).contiguous(memory_format=torch.channels_last)
        assert a.stride() == b.stride(), shape2


# --- preserve_format: *_like, clone, to ---------------------------------------------------------


def _layouts(m):
    """Inputs in various layouts: (name, tensor)."""
    x = _arange(m, 2, 3, 8, 10)
    cl = x.contiguous(memory_format=m.channels_last)
    return [
        ("nchw", x),
        ("cl", cl),
        ("cl_b1", _arange(m, 1, 3, 4, 5).contiguous(memory_format=m.channels_last)),
        ("cl_sliced", cl[:, :, ::2, ::2]),  # not dense: packed in NHWC order
        ("cl_c1", cl[:, 0:1]),  # one channel of NHWC: dense in NHWC but not
        ("permuted", x.permute(0, 2, 3, 1)[:, :, ::2]),
        ("transposed", _arange(m, 4, 3).t()),
        ("odd_size1", m.zeros(100).as_strided((2, 3, 1), (3, 1, 7))),  # dense: strides kept
        ("sliced_size1", _arange(m, 2, 3, 4)[:, :, 0:1]),  # not dense: repacked
        ("cl3d", _arange(m, 2, 3, 4, 5, 6).contiguous(memory_format=m.channels_last_3d)),
    ]


# Strides that preserve_format gives each input above (worked out by hand; torch agrees).
PRESERVED = {
    "nchw": (240, 80, 10, 1),
    "cl": (240, 1, 30, 3),
    "cl_b1": (60, 1, 15, 3),
    "cl_sliced": (60, 1, 15, 3),
    "cl_c1": (80, 1, 10, 1),
    "permuted": (120, 5, 1, 40),
    "transposed": (1, 3),
    "odd_size1": (3, 1, 7),
    "sliced_size1": (3, 1, 1),
    "cl3d": (360, 1, 90, 18, 3),
}


def _like_results(m, x):
    return {
        "empty_like": m.empty_like(x),
        "zeros_like": m.zeros_like(x),
        "ones_like": m.ones_like(x),
        "full_like": m.full_like(x, 7.0),
        "rand_like": m.rand_like(x),
        "randn_like": m.randn_like(x),
        "clone": x.clone(),
        "double": x.double(),
        "to_double": x.to(m.float64),
    }


def test_preserve_format_by_hand():
    for name, x in _layouts(ember):
        for op, r in _like_results(ember, x).items():
            assert r.stride() == PRESERVED[name], (name, op)
            assert r.shape == x.shape
        assert ember.zeros_like(x).tolist() == ember.zeros(x.shape).tolist()
        assert ember.full_like(x, 7.0).tolist() == ember.full(x.shape, 7.0).tolist()
        assert x.clone().tolist() == x.tolist()
        assert x.double().tolist() == x.tolist()


def test_preserve_format_matches_torch():
    torch = _torch()
    for (name, x), (_, t) in zip(_layouts(ember), _layouts(torch)):
        mine, theirs = _like_results(ember, x), _like_results(torch, t)
        for op in mine:
            assert mine[op].stride() == theirs[op].stride(), (name, op)


def test_like_with_an_explicit_format():
    x = _arange(ember, 2, 3, 4, 5)
    assert ember.empty_like(x, memory_format=CL).stride() == (60, 1, 15, 3)
    assert ember.zeros_like(x, memory_format=CL).stride() == (60, 1, 15, 3)
    assert ember.rand_like(x, memory_format=CL).stride() == (60, 1, 15, 3)
    cl = x.contiguous(memory_format=CL)
    assert ember.ones_like(cl, memory_format=ember.contiguous_format).stride() == (60, 20, 5, 1)
    assert x.clone(memory_format=CL).stride() == (60, 1, 15, 3)
    assert cl.clone(memory_format=ember.contiguous_format).stride() == (60, 20, 5, 1)
    assert ember.clone(cl, memory_format=ember.contiguous_format).tolist() == x.tolist()


def test_to_memory_format():
    x = _arange(ember, 2, 3, 4, 5)
    y = x.to(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3) and y.tolist() == x.tolist()
    assert y.to(memory_format=CL) is y  # already in the format: no copy
    assert y.to(memory_format=ember.preserve_format) is y
    z = y.to(ember.float64, memory_format=ember.contiguous_format)
    assert z.dtype == ember.float64 and z.stride() == (60, 20, 5, 1)
    assert y.float(memory_format=ember.contiguous_format).stride() == (60, 20, 5, 1)
    assert x.half(memory_format=CL).stride() == (60, 1, 15, 3)
    # a strided slice that still follows NHWC is "channels_last" to `to`: returned as is
    s = y[:, :, ::2]
    assert s.to(memory_format=CL) is s


def test_empty_strided_and_new_empty():
    assert ember.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
    cl = _arange(ember, 2, 3, 4, 5).contiguous(memory_format=CL)
    assert cl.new_empty((2, 3, 4, 5)).stride() == (60, 20, 5, 1)


def test_memory_format_objects():
    assert repr(CL) == "torch.channels_last"
    assert isinstance(ember.preserve_format, ember.memory_format)
    import pickle

    assert pickle.loads(pickle.dumps(CL)) is CL


# --- elementwise results ------------------------------------------------------------------------


def _elementwise_cases(m):
    """(name, result) of elementwise ops over inputs in mixed layouts."""
    x = _arange(m, 2, 3, 4, 5)
    cl = (x + 1).contiguous(memory_format=m.channels_last)
    cl1 = _arange(m, 1, 3, 4, 5).contiguous(memory_format=m.channels_last)
    c1 = _arange(m, 1, 3, 4, 5)
    t = _arange(m, 4, 3).t()
    sl = cl[:, :, ::2]
    odd = m.ones(100).as_strided((2, 3, 1), (3, 1, 7))
    cl3 = _arange(m, 2, 3, 4, 5, 6).contiguous(memory_format=m.channels_last_3d)
    return [
        ("relu(cl)", m.relu(cl)),
        ("cl + cl", cl + cl),
        ("cl * 2", cl * 2),
        ("2 - cl", 2 - cl),
        ("cl + nchw", cl + x),
        ("nchw + cl", x + cl),
        ("cl + bias", cl + _arange(m, 3, 1, 1)),
        ("bias + cl", _arange(m, 3, 1, 1) + cl),
        ("(1,3,1,1) * cl", _arange(m, 1, 3, 1, 1) * cl),
        ("cl + row", cl + _arange(m, 5)),
        ("(2,1,4,5) + cl", _arange(m, 2, 1, 4, 5) + cl),
        ("cl1 + c1", cl1 + c1),
        ("c1 + cl1", c1 + cl1),
        ("cl1 + nchw", cl1 + x),
        ("nchw + cl1", x + cl1),
        ("t + c", t + _arange(m, 3, 4)),
        ("c + t", _arange(m, 3, 4) + t),
        ("c + t + t", _arange(m, 3, 4) + t + t),
        ("exp(t)", m.exp(t)),
        ("sliced + 1", sl + 1),
        ("neg(sliced)", m.neg(sl)),
        ("sliced + sliced", sl + sl),
        ("odd.relu", odd.relu()),
        ("odd + 1", odd + 1),
        ("cl3d.relu", cl3.relu()),
        ("cl3d + cl3d", cl3 + cl3),
        ("cl3d * 3", cl3 * 3),
        ("where(cl > 0, cl, x)", m.where(cl > 0, cl, x)),
        ("where(x > 0, x, cl)", m.where(x > 0, x, cl)),
        ("cl > 3", cl > 3),
        ("sigmoid(cl)", m.sigmoid(cl)),
        ("cl.float().double()", cl.double()),
        ("cat([cl, cl], 1)", m.cat([cl, cl], 1)),
        ("cat([cl, x], 0)", m.cat([cl, x], 0)),
        ("cat([sliced, sliced], 2)", m.cat([sl, sl], 2)),
    ]


# What the matrix above gives, worked out by hand from the rule in Note [Output layout].
HAND = {
    "relu(cl)": (60, 1, 15, 3),
    "cl + cl": (60, 1, 15, 3),
    "cl * 2": (60, 1, 15, 3),
    "2 - cl": (60, 1, 15, 3),
    "cl + nchw": (60, 1, 15, 3),  # the first input decides
    "nchw + cl": (60, 20, 5, 1),
    "cl + bias": (60, 1, 15, 3),
    "bias + cl": (60, 1, 15, 3),  # the broadcast bias abstains
    "(2,1,4,5) + cl": (60, 1, 15, 3),  # its broadcast channel dim abstains, cl orders C first
    "cl1 + c1": (60, 1, 15, 3),
    "c1 + cl1": (60, 20, 5, 1),
    "t + c": (1, 3),
    "c + t": (4, 1),
    "exp(t)": (1, 3),
    "sliced + 1": (30, 1, 15, 3),
    "odd.relu": (3, 1, 1),  # row-major (size-1 dims skipped): the row-major fast path
    "odd + 1": (3, 1, 6),  # packed in the input's order, its size-1 dim last
    "cl3d.relu": (360, 1, 90, 18, 3),
    "cat([cl, cl], 1)": (120, 1, 30, 6),  # all channels-last: a channels-last result
    "cat([cl, x], 0)": (60, 20, 5, 1),  # formats disagree: row-major
}


def test_elementwise_layout_by_hand():
    for name, r in _elementwise_cases(ember):
        if name in HAND:
            assert r.stride() == HAND[name], name


def test_elementwise_layout_matches_torch():
    torch = _torch()
    for (name, r), (_, t) in zip(_elementwise_cases(ember), _elementwise_cases(torch)):
        assert r.stride() == t.stride(), name
        assert _close(r.detach(), t.detach()), name


# --- conv, pooling, batch norm ------------------------------------------------------------------


def _spatial_cases(m, grad_layout):
    F = m.nn.functional
    out = []

    def case(name, fn, x, *params):
        x = x.detach().requires_grad_()
        params = [p.detach().requires_grad_() for p in params]
        y = fn(x, *params)
        g = m.ones(y.shape).contiguous(memory_format=grad_layout) if y.dim() == 4 else None
        grads = m.autograd.grad(y, [x, *params], m.ones_like(y) if g is None else g)
        out.append((name, y, grads))

    x = _randn(m, 2, 3, 8, 8)
    xcl = x.contiguous(memory_format=m.channels_last)
    w = _randn(m, 4, 3, 3, 3, seed=1)
    b = _randn(m, 4)
    case("conv2d cl", lambda t, w, b: F.conv2d(t, w, b, padding=1), xcl, w, b)
    case("conv2d cl b1", lambda t, w: F.conv2d(t, w), xcl[:1], w)
    case(
        "conv2d cl weight",
        lambda t, w: F.conv2d(t, w),
        x,
        w.contiguous(memory_format=m.channels_last),
    )
    case("conv2d nchw", lambda t, w: F.conv2d(t, w), x, w)
    case(
        "conv2d 1x1 ambiguous",
        lambda t, w: F.conv2d(t, w),
        _randn(m, 2, 3, 1, 1),
        _randn(m, 4, 3, 1, 1, seed=2),
    )
    case("max_pool2d", lambda t: F.max_pool2d(t, 2), xcl)
    case("avg_pool2d", lambda t: F.avg_pool2d(t, 2), xcl)
    case("adaptive_avg_pool2d", lambda t: F.adaptive_avg_pool2d(t, 3), xcl)
    case("adaptive_avg_pool2d 1", lambda t: F.adaptive_avg_pool2d(t, 1), xcl)
    case("adaptive_max_pool2d", lambda t: F.adaptive_max_pool2d(t, 3), xcl)
    bn = lambda t, w, b: F.batch_norm(t, m.zeros(3), m.ones(3), w, b, training=True)  # noqa: E731
    case("batch_norm train", bn, xcl, _randn(m, 3).abs() + 0.5, _randn(m, 3, seed=3))
    case("batch_norm eval", lambda t: F.batch_norm(t, m.zeros(3), m.ones(3)), xcl)
    # activations: the backward's operand order decides the gradient's layout (relu and
    # leaky_relu list the input first in torch, gelu and hardtanh the incoming gradient)
    case("relu", F.relu, xcl)
    case("leaky_relu", F.leaky_relu, xcl)
    case("gelu", F.gelu, xcl)
    case("hardtanh", F.hardtanh, xcl)
    out.append(
        (
            "max_pool2d indices",
            F.max_pool2d(xcl, 2, return_indices=True)[1],
            (),
        )
    )
    x5 = _randn(m, 2, 3, 4, 5, 5).contiguous(memory_format=m.channels_last_3d)
    out.append(("conv3d cl3d", F.conv3d(x5, _randn(m, 4, 3, 3, 3, 3)), ()))
    return out


SPATIAL_HAND = {
    "conv2d cl": [(256, 1, 32, 4), (192, 1, 24, 3), (27, 1, 9, 3), (1,)],
    "conv2d cl weight": [(144, 1, 24, 4), (192, 1, 24, 3), (27, 1, 9, 3)],
    "conv2d nchw": [(144, 36, 6, 1), (192, 64, 8, 1), (27, 9, 3, 1)],
    "conv2d 1x1 ambiguous": [(4, 1, 1, 1), (3, 1, 1, 1), (3, 1, 1, 1)],  # NCHW wins the tie
    "max_pool2d": [(48, 1, 12, 3), (192, 1, 24, 3)],
    "avg_pool2d": [(48, 1, 12, 3), (192, 1, 24, 3)],
    "adaptive_avg_pool2d": [(27, 1, 9, 3), (192, 1, 24, 3)],
    # a global average is a mean in torch, whose gradient is row-major
    "adaptive_avg_pool2d 1": [(3, 1, 3, 3), (192, 64, 8, 1)],
    "batch_norm train": [(192, 1, 24, 3), (192, 1, 24, 3), (1,), (1,)],
    "max_pool2d indices": [(48, 1, 12, 3)],
    "conv3d cl3d": [(72, 1, 36, 12, 4)],
}


def test_spatial_layouts_by_hand():
    for name, y, grads in _spatial_cases(ember, CL):
        if name in SPATIAL_HAND:
            got = [y.stride()] + [g.stride() for g in grads]
            assert got == SPATIAL_HAND[name], name


@pytest.mark.parametrize("grad_layout", ["channels_last", "contiguous_format"])
def test_spatial_layouts_match_torch(grad_layout):
    torch = _torch()
    # gradients of pooling follow the incoming gradient's layout in ember (its kernels do not see
    # the input), so they are compared when that gradient is channels-last, as in a CL network
    grad_pools = grad_layout == "channels_last"
    mine = _spatial_cases(ember, getattr(ember, grad_layout))
    theirs = _spatial_cases(torch, getattr(torch, grad_layout))
    for (name, y, grads), (_, ty, tgrads) in zip(mine, theirs):
        assert y.stride() == ty.stride(), name
        assert _close(y.detach(), ty.detach()), name
        if not grad_pools and "pool" in name:
            continue
        for g, tg in zip(grads, tgrads):
            assert g.stride() == tg.stride(), name
            assert _close(g, tg), name


# --- autograd: leaf gradients follow the leaf's layout ------------------------------------------


def _leaf_grads(m):
    out = []
    cl = m.randn(2, 3, 4, 5).contiguous(memory_format=m.channels_last).requires_grad_()
    (cl * 2).sum().backward()  # the gradient arrives as an expanded (stride 0) tensor
    out.append(("cl * 2", cl.grad))
    cl2 = m.randn(2, 3, 4, 5).contiguous(memory_format=m.channels_last).requires_grad_()
    (cl2.contiguous() * m.randn(2, 3, 4, 5)).sum().backward()  # row-major incoming gradient
    out.append(("cl via contiguous", cl2.grad))
    t = m.randn(3, 4).t().detach().requires_grad_()
    (t * t).sum().backward()
    out.append(("transposed", t.grad))
    gap = m.randn(100).as_strided((3, 4), (20, 2)).detach().requires_grad_()
    (gap * 3).sum().backward()  # not dense: row-major
    out.append(("gappy", gap.grad))
    acc = m.randn(2, 3, 4, 5).contiguous(memory_format=m.channels_last).requires_grad_()
    acc.sum().backward()
    (acc.contiguous() * 2).sum().backward()  # the second gradient adds into the first
    out.append(("accumulated", acc.grad))
    return out


LEAF_HAND = {
    "cl * 2": (60, 1, 15, 3),
    "cl via contiguous": (60, 1, 15, 3),
    "transposed": (1, 4),
    "gappy": (4, 1),
    "accumulated": (60, 1, 15, 3),
}


def test_leaf_gradient_layout_by_hand():
    for name, g in _leaf_grads(ember):
        assert g.stride() == LEAF_HAND[name], name
    acc = dict(_leaf_grads(ember))["accumulated"]
    assert acc.tolist() == ember.full((2, 3, 4, 5), 3.0).tolist()


def test_leaf_gradient_layout_matches_torch():
    torch = _torch()
    for (name, g), (_, tg) in zip(_leaf_grads(ember), _leaf_grads(torch)):
        assert g.stride() == tg.stride(), name


# --- modules ------------------------------------------------------------------------------------


def _module_run(m):
    m.manual_seed(0)
    nn = m.nn
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 4, 3),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 2),
    )
    model = model.to(memory_format=m.channels_last)
    x = m.randn(2, 3, 8, 8).to(memory_format=m.channels_last)
    feats = model[:5](x)
    model(x).sum().backward()
    return model, feats


def test_module_to_channels_last():
    model, feats = _module_run(ember)
    conv = model[0]
    assert conv.weight.stride() == (27, 1, 9, 3)  # 4-d parameters converted
    assert conv.bias.stride() == (1,)
    assert model[7].weight.stride() == (4, 1)  # 2-d ones untouched
    assert feats.is_contiguous(memory_format=CL)
    assert conv.weight.grad.stride() == (27, 1, 9, 3)
    assert isinstance(conv.weight, ember.nn.Parameter)


def test_module_to_channels_last_matches_torch():
    torch = _torch()
    model, feats = _module_run(ember)
    tmodel, tfeats = _module_run(torch)
    assert feats.stride() == tfeats.stride()
    for (name, p), (_, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
        assert p.stride() == tp.stride(), name
        assert p.grad.stride() == tp.grad.stride(), name
