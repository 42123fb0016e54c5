"""Gaps found in session 18, each checked against torch 2.13's behaviour on the CPU."""

import math

import pytest

import ember
import ember.nn.functional as F
from ember.nn.attention import flex_attention

_NO_PIN = (
    "^pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator "
    "is available on this system.$"
)

# Every factory that takes pin_memory in torch; the CPU-only build has no pinned allocator.
_PIN_FACTORIES = {
    "empty": lambda lib, **kw: lib.empty(2, **kw),
    "zeros": lambda lib, **kw: lib.zeros(2, **kw),
    "ones": lambda lib, **kw: lib.ones(2, 3, **kw),
    "full": lambda lib, **kw: lib.full((2,), 1.5, **kw),
    "tensor": lambda lib, **kw: lib.tensor([1.0], **kw),
    "scalar_tensor": lambda lib, **kw: lib.scalar_tensor(1, **kw),
    "rand": lambda lib, **kw: lib.rand(2, **kw),
    "randn": lambda lib, **kw: lib.randn(2, **kw),
    "randint": lambda lib, **kw: lib.randint(3, (2,), **kw),
    "randperm": lambda lib, **kw: lib.randperm(3, **kw),
    "arange": lambda lib, **kw: lib.arange(3, **kw),
    "linspace": lambda lib, **kw: lib.linspace(0, 1, 3, **kw),
    "logspace": lambda lib, **kw: lib.logspace(0, 1, 3, **kw),
    "eye": lambda lib, **kw: lib.eye(2, **kw),
    "empty_strided": lambda lib, **kw: lib.empty_strided((2,), (1,), **kw),
    "empty_permuted": lambda lib, **kw: lib.empty_permuted((2, 3), (1, 0), **kw),
    "tril_indices": lambda lib, **kw: lib.tril_indices(3, 3, **kw),
    "triu_indices": lambda lib, **kw: lib.triu_indices(3, 3, **kw),
    "hann_window": lambda lib, **kw: lib.hann_window(4, **kw),
    "hamming_window": lambda lib, **kw: lib.hamming_window(4, **kw),
    "blackman_window": lambda lib, **kw: lib.blackman_window(4, **kw),
    "bartlett_window": lambda lib, **kw: lib.bartlett_window(4, **kw),
    "kaiser_window": lambda lib, **kw: lib.kaiser_window(4, **kw),
    "empty_like": lambda lib, **kw: lib.empty_like(lib.zeros(2), **kw),
    "zeros_like": lambda lib, **kw: lib.zeros_like(lib.zeros(2), **kw),
    "ones_like": lambda lib, **kw: lib.ones_like(lib.zeros(2), **kw),
    "full_like": lambda lib, **kw: lib.full_like(lib.zeros(2), 1, **kw),
    "rand_like": lambda lib, **kw: lib.rand_like(lib.zeros(2), **kw),
    "randn_like": lambda lib, **kw: lib.randn_like(lib.zeros(2), **kw),
    "randint_like": lambda lib, **kw: lib.randint_like(lib.zeros(2), 3, **kw),
    "new_empty": lambda lib, **kw: lib.zeros(2).new_empty(2, **kw),
    "new_zeros": lambda lib, **kw: lib.zeros(2).new_zeros(2, **kw),
    "new_ones": lambda lib, **kw: lib.zeros(2).new_ones(2, **kw),
    "new_full": lambda lib, **kw: lib.zeros(2).new_full((2,), 1, **kw),
}


def test_factories_refuse_pin_memory_without_accelerator():
    for name, make in _PIN_FACTORIES.items():
        with pytest.raises(RuntimeError, match=_NO_PIN):
            make(ember, pin_memory=True)
        with pytest.raises(RuntimeError, match=_NO_PIN):
            make(ember, pin_memory=True, device="cpu")
        assert make(ember, pin_memory=False).device == ember.device("cpu"), name
    # a meta tensor has no memory to pin: torch makes it
    assert ember.zeros(2, device="meta", pin_memory=True).is_meta
    assert ember.empty_like(ember.zeros(2, device="meta"), pin_memory=True).is_meta
    with pytest.raises(RuntimeError, match="^tensors constructed from a file cannot be pinned$"):
        ember.from_file("/dev/null", size=0, pin_memory=True)


