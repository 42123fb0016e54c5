"""Issue 19: agreement with PyTorch at the edges (keywords, special values, wrong inputs,
exception classes). One regression test per fixed example, checked against hand-computed
values (and against torch where it is installed), plus a small run of the fuzzer's edge
families (tests/fuzz/edge_cases.py) that must find no crash, hang or fixed disagreement.
"""

import math
import os
import sys

import numpy as np
import pytest

import ember

F = ember.nn.functional
INF, NAN = math.inf, math.nan

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))


def _torch():
    return pytest.importorskip("torch")


# ----------------------------------------------------------------------------- creation


@pytest.mark.parametrize(
    "fn, kwargs, shape",
    [
        ("ones", {"dtype": ember.float32, "size": [3]}, (3,)),
        ("zeros", {"dtype": ember.int64, "size": (3, 3)}, (3, 3)),
        ("empty", {"size": [0]}, (0,)),
        ("rand", {"size": (2, 1)}, (2, 1)),
        ("randn", {"size": [4]}, (4,)),
    ],
)
def test_size_keyword_gives_the_shape(fn, kwargs, shape):
    assert tuple(getattr(ember, fn)(**kwargs).shape) == shape


@pytest.mark.parametrize("fn", ["ones", "zeros", "empty", "rand"])
def test_creation_without_a_size_raises_type_error(fn):
    with pytest.raises(TypeError, match="size"):
        getattr(ember, fn)(dtype=ember.float32)


def test_varargs_and_sequence_sizes_still_work():
    assert tuple(ember.ones(2, 3).shape) == (2, 3)
    assert tuple(ember.zeros((2, 3)).shape) == (2, 3)


@pytest.mark.parametrize(
    "args, want", [((0.5,), []), ((2.5,), [0, 1]), ((1e-9,), []), ((-1.5, 2.5), [-1, 0, 1])]
)
def test_int64_arange_truncates_float_bounds(args, want):
    assert ember.arange(*args, dtype=ember.int64).tolist() == want


def test_int32_arange_counts_from_the_float_bounds():
    assert ember.arange(0.5, dtype=ember.int32).tolist() == [0]  # as torch: ceil(0.5) elements


def test_tensor_nested_past_64_levels_raises_value_error():
    data = 1.0
    for _ in range(300):
        data = [data]
    with pytest.raises(ValueError, match="too many dimensions"):
        ember.tensor(data)
    ok = 1.0
    for _ in range(64):
        ok = [ok]
    assert ember.tensor(ok).dim() == 64


@pytest.mark.parametrize("fn", ["full_like", "zeros_like", "ones_like", "empty_like"])
def test_like_functions_need_a_tensor(fn):
    args = (3, NAN) if fn == "full_like" else (3,)
    with pytest.raises(TypeError, match=rf"{fn}\(\): argument 'input'"):
        getattr(ember, fn)(*args)


# ----------------------------------------------------------------------------- values


def test_tensor_split_with_decreasing_indices():
    x = ember.arange(10.0).reshape(2, 5)
    widths = [p.shape[1] for p in ember.tensor_split(x, [3, 1], dim=1)]
    assert widths == [3, 0, 4]  # pieces [0:3], [3:1] (empty), [1:5]


def test_log_softmax_of_equal_large_values_is_minus_log_n():
    got = F.log_softmax(ember.tensor([1e5]).expand(4), 0)
    np.testing.assert_allclose(got.numpy(), np.full(4, -math.log(4)), rtol=1e-6)
    got = F.log_softmax(ember.tensor([[3e38, 3e38, 0.0]]), 1)
    np.testing.assert_allclose(got.numpy()[0, :2], [-math.log(2)] * 2, rtol=1e-6)


def test_gelu_of_a_huge_value_overflows_as_torch():
    # torch's AVX-512 vector kernel overflows x * (1 + erf); its AVX2 build halves x first
    big = INF if ember.backends.cpu.get_cpu_capability() == "AVX512" else 3e38
    got = F.gelu(ember.tensor([3e38, 3e38, -3e38])).numpy()
    assert got[0] == np.float32(big) and got[2] == 0.0


