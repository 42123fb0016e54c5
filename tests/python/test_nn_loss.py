"""Softmax family and losses of ember.nn.functional: values and gradients against torch,
gradcheck in float64, extreme inputs, and error classes/messages."""

import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck


def _np(t):
    return t.detach().numpy()


def _pair(torch, arr, requires_grad=False):
    """The same array as an ember tensor and a torch tensor."""
    a = np.array(arr)
    return (
        ember.tensor(a, requires_grad=requires_grad),
        torch.tensor(a, requires_grad=requires_grad),
    )


def _compare(
    torch, fn_name, arrays, grad_idx=(0,), kwargs=None, rtol=1e-5, atol=1e-6, tkwargs=None
):
    """Calls F.<fn_name> on ember and torch copies of `arrays`; compares value and gradients."""
    kwargs = kwargs or {}
    tkwargs = kwargs if tkwargs is None else tkwargs
    e_in, t_in = [], []
    for i, a in enumerate(arrays):
        if a is None:
            e_in.append(None)
            t_in.append(None)
            continue
        rg = i in grad_idx and np.issubdtype(np.asarray(a).dtype, np.floating)
        e, t = _pair(torch, a, rg)
        e_in.append(e)
        t_in.append(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_e = getattr(F, fn_name)(*e_in, **kwargs)
        out_t = getattr(torch.nn.functional, fn_name)(*t_in, **tkwargs)
    assert tuple(out_e.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(_np(out_e), out_t.detach().numpy(), rtol=rtol, atol=atol)
    if any(t is not None and t.requires_grad for t in t_in):
        g = np.asarray(np.random.rand(*out_t.shape)).astype(np.asarray(arrays[0]).dtype)
        out_e.backward(ember.tensor(g))
        out_t.backward(torch.tensor(g))
        for e, t in zip(e_in, t_in):
            if t is not None and t.requires_grad:
                np.testing.assert_allclose(_np(e.grad), t.grad.numpy(), rtol=rtol, atol=atol)
    return out_e


def _double_backward(torch, fn, arr):
    """d/dx of |d fn / dx|^2 (a second derivative) for ember and torch; compares them."""
    e, t = _pair(torch, arr, True)
    (ge,) = ember.autograd.grad(fn(ember, F, e), e, create_graph=True)
    (gt,) = torch.autograd.grad(fn(torch, torch.nn.functional, t), t, create_graph=True)
    (ge * ge).sum().backward()
    (gt * gt).sum().backward()
    # 1e-6, not 1e-12: ember rounds Python-float scalars to float32 even against float64 tensors.
    np.testing.assert_allclose(_np(e.grad), t.grad.numpy(), rtol=1e-6, atol=1e-9)


def _randn(*shape, dtype=np.float32, scale=1.0):
    return np.asarray(np.random.randn(*shape) * scale).astype(dtype)


# ---------------------------------------------------------------- softmax family

SOFTMAX_SHAPES = [
    ((5,), 0),
    ((4, 7), 1),
    ((4, 7), 0),
    ((3, 4, 5), 1),
    ((2, 3, 4, 5), -1),
    ((2, 3, 4, 5), 2),
    ((3, 300, 2), 1),
    ((0, 4), 1),
    ((), 0),
]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape,dim", SOFTMAX_SHAPES)
def test_softmax_family_matches_torch(torch, name, shape, dim):
    x = _randn(*shape, scale=3.0)
    _compare(torch, name, [x], kwargs={"dim": dim})


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_non_contiguous_and_dtype(torch, name):
    x = _randn(6, 5, scale=2.0)
    e = ember.tensor(x).t()
    t = torch.tensor(x).t()
    for dim in (0, 1):
        np.testing.assert_allclose(
            _np(getattr(F, name)(e, dim)),
            getattr(torch.nn.functional, name)(t, dim).numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
    out = getattr(F, name)(ember.tensor(x), 1, dtype=ember.float64)
    assert out.dtype == ember.float64
    ref = getattr(torch.nn.functional, name)(torch.tensor(x), 1, dtype=torch.float64)
    np.testing.assert_allclose(_np(out), ref.numpy(), rtol=1e-12)


def test_softmax_numpy_reference_and_methods():
    x = _randn(3, 4, scale=5.0).astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(_np(F.softmax(ember.tensor(x), dim=1)), ref, rtol=1e-12)
    np.testing.assert_allclose(_np(ember.softmax(ember.tensor(x), 1)), ref, rtol=1e-12)
    np.testing.assert_allclose(_np(ember.tensor(x).softmax(1)), ref, rtol=1e-12)
    np.testing.assert_allclose(_np(ember.tensor(x).log_softmax(dim=1)), np.log(ref), rtol=1e-12)
    np.testing.assert_allclose(_np(ember.log_softmax(ember.tensor(x), -1)), np.log(ref), rtol=1e-12)


def test_softmax_float32_accuracy_wide_range():
    x = np.linspace(-100, 100, 4001).astype(np.float32).reshape(1, -1)
    out = _np(F.softmax(ember.tensor(x), dim=1)).astype(np.float64)
    xd = x.astype(np.float64)
    ref = np.exp(xd - xd.max()) / np.exp(xd - xd.max()).sum()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-30)


def test_softmax_extreme_inputs_stay_finite():
    x = ember.tensor([[1e4, -1e4, 0.0], [3e38, 3e38, -3e38], [-1e30, -1e30, -1e30]])
    s = F.softmax(x, dim=1)
    ls = F.log_softmax(x, dim=1)
    assert bool(ember.isfinite(s).all())
    assert bool(ember.isfinite(ls[0]).all())
    np.testing.assert_allclose(_np(s)[0], [1, 0, 0], atol=0)
    np.testing.assert_allclose(_np(s)[2], [1 / 3] * 3, rtol=1e-6)
    m = ember.tensor([[0.0, -math.inf, 1.0]])
    np.testing.assert_allclose(
        _np(F.softmax(m, dim=1)), [[1 / (1 + math.e), 0, math.e / (1 + math.e)]], rtol=1e-6
    )


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(ember.ones(2, 3))
    np.testing.assert_allclose(_np(out), np.full((2, 3), 1 / 3), rtol=1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((2, 3, 2), 1), ((4,), 0)])
def test_softmax_gradcheck(name, shape, dim):
    x = ember.tensor(np.random.randn(*shape), dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: getattr(F, name)(t, dim), (x,))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_double_backward(torch, name):
    w = np.random.randn(3, 4)
    _double_backward(
        torch, lambda m, f, x: (getattr(f, name)(x, 1) * m.tensor(w)).sum(), np.random.randn(3, 4)
    )


def test_softmax_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(ember.ones(2, 3), dim=2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.softmax(ember.ones(2, 3, dtype=ember.int64), dim=1)


def test_softmax_backward_matches_formula():
    x = ember.tensor(_randn(3, 4).astype(np.float64), requires_grad=True)
    g = ember.tensor(_randn(3, 4).astype(np.float64))
    y = F.softmax(x, dim=1)
    (gx,) = ember.autograd.grad(y, x, g)
    yn, gn = _np(y), _np(g)
    np.testing.assert_allclose(_np(gx), yn * (gn - (gn * yn).sum(1, keepdims=True)), rtol=1e-12)
    ly = F.log_softmax(x, dim=1)
    (gx,) = ember.autograd.grad(ly, x, g)
    np.testing.assert_allclose(_np(gx), gn - yn * gn.sum(1, keepdims=True), rtol=1e-10, atol=1e-14)


# ---------------------------------------------------------------- cross_entropy / nll_loss

REDUCTIONS = ["mean", "sum", "none"]


def _targets(n, c, ignore=None):
    t = np.random.randint(0, c, size=n).astype(np.int64)
    if ignore is not None and n > 1:
        t.ravel()[::3] = ignore
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [None, 2, -100])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_matches_torch(torch, reduction, weighted, ignore, smoothing):
    x = _randn(9, 5, scale=2.0)
    t = _targets(9, 5, ignore)
    w = np.random.rand(5).astype(np.float32) + 0.5 if weighted else None
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    if ignore is not None:
        kw["ignore_index"] = ignore
    _compare(torch, "cross_entropy", [x, t, w], kwargs=kw)


@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 4, 3, 2), (3, 5, 2, 2, 2)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_nd(torch, shape, reduction):
    x = _randn(*shape)
    t = np.random.randint(0, shape[1], size=(shape[0],) + shape[2:]).astype(np.int64)
    t.ravel()[::4] = 1 if reduction == "sum" else -100
    w = np.random.rand(shape[1]).astype(np.float32)
    _compare(
        torch, "cross_entropy", [x, t, w], kwargs={"reduction": reduction, "label_smoothing": 0.1}
    )