def test_factories_pin_memory_as_torch():
    torch = pytest.importorskip("torch")
    for name, make in _PIN_FACTORIES.items():
        with pytest.raises(RuntimeError) as ref:
            make(torch, pin_memory=True)
        with pytest.raises(RuntimeError) as ours:
            make(ember, pin_memory=True)
        assert str(ours.value) == str(ref.value), name


def test_generator_device():
    g = ember.Generator()
    assert g.device == ember.device("cpu") and isinstance(g.device, ember.device)
    assert ember.default_generator.device.type == "cpu"
    for dev in ("cpu", "cpu:0", ember.device("cpu"), None):
        assert ember.Generator(device=dev).device == ember.device("cpu")
    assert ember.Generator("cpu").manual_seed(3).initial_seed() == 3
    with pytest.raises(AttributeError):
        g.device = "cpu"
    cases = [
        ("cuda", RuntimeError, "^Cannot get CUDA generator without ATen_cuda library."),
        ("meta", RuntimeError, "^META device type not an accelerator.$"),
        ("mps", RuntimeError, r"^Cannot execute getNewGenerator\(\) without MPS backend.$"),
        (0, RuntimeError, "^Cannot access accelerator device when none is available.$"),
        (-1, RuntimeError, "^Device index must not be negative$"),
        (1.5, TypeError, "^Generator\\(\\): argument 'device' must be torch.device, not float$"),
    ]
    for dev, error, message in cases:
        with pytest.raises(error, match=message):
            ember.Generator(device=dev)


def _pairs(lib):
    """(name, call) pairs whose results or errors are compared with torch's."""
    z = lambda: lib.zeros(2, dtype=lib.complex64)  # noqa: E731
    mask = lambda: lib.tensor([True, False])  # noqa: E731
    return [
        ("fill_ real 1j", lambda: lib.zeros(2).fill_(1j)),
        ("fill_ real 2+0j", lambda: lib.zeros(2).fill_(2 + 0j)),
        ("fill_ int8 1000+0j", lambda: lib.zeros(2, dtype=lib.int8).fill_(1000 + 0j)),
        ("fill_ bool 1j", lambda: lib.zeros(2, dtype=lib.bool).fill_(1j)),
        ("fill_ real tensor(1j)", lambda: lib.zeros(2).fill_(lib.tensor(1j))),
        ("fill_ complex", lambda: z().fill_(1 + 2j)),
        ("fill_ complex tensor", lambda: z().fill_(lib.tensor(1 + 2j))),
        ("fill_ complex64 1e300", lambda: z().fill_(1e300)),
        ("fill_ complex64 1e39+1j", lambda: z().fill_(complex(1e39, 1))),
        ("fill_ complex64 inf+1j", lambda: z().fill_(complex(math.inf, 1))),
        ("fill_ 1-d value", lambda: lib.zeros(2).fill_(lib.tensor([1.0]))),
        ("fill_ int8 tensor(1000)", lambda: lib.zeros(2, dtype=lib.int8).fill_(lib.tensor(1000))),
        ("constant_", lambda: lib.nn.init.constant_(z(), 1j)),
        ("masked_fill complex", lambda: z().masked_fill(mask(), 1j)),
        ("masked_fill_ complex", lambda: z().masked_fill_(mask(), 1j)),
        ("masked_fill real 1j", lambda: lib.zeros(2).masked_fill(mask(), 1j)),
        ("masked_fill real 1+0j", lambda: lib.zeros(2).masked_fill(mask(), 1 + 0j)),
        ("index_fill_ complex", lambda: z().index_fill_(0, lib.tensor([1]), 1j)),
        (
            "index_fill complex 2-d",
            lambda: lib.zeros(2, 3, dtype=lib.complex128).index_fill(
                1, lib.tensor([0, 2]), lib.tensor(2 - 1j)
            ),
        ),  # fmt: skip
        ("index_fill_ real 1j", lambda: lib.zeros(2).index_fill_(0, lib.tensor([1]), 1j)),
        ("2 ** z", lambda: 2 ** lib.tensor([1 + 1j])),
        ("2.5 ** z128", lambda: 2.5 ** lib.tensor([1 + 1j, -2j], dtype=lib.complex128)),
        ("1j ** z", lambda: 1j ** lib.tensor([1 + 1j])),
        ("bool ** True", lambda: lib.tensor([True, False]) ** True),
        ("bool ** False", lambda: lib.tensor([True, False]) ** False),
        ("bool.pow_(True)", lambda: lib.tensor([True, False]).pow_(True)),
        ("bool ** tensor(True)", lambda: lib.tensor([True, False]) ** lib.tensor(True)),
        ("clamp complex", lambda: lib.tensor([1 + 1j]).clamp(0, 1)),
        ("clamp_ complex", lambda: lib.tensor([1 + 1j]).clamp_(min=0)),
        ("clamp_min complex", lambda: lib.tensor([1 + 1j]).clamp_min(0)),
        ("clip complex", lambda: lib.clip(lib.tensor([1 + 1j]), max=2)),
        ("clamp complex no bound", lambda: lib.clamp(lib.tensor([1 + 1j]))),
        ("clamp real min=1j", lambda: lib.tensor([1.0]).clamp_(min=1j)),
        ("clamp real max=2+0j", lambda: lib.tensor([1.0, 3.0]).clamp(max=2 + 0j)),
        ("clamp int max=2+0j", lambda: lib.tensor([1, 3]).clamp(max=2 + 0j)),
        ("logical_and_ complex", lambda: lib.tensor(1.5 + 2j).logical_and_(lib.tensor(3))),
        ("logical_or_ real", lambda: lib.tensor([0.0, 2.0]).logical_or_(lib.tensor([0j, 0j]))),
        ("logical_not_ complex", lambda: lib.tensor([0j, 1j]).logical_not_()),
    ]


