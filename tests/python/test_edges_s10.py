"""Issue 19, session 10: the argument guard's signature check before the binding runs, and the
special values, exception classes and input forms the differential fuzzer still found. Each case
is checked against hand-computed values, and against torch where it is installed.
"""

import math

import numpy as np
import pytest
from _edge_check import _check, _outcome, _same

import ember

F = ember.nn.functional
INF, NAN = math.inf, math.nan


def _torch():
    return pytest.importorskip("torch")


def _x(lib):
    return lib.arange(6, dtype=lib.float32).reshape(2, 3)


# ----------------------------------------------------------------------------- the signature check

# calls the bindings would take and torch's parser refuses: TypeError before anything runs
REJECTED = [
    lambda T: T.std(_x(T), True, correction=0),
    lambda T: T.var(_x(T), True, correction=0),
    lambda T: T.std_mean(_x(T), True, correction=0),
    lambda T: _x(T).std(True, correction=0),
    lambda T: T.argmax(_x(T), True),
    lambda T: T.argmin(_x(T), dim=True),
    lambda T: _x(T).argmax(True),
    lambda T: T.argmax(_x(T), 0, None),
    lambda T: T.movedim(_x(T), (0, 1), 0),
    lambda T: T.movedim(_x(T), 0, (1,)),
    lambda T: T.moveaxis(_x(T), [0], 1),
    lambda T: _x(T).movedim((0, 1), 1),
    lambda T: T.std(_x(T), (0,), None),
]


@pytest.mark.parametrize("call", REJECTED)
def test_guard_rejects_what_torch_parser_rejects(call):
    with pytest.raises(TypeError, match="argument|invalid combination"):
        call(ember)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(TypeError):
        call(torch)


# the forms torch takes, through the check's fast path and through its Python fallback (numpy
# ints, 0-d tensors, None)
ACCEPTED = [
    lambda T: T.std(_x(T)),
    lambda T: T.std(_x(T), 0),
    lambda T: T.std(_x(T), True),
    lambda T: T.std(_x(T), False),
    lambda T: T.std(_x(T), None, True),
    lambda T: T.std(_x(T), dim=None),
    lambda T: T.std(_x(T), (0, 1), keepdim=True),
    lambda T: T.std(_x(T), [1], False, True),
    lambda T: T.std(_x(T), dim=0, correction=0),
    lambda T: T.std(_x(T), 1, correction=2, keepdim=True),
    lambda T: T.std(_x(T), unbiased=False),
    lambda T: T.var(_x(T), np.int64(1)),
    lambda T: T.var(_x(T), dim=1, unbiased=False),
    lambda T: T.var_mean(_x(T), 0),
    lambda T: T.std_mean(_x(T), dim=1, correction=0),
    lambda T: _x(T).std(0, unbiased=False),
    lambda T: _x(T).var(1, True, True),
    lambda T: T.argmax(_x(T)),
    lambda T: T.argmax(_x(T), 1),
    lambda T: T.argmax(_x(T), None),
    lambda T: T.argmax(_x(T), dim=0, keepdim=True),
    lambda T: T.argmin(_x(T), -1, True),
    lambda T: T.argmin(_x(T), np.int32(0)),
    lambda T: T.argmax(_x(T), T.tensor(1)),
    lambda T: _x(T).argmax(1),
    lambda T: _x(T).argmin(dim=0),
    lambda T: T.movedim(_x(T), 0, 1),
    lambda T: T.movedim(_x(T), (0, 1), (1, 0)),
    lambda T: T.movedim(_x(T), [0], [-1]),
    lambda T: T.movedim(_x(T), source=1, destination=0),
    lambda T: T.moveaxis(_x(T), 0, 1),
    lambda T: _x(T).movedim(0, 1),
    lambda T: _x(T).moveaxis((0,), (1,)),
]


@pytest.mark.parametrize("call", ACCEPTED)
def test_guard_takes_what_torch_parser_takes(call):
    got = _outcome(ember, call)
    assert got[0] == "ok", got
    try:
        import torch
    except ImportError:
        return
    assert _same(got, _outcome(torch, call))


