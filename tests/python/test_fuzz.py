"""The fuzzer's fast profile (tests/fuzz/run_fuzz.py), plus regression tests of what it found.

The profile runs a fixed (derandomized) set of calls in a child process, so a crash or a hang is
reported as a finding instead of killing pytest. It fails on any finding not in known.py.
"""

import os
import sys

import numpy as np
import pytest

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
import run_fuzz
from known import is_known

CI_CALLS = 2000  # about 15 s here


def test_fuzz_fast_profile():
    tally = run_fuzz.run(CI_CALLS, profile="ci", hang_s=30.0)
    report = run_fuzz.summary(tally)
    assert tally.calls == CI_CALLS, report
    assert (
        tally.kinds["matched"] + tally.kinds["raised_as_torch"] + tally.kinds["checked"]
        > CI_CALLS // 2
    ), report
    new = [key for key in tally.findings() if key[0] in ("crash", "hang") or not is_known(*key)]
    assert not new, report


# ----------------------------------------------------------------------------- regressions


@pytest.mark.parametrize("start, end", [(2, -2), (0.5, 7)])
def test_linspace_one_step_is_start(start, end):
    x = ember.linspace(start, end, 1)
    np.testing.assert_array_equal(x.numpy(), np.linspace(start, end, 1).astype(np.float32))


def test_circular_pad_wraps_the_cropped_data(torch):
    x = np.arange(2 * 5 * 4, dtype=np.float32).reshape(1, 2, 5, 4)
    pad = (2, -1, 1, -2)  # negative pads crop before the wrap
    got = ember.nn.functional.pad(ember.tensor(x), pad, mode="circular")
    want = torch.nn.functional.pad(torch.tensor(x), pad, mode="circular")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_circular_pad_negative_matches_numpy():
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    got = ember.nn.functional.pad(ember.tensor(x), (1, -2), mode="circular").numpy()
    cropped = x[..., :3]
    np.testing.assert_array_equal(got, np.concatenate([cropped[..., -1:], cropped], -1))


@pytest.mark.parametrize("fn", ["meshgrid", "cat", "stack"])
def test_sequence_of_tensors_with_a_str_raises_type_error(fn):
    with pytest.raises(TypeError, match=rf"{fn}: expected Tensor as element 1; got str"):
        getattr(ember, fn)([ember.ones(2), "abc"])


def test_max_pool_window_wholly_in_padding_is_minus_inf(torch):
    x = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    kw = {"kernel_size": (1, 2), "padding": (0, 1), "dilation": 2}
    got = ember.nn.functional.max_pool2d(ember.tensor(x), **kw).numpy()
    want = torch.nn.functional.max_pool2d(torch.tensor(x), **kw).numpy()
    assert np.isneginf(got).all()
    np.testing.assert_array_equal(got, want)


def test_pool_with_a_kernel_near_int64_max_raises_instead_of_hanging():
    # torch's avg_pool1d reads its sizes as 32-bit ints: its overflow error comes first
    with pytest.raises(RuntimeError, match="without overflow"):
        ember.nn.functional.avg_pool1d(ember.ones(2, 3), kernel_size=2**63 - 1, padding=1)


@pytest.mark.parametrize("size", [2**50, 2**63 - 1])
def test_pool_tables_too_large_to_allocate_raise_runtime_error(size):
    # the pool's window tables are sized from output_size before any tensor exists: they must
    # fail at once, not loop over 2**50 windows (nor abort a sanitizer build in operator new)
    with pytest.raises(RuntimeError, match="fits in memory"):
        ember.nn.functional.adaptive_max_pool1d(ember.ones(0, 2, 1), size)


def test_max_pool_with_a_huge_kernel_visits_only_the_input():
    x = ember.tensor([[[1.0, 5.0, 2.0]]])
    out = ember.nn.functional.max_pool1d(
        x, kernel_size=2**40, stride=1, padding=2**39, ceil_mode=False
    )
    assert out.shape == (1, 1, 4)
    np.testing.assert_array_equal(out.numpy(), np.full((1, 1, 4), 5.0, np.float32))