def _outcome(call):
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return e


def test_complex_fills_pow_clamp_as_torch():
    torch = pytest.importorskip("torch")
    for (name, ours), (_, ref) in zip(_pairs(ember), _pairs(torch)):
        got, want = _outcome(ours), _outcome(ref)
        if isinstance(want, Exception):
            assert type(got).__name__ == type(want).__name__, (name, got)
            assert str(got) == str(want), name
        else:
            assert not isinstance(got, Exception), (name, got)
            assert str(got.dtype) == str(want.dtype), name
            assert ember.allclose(got, ember.tensor(want.numpy()), rtol=1e-5, atol=1e-6), name


def test_complex_fills_without_torch():
    z = ember.zeros(3, dtype=ember.complex64).fill_(1 + 2j)
    assert z.tolist() == [1 + 2j] * 3
    assert ember.zeros(2).fill_(ember.tensor(3 - 1j)).tolist() == [3.0, 3.0]
    assert ember.zeros(2, 2, dtype=ember.complex128).index_fill(
        1, ember.tensor([1]), 1j
    ).tolist() == [
        [0j, 1j],
        [0j, 1j],
    ]
    with pytest.raises(RuntimeError, match="^value cannot be converted to type float without"):
        ember.zeros(2).fill_(1j)
    # fill_ with a tensor value gives that value the gradient (the sum over self), as torch's
    v = ember.tensor(2.0, requires_grad=True)
    ember.zeros(3).fill_(v).sum().backward()
    assert v.grad.item() == 3.0
    w = (2 ** ember.tensor([1j], dtype=ember.complex128)).item()
    assert abs(w - 2**1j) < 1e-12


def test_complex128_moves_by_index():
    np = pytest.importorskip("numpy")
    a = np.arange(6).reshape(2, 3) + 1j * np.arange(6, 12).reshape(2, 3)
    z = ember.tensor(a)
    assert z.dtype == ember.complex128
    assert z[ember.tensor([1, 0])].tolist() == a[[1, 0]].tolist()
    assert z.gather(1, ember.tensor([[2, 0]])).tolist() == [[a[0, 2], a[0, 0]]]
    mask = ember.tensor([[True, False, True], [False, False, True]])
    assert z.masked_fill(mask, 1j).tolist() == np.where(mask.numpy(), 1j, a).tolist()
    z[ember.tensor([0]), ember.tensor([1])] = 5 - 5j
    assert z[0, 1].item() == 5 - 5j


