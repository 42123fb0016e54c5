"""ember.autograd.forward_ad: dual tensors over the op table, views and in-place ops, custom
Functions with jvp, and the level rules; checked against finite differences, reverse-mode
Jacobians (J·v) and torch.func.jvp where torch is installed."""

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
import ember.nn.functional as F


def _t(shape, seed, positive=False, low=None):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.5
    if low is not None:
        a = rng.uniform(low[0], low[1], shape)
    return ember.tensor(a, dtype=ember.float64)


def _late(module, name):
    # Looked up at call time: inside a level the public functions are the mode's wrappers (a
    # reference taken before the level would bypass it), and the torch comparison swaps names.
    return lambda *args: getattr(globals()[module], name)(*args)


def _idx():
    return ember.tensor([2, 0, 1], dtype=ember.int64)


# name -> (function of tensors, list of inputs). Inputs are float64 so finite differences are
# accurate; every input is dual in the sweep.
OPS = {
    # unary elementwise
    "exp": (_late("ember", "exp"), [_t((3, 4), 0)]),
    "log": (_late("ember", "log"), [_t((3, 4), 1, positive=True)]),
    "sqrt": (_late("ember", "sqrt"), [_t((3, 4), 2, positive=True)]),
    "rsqrt": (_late("ember", "rsqrt"), [_t((3, 4), 3, positive=True)]),
    "sin": (_late("ember", "sin"), [_t((3, 4), 4)]),
    "cos": (_late("ember", "cos"), [_t((3, 4), 5)]),
    "tan": (_late("ember", "tan"), [_t((3, 4), 6, low=(-1, 1))]),
    "tanh": (_late("ember", "tanh"), [_t((3, 4), 7)]),
    "sigmoid": (_late("ember", "sigmoid"), [_t((3, 4), 8)]),
    "asin": (_late("ember", "asin"), [_t((3, 4), 9, low=(-0.9, 0.9))]),
    "atan": (_late("ember", "atan"), [_t((3, 4), 10)]),
    "sinh": (_late("ember", "sinh"), [_t((3, 4), 11)]),
    "erf": (_late("ember", "erf"), [_t((3, 4), 12)]),
    "log1p": (_late("ember", "log1p"), [_t((3, 4), 13, positive=True)]),
    "expm1": (_late("ember", "expm1"), [_t((3, 4), 14)]),
    "reciprocal": (_late("ember", "reciprocal"), [_t((3, 4), 15, positive=True)]),
    "abs": (_late("ember", "abs"), [_t((3, 4), 16)]),
    "neg": (_late("ember", "neg"), [_t((3, 4), 17)]),
    "relu": (_late("ember", "relu"), [_t((3, 4), 18)]),
    "pow_scalar": (lambda x: x**3, [_t((3, 4), 19)]),
    "clamp": (lambda x: ember.clamp(x, -0.5, 0.5), [_t((3, 4), 20)]),
    # binary elementwise, with broadcasting
    "add": (lambda a, b: a + b, [_t((3, 4), 21), _t((4,), 22)]),
    "add_alpha": (lambda a, b: ember.add(a, b, alpha=2.5), [_t((3, 4), 23), _t((3, 4), 24)]),
    "sub": (lambda a, b: a - b, [_t((3, 4), 25), _t((3, 1), 26)]),
    "rsub": (lambda a: 2.0 - a, [_t((3, 4), 27)]),
    "mul": (lambda a, b: a * b, [_t((3, 4), 28), _t((4,), 29)]),
    "div": (lambda a, b: a / b, [_t((3, 4), 30), _t((3, 4), 31, positive=True)]),
    "rdiv": (lambda a: 2.0 / a, [_t((3, 4), 32, positive=True)]),
    "pow": (lambda a, b: a**b, [_t((3, 4), 33, positive=True), _t((3, 4), 34)]),
    "atan2": (_late("ember", "atan2"), [_t((3, 4), 35), _t((3, 4), 36, positive=True)]),
    "maximum": (_late("ember", "maximum"), [_t((3, 4), 37), _t((3, 4), 38)]),
    "where": (
        lambda a, b: ember.where(a > 0, a, b),
        [_t((3, 4), 39), _t((3, 4), 40)],
    ),
    "lerp": (lambda a, b: ember.lerp(a, b, 0.3), [_t((3, 4), 41), _t((3, 4), 42)]),
    "addcmul": (_late("ember", "addcmul"), [_t((3, 4), 43), _t((3, 4), 44), _t((3, 4), 45)]),
    # reductions
    "sum": (lambda x: x.sum(), [_t((3, 4), 46)]),
    "sum_dim": (lambda x: x.sum(1, keepdim=True), [_t((3, 4), 47)]),
    "mean": (lambda x: x.mean(0), [_t((3, 4), 48)]),
    "prod": (lambda x: x.prod(1), [_t((3, 4), 49)]),
    "amax": (lambda x: x.amax(1), [_t((3, 4), 50)]),
    "max_dim": (lambda x: x.max(1).values, [_t((3, 4), 51)]),
    "var": (lambda x: x.var(1), [_t((3, 4), 52)]),
    "std": (lambda x: x.std(), [_t((3, 4), 53)]),
    "norm": (lambda x: x.norm(), [_t((3, 4), 54)]),
    "logsumexp": (lambda x: ember.logsumexp(x, 1), [_t((3, 4), 55)]),
    "cumsum": (lambda x: x.cumsum(1), [_t((3, 4), 56)]),
    "cumprod": (lambda x: x.cumprod(1), [_t((3, 4), 57)]),
    # matmul family
    "matmul": (lambda a, b: a @ b, [_t((3, 4), 58), _t((4, 2), 59)]),
    "mm": (_late("ember", "mm"), [_t((3, 4), 60), _t((4, 2), 61)]),
    "bmm": (_late("ember", "bmm"), [_t((2, 3, 4), 62), _t((2, 4, 2), 63)]),
    "mv": (_late("ember", "mv"), [_t((3, 4), 64), _t((4,), 65)]),
    "dot": (_late("ember", "dot"), [_t((4,), 66), _t((4,), 67)]),
    "outer": (_late("ember", "outer"), [_t((3,), 68), _t((4,), 69)]),
    "einsum": (lambda a, b: ember.einsum("ij,jk->ik", a, b), [_t((3, 4), 70), _t((4, 2), 71)]),
    "addmm": (_late("ember", "addmm"), [_t((3, 2), 72), _t((3, 4), 73), _t((4, 2), 74)]),
    # views and shape ops
    "view": (lambda x: x.view(4, 3), [_t((3, 4), 75)]),
    "reshape": (lambda x: x.reshape(-1), [_t((3, 4), 76)]),
    "transpose": (lambda x: x.transpose(0, 1), [_t((3, 4), 77)]),
    "permute": (lambda x: x.permute(2, 0, 1), [_t((2, 3, 4), 78)]),
    "T": (lambda x: x.T, [_t((3, 4), 79)]),
    "squeeze_unsqueeze": (lambda x: x.unsqueeze(0).squeeze(0), [_t((3, 4), 80)]),
    "expand": (lambda x: x.expand(3, 4), [_t((1, 4), 81)]),
    "select": (lambda x: x.select(1, 2), [_t((3, 4), 82)]),
    "narrow": (lambda x: x.narrow(1, 1, 2), [_t((3, 4), 83)]),
    "slice": (lambda x: x[1:, ::2], [_t((3, 4), 84)]),
    "split": (lambda x: x.split(2, 1)[1], [_t((3, 4), 85)]),
    "chunk": (lambda x: x.chunk(2, 0)[0], [_t((4, 3), 86)]),
    "unbind": (lambda x: x.unbind(0)[2], [_t((3, 4), 87)]),
    "flatten": (lambda x: x.flatten(), [_t((2, 3, 2), 88)]),
    "diagonal": (lambda x: x.diagonal(), [_t((3, 3), 89)]),
    "cat": (lambda a, b: ember.cat([a, b], 1), [_t((3, 4), 90), _t((3, 2), 91)]),
    "stack": (lambda a, b: ember.stack([a, b]), [_t((3, 4), 92), _t((3, 4), 93)]),
    "flip": (lambda x: x.flip(0), [_t((3, 4), 94)]),
    "roll": (lambda x: x.roll(1, 1), [_t((3, 4), 95)]),
    "repeat": (lambda x: x.repeat(2, 1), [_t((3, 4), 96)]),
    "tril": (lambda x: x.tril(), [_t((3, 3), 97)]),
    "clone": (lambda x: x.clone(), [_t((3, 4), 98)]),
    # indexing
    "index_select": (lambda x: x.index_select(0, _idx()), [_t((3, 4), 99)]),
    "gather": (
        lambda x: x.gather(1, ember.tensor([[0, 1], [2, 3], [1, 1]], dtype=ember.int64)),
        [_t((3, 4), 100)],
    ),
    "advanced_index": (lambda x: x[_idx()], [_t((3, 4), 101)]),
    "masked_fill": (lambda x: x.masked_fill(x > 0, 0.0), [_t((3, 4), 102)]),
    "index_add": (
        lambda x, s: x.index_add(0, _idx(), s),
        [_t((3, 4), 103), _t((3, 4), 104)],
    ),
    "scatter_add": (
        lambda x, s: x.scatter_add(0, ember.tensor([[0, 1, 2, 0]], dtype=ember.int64), s),
        [_t((3, 4), 105), _t((1, 4), 106)],
    ),
    # nn.functional
    "linear": (_late("F", "linear"), [_t((2, 4), 107), _t((3, 4), 108), _t((3,), 109)]),
    "softmax": (lambda x: F.softmax(x, 1), [_t((3, 4), 110)]),
    "log_softmax": (lambda x: F.log_softmax(x, 1), [_t((3, 4), 111)]),
    "gelu": (_late("F", "gelu"), [_t((3, 4), 112)]),
    "silu": (_late("F", "silu"), [_t((3, 4), 113)]),
    "softplus": (_late("F", "softplus"), [_t((3, 4), 114)]),
    "elu": (_late("F", "elu"), [_t((3, 4), 115)]),
    "leaky_relu": (_late("F", "leaky_relu"), [_t((3, 4), 116)]),
    "layer_norm": (
        lambda x, w, b: F.layer_norm(x, (4,), w, b),
        [_t((3, 4), 117), _t((4,), 118), _t((4,), 119)],
    ),
    "conv2d": (
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        [_t((1, 2, 5, 5), 120), _t((3, 2, 3, 3), 121), _t((3,), 122)],
    ),
    "conv1d": (_late("F", "conv1d"), [_t((1, 2, 6), 123), _t((3, 2, 3), 124)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [_t((1, 2, 4, 4), 125)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2), [_t((1, 2, 4, 4), 126)]),
    "mse_loss": (_late("F", "mse_loss"), [_t((3, 4), 127), _t((3, 4), 128)]),
    "cross_entropy": (
        lambda x: F.cross_entropy(x, ember.tensor([0, 3, 1], dtype=ember.int64)),
        [_t((3, 4), 129)],
    ),
    "binary_cross_entropy_with_logits": (
        _late("F", "binary_cross_entropy_with_logits"),
        [_t((3, 4), 130), _t((3, 4), 131, low=(0.1, 0.9))],
    ),
    "batch_norm_train": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [_t((4, 3), 132), _t((3,), 133), _t((3,), 134)],
    ),
    "embedding": (
        lambda w: F.embedding(ember.tensor([1, 0, 1], dtype=ember.int64), w),
        [_t((3, 4), 135)],
    ),
    "pad": (lambda x: F.pad(x, (1, 2)), [_t((3, 4), 136)]),
    "dropout_eval": (lambda x: F.dropout(x, 0.5, training=False), [_t((3, 4), 137)]),
    "normalize": (lambda x: F.normalize(x, dim=1), [_t((3, 4), 138)]),
    "cosine_similarity": (_late("F", "cosine_similarity"), [_t((3, 4), 139), _t((3, 4), 140)]),
    "sort": (lambda x: x.sort(1).values, [_t((3, 4), 143)]),
    "topk": (lambda x: x.topk(2).values, [_t((3, 4), 144)]),
    "median": (lambda x: x.median(1).values, [_t((3, 5), 145)]),
    "cdist": (lambda a, b: ember.cdist(a, b), [_t((3, 4), 146), _t((2, 4), 147)]),
    "sdpa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [_t((1, 3, 4), 148), _t((1, 5, 4), 149), _t((1, 5, 2), 150)],
    ),
    "group_norm": (lambda x: F.group_norm(x, 2), [_t((2, 4, 3), 151)]),
    "conv_transpose2d": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2),
        [_t((1, 2, 3, 3), 152), _t((2, 1, 2, 2), 153)],
    ),
    "interpolate_bilinear": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        [_t((1, 1, 3, 3), 154)],
    ),
    "grid_sample": (
        lambda x, g: F.grid_sample(x, g, align_corners=False),
        [_t((1, 1, 4, 4), 155), _t((1, 2, 2, 2), 156, low=(-0.9, 0.9))],
    ),
    "nll_loss": (
        lambda x: F.nll_loss(F.log_softmax(x, 1), ember.tensor([0, 1, 2], dtype=ember.int64)),
        [_t((3, 4), 157)],
    ),
    "kl_div": (
        lambda a, b: F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1), reduction="batchmean"),
        [_t((3, 4), 158), _t((3, 4), 159)],
    ),
    "smooth_l1_loss": (lambda a, b: F.smooth_l1_loss(a, b), [_t((3, 4), 160), _t((3, 4), 161)]),
    "cumulative_logsumexp": (lambda x: ember.logcumsumexp(x, 1), [_t((3, 4), 162)]),
    "std_mean": (lambda x: ember.std_mean(x, 1)[0], [_t((3, 4), 163)]),
    "index_put": (
        lambda x, v: x.index_put((ember.tensor([0, 2], dtype=ember.int64),), v),
        [_t((3, 4), 164), _t((2, 4), 165)],
    ),
    "ctc_loss": (
        lambda x: F.ctc_loss(
            F.log_softmax(x, 2),
            ember.tensor([[1]], dtype=ember.int64),
            ember.tensor([4], dtype=ember.int64),
            ember.tensor([1], dtype=ember.int64),
        ),
        [_t((4, 1, 3), 166)],
    ),
    # linalg
    "lu_factor": (lambda a: ember.linalg.lu_factor(a).LU, [_t((3, 3), 174)]),
    "slogdet": (lambda a: ember.linalg.slogdet(a).logabsdet, [_t((3, 3), 175)]),
    "svdvals": (lambda a: ember.linalg.svd(a).S, [_t((3, 3), 167)]),
    "eigvalsh": (lambda a: ember.linalg.eigh(a + a.T).eigenvalues, [_t((3, 3), 168)]),
    "qr": (lambda a: ember.linalg.qr(a).R, [_t((4, 3), 169)]),
    "solve": (
        lambda a, b: ember.linalg.solve(a, b),
        [
            ember.tensor(np.eye(3) * 3 + np.random.default_rng(170).standard_normal((3, 3)) * 0.3),
            _t((3, 2), 171),
        ],
    ),
    "inverse": (
        lambda a: ember.linalg.inv(a),
        [ember.tensor(np.eye(3) * 3 + np.random.default_rng(141).standard_normal((3, 3)) * 0.3)],
    ),
    "det": (
        lambda a: ember.linalg.det(a),
        [ember.tensor(np.eye(3) + np.random.default_rng(142).standard_normal((3, 3)) * 0.3)],
    ),
}

