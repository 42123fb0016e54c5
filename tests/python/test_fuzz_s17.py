"""Session 17: what fz10's sweep (integer/bool/empty inputs through reductions and norms) and the
fuzzer with seeds 31-35 found. Each refusal is checked for torch's class and wording, each value
against a hand-written one, and both against torch where it is installed.
"""

import math

import pytest
from _edge_check import _check, _ok, _raises

import ember

NOT_BOOL = "not implemented for 'Bool'"
NO_IDENTITY = "the operation does not have an identity"

# (call, outcome, message the ember refusal must contain)
CASES = [
    # diff's order is checked whatever the input's size
    (
        lambda T: T.diff(T.zeros(3), -1),
        _raises(RuntimeError),
        "order must be non-negative but got -1",
    ),
    (
        lambda T: T.diff(T.zeros(0), -2),
        _raises(RuntimeError),
        "order must be non-negative but got -2",
    ),
    (lambda T: T.diff(T.tensor([1, 4]), 0), _ok([1, 4]), None),
    # dim-wise median/kthvalue lack bool once the reduced dim is in range and not empty, even
    # when another dim leaves no rows; an empty reduced dim is the IndexError
    (
        lambda T: T.median(T.zeros(2, 0, dtype=T.bool), 0),
        _raises(NotImplementedError),
        '"median_out" ' + NOT_BOOL,
    ),
    (
        lambda T: T.median(T.zeros(3, dtype=T.bool), 0),
        _raises(NotImplementedError),
        '"median_out" ' + NOT_BOOL,
    ),
    (
        lambda T: T.median(T.tensor(True), -1),
        _raises(NotImplementedError),
        '"median_out" ' + NOT_BOOL,
    ),
    (
        lambda T: T.median(T.zeros(3, dtype=T.bool)),
        _raises(NotImplementedError),
        '"median_cpu" ' + NOT_BOOL,
    ),
    (
        lambda T: T.median(T.zeros(2, 0, dtype=T.bool), 1),
        _raises(IndexError),
        "median(): Expected reduction dim 1",
    ),
    (
        lambda T: T.nanmedian(T.zeros(2, 0, dtype=T.bool), 0),
        _raises(NotImplementedError),
        '"median_out" ' + NOT_BOOL,
    ),
    (lambda T: T.nanmedian(T.tensor(True), 3), _raises(IndexError), "Dimension out of range"),
    (
        lambda T: T.kthvalue(T.zeros(2, 0, dtype=T.bool), 1, 0),
        _raises(NotImplementedError),
        '"kthvalue_cpu" ' + NOT_BOOL,
    ),
    (lambda T: T.kthvalue(T.tensor(True), 1, 0)[0], _ok(True), None),
    # a negative order has no identity either (min, or 1 / sum of 1 / |x|)
    (
        lambda T: T.linalg.vector_norm(T.zeros(0), -1),
        _raises(RuntimeError),
        "cannot compute the -1 norm on an empty tensor because " + NO_IDENTITY,
    ),
    (
        lambda T: T.linalg.vector_norm(T.zeros(2, 0), -0.5, 1),
        _raises(RuntimeError),
        "cannot compute the -0.5 norm on the dimension 1",
    ),
    (lambda T: T.linalg.vector_norm(T.zeros(2, 0), -math.inf, 0), _ok([]), None),
    (lambda T: T.linalg.vector_norm(T.zeros(0), 0.5), _ok(0.0), None),
    (
        lambda T: T.norm(T.zeros(0, 3), -1),
        _raises(RuntimeError),
        "cannot compute the -1 norm on an empty tensor",
    ),
    (lambda T: T.norm(T.zeros(2, 0), -2.0, 0), _ok([]), None),
    # ... nor has a smallest column/row sum or singular value, even over an empty batch
    (
        lambda T: T.linalg.matrix_norm(T.zeros(0, 0, 0), -1),
        _raises(IndexError),
        "amin(): Expected reduction dim 1",
    ),
    (
        lambda T: T.linalg.matrix_norm(T.zeros(0, 0, 0), -1, keepdim=True),
        _raises(IndexError),
        "amin(): Expected reduction dim 2",
    ),
    (
        lambda T: T.linalg.matrix_norm(T.zeros(2, 0, 3), -math.inf),
        _raises(IndexError),
        "amin(): Expected reduction dim 1",
    ),
    (
        lambda T: T.linalg.matrix_norm(T.zeros(0, 0, 0), -2),
        _raises(IndexError),
        "amin(): Expected reduction dim -1",
    ),
    (lambda T: T.linalg.matrix_norm(T.zeros(0, 2, 2), -1), _ok([]), None),
    (
        lambda T: T.linalg.matrix_norm(T.tensor([[1.0, -2], [3, 4]]), -1, keepdim=True),
        _ok([[4.0]]),
        None,
    ),
    (lambda T: T.linalg.matrix_norm(T.zeros(0, 0, 0), 1), _ok([]), None),
    # clamp_min/clamp_max of a complex tensor: clamp's refusal for a number bound, the
    # maximum/minimum kernel's for a tensor bound, after an in-place form's shape check
    (
        lambda T: T.ones(2, dtype=T.complex64).clamp_max(0.5),
        _raises(NotImplementedError),
        "clamp is not supported for complex types",
    ),
    (
        lambda T: T.clamp_min(T.ones(2, dtype=T.complex64), T.zeros(2)),
        _raises(NotImplementedError),
        "\"maximum_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        lambda T: T.ones(2, dtype=T.complex128).clamp_max_(T.zeros(2, 2, dtype=T.complex128)),
        _raises(RuntimeError),
        "output with shape [2] doesn't match the broadcast shape [2, 2]",
    ),
    (
        lambda T: T.ones(2, dtype=T.complex128).clamp_min_(T.zeros(1, dtype=T.complex128)),
        _raises(NotImplementedError),
        "\"maximum_cpu\" not implemented for 'ComplexDouble'",
    ),
    (lambda T: T.ones(2).clamp_max_(T.zeros(1)), _ok([0.0, 0.0]), None),
    # xlogy has no complex kernel: a complex operand (a number too) is refused, not truncated
    (
        lambda T: T.xlogy(T.tensor([1.0]), 2j),
        _raises(NotImplementedError),
        "\"xlogy_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        lambda T: T.xlogy(2j, T.tensor([1.0], dtype=T.float64)),
        _raises(NotImplementedError),
        "\"xlogy_cpu\" not implemented for 'ComplexDouble'",
    ),
    (lambda T: T.xlogy(T.tensor([2.0, 0.0]), 3), _ok([math.log(9), 0.0]), None),
    # reflect/replicate padding: an empty non-batch dim is refused; the 1-d kernels also refuse
    # a width cropped below 1 (the 2-d ones return an empty result)
    (
        lambda T: T.nn.functional.pad(T.ones(2, 2), (-1, -1), mode="replicate"),
        _raises(RuntimeError),
        "input (W: 2) is too small. Calculated output W: 0",
    ),
    (
        lambda T: T.nn.functional.pad(T.ones(1, 2, 3), (1, -5), mode="reflect"),
        _raises(RuntimeError),
        "input (W: 3) is too small. Calculated output W: -1",
    ),
    (
        lambda T: T.nn.functional.pad(T.ones(1, 1, 2, 2), (-1, -1, 0, 0), mode="reflect").shape[-1],
        _ok(0),
        None,
    ),
    (
        lambda T: T.nn.functional.pad(T.ones(2, 0, 3), (1, 1), mode="reflect"),
        _raises(RuntimeError),
        "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: [2, 0, 3]",
    ),
    (
        lambda T: T.nn.functional.pad(T.ones(1, 0, 2, 2), (1, 1, 1, 1), mode="replicate"),
        _raises(RuntimeError),
        "Expected 3D or 4D (batch mode) tensor",
    ),
    (
        lambda T: T.nn.functional.pad(T.ones(0, 2, 3), (1, 1), mode="replicate").shape[-1],
        _ok(5),
        None,
    ),
    # a wrong output_size count: each adaptive pool's own RuntimeError
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 2, 4, 4), (1, 2, 3)),
        _raises(RuntimeError),
        "adaptive_avg_pool2d: output_size must be 2",
    ),
    (
        lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(1, 2, 4, 4), (1,)),
        _raises(RuntimeError),
        "adaptive_max_pool2d(): internal error: output_size.size() must be 2",
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(1, 2, 4), (1, 2)),
        _raises(RuntimeError),
        "adaptive_avg_pool1d() argument 'output_size' should contain one int (got 2)",
    ),
]


@pytest.mark.parametrize("fn, want, message", CASES)
def test_sweep_case_matches_torch(fn, want, message):
    _check(fn, want)
    if message is not None:
        with pytest.raises(Exception) as info:
            fn(ember)
        assert message in str(info.value)


def test_scalar_arguments_from_unreadable_tensors_never_abort():
    # A 0-d complex or meta tensor where a number is expected used to end the process (an
    # exception thrown through a noexcept argument converter). torch casts the complex value
    # (dropping the imaginary part, with a warning) and lets a meta value's kernel write nothing.
    z = ember.zeros(2)
    for value in (ember.tensor(1j), ember.tensor(1.0, device="meta")):
        try:
            out = z.fill_(value)
        except TypeError as e:
            assert "fill_" in str(e)
        else:
            assert ember.equal(out, ember.zeros(2))