def test_multilabel_losses_with_infinite_scores():
    inf = math.inf
    x = ember.tensor([[inf, 1.0, -inf, 0.5]])
    assert F.multilabel_margin_loss(x, ember.tensor([[0, 2, -1, 1]])).item() == inf
    soft = ember.tensor([[inf, -inf]])
    assert (
        F.multilabel_soft_margin_loss(soft, ember.tensor([[0.0, 1]]), reduction="sum").item() == inf
    )
    half = F.multilabel_soft_margin_loss(soft, ember.tensor([[0.5, 0.5]]), reduction="none")
    assert half.tolist() == [inf]
    # finite scores and their gradients are unchanged: against torch's formula written out
    x = ember.tensor([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]], requires_grad=True)
    y = ember.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    weight = ember.tensor([1.0, 2.0, 0.5])
    F.multilabel_soft_margin_loss(x, y, weight=weight).backward()
    grad = x.grad.clone()
    x.grad = None
    ref = -(y * F.logsigmoid(x) + (1 - y) * F.logsigmoid(-x)) * weight
    (ref.sum(-1) / 3).mean().backward()
    assert ember.allclose(grad, x.grad)
    t = ember.tensor([[2, 0, -1], [1, -1, 0]])
    x.grad = None
    F.multilabel_margin_loss(x, t, reduction="sum").backward()
    assert ember.allclose(x.grad, _margin_grad_fd(x.detach(), t), atol=1e-3)


def _margin_grad_fd(x, t, eps=1e-3):
    """Central differences of multilabel_margin_loss(reduction='sum')."""
    out = ember.zeros_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            hi, lo = x.clone(), x.clone()
            hi[i, j] += eps
            lo[i, j] -= eps
            diff = F.multilabel_margin_loss(hi, t, reduction="sum")
            diff = diff - F.multilabel_margin_loss(lo, t, reduction="sum")
            out[i, j] = diff / (2 * eps)
    return out


def _causal(b, h, q, kv):
    return q >= kv


def _sliced(lib, fa):
    """Slices of a causal BlockMask. torch's is rebuilt from ember's tile tables (its
    create_block_mask takes seconds to compile on the first call)."""
    bm = flex_attention.create_block_mask(_causal, 2, 3, 256, 384, BLOCK_SIZE=64)
    if lib is not ember:
        tables = (bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks, bm.full_kv_indices)
        bm = fa.BlockMask.from_kv_blocks(
            *(lib.tensor(t.tolist(), dtype=lib.int32) for t in tables),
            BLOCK_SIZE=64,
            mask_mod=_causal,
            seq_lengths=(256, 384),
        )
    rows = lib.tensor([1, 3])
    return bm, [bm[0], bm[-1], bm[0, 1], bm[:, 1:], bm[0:2, 1:2, rows], bm[0, 0, 0, 0]]


def test_block_mask_indexing():
    bm, (first, last, one, heads, rows, extra) = _sliced(ember, flex_attention)
    assert first.shape == (1, 3, 256, 384) and first.kv_indices.shape == (1, 3, 4, 6)
    assert ember.equal(last.full_kv_indices, bm.full_kv_indices[1:])
    assert one.shape == (1, 1, 256, 384) and ember.equal(
        one.kv_num_blocks, bm.kv_num_blocks[:1, 1:2]
    )
    assert heads.shape == (2, 2, 256, 384) and heads.q_indices.shape == (2, 2, 6, 4)
    assert rows.kv_num_blocks.shape == (2, 1, 2) and rows.q_indices.shape == (2, 1, 6, 2)
    assert extra.kv_num_blocks.shape == (1, 1, 1)  # indices past the third are ignored
    with pytest.raises(RuntimeError, match="^Cannot use mask_mod from a sliced BlockMask. When"):
        first.mask_mod(0, 0, 0, 0)
    q = ember.randn(1, 3, 256, 8)
    k = ember.randn(1, 3, 384, 8)
    with pytest.raises(RuntimeError, match="^Cannot use mask_mod from a sliced BlockMask$"):
        flex_attention.flex_attention(q, k, k, block_mask=last)
    last.mask_mod = bm.mask_mod  # as torch's message tells
    whole = flex_attention.create_block_mask(_causal, 1, 3, 256, 384, BLOCK_SIZE=64)
    out = flex_attention.flex_attention(q, k, k, block_mask=last)
    assert ember.allclose(out, flex_attention.flex_attention(q, k, k, block_mask=whole))