# Ops without a forward formula in ember (their backward is a kernel that cannot itself be
# differentiated): they raise torch's NotImplementedError text rather than a wrong tangent.
NO_FORWARD = {"ctc_loss"}


def _tangents(inputs, seed=1000):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.standard_normal(tuple(x.shape)), dtype=x.dtype) for x in inputs]


def _forward_jvp(fn, inputs, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) for x, t in zip(inputs, tangents)]
        out = fn(*duals)
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


def _finite_difference(fn, inputs, tangents, eps=1e-6):
    plus = fn(*[x + eps * t for x, t in zip(inputs, tangents)])
    minus = fn(*[x - eps * t for x, t in zip(inputs, tangents)])
    return (plus - minus).numpy() / (2 * eps)


def _reverse_jv(fn, inputs, tangents):
    jac = ember.autograd.functional.jacobian(fn, tuple(inputs))
    out = fn(*inputs)
    total = np.zeros(tuple(out.shape))
    for j, t in zip(jac, tangents):
        jm = j.numpy().reshape(out.numel(), -1)
        total = total + (jm @ t.numpy().reshape(-1)).reshape(tuple(out.shape))
    return total


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_table_against_finite_differences_and_reverse_mode(name):
    fn, inputs = OPS[name]
    tangents = _tangents(inputs)
    if name in NO_FORWARD:
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
            _forward_jvp(fn, inputs, tangents)
        return
    primal, tangent = _forward_jvp(fn, inputs, tangents)
    assert tangent is not None, name
    np.testing.assert_allclose(primal.numpy(), fn(*inputs).numpy(), rtol=1e-12, atol=1e-12)
    assert tuple(tangent.shape) == tuple(primal.shape)
    assert tangent.dtype == primal.dtype
    np.testing.assert_allclose(
        tangent.numpy(), _finite_difference(fn, inputs, tangents), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        tangent.numpy(), _reverse_jv(fn, inputs, tangents), rtol=1e-9, atol=1e-9
    )


