"""Issue 19, session 12: the differential fuzzer's remaining disagreements with torch. lerp's
fused multiply-add, gelu at +inf by layout, int64 conv_transpose, checked integer conversion in
torch.tensor, error classes (0-d tuple indexing, glu/binary_cross_entropy/softmin dtypes and
types, fft's normalization, aminmax, index_reduce), fold/unfold of bool, all/any over an empty
dim list, and the wide fuzz families' smoke run. Each case is checked against hand-computed
outcomes, and against torch where it is installed.
"""

import math
import os
import sys

import numpy as np
import pytest
from _edge_check import _check, _ok, _raises

import ember

F = ember.nn.functional
INF, NAN = math.inf, math.nan


def _torch():
    return pytest.importorskip("torch")


# ----------------------------------------------------------------------------- lerp


def _fma_lerp(s, e, w):
    """torch's lerp on float32 arrays with one rounding: the product and sum exact in double
    (a float32 product has 48 bits), then rounded to float32."""
    s, e, w = (np.asarray(a, np.float64) for a in (s, e, w))
    d = (e.astype(np.float32) - s.astype(np.float32)).astype(np.float64)
    small = np.abs(w) < 0.5
    coeff = np.where(small, w, (w.astype(np.float32) - np.float32(1)).astype(np.float64))
    base = np.where(small, s, e)
    with np.errstate(over="ignore"):
        return (coeff * d + base).astype(np.float32)


def test_lerp_does_not_overflow_where_the_fused_result_fits():
    # (w - 1) * (end - self) = 4e38 overflows when rounded; fused with end it is -1e38
    _check(lambda T: T.lerp(T.tensor([1e38]), T.tensor([3e38]), -1.0), _ok([-1e38]))
    x = ember.tensor([1e38, 1e38]).expand(2, 2).contiguous()
    x.lerp_(ember.tensor([3e38, 3e38]).expand(2, 2), -1)
    assert np.isfinite(x.numpy()).all()


@pytest.mark.parametrize("layout", ["contiguous", "strided", "expanded", "scalar_weight"])
def test_lerp_rounds_once_as_torch(layout):
    rng = np.random.default_rng(0)
    s, e = rng.standard_normal((2, 64)).astype(np.float32)
    w = rng.uniform(-2, 2, 64).astype(np.float32)
    if layout == "scalar_weight":
        w = np.full(64, np.float32(0.7), np.float32)
        got = ember.lerp(ember.tensor(s), ember.tensor(e), 0.7).numpy()
    elif layout == "strided":
        big = [np.repeat(a, 2) for a in (s, e, w)]
        got = ember.lerp(*(ember.tensor(a)[::2] for a in big)).numpy()
    elif layout == "expanded":
        s = np.full(64, s[0], np.float32)
        got = ember.lerp(ember.tensor(s[:1]).expand(64), ember.tensor(e), ember.tensor(w)).numpy()
    else:
        got = ember.lerp(ember.tensor(s), ember.tensor(e), ember.tensor(w)).numpy()
    assert np.array_equal(got, _fma_lerp(s, e, w))