def test_block_mask_indexing_as_torch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import flex_attention as torch_fa

    _, ours = _sliced(ember, flex_attention)
    _, refs = _sliced(torch, torch_fa)
    for got, want in zip(ours, refs):
        assert repr(got) == repr(want)
        assert got.to_dense().tolist() == want.to_dense().tolist()
        assert got.q_indices.tolist() == want.q_indices.tolist()


_UNARY = (
    "acos asin atan acosh asinh atanh arccos arcsinh exp2 expm1 log1p sinc erf erfc erfinv "
    "lgamma digamma i0"
).split()


def test_complex_input_never_gives_a_real_result():
    # a unary op without a complex kernel refused a complex tensor only in place; the function
    # computed on the real parts
    z = ember.tensor([0.5 + 0.5j, -1.5 + 0.25j])
    for name in _UNARY:
        for call in (lambda: getattr(ember, name)(z), lambda: getattr(z, name)()):
            try:
                out = call()
            except NotImplementedError as e:
                assert "not implemented for 'ComplexFloat'" in str(e), name
            else:
                assert out.dtype == ember.complex64, name
    for name in ("deg2rad", "rad2deg"):
        with pytest.raises(RuntimeError, match=f"^{name} is not supported for complex tensors.$"):
            getattr(ember, name)(z)
    assert ember.tensor([180.0]).deg2rad().item() == pytest.approx(math.pi)


def test_method_aliases_take_their_targets_paths():
    z = ember.tensor([3 + 4j, -1j])
    assert z.absolute().tolist() == z.abs().tolist() == [5.0, 1.0]
    assert z.negative().tolist() == [-3 - 4j, 1j]
    with pytest.raises(NotImplementedError, match="^clamp is not supported for complex types$"):
        z.clip(0)
    with pytest.raises(NotImplementedError, match="^clamp is not supported for complex types$"):
        z.clip_(max=1)
    assert ember.tensor([2.5, -3.0]).clip(-1, 1).tolist() == [1.0, -1.0]


_NEAR_ZERO = [0.5 + 0.5j, -1.5 + 0.25j, 1e-6 + 2e-6j, 0j, 3 - 40j, -0.9 + 0j, 100 + 1j]


def test_complex_expm1_log1p_exp2_sinc():
    np = pytest.importorskip("numpy")
    z = ember.tensor(_NEAR_ZERO, dtype=ember.complex128)
    v = np.array(_NEAR_ZERO)
    # numpy's complex log1p is log(1 + z), 1e-10 off near 0; torch's (below) agrees to 1e-12
    for name, ref, rtol in (
        ("expm1", np.expm1, 1e-12),
        ("log1p", np.log1p, 1e-9),
        ("exp2", np.exp2, 1e-12),
    ):
        assert np.allclose(getattr(z, name)().numpy(), ref(v), rtol=rtol, atol=0), name
    assert np.allclose(ember.sinc(z).numpy(), np.sinc(v), rtol=1e-12, atol=1e-300)


def test_complex_expm1_log1p_exp2_sinc_values_and_gradients_as_torch():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    grad = [1 + 2j, 0.5 - 1j, 1j, 2 + 0j, 1 - 1j, 3j, 0.25 + 0j]
    for name in ("expm1", "log1p", "exp2", "sinc"):
        a = torch.tensor(_NEAR_ZERO, dtype=torch.complex128, requires_grad=True)
        b = ember.tensor(_NEAR_ZERO, dtype=ember.complex128, requires_grad=True)
        want, got = getattr(torch, name)(a), getattr(ember, name)(b)
        assert np.allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12), name
        want.backward(torch.tensor(grad))
        got.backward(ember.tensor(grad))
        assert np.allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9), name