_TORCH_NAMES = {"T": None, "inverse": None, "det": None}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_table_against_torch_jvp(name):
    torch = pytest.importorskip("torch")
    fn, inputs = OPS[name]
    if name in NO_FORWARD:
        pytest.skip("no forward formula in ember")
    tangents = _tangents(inputs)
    _, tangent = _forward_jvp(fn, inputs, tangents)
    # the same program on torch, through the same names (ember mirrors torch's API)
    import ember.nn.functional as ef

    def to_torch(x):
        return torch.tensor(x.numpy())

    src = {ember: torch, ef: torch.nn.functional, ember.linalg: torch.linalg}

    def torch_fn(*args):
        with _TorchNames(src):
            return fn(*args)

    try:
        _, expected = torch.func.jvp(
            torch_fn, tuple(to_torch(x) for x in inputs), tuple(to_torch(t) for t in tangents)
        )
    except Exception:  # the lambda touched an ember-only path; the other checks cover it
        pytest.skip("program does not translate to torch")
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=1e-9, atol=1e-9)


class _TorchNames:
    """Temporarily points the ember namespaces the table's lambdas use at torch's."""

    def __init__(self, mapping):
        self.mapping = mapping

    def __enter__(self):
        import sys

        self.saved = []
        mod = sys.modules[__name__]
        for name, value in (("ember", self.mapping[ember]), ("F", self.mapping[F])):
            self.saved.append((name, getattr(mod, name)))
            setattr(mod, name, value)

    def __exit__(self, *exc):
        import sys

        mod = sys.modules[__name__]
        for name, value in self.saved:
            setattr(mod, name, value)


