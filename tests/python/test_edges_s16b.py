"""Issue 19, session 16 (second round): what fz8's sweep and the fuzzer found with new seeds:
`number / tensor` rounds as torch's reciprocal-then-product, logsumexp over an empty dim list.
Each case is checked against a hand-written outcome and against torch where it is installed.
"""

import numpy as np
import pytest
from _edge_check import _check, _ok, _raises

import ember

# ------------------------------------------------------------------ number / tensor


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_number_over_a_tensor_is_its_reciprocal_times_the_number(dtype):
    # torch's __rtruediv__ is self.reciprocal() * other: 200 / 3 in float32 rounds twice
    npdt = np.dtype(dtype)
    x = np.array([3.0, 7.0, -1.5, 0.0, 0.1], dtype=npdt)
    with np.errstate(divide="ignore"):
        want = (np.reciprocal(x) * npdt.type(200)).tolist()
    got = (200 / ember.tensor(x.tolist(), dtype=getattr(ember, dtype))).tolist()
    assert got == want


def test_number_over_a_bfloat16_tensor_rounds_the_reciprocal_first():
    # reciprocal(3) in bfloat16 is 0.333984375; times 200 is 66.797 -> 67.0 (200 / 3 -> 66.5)
    got = 200 / ember.tensor([3.0, 1.5], dtype=ember.bfloat16)
    assert got.dtype == ember.bfloat16
    assert got.tolist() == [67.0, 134.0]


RDIV = [
    (lambda T: 2 / T.tensor([4, 0, -2]), _ok([0.5, float("inf"), -1.0])),
    (lambda T: (2 / T.tensor([4, 0])).dtype == T.float32, _ok(True)),
    (lambda T: 0 / T.tensor([0.0]), _ok([float("nan")])),
    (lambda T: True / T.tensor([True, False]), _ok([1.0, float("inf")])),
    (lambda T: T.ones(2).__rdiv__(3), _ok([3.0, 3.0])),
    (lambda T: "a" / T.ones(2), _raises(TypeError)),
    (lambda T: T.ones(2).__rtruediv__(T.ones(3)), _raises(RuntimeError)),
]


@pytest.mark.parametrize("case", range(len(RDIV)))
def test_reflected_division_as_torch(case):
    fn, want = RDIV[case]
    _check(fn, want)


def test_reflected_division_keeps_its_gradient():
    x = ember.tensor([2.0, 4.0], requires_grad=True)
    (3 / x).sum().backward()
    assert x.grad.tolist() == [-0.75, -0.1875]


def test_reflected_division_matches_torch_bitwise():
    torch = pytest.importorskip("torch")
    vals = [3.0, 7.0, 0.3, -1.5, 11.0, 1e-3, 6.0]
    for dtype in ("float32", "bfloat16", "float16", "int64", "uint8"):
        for number in (200, 2.5, -3, 1j) if dtype != "float16" else (200, 2.5, -3):
            src = [abs(v) for v in vals] if dtype == "uint8" else vals
            got = number / ember.tensor(src).to(getattr(ember, dtype))
            ref = number / torch.tensor(src).to(getattr(torch, dtype))
            assert str(got.dtype) == str(ref.dtype), (dtype, number)
            np.testing.assert_array_equal(
                np.array(got.tolist()), np.array(ref.tolist()), err_msg=f"{dtype} {number}"
            )


# ------------------------------------------------------------------ logsumexp over dim=()

LOGSUMEXP = [
    # torch reduces an empty dim list over every dim with keepdim and cannot write that shape
    # into the 0-d result; an empty input or a 0-d one has nothing to write
    (lambda T: T.logsumexp(T.ones(4), dim=()), _raises(RuntimeError)),
    (lambda T: T.ones(2, 3).logsumexp([]), _raises(RuntimeError)),
    (lambda T: T.special.logsumexp(T.ones(2, 3), ()), _raises(RuntimeError)),
    (lambda T: T.logsumexp(T.ones(2, 3, dtype=T.int64), ()), _raises(RuntimeError)),
    (lambda T: T.logsumexp(T.ones(2, 3), (), out=T.empty(0)), _raises(RuntimeError)),
    (lambda T: T.logsumexp(T.ones(2, 3), dim=(), keepdim=True), _ok([[2.7917595]])),
    (lambda T: T.logsumexp(T.tensor(1.0), dim=()), _ok(1.0)),
    (lambda T: T.logsumexp(T.ones(2, 0), dim=()), _ok(float("-inf"))),
    (lambda T: T.logsumexp(T.ones(0), dim=[], keepdim=True), _ok([float("-inf")])),
    (lambda T: T.logsumexp(T.zeros(2, 2), dim=(0, 1)), _ok(1.3862944)),
    (lambda T: T.zeros(2, 2).logsumexp(1), _ok([0.6931472, 0.6931472])),
]


@pytest.mark.parametrize("case", range(len(LOGSUMEXP)))
def test_logsumexp_over_an_empty_dim_list_as_torch(case):
    fn, want = LOGSUMEXP[case]
    _check(fn, want)


def test_logsumexp_empty_dim_message_as_torch():
    with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match the broadcast "):
        ember.ones(2, 3).logsumexp(())
    with pytest.raises(RuntimeError, match=r"broadcast shape \[1, 1, 1\]"):
        ember.logsumexp(ember.ones(1, 2, 3), [])


# ------------------------------------------------------------------ nanmedian of a 0-d tensor