def _complex_helpers(lib):
    z = lib.tensor([0.3 + 0.2j, -0.5 + 1j, 2 - 0.1j], dtype=lib.complex128)
    m = lib.tensor([[0.3 + 0.2j, -0.5 + 1j, 2 - 0.1j], [1 + 1j, 2, -1j]], dtype=lib.complex128)
    w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    return [
        ("logit", lambda: lib.logit(z)),
        ("logit eps", lambda: lib.logit(z, 0.1)),
        ("mvlgamma", lambda: lib.mvlgamma(z + 3, 2)),
        ("trapezoid empty", lambda: lib.trapezoid(lib.zeros(0, dtype=lib.complex64))),
        ("cumulative_trapezoid empty", lambda: lib.cumulative_trapezoid(z[:0])),
        ("trapezoid", lambda: lib.trapezoid(z, z)),
        ("cov", lambda: lib.cov(m)),
        ("cov 1-d", lambda: lib.cov(z)),
        ("cov aweights", lambda: lib.cov(m, aweights=w)),
        ("cov fweights", lambda: lib.cov(m, fweights=lib.tensor([1, 2, 1]), correction=0)),
        ("corrcoef", lambda: lib.corrcoef(m)),
        ("corrcoef 1-d", lambda: lib.corrcoef(z)),
        ("vander", lambda: lib.vander(z)),
        ("vander N increasing", lambda: lib.vander(z, 4, increasing=True)),
        ("linalg.vander", lambda: lib.linalg.vander(m)),
        ("float()", lambda: float(lib.tensor(1 + 2j))),
        ("float() imag 0", lambda: float(lib.tensor(2.5 - 0j))),
        ("int()", lambda: int(lib.tensor(2.5 + 1j))),
        ("int() nan", lambda: int(lib.tensor(complex(float("nan"), 0)))),
        ("int() imag 0", lambda: int(lib.tensor(-2.5 + 0j))),
        ("index", lambda: [0, 1][lib.tensor(1 + 0j)]),
        ("dequantize complex", lambda: lib.dequantize(z)),
        ("dequantize float64", lambda: lib.tensor([1.5], dtype=lib.float64).dequantize()),
        ("dequantize int", lambda: lib.dequantize(lib.tensor([3]))),
    ]


def test_complex_inputs_of_python_helpers_as_torch():
    # _float turned complex inputs into real ones, so these gave real (wrong) results
    torch = pytest.importorskip("torch")
    for (name, ours), (_, ref) in zip(_complex_helpers(ember), _complex_helpers(torch)):
        got, want = _outcome(ours), _outcome(ref)
        if isinstance(want, Exception):
            assert type(got).__name__ == type(want).__name__, (name, got)
            assert str(got) == str(want), name
        elif isinstance(want, (int, float)):
            assert type(got) is type(want) and got == want, name
        else:
            assert not isinstance(got, Exception), (name, got)
            assert str(got.dtype) == str(want.dtype), name
            assert ember.allclose(got, ember.tensor(want.numpy()), rtol=1e-12, atol=1e-12), name


def test_complex_cov_without_torch():
    m = ember.tensor([[1 + 1j, 2 - 1j, 0j], [1j, 1.0 + 0j, -1 + 0j]])
    c = ember.cov(m)
    assert c.dtype == ember.complex64
    xm = m - m.mean(1, keepdim=True)
    assert ember.allclose(c, xm @ xm.conj().t() / 2)
    assert ember.allclose(c, c.conj().t())  # Hermitian
    assert ember.vander(ember.tensor([1j]), 3).tolist() == [[-1 + 0j, 1j, 1 + 0j]]
    with pytest.raises(
        NotImplementedError, match="\"logit_cpu\" not implemented for 'ComplexFloat'"
    ):
        ember.logit(m)