def test_lerp_gradients_as_torch():
    torch = _torch()
    vals = ([1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [0.25, 0.75, -1.5])

    def grads(lib):
        s, e, w = (lib.tensor(v, requires_grad=True) for v in vals)
        y = lib.lerp(s, e, w)
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return y.grad_fn.name(), [t.grad.tolist() for t in (s, e, w)]

    assert grads(ember) == grads(torch)


def test_lerp_of_half_keeps_a_float_weight():
    _check(
        lambda T: T.lerp(
            T.tensor([0.0, 1.0], dtype=T.float16), T.tensor([1.0, 3.0], dtype=T.float16), 0.1
        ),
        _ok([0.0999755859375, 1.2001953125]),
    )


# ----------------------------------------------------------------------------- gelu at +inf


# torch's AVX-512 vector path (a contiguous tensor of 2+ elements) gives NaN at +inf for float32
# and bf16; its AVX2 build gives +inf there, as its scalar path
VEC_INF = NAN if ember.backends.cpu.get_cpu_capability() == "AVX512" else INF

GELU_INF = [
    (lambda T: T.nn.functional.gelu(T.tensor([INF, INF, 1.0])), [VEC_INF, VEC_INF, 0.8413447]),
    (lambda T: T.nn.functional.gelu(T.full((2, 3), INF)), [[VEC_INF] * 3] * 2),
    (lambda T: T.nn.functional.gelu(T.full((4,), INF, dtype=T.bfloat16)).float(), [VEC_INF] * 4),
    # its scalar path: one element, or any non-contiguous layout
    (lambda T: T.nn.functional.gelu(T.tensor([INF])), [INF]),
    (lambda T: T.nn.functional.gelu(T.full((3, 2), INF).t()), [[INF] * 3] * 2),
    (lambda T: T.nn.functional.gelu(T.full((2, 3), INF)[:, 1:]), [[INF] * 2] * 2),
    (lambda T: T.nn.functional.gelu(T.full((2,), INF).expand(3, 2)), [[INF] * 2] * 3),
    (lambda T: T.nn.functional.gelu(T.full((2, 3), 3e38)[:, 1:]), [[3e38] * 2] * 2),
    # float16 and float64 give +inf on both paths
    (lambda T: T.nn.functional.gelu(T.full((4,), INF, dtype=T.float64)), [INF] * 4),
    (lambda T: T.nn.functional.gelu(T.full((4,), INF, dtype=T.float16)).float(), [INF] * 4),
]


@pytest.mark.parametrize("case", range(len(GELU_INF)))
def test_gelu_at_inf_by_layout_as_torch(case):
    fn, want = GELU_INF[case]
    _check(fn, _ok(want))


# ----------------------------------------------------------------------------- conv_transpose


def test_int64_conv_transpose_computes_as_torch():
    x = np.arange(2 * 2 * 3 * 3).reshape(2, 2, 3, 3) - 10
    w = np.arange(2 * 3 * 2 * 2).reshape(2, 3, 2, 2) - 5
    b = np.array([1, -2, 3])

    def conv(T, **kw):
        return T.nn.functional.conv_transpose2d(
            T.tensor(x),
            T.tensor(w),
            T.tensor(b),
            stride=2,
            padding=1,
            output_padding=1,
            dilation=1,
            **kw,
        )

    got = conv(ember)
    assert got.dtype == ember.int64
    ref = F.conv_transpose2d(
        ember.tensor(x, dtype=ember.float64),
        ember.tensor(w, dtype=ember.float64),
        ember.tensor(b, dtype=ember.float64),
        stride=2,
        padding=1,
        output_padding=1,
    )
    assert got.tolist() == ref.to(ember.int64).tolist()
    _check(conv, _ok(got.tolist()))
    _check(
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(1, 2, 5, dtype=T.int64), T.ones(2, 3, 3, dtype=T.int64), dilation=2, groups=1
        ),
        _ok([[[2, 2, 4, 4, 6, 4, 4, 2, 2]] * 3]),
    )


def test_int32_conv_transpose_still_raises():
    _check(
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(1, 2, 5, dtype=T.int32), T.ones(2, 3, 3, dtype=T.int32)
        ),
        _raises(NotImplementedError),
    )


# ----------------------------------------------------------------------------- torch.tensor


@pytest.mark.parametrize(
    "data, dtype, want",
    [
        ([1.5, NAN], "int32", None),
        ([3e9], "int32", None),
        (2**40, "int32", None),
        ([300], "uint8", None),
        ([INF], "int64", None),
        ([-129], "int8", None),
        ([-1], "uint8", [255]),  # torch wraps a negative int into uint8
        ([1.5, 2.0], "int32", [1, 2]),
        ([1e40], "float16", [INF]),  # floating dtypes are not checked
    ],
)
def test_tensor_checks_integer_conversion(data, dtype, want):
    fn = lambda T: T.tensor(data, dtype=getattr(T, dtype))  # noqa: E731
    _check(fn, _raises(RuntimeError) if want is None else _ok(want))


# ----------------------------------------------------------------------------- error classes