@pytest.mark.parametrize(
    "start, end, weight, want",
    [(0.0, INF, 0.5, NAN), (1.0, INF, 0.25, INF), (INF, 1.0, 0.25, NAN), (INF, 1.0, 0.5, INF)],
)
def test_lerp_with_infinities(start, end, weight, want):
    got = ember.lerp(ember.tensor([start]), ember.tensor([end]), weight).item()
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_lerp_tensor_weight_with_inf():
    got = ember.lerp(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([INF]))
    assert got.item() == INF


def test_batch_norm_training_with_inf_input_is_nan():
    x = ember.tensor([[1.0, 2.0], [INF, 3.0]])
    got = F.batch_norm(x, ember.zeros(2), ember.ones(2), training=True).numpy()
    assert np.isnan(got[:, 0]).all()
    np.testing.assert_allclose(got[:, 1], [-1.0, 1.0], atol=1e-4)


def test_allclose_inf_against_other_infinity():
    x = ember.tensor([INF, -INF])
    assert not ember.allclose(x, ember.tensor(INF), equal_nan=True)
    assert ember.allclose(ember.tensor([INF, 1.0]), ember.tensor([INF, 1.0]))
    assert ember.isclose(x, ember.tensor([INF, -INF])).all()


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_nan_gradient_goes_to_both(op):
    a = ember.tensor([NAN, 1.0, 2.0], requires_grad=True)
    b = ember.tensor([1.0, NAN, 2.0], requires_grad=True)
    getattr(ember, op)(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 0.5]
    assert b.grad.tolist() == [1.0, 1.0, 0.5]


@pytest.mark.parametrize("op", ["fmax", "fmin"])
def test_fmax_fmin_gradient_follows_the_chosen_side(op):
    a = ember.tensor([NAN, 1.0, 2.0, NAN], requires_grad=True)
    b = ember.tensor([1.0, NAN, 2.0, NAN], requires_grad=True)
    getattr(ember, op)(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 1.0, 1.0]  # self on ties and where other is nan
    assert b.grad.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_int32_conv1d_overflow_wraps():
    x = ember.full((1, 1, 3), 2**20, dtype=ember.int32)
    w = ember.full((1, 1, 2), 2**20, dtype=ember.int32)
    assert F.conv1d(x, w).tolist() == [[[0, 0]]]  # 2 * 2**40 wraps to 0 in int32


def test_norm_of_one_huge_element_is_its_magnitude():
    assert ember.tensor(-3e38).norm().item() == pytest.approx(3e38, rel=1e-6)
    got = F.normalize(ember.tensor([[-3e38]]), dim=-1)
    assert got.item() == -1.0


def test_backward_twice_through_a_graph_that_saved_nothing():
    x = ember.ones(3, requires_grad=True)
    y = x.sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    z = x.exp().sum()  # exp saves its result: a second backward still raises
    z.backward()
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()


@pytest.mark.parametrize(
    "op", [lambda x: -x, lambda x: x + 1, lambda x: x.flip(0), lambda x: x.cumsum(0)]
)
def test_backward_twice_through_ops_that_save_nothing(op):
    x = ember.ones(3, requires_grad=True)
    y = op(x).sum()
    y.backward()
    y.backward()
    assert x.grad is not None


def test_batch_norm_training_on_equal_rows_gives_the_bias():
    # variance 0 and a large mean: (x - mean) * scale + bias must not cancel
    x = ember.tensor([[1e4, 2.0]]).expand(2, 2)
    w, b = ember.tensor([1.0, 1.0]), ember.tensor([2.4, 0.5])
    got = F.batch_norm(x, None, None, w, b, training=True).numpy()
    np.testing.assert_allclose(got, [[2.4, 0.5], [2.4, 0.5]], rtol=1e-6)