# ----------------------------------------------------------------------------- API and levels


def test_make_dual_unpack_dual_and_namedtuple():
    x, t = ember.randn(3), ember.randn(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        up = fwAD.unpack_dual(d)
        assert type(up).__name__ == "UnpackedDualTensor"
        assert up.primal is not d and up.tangent is t
        np.testing.assert_array_equal(up.primal.numpy(), x.numpy())
        assert fwAD.unpack_dual(up.primal).tangent is None
        plain = ember.ones(2)
        assert fwAD.unpack_dual(plain).tangent is None
        assert fwAD.unpack_dual(plain).primal is plain
    # tangents are dropped with the level
    assert fwAD.unpack_dual(d).tangent is None


def test_level_rules_match_torch():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(ember.ones(2), ember.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
        with pytest.raises(RuntimeError, match="different size than that of the original"):
            fwAD.make_dual(ember.ones(2), ember.ones(3))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fwAD.make_dual(ember.ones(2, dtype=ember.int64), ember.ones(2))
    lvl = fwAD.enter_dual_level()
    assert lvl == 0
    fwAD.exit_dual_level(level=lvl)
    with pytest.raises(RuntimeError, match="Trying to exit a forward AD level"):
        fwAD.exit_dual_level()


def test_no_tangent_for_integer_outputs_and_detach():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.randn(4), ember.ones(4))
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d > 0).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert d.shape == (4,) and d.dim() == 1 and d.requires_grad is False
        # zero derivative: a zero tangent, as torch
        np.testing.assert_array_equal(fwAD.unpack_dual(d.floor()).tangent.numpy(), np.zeros(4))


