"""What computes on sparse tensors: products with dense matrices (the C++ CSR kernel), their
gradients, elementwise ops that keep the pattern, sums and softmaxes over the stored entries.

Note [Sparse autograd]
A sparse tensor's C++ tensor is its values, so autograd sees every sparse computation as one on
the values: sparse @ dense is an autograd Function of (values, dense) whose backward gives the
dense operand S^T @ grad and the values the product grad @ dense^T sampled at the pattern
(_C._sparse_sampled_dot), which makes the sparse operand's .grad a sparse tensor of its own
pattern, as torch's sparse.mm gives. Elementwise ops and sums are ember ops on the values, so
their gradients need nothing more.
"""

import builtins
import numbers

from .. import _C
from .._C import Tensor
from .._type_info import dtype_of_to_call
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from . import _tensor as st
from ._tensor import SparseTensor, coo, sparse_coo, sparse_csr


def _lib():
    import ember

    return ember


# --- sparse @ dense -------------------------------------------------------------------------


class _Pattern:
    """The CSR arrays of a 2-D sparse matrix, its entries' row indices and its transpose on
    demand (the backward and the non-float path need them; the forward kernel does not)."""

    def __init__(self, crow, col, rows, shape):
        self.crow, self.col, self._rows, self.shape = crow, col, rows, shape

    @property
    def rows(self):
        if self._rows is None:
            lib = _lib()
            self._rows = lib.repeat_interleave(lib.arange(self.shape[0]), self.crow.diff())
        return self._rows

    def transposed(self, values):
        lib = _lib()
        order = lib.argsort(self.col, stable=True)
        trows = self.col[order].contiguous()
        tcrow = st.crow_from_rows(trows, self.shape[1])
        return tcrow, self.rows[order].contiguous(), trows, values[order].contiguous()


def _kernel_ok(values, dense):
    return values.dtype == dense.dtype and values.dtype in (_C.float32, _C.float64)


def _csr_mm(crow, col, rows, values, dense, nrows):
    """CSR @ dense: the C++ kernel for float32/float64, a gather-and-sum for other dtypes
    (`rows`: the entries' row indices, or a callable giving them, needed by that path only)."""
    lib = _lib()
    if _kernel_ok(values, dense):
        return _C._sparse_csr_mm(crow, col, values, dense)
    rows = rows() if callable(rows) else rows
    out = lib.zeros((nrows, dense.shape[1]), dtype=lib.promote_types(values.dtype, dense.dtype))
    return out.index_add(0, rows, values.unsqueeze(1) * dense[col])


class _SparseDenseMM(Function):
    @staticmethod
    def forward(ctx, values, dense, pattern):
        ctx.pattern = pattern
        ctx.save_for_backward(values, dense)
        rows = lambda: pattern.rows  # noqa: E731  (read by the non-float path only)
        return _csr_mm(pattern.crow, pattern.col, rows, values, dense, pattern.shape[0])

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        p = ctx.pattern
        grad = grad.contiguous()
        gv = gd = None
        if ctx.needs_input_grad[0]:
            if _kernel_ok(grad, dense):
                gv = _C._sparse_sampled_dot(p.rows, p.col, grad, dense.contiguous())
            else:
                gv = (grad[p.rows] * dense[p.col]).sum(-1)
        if ctx.needs_input_grad[1]:
            tcrow, tcol, trows, tvals = p.transposed(values)
            gd = _csr_mm(tcrow, tcol, trows, tvals, grad, p.shape[1])
        return gv, gd, None


def _pattern_of(s):
    """(pattern, values) of a 2-D sparse matrix without dense dims, as CSR arrays."""
    if s._layout is sparse_csr:
        return _Pattern(s._crow, s._col, None, s._size), st._values_of(s)
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(
            "mm: expected a 2-D sparse matrix without dense dims; got sparse_dim "
            f"{s.sparse_dim()} and dense_dim {s.dense_dim()}"
        )
    c = st.coalesce(s)
    # The row pointers of these indices are kept on the tensor: a model multiplies by one
    # adjacency matrix every step. The cache is keyed by the indices object, which in-place
    # ops replace rather than modify.
    cached = getattr(c, "_csr_cache", None)
    if cached is None or cached[0] is not c._indices_arr:
        rows = c._indices_arr[0].contiguous()
        crow = st.crow_from_rows(rows, s._size[0])
        cached = (c._indices_arr, rows, crow, c._indices_arr[1].contiguous())
        c._csr_cache = cached
    _, rows, crow, col = cached
    return _Pattern(crow, col, rows, s._size), st._values_of(c)


