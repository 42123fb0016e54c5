"""Products of vectors, matrices and tensors composed from mm/bmm/mv: the add*-family, tensordot,
kron, cross, vdot, cdist, trace."""

import builtins
import math
import warnings

from .. import _C
from .._autocast_policy import fp32 as _autocast_fp32
from .._autocast_policy import lower_precision as _autocast_lower
from .._C import Tensor, addmm, baddbmm, bmm, broadcast_tensors, mm, mv, outer, stack
from .._type_info import scalar_type_name
from .._warn_once import warn_once
from . import _names
from ._util import wrap_dim
from .creation import zeros

__all__ = [
    "trace",
    "adjoint",
    "addmv",
    "addr",
    "addbmm",
    "cross",
    "kron",
    "tensordot",
    "chain_matmul",
    "vdot",
    "cdist",
    "einsum",
]


@_autocast_fp32
def trace(input):
    """trace(input) -> Tensor

    The sum of the diagonal of a matrix."""
    if input.dtype == _C.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


def adjoint(input):
    """adjoint(input: Tensor) -> Tensor

    The conjugate transpose of the last two dimensions (a view for real dtypes; ember's eager
    conjugate makes it a copy for complex ones)."""
    if input.dim() == 0:
        return _conj_of_0d(input, "adjoint()")
    return _conj(input.mT)


def _mH(self):
    """mH -> Tensor

    The conjugate transpose of the last two dims (mT for real dtypes)."""
    return _conj_of_0d(self, "Tensor.mH") if self.dim() == 0 else adjoint(self)


def _conj_of_0d(x, what):
    # torch's H/mH/adjoint of a 0-d tensor: its conjugate, with a deprecation UserWarning
    warnings.warn(f"{what} is deprecated on 0-D tensors. Consider using x.conj().", stacklevel=3)
    return _conj(x)


def _conj(x):
    return _C.conj_physical(x) if x.dtype.is_complex else x


def _beta_alpha(input, product, beta, alpha):
    # beta == 0 ignores input entirely (NaN and inf in it do not propagate), as torch.
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled + zeros([], dtype=input.dtype).expand_as(input)
    return scaled + (input if beta == 1 else input * beta)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * (mat @ vec)."""
    return _beta_alpha(input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * the outer product of vec1 and vec2."""
    return _beta_alpha(input, outer(vec1, vec2), beta, alpha)


@_autocast_lower
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    return _beta_alpha(input, bmm(batch1, batch2).sum(0), beta, alpha)


def cross(input, other, dim=None):
    """cross(input, other, dim=None) -> Tensor

    The cross product of 3-vectors along dim (the first dim of size 3 when None)."""
    if input.dtype == _C.bool:  # torch's cross kernel has no bool, and takes one dtype
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(input.dtype)} but found "
            f"{scalar_type_name(other.dtype)}"
        )
    a, b = broadcast_tensors(input, other)
    if dim is None:
        dim = next((d for d, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if a.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[dim] if input.dim() else 0} and "
            f"{other.shape[dim] if other.dim() else 0}"
        )
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def kron(input, other):
    """kron(input, other) -> Tensor

    The Kronecker product: each element of input scales a whole copy of other."""
    nd = builtins.max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    # Interleave: a's axis i with b's axis i, so each a element scales a whole copy of b.
    ai = a.reshape([s for d in a.shape for s in (d, 1)])
    bi = b.reshape([s for d in b.shape for s in (1, d)])
    return (ai * bi).reshape([x * y for x, y in zip(a.shape, b.shape)])


def _wrap_dim(d, t):
    if t.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return wrap_dim(d, t.dim())