def test_cross_entropy_unbatched_and_float64(torch):
    _compare(torch, "cross_entropy", [_randn(6), np.array(3)])
    _compare(torch, "cross_entropy", [_randn(6, 4, dtype=np.float64), _targets(6, 4)], rtol=1e-12)
    _compare(torch, "cross_entropy", [_randn(6, 4), _targets(6, 4)], kwargs={"reduction": "none"})


def test_cross_entropy_transposed_input(torch):
    x = _randn(5, 7)
    t = _targets(7, 5)
    e, tt = _pair(torch, x, True)
    out = F.cross_entropy(e.t(), ember.tensor(t))
    ref = torch.nn.functional.cross_entropy(tt.t(), torch.tensor(t))
    np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-6)
    out.backward()
    ref.backward()
    np.testing.assert_allclose(_np(e.grad), tt.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets(torch, reduction, smoothing, weighted):
    x = _randn(4, 6)
    p = np.random.rand(4, 6).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    w = np.random.rand(6).astype(np.float32) if weighted else None
    _compare(
        torch,
        "cross_entropy",
        [x, p, w],
        grad_idx=(0, 1),
        kwargs={"reduction": reduction, "label_smoothing": smoothing},
    )
    _compare(
        torch,
        "cross_entropy",
        [_randn(2, 3, 4), np.random.rand(2, 3, 4).astype(np.float32)],
        kwargs={"reduction": reduction},
    )


def test_cross_entropy_all_ignored_and_empty(torch):
    _compare(torch, "cross_entropy", [_randn(3, 4), np.full(3, -100)])
    _compare(torch, "cross_entropy", [_randn(3, 4), np.full(3, -100)], kwargs={"reduction": "sum"})
    _compare(
        torch, "cross_entropy", [_randn(0, 4), np.zeros(0, np.int64)], kwargs={"reduction": "none"}
    )


def test_cross_entropy_large_logits_finite():
    x = ember.tensor([[1e4, -1e4, 0.0], [-5e3, 5e3, 1e3]], requires_grad=True)
    t = ember.tensor([1, 1])
    loss = F.cross_entropy(x, t, label_smoothing=0.1)
    loss.backward()
    assert math.isfinite(loss.item())
    assert bool(ember.isfinite(x.grad).all())
    # row 0: nll 2e4, smoothing (0 + 2e4 + 1e4) / 3; row 1: nll 0, smoothing (1e4 + 0 + 4e3) / 3.
    np.testing.assert_allclose(loss.item(), (0.9 * 2e4 + 0.1 * 1e4 + 0.1 * 14e3 / 3) / 2, rtol=1e-5)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_gradcheck(reduction, smoothing):
    x = ember.tensor(np.random.randn(5, 4), dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 3, -100, 1, 2])
    w = ember.tensor([0.5, 1.0, 2.0, 1.5], dtype=ember.float64)
    fn = lambda a: F.cross_entropy(a, t, weight=w, reduction=reduction, label_smoothing=smoothing)
    assert gradcheck(fn, (x,))


