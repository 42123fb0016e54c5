"""ember.nn.functional activations, normalization, dropout, linear maps and distances."""

import math
import os

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck


def _t(a, dtype=None, requires_grad=False):
    t = ember.tensor(np.asarray(a), dtype=dtype)
    return t.requires_grad_() if requires_grad else t


def _np(t):
    return t.detach().numpy()


def _torch_of(torch, t):
    return torch.tensor(_np(t))


def _close(a, b, dtype=np.float32):
    # float64 tolerance is loose because ember rounds Python floats used as scalars to float32.
    tol = 1e-5 if dtype == np.float32 else 1e-8
    np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol)


def gradgradcheck(fn, inputs):
    """Second derivatives: gradcheck of x, grad_out -> d fn(x) / dx . grad_out."""
    inputs = tuple(inputs)
    n = len(inputs)
    with ember.no_grad():
        out = fn(*inputs)
    gos = (_t(np.random.randn(*out.shape), requires_grad=True),)

    def first(*args):
        with ember.enable_grad():
            xs = args[:n]
            d = [x for x in xs if x.requires_grad]
            return tuple(ember.autograd.grad(fn(*xs), d, args[n:], create_graph=True))

    return gradcheck(first, inputs + gos)


# (name, kwargs) of every pointwise activation and its options.
ACTIVATIONS = [
    ("relu", {}),
    ("relu6", {}),
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
    ("selu", {}),
    ("celu", {}),
    ("celu", {"alpha": 2.0}),
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("mish", {}),
    ("sigmoid", {}),
    ("tanh", {}),
    ("hardtanh", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("hardsigmoid", {}),
    ("hardswish", {}),
    ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 1.0}),
    ("softsign", {}),
    ("threshold", {"threshold": 0.1, "value": -2.0}),
    ("logsigmoid", {}),
    ("tanhshrink", {}),
    ("softshrink", {}),
    ("softshrink", {"lambd": 1.0}),
    ("hardshrink", {}),
    ("hardshrink", {"lambd": 1.0}),
]
INPLACE = {
    "relu",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "celu",
    "silu",
    "mish",
    "hardtanh",
    "hardsigmoid",
    "hardswish",
    "threshold",
}
# Kinks where finite differences are meaningless: gradcheck inputs stay away from them.
KINKS = [0.0, -3.0, 3.0, 6.0, 1.0, -1.0, 0.5, -0.5, 0.1, 2.0, -2.0]


def _away_from_kinks(shape, seed=0):
    x = np.random.default_rng(seed).uniform(-4, 7, size=shape)
    for k in KINKS:
        x = np.where(np.abs(x - k) < 0.05, x + 0.12, x)
    return x