def test_tangent_of_view_is_view_of_tangent_and_inplace_updates_base():
    x, t = ember.randn(3, 4), ember.randn(3, 4)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), t.clone())
        v = d[1]
        tv = fwAD.unpack_dual(v).tangent
        np.testing.assert_array_equal(tv.numpy(), t[1].numpy())
        # in-place on the view: the base's tangent changes where the view is
        v.mul_(3.0)
        td = fwAD.unpack_dual(d).tangent.numpy()
        expected = t.numpy().copy()
        expected[1] *= 3
        np.testing.assert_allclose(td, expected, rtol=1e-6)
        # in-place with a dual operand on a plain tensor gives it a tangent
        y = ember.zeros(3, 4)
        y.add_(d)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), expected, rtol=1e-6)
        # in-place product rule: (a * b)' = a' b + a b'
        a = fwAD.make_dual(x.clone(), ember.ones(3, 4))
        a.mul_(a)
        np.testing.assert_allclose(
            fwAD.unpack_dual(a).tangent.numpy(), 2 * x.numpy(), rtol=1e-6, atol=1e-6
        )


def test_setitem_and_generic_inplace():
    x = ember.randn(4)
    with fwAD.dual_level():
        base = fwAD.make_dual(ember.zeros(4), ember.zeros(4))
        val = fwAD.make_dual(x[:2].clone(), ember.ones(2))
        base[1:3] = val
        np.testing.assert_array_equal(fwAD.unpack_dual(base).tangent.numpy(), [0, 1, 1, 0])
        s = fwAD.make_dual(x.clone(), ember.ones(4))
        s.exp_()  # no explicit rule: the tangent comes from exp's backward formula
        np.testing.assert_allclose(
            fwAD.unpack_dual(s).tangent.numpy(), np.exp(x.numpy()), rtol=1e-5
        )