def test_cross_entropy_double_backward_matches_torch(torch):
    x = _randn(4, 5).astype(np.float64)
    t = _targets(4, 5)
    e, tt = _pair(torch, x, True)
    (ge,) = ember.autograd.grad(
        F.cross_entropy(e, ember.tensor(t), label_smoothing=0.1), e, create_graph=True
    )
    (gt,) = torch.autograd.grad(
        torch.nn.functional.cross_entropy(tt, torch.tensor(t), label_smoothing=0.1),
        tt,
        create_graph=True,
    )
    (ge**2).sum().backward()
    (gt**2).sum().backward()
    np.testing.assert_allclose(
        _np(e.grad), tt.grad.numpy(), rtol=1e-6, atol=1e-9
    )  # see _double_backward


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_torch(torch, reduction, weighted):
    w = np.random.rand(5).astype(np.float32) if weighted else None
    x = _randn(7, 5)
    _compare(
        torch, "nll_loss", [x, _targets(7, 5, ignore=-100), w], kwargs={"reduction": reduction}
    )
    _compare(
        torch,
        "nll_loss",
        [x, _targets(7, 5, ignore=3), w],
        kwargs={"reduction": reduction, "ignore_index": 3},
    )
    _compare(torch, "nll_loss", [_randn(5), np.array(2), w], kwargs={"reduction": reduction})
    nd = np.random.randint(0, 5, size=(2, 3, 2)).astype(np.int64)
    _compare(torch, "nll_loss", [_randn(2, 5, 3, 2), nd, w], kwargs={"reduction": reduction})