@pytest.mark.parametrize(
    "call",
    [
        lambda F: F.conv1d(
            ember.ones(1, 1, 3, dtype=ember.bool), ember.ones(1, 1, 1, dtype=ember.bool)
        ),
        # torch's slow conv_transpose kernel takes int64 (test_edges_s12.py) but not int32
        lambda F: F.conv_transpose2d(
            ember.ones(1, 1, 3, 3, dtype=ember.int32), ember.ones(1, 1, 1, 1, dtype=ember.int32)
        ),
        lambda F: F.unfold(ember.ones(1, 1, 3, 3, dtype=ember.int64), 2),
        lambda F: F.interpolate(ember.ones(1, 1, 3, dtype=ember.int64), size=4, mode="linear"),
        lambda F: F.layer_norm(ember.ones(2, 3, dtype=ember.int64), [3]),
        lambda F: F.batch_norm(ember.ones(2, 3, dtype=ember.int64), None, None, training=True),
    ],
    ids=["conv1d", "conv_transpose2d", "unfold", "interpolate", "layer_norm", "batch_norm"],
)
def test_unsupported_dtype_is_not_implemented_error(call):
    with pytest.raises(NotImplementedError):
        call(ember.nn.functional)


def test_index_add_out_of_bounds_is_runtime_error_not_index_error():
    # a matrix: RuntimeError as torch; a vector raises IndexError in torch 2.13 (test_overloads.py)
    with pytest.raises(RuntimeError, match=r"index_add_\(\): index 3 is out of bounds") as info:
        ember.zeros(3, 2).index_add(0, ember.tensor([3]), ember.ones(1, 2))
    assert not isinstance(info.value, IndexError)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda F: F.pixel_shuffle(ember.ones(1, 4, 2, 2), 0),
            RuntimeError,
            r"pixel_shuffle: expected a positive",
        ),
        (
            lambda F: F.pad(ember.ones(3), "abc"),
            TypeError,
            r"pad: expected pad to be a tuple of ints",
        ),
        (
            lambda F: F.hardtanh(ember.ones(3), 1.0, -1.0),
            ValueError,
            r"hardtanh: expected min_val <= max_val",
        ),
        (
            lambda F: F.conv_transpose2d(
                ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2), output_padding=-1
            ),
            RuntimeError,
            r"conv_transpose: expected a non-negative output_padding",
        ),
    ],
    ids=["pixel_shuffle_zero", "pad_str", "hardtanh_min_gt_max", "negative_output_padding"],
)
def test_bad_arguments_raise_pytorchs_class(call, exc, match):
    with pytest.raises(exc, match=match):
        call(ember.nn.functional)


def test_narrow_with_a_huge_length_raises():
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        ember.ones(3, 2).narrow(0, 2, 2**63 - 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda F: F.conv1d(ember.ones(1, 4), ember.ones(2, 1, 2), stride=3, padding=2**63 - 1),
        lambda F: F.fold(ember.ones(2, 2, 1), 2**63 - 1, 1),
        lambda F: F.unfold(ember.ones(1, 1, 4, 5), 2, padding=2**62),
    ],
    ids=["conv1d_padding", "fold_output_size", "unfold_padding"],
)
def test_sizes_near_int64_max_raise_instead_of_wrapping(call):
    # these wrapped into small, valid-looking sizes and the kernels wrote out of bounds
    with pytest.raises(RuntimeError, match="fits? in int64"):
        call(ember.nn.functional)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ember.eye(2**33),
        lambda: ember.zeros(2**40, 2**40),
        lambda: ember.nn.functional.pad(ember.ones(2, 3), (2**62, 0, 2**62, 0)),
    ],
    ids=["eye", "zeros", "pad"],
)
def test_element_counts_that_overflow_raise(call):
    # eye(2**33) wrapped to a small allocation and its diagonal fill wrote past it
    with pytest.raises(RuntimeError, match="overflow"):
        call()


def test_conv_with_a_stride_near_int64_max():
    # the first valid output column, ceil(padding / stride), overflowed and im2col wrote before
    # its buffer (double free); torch's oneDNN path rejects this call, so the check is by hand:
    # one output column, whose only tap (-2) lies in the padding
    x, w = ember.ones(2, 1, 6), ember.ones(1, 1, 1)
    out = ember.nn.functional.conv1d(x, w, stride=2**63 - 1, padding=2, dilation=2)
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 1, 1), np.float32))