def test_forward_ad_under_no_grad_and_with_reverse_mode():
    x = ember.randn(3, requires_grad=True)
    with fwAD.dual_level():
        with ember.no_grad():
            d = fwAD.make_dual(x.detach(), ember.ones(3))
            y = d.sin()
        np.testing.assert_allclose(
            fwAD.unpack_dual(y).tangent.numpy(), np.cos(x.detach().numpy()), rtol=1e-6
        )
        # a dual that also requires grad keeps its reverse graph
        d = fwAD.make_dual(x, ember.ones(3))
        y = (d * d).sum()
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)
        # reverse over forward through explicit formulas: d/dx (tangent of x*x) = 2 * t
        x2 = ember.randn(3, requires_grad=True)
        d2 = fwAD.make_dual(x2, ember.ones(3))
        tangent = fwAD.unpack_dual(d2 * d2).tangent
        (g,) = ember.autograd.grad(tangent.sum(), x2)
        np.testing.assert_allclose(g.numpy(), np.full(3, 2.0), rtol=1e-6)
        # ... and through an elementwise op's node: d/dx (cos(x) * t) = -sin(x) * t
        x3 = ember.randn(3, requires_grad=True)
        tangent = fwAD.unpack_dual(fwAD.make_dual(x3, ember.ones(3)).sin()).tangent
        (g,) = ember.autograd.grad(tangent.sum(), x3)
        np.testing.assert_allclose(g.numpy(), -np.sin(x3.detach().numpy()), rtol=1e-6)