@pytest.mark.parametrize("name,kw", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values(torch, name, kw, dtype):
    x = np.random.randn(5, 7).astype(dtype) * 4
    got = getattr(F, name)(_t(x), **kw)
    want = getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
    assert got.dtype == _t(x).dtype
    _close(_np(got), want.numpy(), dtype)


@pytest.mark.parametrize("name,kw", ACTIVATIONS)
def test_activation_noncontiguous(torch, name, kw):
    x = np.random.randn(6, 8) * 4
    e = _t(x).t()[1:, ::2]
    got = getattr(F, name)(e, **kw)
    want = getattr(torch.nn.functional, name)(torch.tensor(x).t()[1:, ::2], **kw)
    _close(_np(got), want.numpy(), np.float64)


@pytest.mark.parametrize("name,kw", ACTIVATIONS)
def test_activation_gradcheck(name, kw):
    x = _t(_away_from_kinks((3, 4)), requires_grad=True)
    assert gradcheck(lambda a: getattr(F, name)(a, **kw), (x,))


@pytest.mark.parametrize(
    "name,kw",
    [
        a
        for a in ACTIVATIONS
        if a[0]
        in {"gelu", "silu", "mish", "elu", "softplus", "logsigmoid", "hardswish", "celu", "selu"}
    ],
)
def test_activation_gradgradcheck(name, kw):
    x = _t(_away_from_kinks((2, 3), seed=1), requires_grad=True)
    assert gradgradcheck(lambda a: getattr(F, name)(a, **kw), (x,))


@pytest.mark.parametrize("name,kw", [a for a in ACTIVATIONS if a[0] in INPLACE])
def test_activation_inplace(torch, name, kw):
    x = np.random.randn(4, 5) * 4
    e = _t(x)
    out = getattr(F, name)(e, inplace=True, **kw)
    assert out is e
    want = getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
    _close(_np(e), want.numpy(), np.float64)


def test_inplace_underscore_forms(torch):
    x = np.random.randn(4, 5) * 4
    for name, args in [
        ("relu_", ()),
        ("leaky_relu_", (0.3,)),
        ("elu_", (0.7,)),
        ("hardtanh_", (-2.0, 2.0)),
        ("threshold_", (0.5, 9.0)),
    ]:
        e = _t(x)
        assert getattr(F, name)(e, *args) is e
        want = getattr(torch.nn.functional, name)(torch.tensor(x), *args)
        _close(_np(e), want.numpy(), np.float64)


def test_inplace_activation_gradient():
    x = _t(np.random.randn(3, 4), requires_grad=True)
    y = x * 1.0
    F.silu(y, inplace=True)
    y.sum().backward()
    s = 1 / (1 + np.exp(-_np(x)))
    _close(_np(x.grad), s * (1 + _np(x) * (1 - s)), np.float64)


@pytest.mark.parametrize("name", ["gelu", "silu", "hardswish", "leaky_relu", "elu", "softplus"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_activation_half(torch, name, dtype):
    x = np.random.randn(64).astype(np.float32)
    e = _t(x).to(getattr(ember, dtype))
    got = getattr(F, name)(e)
    assert got.dtype == getattr(ember, dtype)
    want = getattr(torch.nn.functional, name)(torch.tensor(x).to(getattr(torch, dtype)))
    np.testing.assert_allclose(_np(got.float()), want.float().numpy(), rtol=2e-2, atol=2e-2)


def test_activation_zero_size_and_scalar():
    assert F.gelu(ember.zeros(0, 3)).shape == (0, 3)
    assert abs(F.silu(ember.tensor(1.0)).item() - 1 / (1 + math.exp(-1))) < 1e-6


def test_activation_errors():
    with pytest.raises(RuntimeError):
        F.gelu(ember.ones(3), approximate="bad")
    with pytest.raises(RuntimeError):
        F.gelu(ember.ones(3, dtype=ember.int64))
    with pytest.raises(RuntimeError):
        F.celu(ember.ones(3), alpha=0.0)
    with pytest.raises(RuntimeError):
        F.softshrink(ember.ones(3), -1.0)
    with pytest.raises(RuntimeError):
        F.glu(ember.ones(3, 5))
    with pytest.raises(RuntimeError):
        F.prelu(ember.ones(2, 3), ember.ones(4))


def test_prelu_glu(torch):
    x = np.random.randn(2, 3, 4)
    w = np.array([0.1, 0.5, -0.2])
    _close(
        _np(F.prelu(_t(x), _t(w))),
        torch.nn.functional.prelu(torch.tensor(x), torch.tensor(w)).numpy(),
        np.float64,
    )
    _close(
        _np(F.prelu(_t(x), _t(np.array([0.3])))),
        torch.nn.functional.prelu(torch.tensor(x), torch.tensor(np.array([0.3]))).numpy(),
        np.float64,
    )
    for d in (0, 1, -1):
        y = np.random.randn(4, 6, 2)
        _close(
            _np(F.glu(_t(y), d)), torch.nn.functional.glu(torch.tensor(y), d).numpy(), np.float64
        )
    xe, we = _t(_away_from_kinks((2, 3, 2)), requires_grad=True), _t(w, requires_grad=True)
    assert gradcheck(F.prelu, (xe, we))
    assert gradcheck(lambda a: F.glu(a, 1), (_t(np.random.randn(2, 4), requires_grad=True),))


# ---- normalization --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (4, 3, 5, 6)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_running_stats(torch, shape, affine):
    c = shape[1]
    w, b = np.random.rand(c) + 0.5, np.random.randn(c)
    rm, rv = np.zeros(c), np.ones(c)
    erm, erv, trm, trv = _t(rm), _t(rv), torch.tensor(rm), torch.tensor(rv)
    ew = _t(w) if affine else None
    eb = _t(b) if affine else None
    tw = torch.tensor(w) if affine else None
    tb = torch.tensor(b) if affine else None
    for step in range(3):
        x = np.random.randn(*shape) * 3 + step
        got = F.batch_norm(_t(x), erm, erv, ew, eb, training=True, momentum=0.2)
        want = torch.nn.functional.batch_norm(
            torch.tensor(x), trm, trv, tw, tb, training=True, momentum=0.2
        )
        _close(_np(got), want.numpy(), np.float64)
    _close(_np(erm), trm.numpy(), np.float64)
    _close(_np(erv), trv.numpy(), np.float64)
    x = np.random.randn(*shape)
    got = F.batch_norm(_t(x), erm, erv, ew, eb, training=False)
    want = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, tw, tb, training=False)
    _close(_np(got), want.numpy(), np.float64)


def test_batch_norm_float32_noncontiguous(torch):
    x = np.random.randn(6, 4, 5).astype(np.float32)
    e = _t(x).transpose(0, 2)  # (5, 4, 6), non-contiguous
    tx = torch.tensor(x).transpose(0, 2)
    w = np.random.rand(4).astype(np.float32)
    got = F.batch_norm(e, None, None, _t(w), None, training=True)
    want = torch.nn.functional.batch_norm(tx, None, None, torch.tensor(w), None, training=True)
    _close(_np(got), want.numpy(), np.float32)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(training):
    x = _t(np.random.randn(4, 3, 2), requires_grad=True)
    w = _t(np.random.rand(3) + 0.5, requires_grad=True)
    b = _t(np.random.randn(3), requires_grad=True)
    rm, rv = _t(np.random.randn(3)), _t(np.random.rand(3) + 0.5)
    fn = lambda x, w, b: F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=training)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_batch_norm_gradients_vs_torch(torch):
    x = np.random.randn(8, 3, 4, 4)
    g = np.random.randn(8, 3, 4, 4)
    w, b = np.random.rand(3) + 0.5, np.random.randn(3)
    ex, ew, eb = _t(x, requires_grad=True), _t(w, requires_grad=True), _t(b, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    F.batch_norm(ex, None, None, ew, eb, training=True).backward(_t(g))
    torch.nn.functional.batch_norm(tx, None, None, tw, tb, training=True).backward(torch.tensor(g))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        _close(_np(e.grad), t.grad.numpy(), np.float64)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(ember.ones(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError):
        F.batch_norm(ember.ones(4, 3), ember.zeros(2), ember.ones(2))
    with pytest.raises(RuntimeError):
        F.batch_norm(ember.ones(4, 3), None, None, training=False)


@pytest.mark.parametrize("shape,norm", [((4, 6), (6,)), ((2, 3, 4, 5), (4, 5)), ((3, 7), [7])])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm(torch, shape, norm, dtype):
    x = (np.random.randn(*shape) * 2 + 1).astype(dtype)
    ns = tuple(norm)
    w = (np.random.rand(*ns) + 0.5).astype(dtype)
    b = np.random.randn(*ns).astype(dtype)
    got = F.layer_norm(_t(x), norm, _t(w), _t(b), eps=1e-4)
    want = torch.nn.functional.layer_norm(
        torch.tensor(x), norm, torch.tensor(w), torch.tensor(b), eps=1e-4
    )
    _close(_np(got), want.numpy(), dtype)
    got = F.layer_norm(_t(x), norm)
    want = torch.nn.functional.layer_norm(torch.tensor(x), norm)
    _close(_np(got), want.numpy(), dtype)


def test_layer_norm_noncontiguous_and_grads(torch):
    x = np.random.randn(5, 6)
    g = np.random.randn(6, 5)
    w, b = np.random.rand(5), np.random.randn(5)
    ex, ew, eb = _t(x, requires_grad=True), _t(w, requires_grad=True), _t(b, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    F.layer_norm(ex.t(), (5,), ew, eb).backward(_t(g))
    torch.nn.functional.layer_norm(tx.t(), (5,), tw, tb).backward(torch.tensor(g))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        _close(_np(e.grad), t.grad.numpy(), np.float64)


def test_layer_norm_gradcheck():
    x = _t(np.random.randn(3, 2, 4), requires_grad=True)
    w = _t(np.random.rand(2, 4) + 0.5, requires_grad=True)
    b = _t(np.random.randn(2, 4), requires_grad=True)
    fn = lambda x, w, b: F.layer_norm(x, (2, 4), w, b)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))
    assert gradcheck(lambda x: F.layer_norm(x, (4,)), (x,))


def test_layer_norm_errors():
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(ember.ones(4, 5), (4,))
    with pytest.raises(RuntimeError):
        F.layer_norm(ember.ones(4, 5), (5,), ember.ones(4))


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((4, 4), 4)])
def test_group_norm(torch, shape, groups):
    x = np.random.randn(*shape) * 2 + 1
    c = shape[1]
    w, b = np.random.rand(c) + 0.5, np.random.randn(c)
    got = F.group_norm(_t(x), groups, _t(w), _t(b))
    want = torch.nn.functional.group_norm(torch.tensor(x), groups, torch.tensor(w), torch.tensor(b))
    _close(_np(got), want.numpy(), np.float64)
    xe = _t(x, requires_grad=True)
    we, be = _t(w, requires_grad=True), _t(b, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.group_norm(x, groups, w, b), (xe, we, be))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(_t(x), 5)