def test_nextafter_types_and_shapes():
    got = ember.nextafter(ember.tensor(1.0), ember.tensor(2.0))
    assert got.shape == () and got.item() == np.nextafter(np.float32(1), np.float32(2))
    bf = ember.nextafter(
        ember.tensor([1.0], dtype=ember.bfloat16), ember.tensor([2.0], dtype=ember.bfloat16)
    )
    assert bf.float().item() == 1.0078125  # the next bfloat16 after 1 (7 fraction bits)
    with pytest.raises(TypeError):
        ember.nextafter(ember.ones(2), 2.0)
    with pytest.raises(NotImplementedError):
        ember.nextafter(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64))


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.softmax("abc", 0),
        lambda: F.log_softmax([1.0], 0),
        lambda: F.tanh("abc"),
        lambda: F.sigmoid("abc"),
        lambda: F.tanhshrink("abc"),
        lambda: F.softsign("abc"),
        lambda: F.normalize("abc"),
        lambda: F.adaptive_avg_pool2d((2,), 4),
    ],
)
def test_functional_on_a_non_tensor_raises_attribute_error_as_torch(call):
    with pytest.raises(AttributeError, match="object has no attribute"):
        call()


def test_numpy_of_more_than_64_dims_raises_value_error():
    data = 1.0
    for _ in range(65):
        data = [data]
    t = ember.tensor(data)
    assert t.dim() == 65
    with pytest.raises(ValueError, match="number of dimensions"):
        t.numpy()


@pytest.mark.parametrize(
    "clamp", [lambda x, lo, hi: x.clamp(lo, hi), lambda x, lo, hi: x.clamp_(lo, hi)]
)
def test_clamp_mixed_tensor_and_number_bounds_raise_type_error(clamp):
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        clamp(x, ember.tensor([1.5, 1.5]), -2.25)
    assert clamp(x.clone(), ember.tensor([1.5, 1.5]), None).tolist() == [1.5, 2.0]


def test_clamp_zero_d_tensor_bound_mixes_with_a_number():
    # a 0-d tensor may stand for a number (torch's parser binds it to the Number overload)
    assert ember.clamp(ember.tensor(3.0), ember.tensor(1.0), 2.5).item() == 2.5


def test_xlogy_with_an_int_past_the_dtype_range():
    x = ember.tensor(2, dtype=ember.int16)
    got = ember.xlogy(x, 2**63 - 1)  # the number is converted, not range-checked
    assert got.dtype.is_floating_point


def test_clamp_integer_bound_out_of_range_raises():
    with pytest.raises(RuntimeError, match="without overflow"):
        ember.zeros(2, dtype=ember.int32).clamp(min=2**31)
    assert ember.tensor([1, 5]).clamp(min=1.5).tolist() == [1.5, 5.0]  # a float bound promotes


def test_copy_from_a_number():
    x = ember.zeros(3)
    assert x.copy_(-4.0) is x and x.tolist() == [-4.0] * 3


def test_baddbmm_with_too_few_dims_is_index_error():
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.baddbmm(ember.ones(2), ember.ones(2, 2), ember.ones(2, 2))


def test_avg_pool2d_with_too_few_dims_is_index_error():
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.avg_pool2d(ember.ones(3), 2)


# ----------------------------------------------------------------------------- wrong inputs


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ember.minimum(x, False),
        lambda x: ember.fmin(x, False),
        lambda x: ember.maximum(x, 2),
        lambda x: x.logical_or(True),
        lambda x: ember.logical_and(x, 1.5),
        lambda x: ember.atan2(x, 2.0),
        lambda x: ember.eq(2, x),
        lambda x: ember.equal(x, -1.75),
        lambda x: ember.allclose(x, 1.0),
        lambda x: ember.flip(x, -1),
        lambda x: ember.permute(x, 0),
    ],
)
def test_numbers_where_torch_requires_a_tensor_raise_type_error(call):
    with pytest.raises(TypeError):
        call(ember.tensor([1.0, 2.0]))


def test_numbers_still_work_where_torch_takes_them():
    x = ember.tensor([1.0, 2.0])
    assert ember.eq(x, 2).tolist() == [False, True]
    assert ember.add(2, x).tolist() == [3.0, 4.0]
    assert x.flip(-1).tolist() == [2.0, 1.0]
    assert ember.flip(x, [0]).tolist() == [2.0, 1.0]