def test_guard_words_the_rejection_as_torch():
    with pytest.raises(TypeError, match=r"argmax\(\): argument 'dim' \(position 2\) must be int"):
        ember.argmax(_x(ember), True)
    with pytest.raises(TypeError, match=r"movedim\(\) received an invalid combination"):
        ember.movedim(_x(ember), (0, 1), 0)
    with pytest.raises(TypeError, match=r"got \(Tensor, bool, correction=int\)"):
        ember.std(_x(ember), True, correction=0)


def test_guard_keeps_out_keyword():
    out = ember.empty(3, dtype=ember.int64)
    r = ember.argmax(_x(ember), 0, out=out)
    assert r is out and out.tolist() == [1, 1, 1]


# ----------------------------------------------------------------------------- special values


def test_isclose_of_bools_and_wrapping_integers():
    _check(
        lambda T: T.isclose(T.tensor([True, False]), T.tensor([True, True])), ("ok", [True, False])
    )
    # the integers are compared in float32: their difference does not wrap
    _check(
        lambda T: T.isclose(
            T.tensor([-(2**63), 2**63 - 1, 5, 7]), T.tensor([2**63 - 1, -(2**63), 6, 7])
        ),
        ("ok", [False, False, False, True]),
    )
    _check(
        lambda T: T.isclose(
            T.tensor([100], dtype=T.int8), T.tensor([-100], dtype=T.int8), rtol=0, atol=199.0
        ),
        ("ok", [False]),
    )
    _check(
        lambda T: T.isclose(T.tensor([1.0, INF, NAN]), T.tensor([1.0, INF, NAN]), equal_nan=True),
        ("ok", [True, True, True]),
    )
    _check(lambda T: T.isclose(T.ones(2), T.ones(2), rtol=-1.0), ("raise", "RuntimeError"))


@pytest.mark.parametrize("w", [True, False, "tensor_true"])
def test_lerp_takes_a_bool_weight_as_a_number(w):
    def call(T):
        weight = T.tensor(True) if w == "tensor_true" else w
        return T.lerp(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0]), weight)

    _check(call, ("ok", [1.0, 2.0] if w is False else [3.0, 4.0]))


def test_lerp_weight_checks():
    a, b = (lambda T: T.tensor([1.0, 2.0])), (lambda T: T.tensor([3.0, 4.0]))
    _check(lambda T: T.lerp(a(T), b(T), 1e40), ("raise", "RuntimeError"))
    _check(lambda T: T.lerp(a(T), b(T), T.tensor([True, False])), ("raise", "RuntimeError"))
    _check(lambda T: T.lerp(a(T), b(T), T.tensor(0.5, dtype=T.float64)), ("ok", [2.0, 3.0]))


def test_nanmedian_of_an_empty_dim_and_of_bools():
    _check(lambda T: T.nanmedian(T.zeros(0, 3), 0), ("raise", "IndexError"))
    _check(lambda T: T.nanmedian(T.zeros(0, 3), 1), ("ok", [[], []]))
    _check(lambda T: T.nanmedian(T.tensor([])), ("ok", NAN))
    _check(lambda T: T.nanmedian(T.tensor([True, False])), ("raise", "NotImplementedError"))


def test_xlogy_converts_a_huge_int_to_float():
    want = -2 * math.log(float(2**63 - 1))
    _check(
        lambda T: T.tensor(-2, dtype=T.int16).xlogy(other=2**63 - 1),
        ("ok", float(np.float32(want))),
    )


def test_where_and_clamp_check_the_number_fits():
    _check(
        lambda T: T.where(T.tensor([True]), T.tensor([1.0, 2.0]), 1e40), ("raise", "RuntimeError")
    )
    _check(
        lambda T: T.where(T.tensor([True]), T.tensor([1], dtype=T.int8), 300),
        ("raise", "RuntimeError"),
    )
    _check(lambda T: T.clamp(T.tensor(3), 1e40), ("raise", "RuntimeError"))
    _check(
        lambda T: T.clamp(T.tensor(3), T.tensor(2, dtype=T.int16), 1e40), ("raise", "RuntimeError")
    )
    _check(lambda T: T.clamp(T.tensor([3.0, -5.0]), -1e30, 1e30), ("ok", [3.0, -5.0]))
    _check(
        lambda T: T.where(T.tensor([True, False]), T.tensor([1.0, 2.0]), 1e30), ("ok", [1.0, 1e30])
    )


# ----------------------------------------------------------------------------- error classes