def test_instance_norm(torch):
    x = np.random.randn(3, 4, 5, 2) * 2 + 1
    w, b = np.random.rand(4) + 0.5, np.random.randn(4)
    rm, rv = np.zeros(4), np.ones(4)
    erm, erv, trm, trv = _t(rm), _t(rv), torch.tensor(rm), torch.tensor(rv)
    got = F.instance_norm(_t(x), erm, erv, _t(w), _t(b), momentum=0.3)
    want = torch.nn.functional.instance_norm(
        torch.tensor(x), trm, trv, torch.tensor(w), torch.tensor(b), momentum=0.3
    )
    _close(_np(got), want.numpy(), np.float64)
    _close(_np(erm), trm.numpy(), np.float64)
    _close(_np(erv), trv.numpy(), np.float64)
    got = F.instance_norm(_t(x), erm, erv, use_input_stats=False)
    want = torch.nn.functional.instance_norm(torch.tensor(x), trm, trv, use_input_stats=False)
    _close(_np(got), want.numpy(), np.float64)
    _close(
        _np(F.instance_norm(_t(x))),
        torch.nn.functional.instance_norm(torch.tensor(x)).numpy(),
        np.float64,
    )
    xe = _t(np.random.randn(2, 3, 4), requires_grad=True)
    assert gradcheck(lambda x: F.instance_norm(x), (xe,))
    with pytest.raises(ValueError, match="spatial element"):
        F.instance_norm(ember.ones(2, 3, 1))