def _check_mm(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"mm: expected 2-D matrices; got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mm: mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )


def mm(mat1, mat2):
    """sparse @ dense -> dense, dense @ sparse -> dense, sparse @ sparse -> sparse."""
    _check_mm(mat1, mat2)
    a_sp, b_sp = isinstance(mat1, SparseTensor), isinstance(mat2, SparseTensor)
    if a_sp and b_sp:
        out = st.to_dense(mat1) @ st.to_dense(mat2)
        return st.dense_to_sparse(out) if mat1._layout is sparse_coo else st.dense_to_csr(out)
    if a_sp:
        pattern, values = _pattern_of(mat1)
        return _SparseDenseMM.apply(values, mat2.contiguous(), pattern)
    if b_sp:
        return mm(transpose(mat2, 0, 1), mat1.t()).t()
    return _C.mm(mat1, mat2)


def matmul(a, b):
    """matmul with a sparse operand: 2-D @ 2-D as mm, a vector as a one-column matrix."""
    if isinstance(a, SparseTensor) and b.dim() == 1:
        return mm(a, b.unsqueeze(1)).squeeze(1)
    if isinstance(b, SparseTensor) and a.dim() == 1:
        return mm(a.unsqueeze(0), b).squeeze(0)
    return mm(a, b)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) with a sparse operand."""
    prod = mm(mat1, mat2)
    if isinstance(prod, SparseTensor):
        prod = st.to_dense(prod)
    if isinstance(input, SparseTensor):
        input = st.to_dense(input)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod + _lib().zeros_like(input)
    return prod + (input if beta == 1 else input * beta)


# --- shape ------------------------------------------------------------------------------------


def transpose(s, dim0, dim1):
    """The transpose of two sparse dims of a COO tensor (a CSR one goes through COO)."""
    if s._layout is sparse_csr:
        return st.coo_to_csr(transpose(st.csr_to_coo(s), dim0, dim1))
    n = s.dim()
    d0, d1 = st._wrap_dim(dim0, n, "transpose"), st._wrap_dim(dim1, n, "transpose")
    sd = s.sparse_dim()
    if d0 == d1:
        return s
    if d0 >= sd or d1 >= sd:
        raise RuntimeError("transpose: transposing a dense dim of a sparse tensor is not supported")
    perm = list(range(sd))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    size = list(s._size)
    size[d0], size[d1] = size[d1], size[d0]
    return coo(s._indices_arr[perm], st._values_of(s), size, False)


def t(s):
    """t() of a sparse matrix (at most 2 dims)."""
    if s.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {s.dim()}D")
    return s if s.dim() < 2 else transpose(s, 0, 1)


# --- elementwise ------------------------------------------------------------------------------


def _is_scalar(x):
    return isinstance(x, numbers.Number) or (
        isinstance(x, Tensor) and not isinstance(x, SparseTensor) and x.dim() == 0
    )


def _gather(dense, s):
    """dense broadcast to s's shape, read at s's (coalesced) entries: (nnz, *dense_dims)."""
    dense = dense.expand(s.shape)
    if s._layout is sparse_csr:
        return dense[st.csr_rows(s), s._col]
    idx = s._indices_arr
    return dense[tuple(idx[d] for d in range(idx.shape[0]))]


def _values_op(s, fn, linear=False):
    """s's pattern with fn(values): linear fns keep duplicates, the others coalesce first."""
    if not linear and s._layout is sparse_coo:
        s = st.coalesce(s)
    return st._like(s, fn(st._values_of(s)))


def mul(a, b):
    """sparse * scalar, sparse * dense (sparse, a's pattern), sparse * sparse."""
    if not isinstance(a, SparseTensor):
        a, b = b, a
    if _is_scalar(b):
        return _values_op(a, lambda v: v * b, linear=True)
    if isinstance(b, SparseTensor):
        b = st.to_dense(b)
    if tuple(_lib().broadcast_shapes(a.shape, b.shape)) != tuple(a.shape):
        raise RuntimeError(
            f"mul: a sparse tensor of size {list(a.shape)} cannot be broadcast with {list(b.shape)}"
        )
    a = st.coalesce(a) if a._layout is sparse_coo else a
    return st._like(a, st._values_of(a) * _gather(b, a))


def div(a, b, *, rounding_mode=None):
    """sparse / scalar or sparse / dense (a's pattern)."""
    if not isinstance(a, SparseTensor):
        raise RuntimeError("div: dividing by a sparse tensor is not supported")
    if _is_scalar(b):
        return _values_op(a, lambda v: v.div(b, rounding_mode=rounding_mode), rounding_mode is None)
    if isinstance(b, SparseTensor):
        b = st.to_dense(b)
    a = st.coalesce(a) if a._layout is sparse_coo else a
    return st._like(a, st._values_of(a).div(_gather(b, a), rounding_mode=rounding_mode))