def test_nll_loss_strided_input_and_byte_target(torch):
    x = _randn(6, 8)
    t = np.array([0, 3, 1, 2, 0, 3], np.uint8)
    e, tt = _pair(torch, x, True)
    out = F.nll_loss(e[:, 2:6], ember.tensor(t), reduction="sum")
    ref = torch.nn.functional.nll_loss(tt[:, 2:6], torch.tensor(t), reduction="sum")
    np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-6)
    out.backward()
    ref.backward()
    np.testing.assert_allclose(_np(e.grad), tt.grad.numpy())
    out = F.nll_loss(e.t()[::2], ember.tensor(t[:4]), reduction="none")
    ref = torch.nn.functional.nll_loss(tt.t()[::2], torch.tensor(t[:4]), reduction="none")
    np.testing.assert_allclose(_np(out), ref.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_double_backward(torch, reduction):
    t = _targets(4, 5, ignore=-100)
    w = np.random.rand(5)

    def fn(m, f, x):
        out = f.nll_loss(f.log_softmax(x, 1), m.tensor(t), weight=m.tensor(w), reduction=reduction)
        return (out * out).sum()

    _double_backward(torch, fn, np.random.randn(4, 5))


def test_nll_loss_gradcheck_and_legacy_args(torch):
    x = ember.tensor(np.random.randn(4, 3), dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 2, 1, -100])
    assert gradcheck(lambda a: F.nll_loss(a, t), (x,))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.nll_loss(x, t, size_average=False)
    ref = torch.nn.functional.nll_loss(torch.tensor(_np(x)), torch.tensor(_np(t)), reduction="sum")
    np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
    with pytest.warns(UserWarning):
        assert tuple(F.nll_loss(x, t, reduce=False).shape) == (4,)


def test_class_target_errors():
    x = ember.randn(3, 5)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, ember.tensor([0, 5, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        F.nll_loss(x, ember.tensor([0, -1, 1]))
    with pytest.raises(
        ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."
    ):
        F.nll_loss(x, ember.tensor([0, 1]))
    with pytest.raises(
        ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(4\)."
    ):
        F.cross_entropy(x, ember.tensor([0, 1, 2, 3]))
    with pytest.raises(
        RuntimeError, match="expected target dtype to be Long or Byte, but got Float"
    ):
        F.nll_loss(x, ember.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.cross_entropy(x, ember.tensor([0, 1, 2], dtype=ember.int32))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 2], dtype=ember.int32))
    with pytest.raises(
        RuntimeError, match="weight tensor should be defined either for all 5 classes"
    ):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), weight=ember.ones(4))
    with pytest.raises(RuntimeError, match="Expected target size"):
        F.cross_entropy(ember.randn(2, 3, 4), ember.zeros(2, 5, dtype=ember.int64))
    with pytest.raises(
        RuntimeError, match="ignore_index is not supported for floating point target"
    ):
        F.cross_entropy(x, ember.rand(3, 5), ignore_index=1)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), reduction="avg")


# ---------------------------------------------------------------- binary cross-entropy


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(torch, reduction, weighted):
    x = np.random.rand(4, 3).astype(np.float32) * 0.98 + 0.01
    t = np.random.rand(4, 3).astype(np.float32)
    w = np.random.rand(3).astype(np.float32) if weighted else None
    _compare(
        torch, "binary_cross_entropy", [x, t, w], grad_idx=(0, 1), kwargs={"reduction": reduction}
    )