def test_random_op_tangent_uses_the_same_mask():
    ember.manual_seed(0)
    x = ember.randn(100)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(100))
        ember.manual_seed(5)
        y = F.dropout(d, 0.5, training=True)
        p, t = fwAD.unpack_dual(y)
    # the tangent is the mask scaled, and it masks the same elements as the value
    kept = p.numpy() != 0
    np.testing.assert_allclose(t.numpy()[kept], np.full(kept.sum(), 2.0), rtol=1e-6)
    np.testing.assert_array_equal(t.numpy()[~kept], np.zeros((~kept).sum()))


def test_module_forward_with_dual_input():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 2))
    x, v = ember.randn(5, 4), ember.randn(5, 4)
    with fwAD.dual_level():
        _, t = fwAD.unpack_dual(model(fwAD.make_dual(x, v)))
    with ember.no_grad():  # float32 model: a loose check
        fd = _finite_difference(lambda a: model(a), [x], [v], eps=1e-3)
    np.testing.assert_allclose(t.detach().numpy(), fd, rtol=2e-2, atol=2e-3)


# ----------------------------------------------------------------------------- custom Function


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x * x * t


class _NoJvp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_function_jvp():
    x, t = ember.randn(4), ember.randn(4)
    with fwAD.dual_level():
        y = _Cube.apply(fwAD.make_dual(x, t))
        p, tan = fwAD.unpack_dual(y)
    np.testing.assert_allclose(p.numpy(), x.numpy() ** 3, rtol=1e-5)
    np.testing.assert_allclose(tan.numpy(), 3 * x.numpy() ** 2 * t.numpy(), rtol=1e-5)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            _NoJvp.apply(fwAD.make_dual(x, t))
    # outside a level, and for reverse mode, the Function is unchanged
    xr = x.clone().requires_grad_()
    _Cube.apply(xr).sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), 3 * x.numpy() ** 2, rtol=1e-5)


def test_custom_function_jvp_matches_torch():
    torch = pytest.importorskip("torch")

    class TCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x**3

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x * x * t

    x, t = ember.randn(4), ember.randn(4)
    import torch.autograd.forward_ad as tfw

    with tfw.dual_level():
        expected = tfw.unpack_dual(
            TCube.apply(tfw.make_dual(torch.tensor(x.numpy()), torch.tensor(t.numpy())))
        ).tangent
    with fwAD.dual_level():
        got = fwAD.unpack_dual(_Cube.apply(fwAD.make_dual(x, t))).tangent
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)


def test_rnn_modules_get_tangents():
    ember.manual_seed(0)
    for mod in (ember.nn.LSTM(3, 4, batch_first=True), ember.nn.GRU(3, 4)):
        mod = mod.double()
        x, v = _t((2, 5, 3), 172), _t((2, 5, 3), 173)
        with fwAD.dual_level():
            _, t = fwAD.unpack_dual(mod(fwAD.make_dual(x, v))[0])
        with ember.no_grad():
            fd = _finite_difference(lambda a: mod(a)[0], [x], [v])
        np.testing.assert_allclose(t.detach().numpy(), fd, rtol=1e-5, atol=1e-6)


def test_op_without_forward_formula_raises_torchs_error():
    fn, inputs = OPS["ctc_loss"]
    with pytest.raises(
        NotImplementedError, match="Trying to use forward AD with ctc_loss that does not support it"
    ):
        _forward_jvp(fn, inputs, _tangents(inputs))