def test_dim_checked_before_dtype_and_on_0d():
    _check(lambda T: T.logcumsumexp(T.tensor(3, dtype=T.int32), dim=2**40), ("raise", "IndexError"))
    _check(lambda T: T.argmax(T.tensor(3), dim=1), ("raise", "IndexError"))
    _check(lambda T: T.argmax(T.tensor(3), dim=-1), ("ok", 0))


def test_index_add_into_an_empty_vector():
    _check(
        lambda T: T.zeros(0, dtype=T.int32).index_add(
            0, T.tensor([0]), T.tensor([1], dtype=T.int32)
        ),
        ("raise", "IndexError"),
    )
    _check(lambda T: T.zeros(0, 3).index_add(0, T.tensor([0]), T.ones(1, 3)), ("ok", []))


@pytest.mark.parametrize(
    "write",
    [
        lambda x, T: x.copy_(2147483648),
        lambda x, T: x.copy_(T.ones(5)),
        lambda x, T: x.add_(1),
        lambda x, T: x.mul_(2),
    ],
)
def test_inplace_write_into_an_expanded_tensor_raises(write):
    _check(lambda T: write(T.zeros(1).expand(5), T), ("raise", "RuntimeError"))


def test_fill_of_an_expanded_tensor_still_works():
    _check(lambda T: T.zeros(1).expand(5).fill_(2.0), ("ok", [2.0] * 5))
    _check(
        lambda T: T.zeros(1, 3).expand(2, 3).copy_(T.ones(2, 3)[:1]) + 0, ("raise", "RuntimeError")
    )


def test_einsum_promotes_without_a_contraction():
    _check(
        lambda T: T.einsum("i,j->ij", T.ones(3, dtype=T.float64), T.ones(2)),
        ("ok", [[1.0] * 2] * 3),
    )
    assert ember.einsum("i,j->ij", ember.ones(3, dtype=ember.float64), ember.ones(2)).dtype == (
        ember.float64
    )
    _check(
        lambda T: T.einsum("i,i->", T.ones(3, dtype=T.float64), T.ones(3)),
        ("raise", "RuntimeError"),
    )


def test_nn_functional_error_classes():
    _check(lambda T: T.nn.functional.relu(T.ones(2, dtype=T.bool)), ("raise", "RuntimeError"))
    _check(lambda T: T.nn.functional.relu("abc"), ("raise", "TypeError"))
    _check(lambda T: T.nn.functional.relu(T.tensor([-1.0, 2.0])), ("ok", [0.0, 2.0]))
    _check(lambda T: T.nn.functional.hardtanh(T.ones(2, dtype=T.bool)), ("raise", "RuntimeError"))
    _check(lambda T: T.nn.functional.relu6(T.ones(2, dtype=T.bool)), ("raise", "RuntimeError"))
    _check(
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(2, 3), (4, 4)), ("raise", "ValueError")
    )
    _check(
        lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(1, 6), (None, 3)),
        ("raise", "ValueError"),
    )
    _check(
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(2, 3), 4), ("raise", "RuntimeError")
    )
    _check(
        lambda T: T.nn.functional.pad(T.ones(2, 2), (1, 2, 3), mode="nope"),
        ("raise", "NotImplementedError"),
    )
    _check(
        lambda T: T.nn.functional.pixel_shuffle(T.ones(1, 4, 2, 2), 2**62), ("raise", "ValueError")
    )


def test_nll_loss_of_an_unbatched_input():
    x = [0.5, -1.0, 2.0]
    _check(
        lambda T: T.nn.functional.nll_loss(T.tensor(x), T.tensor([1, 2])), ("raise", "ValueError")
    )
    _check(lambda T: T.nn.functional.nll_loss(T.tensor(x), T.tensor([1])), ("ok", 1.0))
    _check(lambda T: T.nn.functional.nll_loss(T.tensor(x), T.tensor(2)), ("ok", -2.0))
    _check(
        lambda T: T.nn.functional.cross_entropy(T.tensor(x), T.tensor([1, 2])),
        ("raise", "ValueError"),
    )


def test_tensor_of_ragged_nesting_raises_type_error():
    _check(lambda T: T.tensor([[1], 2]), ("raise", "TypeError"))
    _check(lambda T: T.tensor([[1], [2, 3]]), ("raise", "ValueError"))