@pytest.mark.parametrize(
    "call, type_name",
    [
        (lambda: ember.full_like(ember.zeros(2, dtype=ember.uint8), 300), "uint8_t"),
        (lambda: ember.full((2,), 1e40, dtype=ember.float32), "float"),
        (
            lambda: ember.zeros(2, dtype=ember.int64).masked_fill(ember.tensor([True, False]), NAN),
            "int64_t",
        ),
        (lambda: ember.zeros(2, dtype=ember.int32).fill_(2**31), "int"),
        (
            lambda: ember.zeros(2, dtype=ember.int8).masked_fill_(ember.tensor([True, True]), 128),
            "int8_t",
        ),
    ],
)
def test_out_of_range_fill_raises(call, type_name):
    with pytest.raises(
        RuntimeError, match=f"cannot be converted to type {type_name} without overflow"
    ):
        call()


def test_out_of_range_setitem_raises():
    x = ember.zeros(2, dtype=ember.int32)
    with pytest.raises(RuntimeError, match="without overflow"):
        x[...] = 1e40
    x[...] = -(2**31)  # in range
    assert x.tolist() == [-(2**31)] * 2


def test_fills_in_range_still_work():
    assert ember.full((2,), -1, dtype=ember.uint8).tolist() == [255, 255]  # negatives wrap
    assert ember.full((1,), 1e40, dtype=ember.float16).item() == INF
    assert ember.full((1,), INF, dtype=ember.float32).item() == INF
    assert ember.full((1,), 2**63 - 1).item() == 2**63 - 1


@pytest.mark.parametrize("value", [[1.0, 2.0], (1.0, 2.0), None, "ab"])
def test_setitem_of_a_non_number_raises_type_error(value):
    x = ember.zeros(4)
    with pytest.raises(TypeError, match="can't assign a .* to a torch.FloatTensor"):
        x[1:3] = value


@pytest.mark.parametrize("fn", [float, int, complex])
def test_python_number_of_a_many_element_tensor_raises_value_error(fn):
    with pytest.raises(ValueError, match="only one element tensors"):
        fn(ember.tensor([1.0, 2.0]))
    assert fn(ember.tensor([2.0])) == fn(2.0)


def test_bool_of_an_empty_tensor_names_no_values():
    with pytest.raises(RuntimeError, match="no values"):
        bool(ember.tensor([]))


# ----------------------------------------------------------------------------- vs torch


def test_fixed_examples_agree_with_torch():
    torch = _torch()

    def both(f):
        return f(ember), f(torch)

    for f in (
        lambda m: m.arange(2.5, dtype=m.int64),
        lambda m: m.nn.functional.log_softmax(m.tensor([1e5]).expand(4), 0),
        lambda m: m.lerp(m.tensor([0.0, 1.0, INF]), m.tensor([INF, INF, 1.0]), 0.5),
        lambda m: m.nn.functional.gelu(m.tensor([3e38, -1.0, 0.5])),
        lambda m: m.nn.functional.batch_norm(
            m.tensor([[1.0, 2.0], [INF, 3.0]]), None, None, training=True
        ),
    ):
        e, t = both(f)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, equal_nan=True)


# ----------------------------------------------------------------------------- fuzz smoke

# (category, function) pairs fixed by issue 19: the smoke run must not find them again
FIXED = {
    ("wrong_shape", fn) for fn in ("ones", "zeros", "empty", "rand", "arange", "tensor_split")
} | {
    ("exc_class", "prog:convert"),
    ("exc_class", "equal"),
    ("exc_class", "full_like"),
    ("exc_class", "setitem"),
    ("torch_raises", "minimum"),
    ("torch_raises", "fmin"),
    ("torch_raises", "flip"),
    ("torch_raises", "setitem"),
    ("wrong_values", "prog:binary_grad"),
}


def test_edge_fuzz_smoke():
    import run_fuzz

    tally = run_fuzz.run(300, profile="ci", hang_s=30.0, families="edge")
    report = run_fuzz.summary(tally) + "\n" + run_fuzz.table(tally)
    assert tally.calls == 300, report
    assert not tally.kinds["crash"] and not tally.kinds["hang"], report
    again = [key for key in tally.findings() if key in FIXED]
    assert not again, report