def test_local_response_norm(torch):
    for shape, size in [((2, 5, 4), 3), ((2, 6, 3, 3), 2), ((1, 4, 2, 2, 2), 5)]:
        x = np.random.randn(*shape)
        got = F.local_response_norm(_t(x), size)
        want = torch.nn.functional.local_response_norm(torch.tensor(x), size)
        _close(_np(got), want.numpy(), np.float64)
    xe = _t(np.random.randn(2, 4, 3), requires_grad=True)
    assert gradcheck(lambda x: F.local_response_norm(x, 3, alpha=0.5), (xe,))
    with pytest.raises(ValueError):
        F.local_response_norm(ember.ones(2, 3), 2)


# ---- dropout --------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics(p):
    x = ember.ones(200, 500)
    y = F.dropout(x, p)
    zero_frac = (y == 0).float().mean().item()
    assert abs(zero_frac - p) < 0.01
    kept = _np(y)[_np(y) != 0]
    np.testing.assert_allclose(kept, 1 / (1 - p), rtol=1e-6)


def test_dropout_eval_identity_and_edges():
    x = ember.randn(4, 5)
    assert ember.equal(F.dropout(x, 0.5, training=False), x)
    assert ember.equal(F.dropout(x, 0.0), x)
    assert (F.dropout(x, 1.0) == 0).all().item()
    for fn in (F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        y = ember.randn(2, 3, 4, 5) if fn is not F.dropout1d else ember.randn(2, 3, 4)
        if fn is F.dropout3d:
            y = ember.randn(2, 3, 2, 2, 2)
        assert ember.equal(fn(y, 0.5, training=False), y)


def test_dropout_seed_reproducible():
    x = ember.ones(50, 60)
    ember.manual_seed(123)
    a = F.dropout(x, 0.3)
    ember.manual_seed(123)
    b = F.dropout(x, 0.3)
    assert ember.equal(a, b)
    assert not ember.equal(a, F.dropout(x, 0.3))


def test_dropout_inplace_and_grad():
    x = ember.ones(30, 40)
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x
    assert set(np.unique(_np(x)).tolist()) <= {0.0, 2.0}
    w = ember.ones(20, 30, requires_grad=True)
    out = F.dropout(w, 0.4)
    out.sum().backward()
    np.testing.assert_allclose(_np(w.grad), _np(out))


def test_channel_dropout():
    x = ember.ones(40, 50, 6, 7)
    y = _np(F.dropout2d(x, 0.5))
    per_channel = y.reshape(40, 50, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # whole channels kept or dropped
    assert abs((per_channel[..., 0] == 0).mean() - 0.5) < 0.05
    z = _np(F.dropout1d(ember.ones(30, 8), 0.5))  # unbatched (C, L)
    assert np.all(z.min(-1) == z.max(-1))
    v = _np(F.dropout3d(ember.ones(10, 3, 3, 3), 0.5))  # unbatched (C, D, H, W)
    assert np.all(v.reshape(10, -1).min(-1) == v.reshape(10, -1).max(-1))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(2, 3, 4, 5))


def test_alpha_dropout_statistics():
    ember.manual_seed(0)
    x = ember.randn(400, 500)
    y = F.alpha_dropout(x, 0.3, training=True)
    assert abs(y.mean().item()) < 0.02
    assert abs(y.std().item() - 1) < 0.02
    f = _np(F.feature_alpha_dropout(ember.randn(50, 40, 9), 0.5, training=True))
    d = f - f.mean(-1, keepdims=True)
    assert np.sum(np.all(np.abs(d) < 1e-6, axis=-1)) > 0  # some channels are constant (dropped)


def test_dropout_errors():
    for fn in (F.dropout, F.alpha_dropout, F.dropout2d, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            fn(ember.ones(2, 3, 4, 4), 1.5)
    with pytest.raises(RuntimeError):
        ember.dropout(ember.ones(3), -0.1, True)


# ---- linear, one_hot, distances --------------------------------------------------------------


def test_linear(torch):
    w, b = np.random.randn(4, 3), np.random.randn(4)
    for shape in [(5, 3), (2, 5, 3), (3,)]:
        x = np.random.randn(*shape)
        _close(
            _np(F.linear(_t(x), _t(w), _t(b))),
            torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy(),
            np.float64,
        )
        _close(
            _np(F.linear(_t(x), _t(w))),
            torch.nn.functional.linear(torch.tensor(x), torch.tensor(w)).numpy(),
            np.float64,
        )
    x, v = np.random.randn(5, 3), np.random.randn(3)  # a vector weight, as torch allows
    _close(
        _np(F.linear(_t(x), _t(v))),
        torch.nn.functional.linear(torch.tensor(x), torch.tensor(v)).numpy(),
        np.float64,
    )
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):  # addmm path, as torch
        F.linear(_t(x), _t(v), _t(np.array(0.5)))
    xe = _t(np.random.randn(2, 3), requires_grad=True)
    we, be = _t(w, requires_grad=True), _t(b, requires_grad=True)
    assert gradcheck(F.linear, (xe, we, be))
    with pytest.raises(RuntimeError):
        F.linear(ember.ones(2, 5), ember.ones(4, 3))


def test_bilinear(torch):
    x1, x2 = np.random.randn(2, 5, 3), np.random.randn(2, 5, 4)
    w, b = np.random.randn(6, 3, 4), np.random.randn(6)
    _close(
        _np(F.bilinear(_t(x1), _t(x2), _t(w), _t(b))),
        torch.nn.functional.bilinear(
            torch.tensor(x1), torch.tensor(x2), torch.tensor(w), torch.tensor(b)
        ).numpy(),
        np.float64,
    )
    args = [_t(np.random.randn(*s), requires_grad=True) for s in [(3, 2), (3, 4), (5, 2, 4), (5,)]]
    assert gradcheck(F.bilinear, tuple(args))
    with pytest.raises(RuntimeError):
        F.bilinear(ember.ones(2, 3), ember.ones(2, 4), ember.ones(6, 4, 4))


def test_one_hot(torch):
    idx = np.array([[0, 2], [1, 4]])
    got = F.one_hot(_t(idx))
    assert got.dtype == ember.int64
    np.testing.assert_array_equal(_np(got), torch.nn.functional.one_hot(torch.tensor(idx)).numpy())
    assert F.one_hot(_t(idx), 7).shape == (2, 2, 7)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(_t(idx), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(_t(np.array([-1, 0])))
    with pytest.raises(RuntimeError):
        F.one_hot(ember.ones(3))


def test_normalize_cosine_pairwise(torch):
    x1, x2 = np.random.randn(4, 5, 3), np.random.randn(4, 5, 3)
    tnf = torch.nn.functional
    for p, dim in [(2.0, 1), (1.0, -1), (3.0, 0)]:
        _close(
            _np(F.normalize(_t(x1), p, dim)),
            tnf.normalize(torch.tensor(x1), p, dim).numpy(),
            np.float64,
        )
    for dim in (1, -1):
        _close(
            _np(F.cosine_similarity(_t(x1), _t(x2), dim)),
            tnf.cosine_similarity(torch.tensor(x1), torch.tensor(x2), dim).numpy(),
            np.float64,
        )
    _close(
        _np(F.cosine_similarity(_t(x1), _t(x2[:1]))),  # broadcast
        tnf.cosine_similarity(torch.tensor(x1), torch.tensor(x2[:1])).numpy(),
        np.float64,
    )
    for p, keep in [(2.0, False), (1.0, True), (3.0, False)]:
        _close(
            _np(F.pairwise_distance(_t(x1), _t(x2), p, keepdim=keep)),
            tnf.pairwise_distance(torch.tensor(x1), torch.tensor(x2), p, keepdim=keep).numpy(),
            np.float64,
        )
    a, b = _t(x1, requires_grad=True), _t(x2, requires_grad=True)
    assert gradcheck(lambda a: F.normalize(a), (a,))
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b), (a, b))
    assert gradcheck(lambda a, b: F.pairwise_distance(a, b), (a, b))
    zero = ember.zeros(2, 3)
    np.testing.assert_array_equal(_np(F.normalize(zero)), np.zeros((2, 3)))