def test_binary_cross_entropy_saturated_inputs(torch):
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5], np.float32)
    t = np.array([0.0, 1.0, 1.0, 0.0, 1.0], np.float32)
    out = _compare(torch, "binary_cross_entropy", [x, t], kwargs={"reduction": "none"})
    np.testing.assert_allclose(_np(out), [0, 0, 100, 100, math.log(2)], rtol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos", [False, True])
def test_binary_cross_entropy_with_logits(torch, reduction, weighted, pos):
    x = _randn(4, 3, scale=3.0)
    x[0, 0] = 0.0
    t = np.random.rand(4, 3).astype(np.float32)
    w = np.random.rand(3).astype(np.float32) if weighted else None
    kw = {"reduction": reduction}
    arrays = [x, t, w]
    if pos:
        pw = np.random.rand(3).astype(np.float32) * 2
        ee, et = _pair(torch, pw)
        kw_e, kw_t = dict(kw, pos_weight=ee), dict(kw, pos_weight=et)
        out = _compare(
            torch,
            "binary_cross_entropy_with_logits",
            arrays,
            grad_idx=(0, 1),
            kwargs=kw_e,
            tkwargs=kw_t,
        )
        assert out is not None
    else:
        _compare(torch, "binary_cross_entropy_with_logits", arrays, grad_idx=(0, 1), kwargs=kw)


def test_bce_with_logits_extreme_logits_finite():
    x = ember.tensor([1e4, -1e4, 100.0, -100.0], requires_grad=True)
    t = ember.tensor([1.0, 0.0, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(_np(loss), [0, 0, 100, 100], rtol=1e-6, atol=1e-30)
    loss.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [0, 0, 1, -1], atol=1e-6)


def test_bce_gradcheck():
    x = ember.tensor(np.random.rand(3, 2) * 0.8 + 0.1, requires_grad=True)
    t = ember.tensor(np.random.rand(3, 2), requires_grad=True)
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b), (x, t))
    z = ember.tensor(np.random.randn(3, 2), requires_grad=True)
    pw = ember.tensor(np.random.rand(2) + 0.5)
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw), (z, t))
    assert gradcheck(lambda a: F.binary_cross_entropy_with_logits(a, t.detach()), (z,))


def test_bce_errors():
    with pytest.raises(
        ValueError, match="Using a target size .* that is different to the input size"
    ):
        F.binary_cross_entropy(ember.rand(3), ember.rand(3, 1))
    with pytest.raises(ValueError, match=r"Target size .* must be the same as input size"):
        F.binary_cross_entropy_with_logits(ember.rand(3), ember.rand(4))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([0.5, 1.5]), ember.tensor([0.0, 1.0]))


# ---------------------------------------------------------------- regression losses

PAIR_LOSSES = [
    ("mse_loss", {}),
    ("l1_loss", {}),
    ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}),
    ("huber_loss", {"delta": 0.7}),
    ("soft_margin_loss", {}),
]


@pytest.mark.parametrize("name,kw", PAIR_LOSSES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pairwise_losses(torch, name, kw, reduction):
    x = _randn(4, 5)
    t = np.sign(_randn(4, 5)) if name == "soft_margin_loss" else _randn(4, 5)
    grad_idx = (0,) if name == "soft_margin_loss" else (0, 1)  # torch: no target gradient there
    _compare(
        torch,
        name,
        [x, t.astype(np.float32)],
        grad_idx=grad_idx,
        kwargs=dict(kw, reduction=reduction),
    )


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_regression_losses(torch, name, reduction):
    w = np.random.rand(3, 4).astype(np.float32)
    ew, tw = _pair(torch, w)
    _compare(
        torch,
        name,
        [_randn(3, 4), _randn(3, 4)],
        kwargs={"reduction": reduction, "weight": ew},
        tkwargs={"reduction": reduction, "weight": tw},
    )


def test_mse_broadcast_warns(torch):
    with pytest.warns(UserWarning, match="Using a target size"):
        out = F.mse_loss(ember.ones(3, 1), ember.zeros(3))
    assert out.item() == 1.0


@pytest.mark.parametrize(
    "name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"]
)
def test_pairwise_gradcheck(name):
    x = ember.tensor(np.random.randn(3, 4), requires_grad=True)
    t = ember.tensor(np.random.randn(3, 4), requires_grad=name != "soft_margin_loss")
    assert gradcheck(lambda a, b: getattr(F, name)(a, b), (x, t))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(torch, reduction, log_target):
    x = np.log(np.random.rand(3, 4).astype(np.float32))
    t = np.random.rand(3, 4).astype(np.float32)
    t[0, 0] = 0.0
    if log_target:
        t = np.log(t + 0.1)
    # torch's target gradient is NaN where t == 0 (xlogy), ember's finite: log targets only.
    grad_idx = (0, 1) if log_target else (0,)
    _compare(
        torch,
        "kl_div",
        [x, t],
        grad_idx=grad_idx,
        kwargs={"reduction": reduction, "log_target": log_target},
    )


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(ember.zeros(2, 2), ember.ones(2, 2))


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_nll_loss(torch, log_input, full, reduction):
    x = np.random.rand(3, 4).astype(np.float32) * 2
    t = np.random.poisson(2.0, size=(3, 4)).astype(np.float32)
    _compare(
        torch,
        "poisson_nll_loss",
        [x, t],
        kwargs={"log_input": log_input, "full": full, "reduction": reduction},
    )