def add(a, b, *, alpha=1):
    """sparse + sparse -> sparse; sparse + dense or dense + sparse -> dense."""
    lib = _lib()
    if _is_scalar(b) and isinstance(a, SparseTensor):
        raise RuntimeError("add: adding a scalar to a sparse tensor is not supported (as torch's)")
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"add: expected sparse tensors of one size; got {list(a.shape)} and {list(b.shape)}"
            )
        layout = a._layout
        a2 = st.csr_to_coo(a) if a._layout is sparse_csr else a
        b2 = st.csr_to_coo(b) if b._layout is sparse_csr else b
        if a2.sparse_dim() != b2.sparse_dim():
            raise RuntimeError("add: expected sparse tensors with the same sparse_dim")
        bv = st._values_of(b2)
        if alpha != 1:
            bv = bv * alpha
        av = st._values_of(a2)
        dtype = lib.promote_types(av.dtype, bv.dtype)
        idx = lib.cat([a2._indices_arr, b2._indices_arr], 1)
        out = coo(idx, lib.cat([av.to(dtype), bv.to(dtype)]), a.shape, False)
        if a2._coalesced and b2._coalesced:
            out = st.coalesce(out)
        return st.coo_to_csr(out) if layout is sparse_csr else out
    if isinstance(a, SparseTensor):
        return b * alpha + st.to_dense(a) if alpha != 1 else st.to_dense(a) + b
    return a + st.to_dense(b) * alpha if alpha != 1 else a + st.to_dense(b)


def sub(a, b, *, alpha=1):
    """a - alpha * b with sparse operands (add's rules)."""
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor) and not _is_scalar(b):
        return st.to_dense(a) - b * alpha
    return add(a, b, alpha=-alpha)


def neg(s):
    """-s, same pattern."""
    return _values_op(s, lambda v: -v, linear=True)


# Unary functions with f(0) = 0: torch keeps their results sparse (values only).
ZERO_PRESERVING = (
    "abs asin asinh atan atanh ceil deg2rad erf erfinv expm1 floor frac log1p neg rad2deg relu "
    "round sgn sign signbit sin sinh sqrt square tan tanh trunc"
).split()


def unary(name):
    def fn(s, *args, **kwargs):
        return _values_op(s, lambda v: getattr(v, name)(*args, **kwargs))

    fn.__name__ = name
    fn.__doc__ = (
        f"{name}(input) -> Tensor\n\n{name} of the stored values (f(0) = 0 keeps the pattern)."
    )
    return fn


def pow(s, exponent):
    """s ** exponent for a positive scalar exponent (keeps the pattern)."""
    if not _is_scalar(exponent) or exponent <= 0:
        raise RuntimeError("pow: a sparse base takes a positive scalar exponent only")
    return _values_op(s, lambda v: v.pow(exponent))


def to(s, *args, **kwargs):
    """Tensor.to for sparse tensors: a dtype cast of the values (the CPU is the only device)."""
    dtype = dtype_of_to_call(args, kwargs)
    if dtype is None or dtype == s.dtype:
        return s
    return st._like(s, st._values_of(s).to(dtype))


# --- reductions -------------------------------------------------------------------------------


def sparse_sum(s, dim=None, dtype=None):
    """Sums over all (dense result) or some dims: a sparse result while sparse dims remain."""
    lib = _lib()
    if s._layout is sparse_csr:
        s = st.csr_to_coo(s)
    vals = st._values_of(s)
    if dtype is not None:
        vals = vals.to(dtype)
    if dim is None:
        return vals.sum()
    dims = [dim] if isinstance(dim, builtins.int) else list(dim)
    n, sd = s.dim(), s.sparse_dim()
    dims = sorted({st._wrap_dim(d, n, "sum") for d in dims})
    sparse_dims = [d for d in dims if d < sd]
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        vals = vals.sum(dense_dims)
    keep = [d for d in range(sd) if d not in sparse_dims]
    size = [s._size[d] for d in range(n) if d not in dims]
    if not keep:
        return vals.sum(0) if s._nnz() else lib.zeros(size, dtype=vals.dtype)
    idx = s._indices_arr[keep]
    return st.coalesce(coo(idx, vals, size, False))