NANMEDIAN_0D = [
    (lambda T: T.tensor(1.0).nanmedian(2**40), _raises(IndexError)),
    (lambda T: T.tensor(1.0).nanmedian(1), _raises(IndexError)),
    (lambda T: T.nanmedian(T.tensor(1.0), -2), _raises(IndexError)),
    (lambda T: T.tensor(2.5).nanmedian(-1), _ok([2.5, 0])),
    (lambda T: T.tensor(float("nan")).nanmedian(0, keepdim=True), _ok([float("nan"), 0])),
]


@pytest.mark.parametrize("case", range(len(NANMEDIAN_0D)))
def test_nanmedian_of_a_0d_tensor_checks_its_dim_as_torch(case):
    fn, want = NANMEDIAN_0D[case]
    _check(fn, want)


# ------------------------------------------------------------------ scans take an int dim

SCANS_DIM = [
    # torch's parser refuses a bool for an int (the fuzzer's cumsum(x, dim=True))
    (lambda T: T.cumsum(T.ones(0, 3, dtype=T.bool).t(), dim=True), _raises(TypeError)),
    (lambda T: T.ones(2, 3).cumsum(True), _raises(TypeError)),
    (lambda T: T.cumprod(T.ones(2, 3), False), _raises(TypeError)),
    (lambda T: T.ones(2, 3).logcumsumexp(True), _raises(TypeError)),
    (lambda T: T.ones(2, 3).cummax(True)[0], _raises(TypeError)),
    (lambda T: T.cummin(T.ones(2, 3), dim=True)[0], _raises(TypeError)),
    (lambda T: T.ones(2, 3).cumsum_(True), _raises(TypeError)),
    (lambda T: T.ones(2, 3).cumprod_(False), _raises(TypeError)),
    (lambda T: T.ones(2, 3).cumsum(1, dtype=T.float64), _ok([[1.0, 2.0, 3.0]] * 2)),
    (lambda T: T.cumsum(T.ones(2, 3), T.tensor(1)), _ok([[1.0, 2.0, 3.0]] * 2)),
    (lambda T: T.cumsum(T.ones(2, 3), __import__("numpy").int64(0)), _ok([[1.0] * 3, [2.0] * 3])),
    (lambda T: T.cumsum(T.ones(2, 3), 1, out=T.empty(2, 3)), _ok([[1.0, 2.0, 3.0]] * 2)),
    (lambda T: T.ones(2, 3).cumsum_(dim=-1), _ok([[1.0, 2.0, 3.0]] * 2)),
    (lambda T: T.ones(3).cumprod_(0, dtype=T.float32), _ok([1.0, 1.0, 1.0])),
    (lambda T: T.ones(2, 3).cummax(0).indices, _ok([[0, 0, 0], [1, 1, 1]])),
    (lambda T: T.ones(2).logcumsumexp(dim=0), _ok([1.0, 1.6931472])),
]


@pytest.mark.parametrize("case", range(len(SCANS_DIM)))
def test_scans_refuse_a_bool_dim_as_torch(case):
    fn, want = SCANS_DIM[case]
    _check(fn, want)


# ------------------------------------------------------------------ Python ints beyond 64 bits

BIG = 10**20
WIDE_INTS = [
    # torch's parser: OverflowError for a Number parameter, ValueError for an int one; a
    # parameter that takes no number stays its TypeError
    (lambda T: T.add(T.ones(3), BIG), _raises(OverflowError)),
    (lambda T: T.add(T.ones(3), -BIG), _raises(OverflowError)),
    (lambda T: T.add(T.ones(3), T.ones(3), alpha=BIG), _raises(OverflowError)),
    (lambda T: T.sub(T.ones(3), BIG), _raises(OverflowError)),
    (lambda T: T.eq(T.ones(3), 2**64), _raises(OverflowError)),
    (lambda T: T.where(T.ones(3) > 0, T.ones(3), BIG), _raises(OverflowError)),
    (lambda T: T.where(T.ones(3) > 0, BIG, float("inf")), _raises(OverflowError)),
    (lambda T: T.less(T.ones(3), BIG, out=T.empty(3, dtype=T.bool)), _raises(OverflowError)),
    (lambda T: T.bitwise_and(T.ones(3, dtype=T.int32), BIG), _raises(OverflowError)),
    (lambda T: T.ones(3).add(BIG), _raises(OverflowError)),
    (lambda T: T.full((2,), BIG), _raises(OverflowError)),
    (lambda T: T.cumsum(T.ones(3), BIG), _raises(ValueError)),
    (lambda T: T.topk(T.ones(3), BIG), _raises(ValueError)),
    (lambda T: T.ones(3).cumsum(BIG), _raises(ValueError)),
    (lambda T: T.matmul(T.ones(3), BIG), _raises(TypeError)),
    (lambda T: T.add(T.ones(3), 2**62), _ok([2.0**62] * 3)),
]


@pytest.mark.parametrize("case", range(len(WIDE_INTS)))
def test_python_ints_beyond_64_bits_raise_as_torch(case):
    fn, want = WIDE_INTS[case]
    _check(fn, want)


def test_python_int_overflow_messages_as_torch():
    with pytest.raises(OverflowError, match="int too big to convert"):
        ember.mul(ember.ones(2), BIG)
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        ember.mul(ember.ones(2), -BIG)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        ember.cumprod(ember.ones(2), -BIG)