@pytest.mark.parametrize("var_shape", [(4, 3), (4, 1), (4,)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gaussian_nll_loss(torch, var_shape, full, reduction):
    var = np.random.rand(*var_shape).astype(np.float32) + 0.1
    _compare(
        torch,
        "gaussian_nll_loss",
        [_randn(4, 3), _randn(4, 3), var],
        grad_idx=(0, 1, 2),
        kwargs={"full": full, "reduction": reduction},
    )


def test_gaussian_nll_loss_errors():
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(ember.ones(2), ember.ones(2), ember.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ember.ones(2, 3), ember.ones(2, 3), ember.ones(3, 2))


# ---------------------------------------------------------------- margin / embedding losses


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_and_embedding_losses(torch, reduction):
    kw = {"reduction": reduction}
    y = np.sign(_randn(6)).astype(np.float32)
    _compare(
        torch,
        "margin_ranking_loss",
        [_randn(6), _randn(6), y],
        grad_idx=(0, 1),
        kwargs=dict(kw, margin=0.3),
    )
    _compare(torch, "hinge_embedding_loss", [_randn(6), y], kwargs=dict(kw, margin=0.5))
    _compare(
        torch,
        "cosine_embedding_loss",
        [_randn(6, 4), _randn(6, 4), y],
        grad_idx=(0, 1),
        kwargs=dict(kw, margin=0.2),
    )
    _compare(
        torch,
        "cosine_embedding_loss",
        [_randn(4), _randn(4), np.array(-1.0, np.float32)],
        grad_idx=(0, 1),
        kwargs=kw,
    )
    for swap in (False, True):
        _compare(
            torch,
            "triplet_margin_loss",
            [_randn(5, 3), _randn(5, 3), _randn(5, 3)],
            grad_idx=(0, 1, 2),
            kwargs=dict(kw, margin=1.5, p=3, swap=swap),
            rtol=1e-4,
        )
        _compare(
            torch,
            "triplet_margin_with_distance_loss",
            [_randn(5, 3), _randn(5, 3), _randn(5, 3)],
            grad_idx=(0, 1, 2),
            kwargs=dict(kw, swap=swap),
            rtol=1e-4,
        )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(torch, reduction, p, weighted):
    w = np.random.rand(5).astype(np.float32) if weighted else None
    _compare(
        torch,
        "multi_margin_loss",
        [_randn(4, 5), _targets(4, 5)],
        kwargs={
            "reduction": reduction,
            "p": p,
            "margin": 0.7,
            "weight": None if w is None else ember.tensor(w),
        },
        tkwargs={
            "reduction": reduction,
            "p": p,
            "margin": 0.7,
            "weight": None if w is None else torch.tensor(w),
        },
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_losses(torch, reduction):
    t = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 0, 0, 0]], np.int64)
    _compare(torch, "multilabel_margin_loss", [_randn(3, 4), t], kwargs={"reduction": reduction})
    _compare(torch, "multilabel_margin_loss", [_randn(4), t[0]], kwargs={"reduction": reduction})
    labels = (np.random.rand(3, 4) > 0.5).astype(np.float32)
    w = np.random.rand(4).astype(np.float32)
    _compare(
        torch,
        "multilabel_soft_margin_loss",
        [_randn(3, 4), labels, w],
        kwargs={"reduction": reduction},
    )


def test_margin_loss_errors():
    with pytest.raises(IndexError, match="Dimension specified as -1 but tensor has no dimensions"):
        F.multilabel_soft_margin_loss(ember.tensor(0.5), ember.tensor(1.0))
    with pytest.raises(
        RuntimeError, match="The anchor, positive, and negative tensors are expected"
    ):
        F.triplet_margin_loss(ember.ones(2, 3), ember.ones(2, 3), ember.ones(3))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(ember.ones(2, 3), ember.ones(2, 3), ember.ones(2, 3), margin=0)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(ember.ones(2, 3), ember.tensor([0, 1]), p=3)
    with pytest.raises(RuntimeError, match="All input tensors should have same dimension"):
        F.margin_ranking_loss(ember.ones(2), ember.ones(2), ember.ones(2, 1))