@pytest.mark.parametrize("sizes", [(1, -5, -1), (0, -(2**40), -1, -1, 3)])
def test_expand_rejects_negative_sizes(sizes):
    # expand(1, -5, -1) made a (1, -5, 3) view with numel -15
    x = ember.ones(*([1, 1, 3] if len(sizes) == 3 else [1, 3, 4, 3]))
    with pytest.raises(RuntimeError, match=r"expand: expected sizes >= 0"):
        x.expand(*sizes)


# ------------------------------------------- session 19: dtype/shape/scalar sweep against torch
# Each case: an expression over T (ember or torch) and its outcome under torch 2.13: the result's
# dtype and values, or the exception class and a piece of its message. Checked on ember, and on
# torch where installed (so the table itself stays torch's).

_F16 = "T.tensor([1.3, 2.7], dtype=T.float16)"
_B = "T.tensor([True, False])"
_I = "T.tensor([1, 2])"
_Z = "T.tensor([1 + 1j, 2j])"
_E = "T.zeros(0, dtype=T.complex64)"
_S = "T.tensor(1j)"

SWEEP = [
    # special.xlog1py with numbers and integer/bool tensors: the promoted floating dtype
    (f"T.special.xlog1py(2, {_I})", ("float32", [1.3862944, 2.1972246])),
    (f"T.special.xlog1py({_I}, 2.5)", ("float32", [1.2527630, 2.5055261])),
    (f"T.special.xlog1py({_B}, {_B})", ("float32", [0.6931472, 0.0])),
    (f"T.special.xlog1py({_F16}, 2)", ("float16", [1.4277, 2.9648])),
    # float_power with a complex operand is complex128; its in-place form needs that dtype
    (f"T.float_power({_Z}, {_B})", ("complex128", [1 + 1j, 1])),
    (f"{_Z}.to(T.complex128).float_power_({_B})", ("complex128", [1 + 1j, 1])),
    (f"{_Z}.float_power_(2)", ("RuntimeError", "requires dtype ComplexDouble")),
    # igamma/igammac: the promoted dtype, floating only; tensors only; in-place cast checked
    (f"T.igamma({_F16}, {_B})", ("float16", [0.5059, 0.0])),
    (f"T.igamma({_I}, {_I})", ("NotImplementedError", '"igamma_cpu" not implemented for \'Long\'')),
    (f"T.igammac({_I}, 2)", ("TypeError", "must be Tensor, not int")),
    (f"{_B}.igamma_({_F16})", ("RuntimeError", "result type Half can't be cast")),
    # ldexp: a floating input scaled by integer exponents keeps its dtype; bool exponents refused
    (f"T.ldexp({_F16}, {_I})", ("float16", [2.5996, 10.797])),
    (f"T.ldexp({_F16}, {_B})", ("NotImplementedError", "ldexp_cpu_exp")),
    (f"T.ldexp({_B}, {_Z})", ("complex64", [1.5384778 + 1.2779226j, 0])),
    # logaddexp/logaddexp2 by the promoted dtype; logaddexp of complex
    (f"T.logaddexp({_I}, {_F16})", ("float16", [1.8545, 3.1035])),
    (f"T.logaddexp({_I}, {_I})", ("NotImplementedError", "logaddexp_cpu")),
    (f"T.logaddexp({_Z}, {_Z})", ("complex64", [1.6931472 + 1j, 0.6931472 + 2j])),
    (f"T.logaddexp2({_Z}, {_Z})", ("NotImplementedError", "logaddexp2_cpu")),
    # gcd/lcm by the promoted dtype (bool with uint8 is uint8); in place, the cast check first
    (f"T.gcd({_B}, {_I}.to(T.uint8))", ("uint8", [1, 2])),
    (f"T.lcm({_B}, {_B})", ("NotImplementedError", "lcm_cpu")),
    (f"{_B}.gcd_({_F16})", ("RuntimeError", "result type Half can't be cast")),
    (f"T.heaviside({_Z}, {_Z})", ("RuntimeError", "not yet implemented for complex tensors")),
    # complex()/polar(): tensors only, Half/Float/Double of one dtype (torch's wording)
    ("T.complex(T.ones(2), 2)", ("TypeError", "argument 'imag' (position 2) must be Tensor")),
    ("T.polar(2.0, T.ones(2))", ("TypeError", "argument 'abs' (position 1) must be Tensor")),
    (f"T.polar({_I}, {_I})", ("RuntimeError", "got Long and Long")),
    (f"T.polar({_F16}, {_F16})", ("NotImplementedError", "polar_cpu")),
    ("T.complex(T.ones(1), T.ones(1).double())", ("RuntimeError", "scalar type Float but got")),
    ("T.isclose(T.ones(2), 1j)", ("TypeError", "argument 'other' (position 2) must be Tensor")),
    (f"T.maximum(1j, {_Z})", ("TypeError", "argument 'input' (position 1) must be Tensor")),
    (f"T.max({_Z}, {_Z})", ("RuntimeError", "maximum not implemented for complex tensors")),
    # complex reductions
    (f"T.logsumexp({_Z}, 0)", ("complex64", [1.2135700 + 1.2527114j])),
    (f"T.logcumsumexp({_Z}, 0)", ("complex64", [1 + 1j, 1.2135700 + 1.2527114j])),
    (f"T.all({_Z})", ("bool", [True])),
    (f"{_Z}.any(0, keepdim=True)", ("bool", [True])),
    (f"T.var_mean({_Z}, 0)", ("float32", [1.0], "complex64", [0.5 + 1.5j])),
    (f"T.std_mean({_Z})", ("float32", [1.0], "complex64", [0.5 + 1.5j])),
    (f"T.nansum({_Z})", ("RuntimeError", "nansum on CPU does not support complex inputs")),
    (f"T.nanmean({_Z})", ("RuntimeError", "nansum on CPU does not support complex inputs")),
    (f"{_E}.mean()", ("complex64", [complex("nan+nanj")])),
    (f"{_S}.mean(0)", ("complex64", [1j])),
    (f"{_S}.prod(-1, keepdim=True)", ("complex64", [1j])),
    (f"{_S}.mean(5)", ("IndexError", "Dimension out of range")),
    (f"T.diag({_S})", ("RuntimeError", "Supports 1D or 2D tensors. Got 0D")),
    (f"T.cat([{_Z}.reshape(1, 2), T.zeros(0)])", ("complex64", [1 + 1j, 2j])),
    (f"T.roll({_S}, 1, 0)", ("IndexError", "but tensor has no dimensions")),
    (f"T.flip({_S}, (0,))", ("complex64", [1j])),
    (f"{_Z} / {_F16}", ("complex64", [0.7693463 + 0.7693463j, 0.7409406j])),
    (
        "T.tensor([1.1, 2.3], dtype=T.bfloat16) / (0.5 + 1j)",
        ("complex64", [0.4406250 - 0.8812500j, 0.9187500 - 1.8375000j]),
    ),
    (
        "T.div(0.5 + 1j, T.tensor([1.1, 2.3], dtype=T.bfloat16))",
        ("complex64", [0.4539007 + 0.9078014j, 0.2176871 + 0.4353741j]),
    ),
    ("T.tensor([1.5, 0.0]) / 0j", ("complex64", [complex("inf+nanj"), complex("nan+nanj")])),
    ("T.isclose(T.tensor([True]), T.tensor([1j]))", ("RuntimeError", "Bool did not match")),
    # refusals torch makes before its dtype dispatch: RuntimeError, not NotImplementedError
    (f"T.relu({_B})", ("RuntimeError", "Boolean inputs not supported for relu")),
    (f"T.isposinf({_Z})", ("RuntimeError", "isposinf does not support complex inputs.")),
    (f"{_Z}.sort()", ("RuntimeError", "Sort does not support complex dtypes on CPU")),
    (f"T.argsort({_E})", ("RuntimeError", "Sort does not support complex dtypes on CPU")),
    (f"T.topk({_Z}, 1)", ("RuntimeError", "topk does not support complex dtypes on CPU")),
    (f"T.argmax({_Z}, 5)", ("RuntimeError", "argmax(): does not support complex input")),
    (f"T.max({_Z}, 0)", ("RuntimeError", "max(): does not support complex input")),
    (f"T.min({_E}, 0)", ("IndexError", "Expected reduction dim 0 to have non-zero size")),
    ("T.fliplr(T.ones(2))", ("RuntimeError", "Input must be >= 2-d.")),
    ("T.flipud(T.tensor(1.0))", ("RuntimeError", "Input must be >= 1-d.")),
    (f"T.cross({_B}.repeat(2)[:3], {_B}.repeat(2)[:3], dim=0)", ("NotImplementedError", "cross")),
    ("T.linalg.cross(T.ones(3, dtype=T.int32), T.ones(3))", ("RuntimeError", "expected scalar")),
    ("T.trapezoid(T.ones(2, dtype=T.bool))", ("RuntimeError", "received a bool input for `y`")),
    ("T.cumulative_trapezoid(T.tensor(1.5))", ("IndexError", "0-dim tensor")),
    # complex convolutions (the imaginary parts were dropped) and activations
    (
        "T.nn.functional.conv1d(T.tensor([[[1 + 1j, 2, 3j]]]), T.tensor([[[1j, 1]]]), "
        "T.tensor([1j]))",
        ("complex64", [1 + 2j, 6j]),
    ),
    (
        "T.nn.functional.conv_transpose2d(T.tensor([[[[1 + 1j, 2j]]]]), T.tensor([[[[1j, 1]]]]))",
        ("complex64", [-1 + 1j, -1 + 1j, 2j]),
    ),
    ("T.nn.functional.conv1d(T.ones(1, 1, 2) * 1j, T.ones(1, 1, 1))", ("RuntimeError", "same")),
    ("T.nn.functional.silu(T.tensor([1 + 1j]))", ("complex64", [0.5800933 + 0.9839898j])),
    ("T.nn.functional.tanh(T.tensor([1 + 1j]))", ("complex64", [1.0839232 + 0.2717526j])),
    (
        "T.nn.functional.normalize(T.tensor([3 + 4j, 1j]), dim=0)",
        ("complex64", [0.5883484 + 0.7844645j, 0.1961161j]),
    ),
    ("T.tensordot(T.tensor(1.0), T.tensor(2.0), ([0], [0]))", ("IndexError", "no dimensions")),
    (f"T.nanmedian({_Z})", ("NotImplementedError", "median_cpu")),
    (f"T.nanmedian({_E}, 0)", ("IndexError", "Expected reduction dim 0 to have non-zero size")),
    (f"T.cumsum({_Z}, 5)", ("IndexError", "Dimension out of range")),
    (f"T.max({_S}, 5)", ("IndexError", "Dimension out of range")),
    ("T.max(T.tensor(True), -1)", ("bool", [True], "int64", [0])),
    ("T.min(T.tensor(True), 1)", ("IndexError", "Dimension out of range")),
    # torch's multi_margin kernel adds a margin only where it is > 0: a NaN input adds nothing
    (
        "T.nn.functional.multi_margin_loss(T.tensor([[float('nan'), 1.0, 2, 3]]), T.tensor([1]))",
        ("float32", [1.25]),
    ),
    # a number exponent of a half tensor is converted to half with torch's overflow check
    ("T.tensor([1.0], dtype=T.float16) ** 70000", ("RuntimeError", "without overflow")),
    ("T.tensor([1.0], dtype=T.bfloat16).pow_(1e39)", ("RuntimeError", "without overflow")),
    ("T.tensor([2.0], dtype=T.float16) ** float('inf')", ("float16", [float("inf")])),
    # empty contractions and size()/stride() of a 0-d tensor (read past the sizes before)
    ("T.einsum('ij,kj->ik', T.zeros(0, 2), T.zeros(0, 2)).shape", ("value", [0, 0])),
    ("T.einsum('bij,bjk->bik', T.zeros(2, 3, 0), T.zeros(2, 0, 4))", ("float32", [0.0] * 24)),
    ("T.tensordot(T.zeros(0, 2), T.zeros(0, 2), dims=([0], [0]))", ("float32", [0.0] * 4)),
    ("T.tensordot(T.zeros(2, 0), T.zeros(0, 0), 1).shape", ("value", [2, 0])),
    ("T.tensor(1.5).size(0)", ("IndexError", "Dimension specified as 0 but tensor has no dim")),
    ("T.tensor(1.5).stride(-1)", ("IndexError", "Dimension specified as -1 but tensor has no")),
    # session 20: out= is checked (dtype, then the kernel's refusal) as torch's structured
    # kernels do, complex operands and outs included
    (f"T.atan2({_Z}, {_Z}, out=T.empty(2, dtype=T.bool))", ("RuntimeError", "can't be cast")),
    (f"T.frac({_B}, out={_E})", ("RuntimeError", "Found dtype ComplexFloat but expected Bool")),
    (f"T.round({_Z}, out=T.empty(2))", ("RuntimeError", "Found dtype Float but expected Complex")),
    (f"T.erf({_Z}, out={_E})", ("NotImplementedError", "not implemented for 'ComplexFloat'")),
    (f"T.ceil({_Z}, out=T.empty(2))", ("NotImplementedError", "ceil is not supported for complex")),
    (f"T.sign({_Z}, out={_B})", ("NotImplementedError", "Please use torch.sgn instead.")),
    (f"T.abs({_Z}, out=T.empty(2, dtype=T.float16))", ("float16", [1.4142, 2.0])),
    (f"T.abs({_Z}, out={_E})", ("complex64", [1.4142136, 2.0])),
    (f"T.abs({_Z}, out={_I})", ("RuntimeError", "result type Float can't be cast to the desired")),
    (f"T.abs({_Z}, out={_E}.to(T.complex128))", ("RuntimeError", "Found dtype ComplexDouble")),
    # nn.functional: torch's dtype rules, complex inputs, and int64 local_response_norm, whose
    # window average truncates (avg_pool2d of int64)
    (
        "T.nn.functional.local_response_norm(T.tensor([[[3], [4]]]), 3)",
        ("float32", [2.9981771, 3.9975700]),
    ),
    (
        "T.nn.functional.local_response_norm(T.ones(1, 2, 3, 1).bool(), 2)",
        ("NotImplementedError", "\"avg_pool3d_out_frame\" not implemented for 'Bool'"),
    ),
    (
        "T.nn.functional.rms_norm(T.ones(2, dtype=T.int32), (2,))",
        ("NotImplementedError", "rms_norm"),
    ),
    (
        f"T.nn.functional.rms_norm({_Z}, (2,))",
        ("complex64", [0.8044959 - 0.4972058j, 1.3017017 + 0.3072901j]),
    ),
    ("T.zeros(2).exponential_(-1)", ("RuntimeError", "exponential_ expects lambda > 0.0")),
    (f"{_I}.exponential_()", ("RuntimeError", "dtype must be a floating point but you specified")),
    (f"T.nn.functional.gumbel_softmax({_I}[:0])", ("float32", [])),
    (f"T.nn.functional.logsigmoid({_B})", ("NotImplementedError", "log_sigmoid_cpu")),
    (f"T.nn.functional.softsign({_Z})", ("complex64", [0.4142136 + 0.4142136j, 2j / 3])),
    (f"T.nn.functional.tanhshrink({_Z})", ("complex64", [-0.0839232 + 0.7282474j, 4.1850395j])),
    (f"T.nn.functional.l1_loss({_Z}, {_Z}.flip(0))", ("float32", [1.4142135])),
    (f"T.nn.functional.pairwise_distance({_Z}[None], {_Z}.flip(0)[None])", ("float32", [2.0])),
    (
        f"T.nn.functional.triplet_margin_loss({_Z}[None], {_Z}.flip(0)[None], {_Z}[None] * 2)",
        ("float32", [0.5505102]),
    ),
    (f"T.nn.functional.poisson_nll_loss({_Z}, {_Z}.flip(0))", ("complex64", [2.5263 - 0.4017j])),
    (f"T.nn.functional.unfold({_Z}.reshape(1, 1, 1, 2), (1, 1))", ("complex64", [1 + 1j, 2j])),
    ("T.softmax(T.zeros(0, dtype=T.bool), 0)", ("bool", [])),
    ("T.log_softmax(T.zeros(0, 3, dtype=T.int32), -1)", ("int32", [])),
    # complex lerp and addcdiv; a real dtype= of a complex scan or product casts first
    (f"T.lerp({_Z}, {_Z}.flip(0), 0.7)", ("complex64", [0.3 + 1.7j, 0.7 + 1.3j])),
    (
        f"T.lerp({_Z}, {_Z}.flip(0), T.tensor([0.5 + 1j, 0.2]))",
        ("complex64", [-0.5 + 0.5j, 0.2 + 1.8j]),
    ),
    (f"T.lerp({_Z}, {_Z}, T.ones(2))", ("RuntimeError", "for `weight` but got dtype float")),
    (f"T.addcdiv({_Z}, {_Z}, {_Z}.flip(0), value=0.5)", ("complex64", [1.25 + 0.75j, 0.5 + 2.5j])),
    (f"T.cumsum({_Z}, 0, dtype=T.float32)", ("float32", [1.0, 1.0])),
    (f"T.prod({_Z}, 0, dtype=T.float64)", ("float64", [0.0])),
    (
        "T.frexp(T.tensor([1.5, -0.1], dtype=T.bfloat16))",
        ("bfloat16", [0.75, -0.8008], "int32", [1, -3]),
    ),
    # torch computes hinge_embedding_loss of integers in their dtype (the margin truncated to
    # it; mean refuses them); bool and unsigned refusals
    (
        "T.nn.functional.hinge_embedding_loss(T.tensor([0, 1, -3, 5], dtype=T.int16), "
        "T.tensor([-1, -1, -1, 1]), margin=1.5, reduction='none')",
        ("int16", [1, 0, 4, 5]),
    ),
    (f"T.nn.functional.hinge_embedding_loss({_I}, {_I})", ("RuntimeError", "mean(): could not")),
    ("T.searchsorted(T.tensor([False, True]), True)", ("NotImplementedError", "searchsorted_out")),
    (f"T.bucketize({_B}[:0], {_B}.flip(0))", ("int64", [])),
    (f"T.bucketize({_I}, {_B}.flip(0))", ("int64", [1, 2])),
    (f"T.mvlgamma({_B}, 1)", ("RuntimeError", "The input tensor may not be a boolean tensor.")),
    (f"T.nn.functional.hardtanh({_I}.to(T.uint8))", ("RuntimeError", "on an unsigned type")),
    (f"T.nn.functional.hardtanh({_I}.to(T.uint8), -0.5, 1)", ("uint8", [1, 1])),
    (
        f"T.nn.functional.multilabel_soft_margin_loss({_B}[None], {_B}[None])",
        ("NotImplementedError", "log_sigmoid_cpu"),
    ),
    # a 0-d complex input reduced over its dim is returned with index 0 (no kernel); the median
    # of an empty complex tensor is nan; aminmax refuses complex
    (f"T.mode({_S})", ("complex64", [1j], "int64", [0])),
    (f"T.cummax({_S}, 0)", ("complex64", [1j], "int64", [0])),
    (f"T.kthvalue({_S}, 1, -1)", ("complex64", [1j], "int64", [0])),
    (f"T.median({_E})", ("complex64", [complex("nan")])),
    (f"T.aminmax({_S}, dim=0)", ("RuntimeError", "aminmax not implemented for ComplexFloat")),
    (f"T.aminmax({_Z}, dim=0)", ("NotImplementedError", "aminmax_cpu")),
    # complex negation negates each part: -(1 + 0j) is -1 - 0j, whose angle is -pi
    ("T.angle(-T.tensor([1 + 0j]))", ("float32", [-3.1415927])),
]