def tensordot(a, b, dims=2, out=None):
    """tensordot(a, b, dims=2, out=None) -> Tensor

    Contracts dims of a with dims of b: the last dims of a with the first of b for an int."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    da = [_wrap_dim(d, a) for d in da]
    db = [_wrap_dim(d, b) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size "
                f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in dim {y}"
            )
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a.shape[d] for d in da)  # explicit sizes: -1 is ambiguous for empty inputs
    am = a.permute(fa + da).reshape(math.prod(a.shape[d] for d in fa), k)
    bm = b.permute(db + fb).reshape(k, math.prod(b.shape[d] for d in fb))
    return mm(am, bm).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


def _sublist_letters(sub):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            out.append(chr(ord("a") + s) if s < 26 else chr(ord("A") + s - 26))
        else:
            raise ValueError(
                f"einsum(): expected subscript to be within the range [0, 52); got {s}"
            )
    return "".join(out)


def einsum(*args):
    """einsum(equation, *operands) -> Tensor

    Sums products of the operands over the indices that the Einstein-notation equation leaves
    out of its output (e.g. 'ij,jk->ik'). The sublist form einsum(op1, sub1, op2, sub2, ...,
    [sub_out]), with subscripts as ints in [0, 52) or Ellipsis, is accepted too."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand")
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        if len(args) > 2 and _C._autocast_is_active():
            # torch contracts operand pairs with bmm, which autocast runs in the lower
            # precision: mixed float32/bfloat16 operands meet there in bfloat16
            return _autocast_lower(_C.einsum)(*args)
        return _C.einsum(*args)
    if not isinstance(args[0], _C.Tensor):  # neither an equation nor the sublist form
        raise TypeError(
            f"einsum(): argument 'equation' (position 1) must be str, not {type(args[0]).__name__}"
        )
    # The sublist form: operand, subscripts, operand, subscripts, ..., optional output subscripts.
    ops = list(args[0::2][: len(args) // 2])
    subs = [_sublist_letters(s) for s in args[1::2]]
    eq = ",".join(subs)
    if len(args) % 2 == 1:
        eq += "->" + _sublist_letters(args[-1])
    return _C.einsum(eq, *ops)


def chain_matmul(*matrices):
    """chain_matmul(*matrices) -> Tensor

    The product of the given matrices, left to right (deprecated, as torch's)."""
    warn_once(
        "chain_matmul",
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
        "multiple parameters.",
    )
    out = matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


def vdot(input, other):
    """vdot(input, other) -> Tensor

    The dot product of two 1-D tensors (conjugating the first, a no-op for real ones)."""
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"expected both vectors to have same dtype, but found {input.dtype} and {other.dtype}"
        )
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{input.shape[0]} and {other.shape[0]} elements respectively"
        )
    return (input * other).sum()


@_autocast_fp32
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary') -> Tensor

    The p-norm distances between each row of x1 and each row of x2 (batched)."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return diff.norm(p, -1)


# --- method forms (installed by _tensor_methods) -----------------------------------------


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """addmm_(mat1, mat2, *, beta=1, alpha=1) -> Tensor

    In-place form of addmm()."""
    return self.copy_(addmm(self, mat1, mat2, beta=beta, alpha=alpha))


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """baddbmm_(batch1, batch2, *, beta=1, alpha=1) -> Tensor

    In-place form of baddbmm()."""
    return self.copy_(baddbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def _H(self):
    """H -> Tensor

    The conjugate transpose of a 2-D tensor (the transpose for real dtypes)."""
    if self.dim() not in (0, 2):
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
        )
    return _conj(self.t()) if self.dim() == 2 else _conj_of_0d(self, "Tensor.H")


def _cdist_name(args, kwargs):
    """torch's cdist node, or the reshape ending its matrix-product path for p=2 (asked for, or
    by default past 25 rows)."""
    x1, x2 = _names.arg(args, kwargs, 0, "x1"), _names.arg(args, kwargs, 1, "x2")
    mode = _names.arg(args, kwargs, 3, "compute_mode", "use_mm_for_euclid_dist_if_necessary")
    if _names.arg(args, kwargs, 2, "p", 2.0) == 2 and isinstance(x1, Tensor):
        big = x1.shape[-2] > 25 or x2.shape[-2] > 25
        if mode == "use_mm_for_euclid_dist" or (
            mode == "use_mm_for_euclid_dist_if_necessary" and big
        ):
            return "ViewBackward0"
    return "CdistBackward0"


cdist = _names.named(cdist, _cdist_name)
trace = _names.named(trace, "TraceBackward0")
kron = _names.named(kron, "UnsafeViewBackward0")
cross = _names.named(cross, "LinalgCrossBackward0")


def _einsum_name(args, kwargs):
    """torch reduces a single operand with sum (SumBackward1) when a label is summed out."""
    eq, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if not isinstance(eq, str) or len(operands) != 1:
        return None
    lhs, arrow, rhs = eq.replace(" ", "").partition("->")
    labels = {c for c in lhs if c.isalpha()}
    kept = set(rhs) if arrow else {c for c in labels if lhs.count(c) == 1}
    return "SumBackward1" if labels - kept else None


einsum = _names.named(einsum, _einsum_name)