def test_margin_gradcheck():
    a, p, n = (ember.tensor(np.random.randn(3, 4), requires_grad=True) for _ in range(3))
    assert gradcheck(lambda x, y, z: F.triplet_margin_loss(x, y, z, swap=True), (a, p, n))
    y = ember.tensor([1.0, -1.0, 1.0])
    assert gradcheck(lambda x, z: F.cosine_embedding_loss(x, z, y, margin=-0.5), (a, p))
    assert gradcheck(lambda x: F.multi_margin_loss(x, ember.tensor([0, 3, 1]), p=2), (a,))


# ---------------------------------------------------------------- CTC


def _ctc_inputs(T=12, N=3, C=5, S=4, seed=0):
    rng = np.random.RandomState(seed)
    logits = rng.randn(T, N, C).astype(np.float32)
    target_lengths = np.array([S, S - 2, 1][:N], np.int64)
    targets = rng.randint(1, C, size=(N, S)).astype(np.int64)
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank in between
    input_lengths = np.array([T, T - 3, T - 5][:N], np.int64)
    return logits, targets, input_lengths, target_lengths


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_ctc_loss_matches_torch(torch, reduction, layout):
    logits, targets, il, tl = _ctc_inputs()
    if layout == "concatenated":
        targets = np.concatenate([targets[b, : tl[b]] for b in range(len(tl))])
    e, t = _pair(torch, logits, True)
    le = F.ctc_loss(
        F.log_softmax(e, 2),
        ember.tensor(targets),
        ember.tensor(il),
        ember.tensor(tl),
        reduction=reduction,
    )
    lt = torch.nn.functional.ctc_loss(
        torch.log_softmax(t, 2),
        torch.tensor(targets),
        torch.tensor(il),
        torch.tensor(tl),
        reduction=reduction,
    )
    np.testing.assert_allclose(_np(le), lt.detach().numpy(), rtol=1e-5)
    g = np.asarray(np.random.rand(*lt.shape)).astype(np.float32)
    le.backward(ember.tensor(g))
    lt.backward(torch.tensor(g))
    np.testing.assert_allclose(_np(e.grad), t.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_ctc_loss_raw_log_probs_grad_and_lists(torch):
    logits, targets, il, tl = _ctc_inputs(seed=1)
    lp = np.log(np.exp(logits) / np.exp(logits).sum(2, keepdims=True)).astype(np.float32)
    e, t = _pair(torch, lp, True)
    le = F.ctc_loss(e, ember.tensor(targets), tuple(il.tolist()), tuple(tl.tolist()), blank=0)
    lt = torch.nn.functional.ctc_loss(
        t, torch.tensor(targets), tuple(il.tolist()), tuple(tl.tolist())
    )
    le.backward()
    lt.backward()
    np.testing.assert_allclose(le.item(), lt.item(), rtol=1e-5)
    np.testing.assert_allclose(_np(e.grad), t.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_infeasible(torch, zero_infinity):
    # 3 time steps cannot emit 'aa' (needs a blank between: 3 steps) plus another label.
    logits = np.random.randn(3, 1, 4).astype(np.float32)
    targets = np.array([[1, 1, 2]], np.int64)
    e, t = _pair(torch, logits, True)
    le = F.ctc_loss(
        F.log_softmax(e, 2),
        ember.tensor(targets),
        [3],
        [3],
        reduction="sum",
        zero_infinity=zero_infinity,
    )
    lt = torch.nn.functional.ctc_loss(
        torch.log_softmax(t, 2),
        torch.tensor(targets),
        [3],
        [3],
        reduction="sum",
        zero_infinity=zero_infinity,
    )
    assert le.item() == lt.item()
    if zero_infinity:
        le.backward()
        lt.backward()
        np.testing.assert_allclose(_np(e.grad), t.grad.numpy(), atol=1e-7)


def test_ctc_loss_unbatched_and_blank(torch):
    logits = np.random.randn(8, 5).astype(np.float32)
    targets = np.array([0, 1, 3], np.int64)
    e, t = _pair(torch, logits, True)
    le = F.ctc_loss(
        F.log_softmax(e, 1),
        ember.tensor(targets),
        ember.tensor(8),
        ember.tensor(3),
        blank=4,
        reduction="none",
    )
    lt = torch.nn.functional.ctc_loss(
        torch.log_softmax(t, 1),
        torch.tensor(targets),
        torch.tensor(8),
        torch.tensor(3),
        blank=4,
        reduction="none",
    )
    assert tuple(le.shape) == tuple(lt.shape)
    np.testing.assert_allclose(le.item(), lt.item(), rtol=1e-5)


def test_ctc_loss_gradcheck():
    logits, targets, il, tl = _ctc_inputs(T=6, N=2, C=4, S=2)
    x = ember.tensor(logits.astype(np.float64), requires_grad=True)
    fn = lambda a: F.ctc_loss(
        F.log_softmax(a, 2),
        ember.tensor(targets),
        ember.tensor(il),
        ember.tensor(tl),
    )
    assert gradcheck(fn, (x,))


def test_ctc_loss_errors():
    lp = F.log_softmax(ember.randn(5, 2, 4), 2)
    t = ember.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, t, [5, 5], [2, 2], blank=4)
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5"):
        F.ctc_loss(lp, t, [6, 5], [2, 2])
    with pytest.raises(
        RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"
    ):
        F.ctc_loss(lp, t, [5, 5], [3, 2])
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, t, [5], [2, 2])