_CAST_WARNING_SCRIPT = r"""
import warnings
import ember
z = ember.tensor([1 + 2j, -3 + 0.5j])
def setitem(t, index, value):
    t[index] = value
    return t
calls = [
    lambda: z.to(ember.float32),
    lambda: z.float(),
    lambda: z.long(),
    lambda: z.double(memory_format=ember.contiguous_format),
    lambda: z.type(ember.float64),
    lambda: ember.zeros(2).copy_(z),
    lambda: setitem(ember.zeros(2), slice(None), z),
    lambda: setitem(ember.zeros(2), ..., z),
    lambda: setitem(ember.zeros(2), slice(0, 1), z[0]).add_(ember.tensor([0.0, -3.0])),
    lambda: ember.zeros(2).fill_(z[1]).mul_(ember.tensor([-1 / 3, 1.0])),
]
for call in calls:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        first = call()
        second = call()
    assert first.tolist() == second.tolist() == [1.0, -3.0], first
    # torch warns once a process (TORCH_WARN_ONCE); with a fresh flag each call warns
    print(len(w), [str(x.message) for x in w], w[0].filename if w else None)
    import ember._warn_once as once
    once._given.discard("complex_to_real")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    ember.zeros(2).copy_(ember.ones(2))
    z.to(ember.complex128)
    ember.zeros(2, dtype=ember.complex64).copy_(z)
    ember.zeros(2, dtype=ember.bool).fill_(z[0])  # torch's bool casts do not warn
    setitem(ember.zeros(2, dtype=ember.bool), slice(None), z)
    setitem(ember.zeros(2), ember.tensor([True, False]), ember.tensor(2 + 0j))  # masked_fill_
    setitem(ember.zeros(2), 0, 2 + 0j)  # a Python complex is checked, not cast
print(len(w))
"""


def test_complex_to_real_casts_warn_once_as_torch():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _CAST_WARNING_SCRIPT], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    message = "Casting complex values to real discards the imaginary part"
    assert len(out) == 11, out
    for line in out[:10]:
        assert line == f"1 ['{message}'] <string>", line
    assert out[10] == "0"


def _assignment_calls(m):
    """Values written into tensors of another dtype: complex into real, bool-mask assignment."""

    def setitem(t, index, value):
        t[index] = value
        return t

    mask = m.tensor([True, False, True])
    return [
        lambda: setitem(m.zeros(3), 0, 1j),
        lambda: setitem(m.zeros(3), slice(None), 2 + 0j),
        lambda: setitem(m.zeros(3, dtype=m.int32), 0, 2.5 + 1j),
        lambda: setitem(m.zeros(3, dtype=m.int8), 1, 300 + 0j),
        lambda: setitem(m.zeros(3, dtype=m.float16), 0, 2.5 + 1j),
        lambda: setitem(m.zeros(3, dtype=m.bool), 0, 2j),
        lambda: setitem(m.zeros(3), mask, m.tensor(1j)),
        lambda: setitem(m.zeros(3), mask, m.tensor(2 + 0j)),
        lambda: setitem(m.zeros(2, 3), (slice(None), mask), m.tensor([1 + 1j])),
        lambda: setitem(m.zeros(3, dtype=m.int8), mask, m.tensor(1000)),
        lambda: setitem(m.zeros(3), m.tensor([0, 1]), m.tensor([1j, 2j])),
        lambda: m.zeros(3).masked_fill_(mask, m.tensor(1j)),
        lambda: m.zeros(3).masked_fill(mask, m.tensor(2 + 0j)),
        lambda: m.zeros(3, dtype=m.int8).masked_fill_(mask, m.tensor(1000)),
        lambda: m.zeros(3, dtype=m.int8).fill_(m.tensor(1000)),  # fill_ does not check
        # a bool mask with a one-element value of another dtype: masked_fill_'s conversion
        lambda: setitem(m.zeros(3, dtype=m.int64), mask, m.tensor(2.7)),
        lambda: setitem(m.zeros(2, 3), (slice(None), mask), m.tensor(7)),
        lambda: setitem(m.zeros(2, 3), (0, mask), m.tensor(7)),
        lambda: setitem(m.zeros(3, dtype=m.float16), mask, m.tensor(1e5)),
        lambda: setitem(m.zeros(3, dtype=m.uint8), mask, m.tensor(-1)),
    ]


