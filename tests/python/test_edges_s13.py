"""Issue 19, session 13: the differential fuzzer's value findings and the deep families' ones.
fmod/remainder on torch's vectorized path (NaN where the quotient overflows), the fixed-point
uint8 bilinear/bicubic resize (antialias or not), pow_ of an integer tensor by a number out of
its range, dim-range checks before duplicate checks (and the ops that check in order),
in-place ops that would grow self, complex in-place/logical/extreme-value paths, out= dtype
rules, and smoke runs of the new deep fuzz families. Each case is checked against hand-computed
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
NAN = math.nan


def _torch():
    return pytest.importorskip("torch")


# ----------------------------------------------------------------------------- fmod / remainder


def _nan_mask(t):
    return [v != v for v in t.tolist()]


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_fmod_vector_blocks_give_nan_where_the_quotient_overflows(op):
    # 3 / 1e-40 overflows float32: torch's vectorized blocks of 16 floats give NaN, the tail
    # (and every strided layout) the exact remainder
    x, d = ember.full((20,), 3.0), ember.full((20,), 1e-40)
    got = getattr(ember, op)(x, d)
    assert _nan_mask(got) == [True] * 16 + [False] * 4
    assert got[16:].tolist() == pytest.approx([2.5349e-41] * 4, rel=1e-3)
    strided = getattr(ember, op)(ember.full((40,), 3.0)[::2], d)
    assert not any(_nan_mask(strided))
    scalar = getattr(ember, op)(x, 1e-40)  # a number operand is a broadcast scalar: vectorized
    assert _nan_mask(scalar) == [True] * 16 + [False] * 4
    both = getattr(ember, op)(ember.tensor(3.0).expand(20), ember.tensor(1e-40).expand(20))
    assert not any(_nan_mask(both))
    # a quotient that fits stays exact on the vector path (a denormal divisor included)
    fits = getattr(ember, op)(ember.full((16,), 1e-30), ember.full((16,), 1e-40))
    assert not any(_nan_mask(fits))


def test_fmod_vector_blocks_by_dtype():
    f64 = ember.fmod(ember.full((10,), 3.0, dtype=ember.float64), 1e-310)
    assert _nan_mask(f64) == [True] * 8 + [False] * 2
    bf16 = ember.fmod(ember.full((33,), 3e38, dtype=ember.bfloat16), 1e-3)
    assert _nan_mask(bf16) == [True] * 32 + [False]
    x = ember.full((20,), 3.0)
    x.fmod_(1e-40)
    assert _nan_mask(x) == [True] * 16 + [False] * 4


def test_fmod_vector_path_as_torch():
    torch = _torch()
    rng = np.random.default_rng(0)
    a = rng.choice([3.0, -3.0, 10.0, 3e38, 1e-30, 5e-38], size=(3, 37)).astype(np.float32)
    b = rng.choice([1e-40, -1e-38, 0.5, 3.0, 1e-3, 2e-38], size=(3, 37)).astype(np.float32)
    for op in ("fmod", "remainder"):
        for sl in (np.s_[:, :], np.s_[:, :20], np.s_[:, ::2]):
            want = getattr(torch, op)(torch.from_numpy(a)[sl], torch.from_numpy(b)[sl]).numpy()
            got = getattr(ember, op)(ember.tensor(a)[sl], ember.tensor(b)[sl]).numpy()
            np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------- pow_


@pytest.mark.parametrize(
    "dtype,exp", [("int32", 2**40), ("uint8", 300), ("int8", 300), ("int16", 2**20)]
)
def test_integer_pow_by_a_number_out_of_range_raises(dtype, exp):
    _check(lambda T: T.tensor([1, 2], dtype=getattr(T, dtype)).pow_(exp), _raises(RuntimeError))
    _check(lambda T: T.pow(T.tensor([1, 2], dtype=getattr(T, dtype)), exp), _raises(RuntimeError))


def test_integer_pow_in_range_still_wraps():
    _check(lambda T: T.tensor([1, 2, 3], dtype=T.int32).pow_(300), _ok([1, 0, -597940623]))
    # a tensor exponent converts unchecked (2**40 wraps to 0 in int32)
    _check(lambda T: T.pow(T.tensor([2], dtype=T.int32), T.tensor(2**40)), _ok([1]))
    _check(lambda T: T.pow(T.tensor([True, False]), 300), _ok([1, 0]))


# ----------------------------------------------------------------------------- dim checks


RANGE_FIRST = [
    lambda T: T.ones(2, 3).sum((0, 0, 5)),
    lambda T: T.ones(2, 3).mean((0, 0, -3)),
    lambda T: T.ones(2, 3).amax((0, 0, 5)),
    lambda T: T.ones(2, 3).any((0, 0, 5)),
    lambda T: T.logsumexp(T.ones(2, 3), (0, 0, 5)),
    lambda T: T.count_nonzero(T.ones(2, 3), (0, 0, 5)),
    lambda T: T.nanmean(T.ones(2, 3), (0, 0, 5)),
    lambda T: T.rot90(T.ones(2, 3), 1, (0, 5)),
    lambda T: T.rot90(T.ones(2, 3), 1, (5, 5)),
    lambda T: T.linalg.matrix_norm(T.ones(2, 3), dim=(0, 5)),
]
IN_ORDER = [
    lambda T: T.ones(2, 3).var((1, 1, 7)),
    lambda T: T.ones(2, 3).nansum((0, 0, 5)),
    lambda T: T.flip(T.ones(2, 3), (0, 0, 5)),
    lambda T: T.linalg.vector_norm(T.ones(2, 3), dim=(0, 0, 5)),
    lambda T: T.rot90(T.ones(2, 3), 1, (1, -1)),
    lambda T: T.linalg.matrix_norm(T.ones(2, 3), dim=(1, -1)),
    lambda T: T.linalg.matrix_norm(T.ones(2, 3), dim=(0, 1, 1)),
]


@pytest.mark.parametrize("case", range(len(RANGE_FIRST)))
def test_dims_are_range_checked_before_repeats(case):
    _check(RANGE_FIRST[case], _raises(IndexError))


@pytest.mark.parametrize("case", range(len(IN_ORDER)))
def test_ops_that_check_dims_in_order(case):
    _check(IN_ORDER[case], _raises(RuntimeError))


def test_valid_dims_still_reduce():
    _check(lambda T: T.ones(2, 3).nansum((0, -1)), _ok(6.0))
    _check(lambda T: T.rot90(T.arange(4.0).reshape(2, 2), 1, (0, 1)), _ok([[1.0, 3.0], [0.0, 2.0]]))


# ----------------------------------------------------------------------------- uint8 resize


def test_uint8_bilinear_hand_computed():
    # [0, 255] to width 4: source positions -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped)
    x = ember.tensor([[[[0, 255]]]], dtype=ember.uint8)
    got = F.interpolate(x, size=(1, 4), mode="bilinear")
    assert got.dtype == ember.uint8
    assert got.tolist() == [[[[0, 64, 191, 255]]]]
    same = F.interpolate(x, size=(1, 2), mode="bicubic", antialias=True)
    assert same.tolist() == [[[[0, 255]]]]  # no axis changes size: a copy


RESIZE = [
    ((1, 3, 5, 7), dict(size=(9, 4), mode="bilinear")),
    ((2, 1, 8, 6), dict(size=(3, 11), mode="bicubic")),
    ((1, 4, 6, 6), dict(scale_factor=2.5, mode="bicubic", align_corners=True)),
    ((1, 3, 9, 10), dict(size=(4, 3), mode="bilinear", antialias=True)),
    ((1, 1, 12, 7), dict(size=(5, 9), mode="bicubic", antialias=True)),
    ((2, 3, 5, 5), dict(scale_factor=0.7, mode="bilinear", align_corners=True, antialias=True)),
    ((1, 4, 7, 3), dict(scale_factor=1.5, mode="bicubic", recompute_scale_factor=False)),
    ((1, 1, 1, 6), dict(size=(3, 2), mode="bilinear")),
]


@pytest.mark.parametrize("case", range(len(RESIZE)))
def test_uint8_resize_bit_exact_as_torch(case):
    torch = _torch()
    shape, kw = RESIZE[case]
    data = np.random.default_rng(case).integers(0, 256, size=shape).astype(np.uint8)
    data[..., 0] = 255  # saturating neighbours exercise the clamp
    want = torch.nn.functional.interpolate(torch.from_numpy(data.copy()), **kw).numpy()
    got = F.interpolate(ember.tensor(data), **kw).numpy()
    np.testing.assert_array_equal(got, want)


def test_uint8_resize_random_configurations_as_torch():
    torch = _torch()
    rng = np.random.default_rng(13)
    for _ in range(150):
        shape = (1, int(rng.choice([1, 3, 4])), int(rng.integers(1, 30)), int(rng.integers(1, 30)))
        kw = {
            "mode": str(rng.choice(["bilinear", "bicubic"])),
            "antialias": bool(rng.random() < 0.5),
        }
        kw["align_corners"] = bool(rng.random() < 0.4)
        if rng.random() < 0.5:
            kw["size"] = (int(rng.integers(2, 35)), int(rng.integers(2, 35)))
        else:
            kw["scale_factor"] = float(rng.choice([0.5, 0.7, 1.3, 2.0, 2.7]))
            if min(shape[2:]) * kw["scale_factor"] < 2:
                continue  # an empty output, or torch's 3-channel assert on a 1-pixel side
        data = rng.integers(0, 256, size=shape).astype(np.uint8)
        want = torch.nn.functional.interpolate(torch.from_numpy(data.copy()), **kw).numpy()
        got = F.interpolate(ember.tensor(data), **kw).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str((shape, kw)))


def test_antialias_output_size_zero_raises():
    _check(
        lambda T: T.nn.functional.interpolate(
            T.ones(1, 1, 3, 5), scale_factor=0.3, mode="bicubic", antialias=True
        ),
        _raises(RuntimeError),
    )


# ----------------------------------------------------------------------------- in-place shapes


def test_inplace_op_that_would_grow_self_raises():
    _check(lambda T: T.tensor(1.0).clamp_min_(T.tensor([1.0, 2.0])), _raises(RuntimeError))
    _check(lambda T: T.tensor([1.0]).clamp_max_(T.tensor([[1.0, 2.0]])), _raises(RuntimeError))
    _check(lambda T: T.tensor(True).clamp_min_(T.tensor([1.0, 2.0])), _raises(RuntimeError))
    _check(lambda T: T.tensor([1.0, 5.0]).clamp_min_(T.tensor(2.0)), _ok([2.0, 5.0]))


# ----------------------------------------------------------------------------- complex


def test_complex_in_place_unary_and_pow():
    _check(lambda T: T.tensor([1j]).exp_().real, _ok([math.cos(1.0)]))
    _check(lambda T: T.tensor([[1j]]).t().tanh_().imag, _ok([[math.tan(1.0)]]))
    _check(lambda T: T.tensor([1j]).pow_(2).real, _ok([-1.0]))
    _check(lambda T: T.tensor([1.0]).pow_(T.tensor(1j)), _raises(RuntimeError))
    _check(lambda T: T.tensor([1j]).abs_(), _raises(RuntimeError))


def test_complex_exp_at_the_edges_as_c99():
    _check(lambda T: T.pow(T.tensor(3.0 + 0j), 300).imag, _ok(0.0))
    _check(lambda T: T.pow(T.tensor(3.0 + 0j), 300).real, _ok(math.inf))
    zero_neg = lambda T: T.pow(T.tensor(0j, dtype=T.complex128), T.tensor(-3 + 0j))  # noqa: E731
    _check(lambda T: zero_neg(T).real, _ok(math.inf))
    _check(lambda T: zero_neg(T).imag, _ok(NAN))
    edges = [complex(math.inf, math.inf), complex(-math.inf, 1), complex(math.nan, 0)]
    _check(lambda T: T.tensor(edges).exp().real, _ok([math.inf, 0.0, NAN]))
    _check(lambda T: T.tensor(edges).exp().imag, _ok([NAN, 0.0, 0.0]))


def test_complex_logical_ops_and_extremes():
    _check(lambda T: T.logical_and(T.tensor([1j, 0]), T.tensor([1.0, 1.0])), _ok([True, False]))
    _check(lambda T: T.logical_not(T.tensor([1j, 0])), _ok([False, True]))
    _check(lambda T: T.maximum(T.tensor([1j]), T.tensor([1j])), _raises(RuntimeError))
    _check(lambda T: T.fmin(T.tensor([1j]), T.tensor([2.0])), _raises(RuntimeError))
    _check(lambda T: T.maximum(T.ones(2), 1j), _raises(TypeError))
    _check(
        lambda T: T.dot(T.ones(3, dtype=T.complex64), T.ones(3, dtype=T.bool)),
        _raises(RuntimeError),
    )


# ----------------------------------------------------------------------------- out=


AT_ONE = {"abs": 1.0, "neg": -1.0, "floor": 1.0, "ceil": 1.0, "round": 1.0, "trunc": 1.0}
AT_ONE.update({"sign": 1.0, "frac": 0.0})


@pytest.mark.parametrize("op", sorted(AT_ONE))
def test_out_of_a_dtype_keeping_op_must_match(op):
    wrong = lambda T: getattr(T, op)(T.ones(3), out=T.zeros(3, dtype=T.float64))  # noqa: E731
    _check(wrong, _raises(RuntimeError))
    _check(lambda T: getattr(T, op)(T.ones(3), out=T.zeros(3)), _ok([AT_ONE[op]] * 3))


def test_out_only_where_an_overload_takes_it():
    _check(lambda T: T.sum(T.ones(2), out=T.ones(())), _raises(TypeError))
    _check(lambda T: T.prod(T.ones(2), out=T.ones(())), _raises(TypeError))
    _check(lambda T: T.sum(T.ones(2), 0, out=T.ones(())), _ok(2.0))
    _check(lambda T: T.mean(T.ones(2), out=T.ones(())), _ok(1.0))
    _check(lambda T: T.add(T.ones(2), 1, out=T.ones(2)), _ok([2.0, 2.0]))
    _check(lambda T: T.exp(T.zeros(2), out=T.ones(2, dtype=T.float64)), _ok([1.0, 1.0]))


# ----------------------------------------------------------------------------- deep fuzz smoke


def test_deep_fuzz_families_run_and_classify():
    _torch()  # the families compare against torch; without it they only check for crashes
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
    import run_fuzz

    tally = run_fuzz.run(150, profile="ci", hang_s=30.0, families="deep")
    report = run_fuzz.summary(tally)
    assert tally.calls == 150, report
    assert not [key for key in tally.findings() if key[0] in ("crash", "hang")], report


# ----------------------------------------------------------------------------- wide leftovers


def test_norms_of_empty_inputs():
    inf = math.inf
    _check(lambda T: T.linalg.matrix_norm(T.zeros(2, 0, 0), ord=inf), _ok([0.0, 0.0]))
    _check(lambda T: T.linalg.matrix_norm(T.zeros(0, 1), ord=2), _ok(0.0))
    _check(lambda T: T.linalg.matrix_norm(T.zeros(0, 1), ord=-inf), _raises(IndexError))
    _check(lambda T: T.linalg.vector_norm(T.zeros(2, 0, 0), ord=inf), _raises(RuntimeError))
    _check(lambda T: T.linalg.vector_norm(T.zeros(2, 0, 3), ord=inf, dim=1), _raises(RuntimeError))
    _check(lambda T: T.linalg.vector_norm(T.zeros(2, 0, 3), ord=-inf, dim=2).shape[1], _ok(0))


def test_rfftfreq_of_a_negative_length_divides_as_c():
    _check(lambda T: T.fft.rfftfreq(-1), _ok([-0.0]))
    _check(lambda T: T.fft.rfftfreq(-3).shape[0], _ok(0))


def test_nanmean_checks_dtype_before_dims():
    _check(lambda T: T.nanmean(T.zeros(()), dim=(7,), dtype=T.int64), _raises(RuntimeError))


def test_index_select_error_class_by_dim():
    _check(lambda T: T.index_select(T.ones(2, 5), -1, T.tensor([5])), _raises(RuntimeError))
    _check(lambda T: T.index_select(T.ones(2, 5), 1, T.tensor([-1])), _raises(RuntimeError))
    _check(lambda T: T.index_select(T.ones(2, 5), 0, T.tensor([5])), _raises(IndexError))
    _check(lambda T: T.index_select(T.ones(5), 0, T.tensor([5])), _raises(IndexError))
    _check(
        lambda T: T.index_select(T.arange(6.0).reshape(2, 3), 1, T.tensor([2, 0])),
        _ok([[2.0, 0.0], [5.0, 3.0]]),
    )


def test_adaptive_avg_pool2d_rank_before_dtype_and_the_mean_path():
    pool = lambda T, x, s: T.nn.functional.adaptive_avg_pool2d(x, s)  # noqa: E731
    _check(lambda T: pool(T, T.ones(1, 1, dtype=T.float16), 1), _ok([[1.0]]))
    _check(lambda T: pool(T, T.ones(4, 1, dtype=T.int64), 4), _raises(RuntimeError))
    _check(lambda T: pool(T, T.ones(4), 1), _raises(IndexError))
    _check(lambda T: list(pool(T, T.ones(2, 2, 1, 4, 3), (1, 1)).shape), _ok([2, 2, 1, 1, 1]))
    _check(lambda T: pool(T, T.ones(2, 2, 1, 4, 3), (2, 1)), _raises(RuntimeError))


def test_bce_with_logits_refuses_an_integer_target():
    bce = lambda T, t: T.nn.functional.binary_cross_entropy_with_logits(T.ones(2), t)  # noqa: E731
    _check(lambda T: bce(T, T.ones(2, dtype=T.int64)), _raises(RuntimeError))
    _check(lambda T: bce(T, T.ones(2, dtype=T.uint8)), _raises(RuntimeError))
    _check(lambda T: round(float(bce(T, T.ones(2, dtype=T.float64))), 4), _ok(0.3133))


def test_tensor_of_elements_it_cannot_hold():
    _check(lambda T: T.tensor([None]), _raises(RuntimeError))
    _check(lambda T: T.tensor(None), _raises(RuntimeError))
    _check(lambda T: T.tensor([object()]), _raises(RuntimeError))
    _check(lambda T: T.tensor(["a"]), _raises(ValueError))
    _check(lambda T: T.tensor("a"), _raises(TypeError))
    _check(lambda T: T.tensor([None], dtype=T.float32), _raises(TypeError))


def test_complex_division_by_zero_as_c10():
    c = lambda T, v: T.tensor(v, dtype=T.complex128)  # noqa: E731
    q = lambda T: T.true_divide(T.tensor([-3, 2], dtype=T.int8), c(T, [0j, 1j]))  # noqa: E731
    _check(lambda T: q(T).real, _ok([-math.inf, 0.0]))
    _check(lambda T: q(T).imag, _ok([NAN, -2.0]))
    _check(lambda T: (c(T, [1 + 1j]) / 0).real, _ok([math.inf]))
    _check(lambda T: (c(T, [1 + 1j]) / -0.0).imag, _ok([math.inf]))
    _check(lambda T: (2.0 / c(T, [0j])).real, _ok([NAN]))  # reciprocal first, as torch


def test_matrix_norm_of_empty_batches_and_matrices():
    _check(lambda T: T.linalg.matrix_norm(T.zeros(0, 0, 0), ord=1).shape[0], _ok(0))
    _check(lambda T: T.linalg.matrix_norm(T.zeros(2, 3, 0), ord=1), _ok([0.0, 0.0]))
    _check(lambda T: T.linalg.matrix_norm(T.zeros(2, 3, 0), ord=-1), _raises(IndexError))


@pytest.mark.parametrize(
    "dtype,want",
    [("int8", 0), ("int16", 0), ("uint8", 0), ("int32", -(2**31)), ("int64", -(2**63))],
)
def test_median_of_nothing_is_nan_cast_as_torch(dtype, want):
    _check(lambda T: T.median(T.tensor([], dtype=getattr(T, dtype))).item(), _ok(want))
    _check(lambda T: T.nanmedian(T.tensor([], dtype=getattr(T, dtype))).item(), _ok(want))


def test_a_binding_given_another_type_where_a_tensor_goes_raises_type_error():
    # nanobind's failed cast inside a binding was a RuntimeError named "std::bad_cast"
    _check(lambda T: T._C._nn.elu_(object()), _raises(TypeError))
    _check(lambda T: T._C._nn.elu_([1.0]), _raises(TypeError))