def test_loss_target_dtypes_match_torch(torch):
    """Bool targets count as numbers in the regression losses; huber and soft margin keep the
    input's dtype; kl_div rejects integral operands; all as torch."""
    TF = torch.nn.functional
    x = np.random.randn(5).astype(np.float32)
    targets = [np.array([True, False, True, True, False]), np.random.randn(5)]
    for t in targets:
        for name in ["mse_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"]:
            e = getattr(F, name)(ember.tensor(x), ember.tensor(t))
            r = getattr(TF, name)(torch.tensor(x), torch.tensor(t))
            assert str(e.dtype) == str(r.dtype), name
            np.testing.assert_allclose(e.numpy(), r.numpy(), rtol=1e-6)
    for a, b in [(x, np.array([1, 2, 3, 4, 5])), (np.array([1, 2, 3, 4, 5]), x)]:
        with pytest.raises(RuntimeError, match="kl_div"):
            F.kl_div(ember.tensor(a), ember.tensor(b), reduction="sum")


def test_linear_cross_entropy_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((5, 4)), rng.standard_normal((3, 4))
    wk, bk = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2))
    probs = rng.random((5, 3))

    def run(m):
        def t(a, grad=False):
            return m.tensor(a, dtype=m.float64, requires_grad=grad)

        F = m.nn.functional
        xi, wi = t(x, True), t(w, True)
        target = m.tensor([0, 2, 1, -100, 2])
        out = [
            F.linear_cross_entropy(xi, wi, target),
            F.linear_cross_entropy(xi, wi, target, reduction="none"),
            F.linear_cross_entropy(xi, wi, target.abs() % 3, ignore_index=2, reduction="sum"),
            F.linear_cross_entropy(xi, wi, target, weight=t([1.0, 2.0, 0.5]), label_smoothing=0.1),
            F.linear_cross_entropy(xi, wi, t(probs), linear_bias=t([0.1, -0.2, 0.3])),
            F.linear_cross_entropy(xi[0], wi, m.tensor(1)),
            F.linear_cross_entropy(xi, t(wk), m.tensor([[0, 1]] * 5), linear_bias=t(bk)),
        ]
        out[0].backward()
        out.append(xi.grad)
        out.append(wi.grad)
        m.manual_seed(0)
        loss = m.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, dtype=m.float64)
        with m.no_grad():
            loss.linear.weight.copy_(t(wk.reshape(6, 4)))
            loss.linear.bias.copy_(t(bk.reshape(6)))
        out.append(loss(t(x), m.tensor([[0, 1]] * 5)))
        errors = []
        for args, kw in [
            ((t(x[None]), t(w), target), {}),
            ((t(x), t(w[0]), target), {}),
            ((t(x), t(w[:, :3]), target), {}),
            ((t(x), t(w), target), {"linear_bias": t([1.0])}),
            ((t(x[0]), t(wk), m.tensor([0, 1])), {}),
            ((t(x), t(w), t(probs)), {"ignore_index": 1}),
        ]:
            try:
                F.linear_cross_entropy(*args, **kw)
            except RuntimeError as e:
                errors.append(str(e))
        return [np.asarray(o.detach().numpy()) for o in out], errors, repr(loss)

    got, want = run(ember), run(torch)
    for g, w_ in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w_, rtol=1e-12, atol=1e-12)
    assert len(got[1]) == 6 and got[1:] == want[1:]