def test_complex_values_into_real_tensors_as_torch():
    torch = pytest.importorskip("torch")
    got = [_outcome(c) for c in _assignment_calls(ember)]
    want = [_outcome(c) for c in _assignment_calls(torch)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert type(g).__name__ == type(w).__name__, (i, g, w)
        if isinstance(w, Exception):
            assert "converted" not in str(w) or str(g) == str(w), (i, g, w)
        else:
            assert g.tolist() == w.tolist(), (i, g, w)


def test_complex_values_into_real_tensors_without_torch():
    out = [_outcome(c) for c in _assignment_calls(ember)]
    overflow = "value cannot be converted to type {} without overflow"
    for i, name in ((0, "float"), (2, "int"), (4, "double"), (9, "int8_t")):  # f16: torch's double
        assert isinstance(out[i], RuntimeError) and str(out[i]) == overflow.format(name), i
    assert out[1].tolist() == [2.0, 2.0, 2.0] and out[5].tolist() == [True, False, False]
    assert out[7].tolist() == [2.0, 0.0, 2.0] and out[14].tolist() == [-24, -24, -24]
    assert out[15].tolist() == [2, 0, 2] and out[16].tolist() == [[7.0, 0.0, 7.0]] * 2


_INVERSE = "asin acos atan asinh acosh atanh".split()
# both sides of every branch cut (signed zeros), near 0 and +-1, large and infinite values
_CUT_VALUES = [0.0, -0.0, 0.3, -0.3, 1.0, -1.0, 1.5, -1.5, 1e-8, -40.0, 1e5, math.inf, -math.inf]


def test_complex_inverse_trig_on_the_cuts_as_torch():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    grid = [complex(a, b) for a in _CUT_VALUES for b in _CUT_VALUES]
    for name in _INVERSE:
        for dt, rtol in (("complex128", 1e-11), ("complex64", 1e-5)):
            want = getattr(torch, name)(torch.tensor(grid, dtype=getattr(torch, dt))).numpy()
            got = getattr(ember, name)(ember.tensor(grid, dtype=getattr(ember, dt))).numpy()
            assert got.dtype == want.dtype, name
            # acos(1 + 1e-8j): torch's real part is 2e-12 off (mpmath agrees with ember's)
            assert np.allclose(got, want, rtol=rtol, atol=0, equal_nan=True), (name, dt)
            for part in (np.real, np.imag):  # the zero parts' signs
                zero = (part(want) == 0) & (part(got) == 0)
                assert (np.signbit(part(got)) == np.signbit(part(want)))[zero].all(), name


def test_complex_inverse_trig_gradients_and_in_place_as_torch():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    points = [0.5 + 0.5j, -1.5 + 0.25j, 2 - 3j, -0.2 - 0.7j, 1e-3 + 2j]
    grad = [1 + 2j, 0.5 - 1j, 1j, 2 + 0j, 1 - 1j]
    for name in (*_INVERSE, "expm1", "log1p", "exp2", "sinc"):
        a = torch.tensor(points, dtype=torch.complex128, requires_grad=True)
        b = ember.tensor(points, dtype=ember.complex128, requires_grad=True)
        want, got = getattr(torch, name)(a), getattr(ember, name)(b)
        want.backward(torch.tensor(grad))
        got.backward(ember.tensor(grad))
        assert np.allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9), name
        z = ember.tensor(points, dtype=ember.complex128)
        assert getattr(z, name + "_")() is z, name
        assert np.allclose(z.numpy(), want.detach().numpy(), rtol=1e-12), name
    assert ember.tensor([2 + 0j]).arccos().tolist() == ember.acos(ember.tensor([2 + 0j])).tolist()


def test_complex_inverse_trig_without_torch():
    z = ember.tensor([0.5 + 0.5j, -2 + 0j, 3 - 1j], dtype=ember.complex128)
    for name, inverse in (("asin", "sin"), ("acos", "cos"), ("atan", "tan")):
        assert ember.allclose(getattr(ember, inverse)(getattr(ember, name)(z)), z), name
    for name in ("asinh", "acosh", "atanh"):
        assert ember.allclose(getattr(ember, name[1:])(getattr(ember, name)(z)), z), name
    assert ember.asin(ember.tensor([1.5 + 0j])).imag.item() > 0  # above the cut: C99's side
    assert ember.asin(ember.tensor([complex(1.5, -0.0)])).imag.item() < 0