def test_top_level_aliases():
    x = ember.randn(3, 4)
    assert ember.allclose(ember.selu(x), F.selu(x))
    assert ember.allclose(ember.layer_norm(x, [4]), F.layer_norm(x, (4,)))
    assert ember.allclose(ember.cosine_similarity(x, x), ember.ones(3))
    assert ember.allclose(x.hardshrink(0.3), F.hardshrink(x, 0.3))


def test_integer_inputs(torch):
    x = np.array([1, -2, 7, 0])
    tnf = torch.nn.functional
    for name, args in [
        ("relu6", ()),
        ("hardtanh", ()),
        ("hardtanh", (-3, 4)),
        ("threshold", (0, 5)),
    ]:
        got = getattr(F, name)(_t(x), *args)
        want = getattr(tnf, name)(torch.tensor(x), *args)
        assert got.dtype == ember.int64
        np.testing.assert_array_equal(_np(got), want.numpy())
    for name in ("gelu", "silu", "leaky_relu", "elu", "hardswish"):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            getattr(F, name)(_t(x))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_norms_half(torch, dtype):
    x = np.random.randn(4, 3, 5).astype(np.float32)
    w, b = np.random.rand(3).astype(np.float32) + 0.5, np.random.randn(3).astype(np.float32)
    e, t = _t(x).to(getattr(ember, dtype)), torch.tensor(x).to(getattr(torch, dtype))
    got = F.batch_norm(e, None, None, _t(w).to(e.dtype), _t(b).to(e.dtype), training=True)
    want = torch.nn.functional.batch_norm(
        t, None, None, torch.tensor(w).to(t.dtype), torch.tensor(b).to(t.dtype), training=True
    )
    assert got.dtype == e.dtype
    np.testing.assert_allclose(_np(got.float()), want.float().numpy(), rtol=2e-2, atol=2e-2)
    got = F.layer_norm(e, (5,))
    want = torch.nn.functional.layer_norm(t, (5,))
    assert got.dtype == e.dtype
    np.testing.assert_allclose(_np(got.float()), want.float().numpy(), rtol=2e-2, atol=2e-2)