def test_label_smoothing_below_zero_is_no_smoothing_as_torch():
    logits, target = [[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], [2, 0]
    x, t = ember.tensor(logits), ember.tensor(target)
    # torch checks only the upper bound and smooths only for a positive value
    got = F.cross_entropy(x, t, label_smoothing=-0.5).item()
    nll = [math.log(sum(math.exp(v) for v in row)) - row[k] for row, k in zip(logits, target)]
    assert abs(got - sum(nll) / 2) < 1e-5
    probs = ember.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    assert (
        abs(
            F.cross_entropy(x, probs, label_smoothing=-0.5).item()
            - F.cross_entropy(x, probs).item()
        )
        < 1e-6
    )
    with pytest.raises(RuntimeError, match="label_smoothing"):
        F.cross_entropy(x, t, label_smoothing=1.5)


def test_empty_inputs_of_mean_pooling_and_norms():
    _check(lambda T: T.nn.functional.adaptive_avg_pool1d(T.zeros(2, 0), 1), ("ok", [[NAN], [NAN]]))
    _check(lambda T: T.nn.functional.adaptive_avg_pool1d(T.zeros(0, 2, 0), 1), ("ok", []))
    _check(
        lambda T: T.nn.functional.adaptive_avg_pool1d(T.zeros(2, 0), 2), ("raise", "RuntimeError")
    )
    _check(lambda T: T.nn.functional.adaptive_avg_pool1d(T.zeros(0), 1), ("raise", "RuntimeError"))
    _check(
        lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(2, 4, dtype=T.bool), 1),
        ("raise", "RuntimeError"),
    )
    _check(
        lambda T: T.nn.functional.interpolate(T.zeros(1, 2, 0), mode="area", size=1),
        ("ok", [[[NAN], [NAN]]]),
    )
    _check(
        lambda T: T.nn.functional.batch_norm(
            T.ones(0, 3), T.zeros(4), T.ones(4), weight=T.ones(3), bias=T.ones(5)
        ),
        ("ok", []),
    )
    _check(
        lambda T: T.nn.functional.batch_norm(T.ones(0, 3), None, None, weight=T.ones(0)),
        ("raise", "IndexError"),
    )
    _check(
        lambda T: T.nn.functional.instance_norm(T.ones(0, 2, 3), weight=T.ones(2)),
        ("raise", "IndexError"),
    )
    _check(lambda T: T.nn.functional.instance_norm(T.ones(0, 2, 3)), ("ok", []))


def test_pooling_sizes_are_32_bit_as_torch():
    big = 2**33
    _check(
        lambda T: T.nn.functional.avg_pool2d(T.ones(1, 2, 6, 3), 2, stride=(1, big)),
        ("raise", "RuntimeError"),
    )
    _check(
        lambda T: T.nn.functional.max_pool2d(T.ones(1, 2, 6, 3), 2, stride=(1, 2**31)),
        ("raise", "RuntimeError"),
    )
    _check(
        lambda T: T.nn.functional.lp_pool1d(T.ones(1, 2, 6), 2, 2, stride=big),
        ("raise", "RuntimeError"),
    )
    # max_pool1d takes 64-bit sizes
    _check(
        lambda T: T.nn.functional.max_pool1d(T.ones(1, 2, 6), 2, stride=big),
        ("ok", [[[1.0], [1.0]]]),
    )


def test_unfold_of_bools_and_a_huge_stride():
    def bools(T):
        x = T.tensor([[[[True, False, True], [False, False, True], [True, True, False]]]])
        return T.nn.functional.unfold(x, 2)

    want = [[[True, False, False, False], [False, True, False, True], [False, False, True, True]]]
    want[0].append([False, True, True, False])
    _check(bools, ("ok", want))
    _check(
        lambda T: T.nn.functional.unfold(T.ones(1, 2, 2, 2), 3, stride=2**40),
        ("raise", "RuntimeError"),
    )
    _check(
        lambda T: T.nn.functional.unfold(T.ones(1, 2, 2, 2), 3, stride=2), ("raise", "RuntimeError")
    )