def _sweep_outcome(lib, expr):
    try:
        r = eval(expr, {"T": lib})  # noqa: S307 -- the table's own expressions
    except Exception as e:  # noqa: BLE001 -- the class is what is compared
        return (type(e).__name__, str(e))
    if isinstance(r, lib.Tensor):
        r = (r,)
    elif not (isinstance(r, tuple) and r and isinstance(r[0], lib.Tensor)):
        return ("value", list(r))  # a Size
    out = ()
    for t in r:
        out += (str(t.dtype).split(".")[-1], t.detach().reshape(-1).tolist())
    return out


def _sweep_agrees(got, want):
    if len(got) != len(want) or got[0] != want[0]:
        return False
    if got[0] == "value":
        return got[1] == want[1]
    if not isinstance(want[1], list):  # an exception: class and a piece of the message
        return want[1] in got[1]
    for i in range(0, len(want), 2):
        if got[i] != want[i] or len(got[i + 1]) != len(want[i + 1]):
            return False
        a, b = np.asarray(got[i + 1], complex), np.asarray(want[i + 1], complex)
        if not np.allclose(a, b, rtol=2e-3, atol=1e-5, equal_nan=True):
            return False
    return True


@pytest.mark.parametrize("expr, want", SWEEP, ids=[e for e, _ in SWEEP])
def test_sweep_matches_torch(expr, want):
    got = _sweep_outcome(ember, expr)
    assert _sweep_agrees(got, want), got
    try:
        import torch
    except ImportError:
        return
    ref = _sweep_outcome(torch, expr)
    assert _sweep_agrees(ref, want), ref