def test_rrelu_selu_celu_inplace(torch):
    x = np.random.randn(6, 7) * 3
    tnf = torch.nn.functional
    _close(_np(F.rrelu(_t(x))), tnf.rrelu(torch.tensor(x)).numpy(), np.float64)
    y = _np(F.rrelu(_t(x), 0.1, 0.3, training=True))
    slope = y[x < 0] / x[x < 0]
    assert np.all((slope >= 0.1) & (slope <= 0.3)) and np.all(y[x >= 0] == x[x >= 0])
    for name, args in [("selu_", ()), ("celu_", (0.7,)), ("rrelu_", ())]:
        e = _t(x)
        assert getattr(F, name)(e, *args) is e
        _close(_np(e), getattr(tnf, name)(torch.tensor(x), *args).numpy(), np.float64)


def test_norm_results_independent_of_thread_count():
    if os.environ.get("EMBER_TEST_AGAINST") == "torch":
        pytest.skip("an ember guarantee (core/parallel.h) that torch does not make")
    x = ember.randn(300, 257, requires_grad=True)
    w = ember.rand(257, requires_grad=True)
    img = ember.randn(8, 4, 30, 30, requires_grad=True)
    results = []
    prev = ember.get_num_threads()
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            gx, gw = ember.autograd.grad(F.layer_norm(x, (257,), w).pow(2).sum(), (x, w))
            (gi,) = ember.autograd.grad(
                F.batch_norm(img, None, None, training=True).pow(2).sum(), (img,)
            )
            results.append((gx, gw, gi))
    finally:
        ember.set_num_threads(prev)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert ember.equal(a, b)