ERRORS = [
    # a 1-tuple of a slice on a 0-d tensor: the count first (IndexError), a lone slice's step
    # first (ValueError)
    (lambda T: T.tensor(1.0)[(slice(None, None, -1),)], IndexError),
    (lambda T: T.tensor(1.0)[::-1], ValueError),
    (lambda T: T.tensor(1.0).__setitem__((slice(None, None, 0),), 2.0), IndexError),
    (lambda T: T.nn.functional.glu(T.ones(2, 3, dtype=T.int64), 0), NotImplementedError),
    (lambda T: T.nn.functional.glu(T.ones(3, 3, dtype=T.int64), 0), RuntimeError),
    (lambda T: T.nn.functional.glu(T.ones(2, 3, dtype=T.bool), 0), NotImplementedError),
    (
        lambda T: T.nn.functional.binary_cross_entropy(
            T.full((2,), 0.5, dtype=T.bfloat16), T.ones(2)
        ),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.binary_cross_entropy(T.ones(2), T.ones(2, dtype=T.int8)),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.binary_cross_entropy(
            T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)
        ),
        NotImplementedError,
    ),
    (lambda T: T.nn.functional.softmin(True, dim=-1), AttributeError),
    (lambda T: T.nn.functional.softmin(1.5, dim=0), AttributeError),
    (
        lambda T: T.nn.functional.smooth_l1_loss(
            T.ones((), dtype=T.int64), T.ones((), dtype=T.int64), beta=0.0
        ),
        RuntimeError,
    ),
    (lambda T: T.fft.fft(T.ones(4), norm="bogus"), RuntimeError),
    (lambda T: T.fft.irfft(T.ones(4), norm="bogus"), RuntimeError),
    (lambda T: T.fft.fftshift(T.ones(3), dim=()), RuntimeError),
    (lambda T: T.aminmax(T.ones(5, 1, 0), keepdim=True), RuntimeError),
    (lambda T: T.aminmax(T.ones(5, 1, 0), dim=2), IndexError),
    (
        lambda T: T.ones(5).index_reduce(7, T.tensor([0]), T.ones(1), "amax"),
        IndexError,
    ),
    # pooling to all-ones sizes is torch's mean (RuntimeError for integers), else its kernel's
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 2, 2, 2, dtype=T.int64), 1),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 2, 2, 2, dtype=T.int64), 2),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(2, 4, dtype=T.int32), 2),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.interpolate(
            T.ones(1, 2, 2, 2, dtype=T.int64), size=1, mode="area"
        ),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(0, 2, 6, 6, dtype=T.int64), 4),
        NotImplementedError,
    ),
    (lambda T: T.nn.functional.one_hot(T.ones(0, 2, dtype=T.int64), num_classes=0), RuntimeError),
    (
        lambda T: T.nn.functional.soft_margin_loss(T.ones(3, dtype=T.int64), T.ones(3)),
        RuntimeError,
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_error_classes_as_torch(case):
    fn, cls = ERRORS[case]
    _check(fn, _raises(cls))


VALUES = [
    # an expanded input cut to one row keeps a 0 stride; the FFT kernel divided by it (SIGFPE)
    (
        lambda T: (
            T.fft.rfft(T.ones(1, 2, dtype=T.float64).expand(3, 2), norm="forward", n=1, dim=-2).real
        ),
        [[1.0, 1.0]],
    ),
    # an empty dim list: vector_norm reduces every dim (all/any below reduce none)
    (
        lambda T: T.linalg.vector_norm(T.tensor([[3.0, 4.0], [0.0, 0.0]]), dim=(), keepdim=True),
        [[5.0]],
    ),
    (
        lambda T: T.nn.functional.smooth_l1_loss(
            T.tensor([1, 4]), T.tensor([2, 2]), reduction="sum", beta=0.0
        ),
        3,
    ),
    (lambda T: T.all(T.tensor([[1, 0], [2, 3]]), dim=()), [[True, False], [True, True]]),
    (lambda T: T.tensor([[1, 0]], dtype=T.uint8).all(dim=[]), [[1, 0]]),
    (lambda T: T.any(T.tensor([0.0, 2.0]), dim=(), keepdim=True), [False, True]),
    (lambda T: T.all(T.tensor([[1, 0], [2, 3]]), dim=(0,)), [True, False]),
    (
        lambda T: T.nn.functional.fold(T.tensor([[[True], [False], [False], [True]]]), (2, 2), 2),
        [[[[True, False], [False, True]]]],
    ),
    (
        lambda T: T.nn.functional.unfold(T.tensor([[[[True, False], [False, True]]]]), 1),
        [[[True, False, False, True]]],
    ),
    (
        lambda T: T.ones(5).index_reduce(-1, T.tensor([0]), T.full((1,), 3.0), "amax"),
        [3.0, 1, 1, 1, 1],
    ),
]


@pytest.mark.parametrize("case", range(len(VALUES)))
def test_values_as_torch(case):
    fn, want = VALUES[case]
    _check(fn, _ok(want))


# ----------------------------------------------------------------------------- wide fuzz smoke


def test_wide_fuzz_families_run_and_classify():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
    import run_fuzz

    tally = run_fuzz.run(150, profile="ci", hang_s=30.0, families="wide")
    report = run_fuzz.summary(tally)
    assert tally.calls == 150, report
    assert not [key for key in tally.findings() if key[0] in ("crash", "hang")], report