def test_pad_and_loss_argument_errors():
    _check(
        lambda T: T.nn.functional.pad(T.ones(3, 4, 5), [1.0, 2.0], mode="reflect"),
        ("raise", "TypeError"),
    )
    _check(
        lambda T: T.nn.functional.pad(T.ones(5, 2), (-5, 3), value=1.5), ("raise", "RuntimeError")
    )
    _check(lambda T: T.nn.functional.pad(T.ones(1, 2), (-1, 3)), ("ok", [[1.0, 0.0, 0.0, 0.0]]))
    for loss in ("smooth_l1_loss", "huber_loss"):
        _check(
            lambda T, loss=loss: getattr(T.nn.functional, loss)(
                T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool)
            ),
            ("raise", "NotImplementedError"),
        )


def test_pow_of_two_numbers_is_a_type_error_and_its_forms_still_work():
    _check(lambda T: T.pow(1.5, 2), ("raise", "TypeError"))
    _check(lambda T: T.pow(T.tensor([2.0, 3.0]), 2), ("ok", [4.0, 9.0]))
    _check(lambda T: T.pow(2, T.tensor([2.0, 3.0])), ("ok", [4.0, 8.0]))
    _check(lambda T: T.pow(T.tensor([2.0]), exponent=T.tensor([3.0])), ("ok", [8.0]))
    _check(lambda T: T.tensor([2.0, 3.0]).pow(np.float64(2.0)), ("ok", [4.0, 9.0]))
    _check(lambda T: T.pow(T.tensor([2.0]), T.tensor(2)), ("ok", [4.0]))


def test_softmax_family_of_an_empty_input_in_an_integer_dtype():
    _check(
        lambda T: T.nn.functional.softmax(T.zeros(3, 0), dim=0, dtype=T.int64), ("ok", [[], [], []])
    )
    _check(
        lambda T: T.nn.functional.softmax(T.zeros(3, 0), dim=5, dtype=T.int64),
        ("raise", "IndexError"),
    )
    _check(
        lambda T: T.nn.functional.log_softmax(T.zeros(2, 0), dim=1, dtype=T.int32), ("ok", [[], []])
    )
    _check(lambda T: T.nn.functional.softmin(T.zeros(2, 0, dtype=T.int64), dim=0), ("ok", [[], []]))
    _check(
        lambda T: T.nn.functional.softmax(T.zeros(2, 3, dtype=T.int64), dim=0),
        ("raise", "NotImplementedError"),
    )


def test_soft_margin_loss_writes_into_the_input_shape():
    _check(
        lambda T: T.nn.functional.soft_margin_loss(T.ones(1), T.ones(4, 4)),
        ("raise", "RuntimeError"),
    )
    want = math.log1p(math.exp(-1.0))
    _check(lambda T: T.nn.functional.soft_margin_loss(T.ones(4, 4), T.ones(4)), ("ok", want))


def test_embedding_of_an_empty_table_and_running_stat_checks():
    _check(
        lambda T: T.nn.functional.embedding(T.tensor([1]), T.zeros(0, 2)),
        ("raise", "RuntimeError"),
    )
    _check(
        lambda T: T.nn.functional.embedding(T.tensor([], dtype=T.int64), T.zeros(0, 2)),
        ("ok", []),
    )
    _check(
        lambda T: T.nn.functional.batch_norm(
            T.ones(2, 1, 2, 1, dtype=T.bool), T.ones(2, dtype=T.bool), T.ones(1, dtype=T.bool)
        ),
        ("raise", "RuntimeError"),
    )
    _check(
        lambda T: T.nn.functional.batch_norm(T.ones(2, 2), None, T.ones(2), training=True),
        ("raise", "ValueError"),
    )
    _check(
        lambda T: T.nn.functional.batch_norm(T.ones(2, 2), T.zeros(2), T.ones(2)),
        ("ok", [[1 / math.sqrt(1 + 1e-5)] * 2] * 2),
    )


def test_loss_reduction_checked_before_the_bool_dtype():
    for loss in ("smooth_l1_loss", "huber_loss"):
        _check(
            lambda T, loss=loss: getattr(T.nn.functional, loss)(
                T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool), reduction="batchmean"
            ),
            ("raise", "ValueError"),
        )
        # a non-tensor fails on its .size() first, as in torch's Python layer
        _check(
            lambda T, loss=loss: getattr(T.nn.functional, loss)(
                (2,), [[1], [2, 3]], reduction="batchmean"
            ),
            ("raise", "AttributeError"),
        )