def _grouped_softmax(s, dim, log):
    lib = _lib()
    if s._layout is sparse_csr:
        out = _grouped_softmax(st.csr_to_coo(s), dim, log)
        return st.coo_to_csr(out)
    s = st.coalesce(s)
    n, sd = s.dim(), s.sparse_dim()
    dim = st._wrap_dim(dim, n, "softmax")
    vals = st._values_of(s)
    if dim >= sd:
        fn = lib.log_softmax if log else lib.softmax
        return st._like(s, fn(vals, dim - sd + 1))
    if s._nnz() == 0:
        return s
    others = [d for d in range(sd) if d != dim]
    if others:
        key = st.linear_index(s._indices_arr[others], [s._size[d] for d in others])
        _, group = lib.unique(key, return_inverse=True)
    else:
        group = lib.zeros(s._nnz(), dtype=lib.int64)
    ngroups = builtins.int(group.max()) + 1
    shape = (ngroups,) + tuple(vals.shape[1:])
    gidx = group.reshape((-1,) + (1,) * (vals.dim() - 1)).expand(vals.shape)
    with no_grad():
        top = lib.full(shape, float("-inf"), dtype=vals.dtype).scatter_reduce(
            0, gidx, vals.detach(), "amax", include_self=True
        )
    shifted = vals - top[group]
    e = shifted.exp()
    total = lib.zeros(shape, dtype=vals.dtype).index_add(0, group, e)
    out = shifted - total.log()[group] if log else e / total[group]
    return st._like(s, out)


def softmax(s, dim, dtype=None):
    """softmax over the stored entries along dim (absent entries count as -inf)."""
    if dtype is not None:
        s = to(s, dtype)
    return _grouped_softmax(s, dim, log=False)


def log_softmax(s, dim, dtype=None):
    """log_softmax over the stored entries along dim (absent entries count as -inf)."""
    if dtype is not None:
        s = to(s, dtype)
    return _grouped_softmax(s, dim, log=True)


# --- in place (optimizers) --------------------------------------------------------------------


def _swap(s, values, indices=None):
    """Replaces s's arrays in place (the values through Tensor.data, keeping the object)."""
    Tensor.data.__set__(s, values)
    if indices is not None:
        s._indices_arr = indices


def zero_(s):
    """Drops every stored entry (nnz becomes 0), as torch's zero_ of a sparse tensor."""
    lib = _lib()
    vals = st._values_of(s)
    if s._layout is sparse_csr:
        Tensor.data.__set__(s, vals.new_zeros((0,)))
        s._crow = lib.zeros(s._size[0] + 1, dtype=lib.int64)
        s._col = lib.zeros(0, dtype=lib.int64)
        return s
    sd = s.sparse_dim()
    _swap(s, vals.new_zeros((0,) + tuple(vals.shape[1:])), lib.zeros((sd, 0), dtype=lib.int64))
    s._coalesced = True
    return s


def mul_(s, other):
    """s *= scalar in place."""
    if not _is_scalar(other):
        raise RuntimeError("mul_: a sparse tensor is scaled in place by a scalar only")
    with no_grad():
        _swap(s, st._values_of(s) * other)
    return s


def add_(s, other, *, alpha=1):
    """s += alpha * other in place for sparse s and other (the result keeps s's object)."""
    if not isinstance(other, SparseTensor):
        raise RuntimeError("add_: a sparse tensor takes a sparse tensor in place")
    with no_grad():
        out = add(s, other, alpha=alpha)
    if s._layout is sparse_csr:
        Tensor.data.__set__(s, st._values_of(out))
        s._crow, s._col = out._crow, out._col
        return s
    _swap(s, st._values_of(out), out._indices_arr)
    s._coalesced = out._coalesced
    return s


def coalesce_(s):
    c = st.coalesce(s)
    if c is not s:
        _swap(s, st._values_of(c).detach(), c._indices_arr)
        s._coalesced = True
    return s


def dense_add_sparse_(dense, s, alpha=1):
    """dense += alpha * s in place (what an optimizer's update with a sparse gradient is)."""
    if s._layout is sparse_csr:
        s = st.csr_to_coo(s)
    vals = st._values_of(s)
    if alpha != 1:
        vals = vals * alpha
    idx = s._indices_arr
    with no_grad():
        dense.index_put_(
            tuple(idx[d] for d in range(idx.shape[0])), vals.to(dense.dtype), accumulate=True
        )
    return dense


def sparse_mask(dense, mask):
    """dense's values at mask's (coalesced) entries, as a sparse tensor of mask's pattern."""
    if isinstance(dense, SparseTensor):
        dense = st.to_dense(dense)
    m = st.coalesce(mask) if mask._layout is sparse_coo else mask
    return st._like(m, _gather(dense, m).to(dense.dtype))
