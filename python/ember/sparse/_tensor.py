"""Sparse COO and CSR tensors: the class, its constructors, conversions and printing.

A sparse tensor is a SparseTensor, a Python subclass of ember.Tensor (see docs/ARCHITECTURE.md,
"Sparse tensors"). The C++ tensor under it is its values array, so dtype, device, requires_grad,
grad_fn, is_leaf and backward are the values' own and autograd records sparse computations as
computations on the values. The index arrays (COO's indices; CSR's crow_indices and col_indices)
and the logical size are Python attributes. Shape queries answer with the logical size.
"""

import builtins
import math

from .. import _C, _process
from .._C import Tensor

__all__ = ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]

sparse_coo = _process.layout("sparse_coo")
sparse_csr = _process.layout("sparse_csr")
sparse_csc = _process.layout("sparse_csc")
sparse_bsr = _process.layout("sparse_bsr")
sparse_bsc = _process.layout("sparse_bsc")


def _lib():
    import ember

    return ember


class SparseTensor(Tensor):
    """A sparse tensor (layout ember.sparse_coo or ember.sparse_csr); made by
    ember.sparse_coo_tensor, ember.sparse_csr_tensor, Tensor.to_sparse and to_sparse_csr."""

    def __new__(cls, *args, **kwargs):
        return Tensor.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    # -- what a sparse tensor is
    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse(self):
        return self._layout is sparse_coo

    @property
    def is_sparse_csr(self):
        return self._layout is sparse_csr

    @property
    def shape(self):
        return _lib().Size(self._size)

    def size(self, dim=None):
        """size(dim=None) -> Size or int

        The logical size (or one dimension of it)."""
        if dim is None:
            return self.shape
        return self._size[_wrap_dim(dim, len(self._size), "size")]

    @property
    def ndim(self):
        return len(self._size)

    def dim(self):
        """dim() -> int

        The number of logical dimensions."""
        return len(self._size)

    ndimension = dim

    def numel(self):
        """numel() -> int

        The number of elements of the logical (dense) tensor."""
        return math.prod(self._size)

    nelement = numel

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def stride(self, dim=None):
        """stride(dim=None)

        Raises: sparse tensors have no strides (as torch's)."""
        raise RuntimeError(f"Sparse tensors do not have strides ({self._layout!r})")

    def is_contiguous(self, memory_format=None):
        """is_contiguous(memory_format=None)

        Raises: sparse tensors have no strides (as torch's)."""
        raise RuntimeError(f"Sparse tensors do not have is_contiguous ({self._layout!r})")

    def data_ptr(self):
        """data_ptr()

        Raises: a sparse tensor's memory is its index and value arrays (as torch's)."""
        raise RuntimeError(
            f"Cannot access data pointer of Tensor that doesn't have storage ({self._layout!r})"
        )

    def numpy(self, *, force=False):
        """numpy(*, force=False)

        Raises: call to_dense() first (as torch's)."""
        raise TypeError(f"can't convert {self._layout!r} layout tensor to numpy; use to_dense()")

    def sparse_dim(self):
        """sparse_dim() -> int

        The number of leading dims that the indices address."""
        return self._indices_arr.shape[0] if self._layout is sparse_coo else 2

    def dense_dim(self):
        """dense_dim() -> int

        The number of trailing dims stored densely in each value."""
        return len(self._size) - self.sparse_dim()

    def _nnz(self):
        """_nnz() -> int

        The number of stored entries."""
        return Tensor.size(self, 0) if Tensor.dim(self) > 0 else 0

    # -- the arrays
    def _values(self):
        """_values() -> Tensor

        The stored values (any COO tensor, coalesced or not), differentiably."""
        return _values_of(self)

    def values(self):
        """values() -> Tensor

        The stored values; a COO tensor must be coalesced first (as torch's)."""
        if self._layout is sparse_coo and not self._coalesced:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return _values_of(self)

    def _indices(self):
        """_indices() -> Tensor

        The (sparse_dim, nnz) int64 indices of a COO tensor (coalesced or not)."""
        self._need(sparse_coo, "_indices")
        return self._indices_arr

    def indices(self):
        """indices() -> Tensor

        The indices of a coalesced COO tensor (as torch's, uncoalesced ones raise)."""
        self._need(sparse_coo, "indices")
        if not self._coalesced:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._indices_arr

    def crow_indices(self):
        """crow_indices() -> Tensor

        CSR's compressed row pointers (nrows + 1 of them)."""
        self._need(sparse_csr, "crow_indices")
        return self._crow

    def col_indices(self):
        """col_indices() -> Tensor

        CSR's column index of each value."""
        self._need(sparse_csr, "col_indices")
        return self._col

    def is_coalesced(self):
        """is_coalesced() -> bool

        Whether the COO indices are sorted and unique."""
        self._need(sparse_coo, "is_coalesced")
        return self._coalesced

    def _need(self, layout, op):
        if self._layout is not layout:
            raise RuntimeError(f"{op} expected a tensor of layout {layout!r}; got {self._layout!r}")

    # -- autograd
    @property
    def grad(self):
        g = Tensor.grad.__get__(self)
        if g is None:
            return None
        if isinstance(g, SparseTensor):
            return g
        g = g.detach()
        if self._layout is sparse_coo and not self._coalesced and self._nnz():
            # The gradient of the tensor that the entries sum to, as torch's: every duplicate of
            # an entry has that entry's gradient, so one of them stands for all.
            c = coalesce(_like(self, g))
            lin = linear_index(self._indices_arr, self._size[: self.sparse_dim()])
            _, inv = _lib().unique(lin, sorted=True, return_inverse=True)
            first = g.new_zeros((c._nnz(),) + tuple(g.shape[1:]))
            first[inv] = g
            return coo(c._indices_arr, first, self._size, True)
        return _like(self, g)

    @grad.setter
    def grad(self, value):
        if isinstance(value, SparseTensor):
            value = _values_of(value)
        Tensor.grad.__set__(self, value)

    @property
    def data(self):
        return _like(self, _values_of(self).detach())

    def detach(self):
        """detach() -> Tensor

        The same sparse tensor outside autograd (arrays shared)."""
        return _like(self, _values_of(self).detach())

    def clone(self, *, memory_format=None):
        """clone(*, memory_format=None) -> Tensor

        A copy of the arrays, differentiably."""
        out = _like(self, _values_of(self).clone())
        if self._layout is sparse_coo:
            out._indices_arr = self._indices_arr.clone()
        else:
            out._crow, out._col = self._crow.clone(), self._col.clone()
        return out

    def __reduce_ex__(self, protocol):
        from ._serialize import reduce_sparse

        return reduce_sparse(self)

    def __deepcopy__(self, memo):
        out = self.clone().detach()
        if self.requires_grad:
            out.requires_grad_(True)
        memo[id(self)] = out
        return out

    def __repr__(self):
        return sparse_str(self)

    __str__ = __repr__

    def type(self, dtype=None, non_blocking=False):
        """type(dtype=None) -> str or Tensor

        torch's type name of a sparse tensor (torch.sparse.FloatTensor), or a copy cast."""
        if dtype is None:
            names = {
                _C.float32: "Float",
                _C.float64: "Double",
                _C.int64: "Long",
                _C.int32: "Int",
                _C.float16: "Half",
                _C.bfloat16: "BFloat16",
                _C.bool: "Bool",
                _C.int16: "Short",
                _C.int8: "Char",
                _C.uint8: "Byte",
            }
            return f"torch.sparse.{names.get(self.dtype, 'Float')}Tensor"
        return self.to(dtype)

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.to_dense())

    def __float__(self):
        return float(self.to_dense())

    def __int__(self):
        return int(self.to_dense())

    def item(self):
        """item() -> number

        The one element of a one-element tensor."""
        return self.to_dense().item()

    def tolist(self):
        """tolist() -> list

        Raises as torch's: call to_dense() first."""
        raise RuntimeError("tolist() is not supported for sparse tensors; call to_dense() first")

    __hash__ = Tensor.__hash__


def _add_methods(methods):
    """Sets ember.sparse's methods on SparseTensor (ember.sparse.install)."""
    for name, value in methods.items():
        if name not in vars(SparseTensor):
            setattr(SparseTensor, name, value)


def _wrap_dim(dim, n, op):
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of [{-max(n, 1)}, "
            f"{max(n, 1) - 1}], but got {dim})"
        )
    return dim % n if n else 0


def _values_of(s):
    """The C++ tensor under a sparse tensor (its values), as a plain Tensor, differentiably."""
    out = Tensor.__new__(Tensor)
    Tensor.__init__(out, s)  # the same C++ tensor (one autograd identity), typed plain Tensor
    return out


def _make(layout, values, size):
    obj = SparseTensor.__new__(SparseTensor)
    Tensor.__init__(obj, values)
    obj._layout = layout
    obj._size = tuple(builtins.int(s) for s in size)
    return obj


def coo(indices, values, size, coalesced=False):
    """A COO tensor over these arrays (no checks; the constructors check)."""
    obj = _make(sparse_coo, values, size)
    obj._indices_arr = indices
    obj._coalesced = builtins.bool(coalesced)
    return obj


def csr(crow, col, values, size):
    """A CSR tensor over these arrays (no checks)."""
    obj = _make(sparse_csr, values, size)
    obj._crow = crow
    obj._col = col
    return obj


def _like(s, values):
    """s's pattern with other values (same layout, size and coalesced flag)."""
    if s._layout is sparse_coo:
        return coo(s._indices_arr, values, s._size, s._coalesced)
    return csr(s._crow, s._col, values, s._size)


def is_sparse_any(x):
    return isinstance(x, SparseTensor)


# --- constructors ---------------------------------------------------------------------------


def _as_index(x, op):
    lib = _lib()
    if not isinstance(x, Tensor):
        x = lib.tensor(x, dtype=lib.int64)
    if x.dtype not in (lib.int64, lib.int32):
        raise RuntimeError(f"{op}: expected indices of an integer dtype; got {x.dtype}")
    return x.to(lib.int64)


def _as_values(x, dtype, requires_grad):
    lib = _lib()
    if not isinstance(x, Tensor):
        x = lib.tensor(x, dtype=dtype)
    elif dtype is not None and x.dtype != dtype:
        x = x.to(dtype)
    if requires_grad:
        return x.detach().requires_grad_(True)
    # torch's result is not the values tensor itself: a view of it, so that marking the sparse
    # tensor (requires_grad_) leaves the caller's values alone and gradients still reach them.
    return x.view(x.shape)


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
    is_coalesced=None,
):
    """sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
        pin_memory=False, requires_grad=False, check_invariants=None, is_coalesced=None) -> Tensor

    A sparse COO tensor with the given (sparse_dim, nnz) indices and (nnz, *dense_dims) values;
    size defaults to the smallest that holds the indices. Duplicate indices are kept (the tensor
    is uncoalesced) and summed by coalesce() and every reading of the dense tensor."""
    op = "sparse_coo_tensor"
    if isinstance(indices, SparseTensor):
        raise TypeError(f"{op}: expected index and value tensors; got a sparse tensor")
    idx = _as_index(indices, op)
    vals = _as_values(values, dtype, requires_grad)
    if idx.dim() != 2:
        raise RuntimeError(f"{op}: indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    nnz = idx.shape[1]
    if vals.dim() == 0 or vals.shape[0] != nnz:
        raise RuntimeError(
            f"{op}: indices and values must have same nnz, but got nnz from indices: {nnz}, "
            f"nnz from values: {vals.shape[0] if vals.dim() else 'a 0-d tensor'}"
        )
    sparse_dim = idx.shape[0]
    dense_shape = tuple(vals.shape[1:])
    if size is None:
        if nnz:
            top = idx.amax(1) + 1
            sizes = tuple(builtins.int(s) for s in top.tolist())
        else:
            sizes = (0,) * sparse_dim
        size = sizes + dense_shape
    size = tuple(builtins.int(s) for s in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise RuntimeError(
            f"{op}: number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
            f"({len(dense_shape)}), but got {len(size)}"
        )
    if tuple(size[sparse_dim:]) != dense_shape:
        raise RuntimeError(
            f"{op}: values has incorrect size, expected {list((nnz,) + tuple(size[sparse_dim:]))},"
            f" got {list(vals.shape)}"
        )
    if nnz:
        lo, hi = idx.amin(1).tolist(), idx.amax(1).tolist()
        for d in range(sparse_dim):
            if lo[d] < 0:
                raise RuntimeError(f"{op}: found negative index {lo[d]} for dim {d}")
            if hi[d] >= size[d]:
                raise RuntimeError(
                    f"{op}: size is inconsistent with indices: for dim {d}, size is {size[d]} "
                    f"but found index {hi[d]}"
                )
    return coo(idx, vals, size, builtins.bool(is_coalesced) if is_coalesced is not None else False)


def sparse_csr_tensor(
    crow_indices,
    col_indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
):
    """sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
        device=None, pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor

    A 2-D sparse CSR tensor: row i's values are values[crow_indices[i]:crow_indices[i + 1]], in
    the columns col_indices gives; size defaults to (len(crow_indices) - 1, max column + 1)."""
    op = "sparse_csr_tensor"
    crow = _as_index(crow_indices, op)
    col = _as_index(col_indices, op)
    vals = _as_values(values, dtype, requires_grad)
    if crow.dim() != 1 or col.dim() != 1 or vals.dim() != 1:
        raise RuntimeError(
            f"{op}: expected 1-D crow_indices, col_indices and values (batched and hybrid CSR "
            f"are not supported); got {crow.dim()}-D, {col.dim()}-D and {vals.dim()}-D"
        )
    nnz = col.shape[0]
    if vals.shape[0] != nnz:
        raise RuntimeError(
            f"{op}: col_indices and values must have the same number of elements, but got "
            f"{nnz} and {vals.shape[0]}"
        )
    nrows = crow.shape[0] - 1
    if nrows < 0:
        raise RuntimeError(f"{op}: crow_indices must have at least one element")
    if size is None:
        size = (nrows, builtins.int(col.max().item()) + 1 if nnz else 0)
    size = tuple(builtins.int(s) for s in size)
    if len(size) != 2:
        raise RuntimeError(f"{op}: expected a 2-D size; got {list(size)}")
    if size[0] != nrows:
        raise RuntimeError(
            f"{op}: crow_indices.size(-1) must be equal to size[0] + 1 = {size[0] + 1}, but got: "
            f"{nrows + 1}"
        )
    c = crow.tolist()
    if c[0] != 0 or c[-1] != nnz:
        raise RuntimeError(
            f"{op}: crow_indices must start with 0 and end with nnz ({nnz}); got {c[0]} and {c[-1]}"
        )
    if any(b < a for a, b in zip(c, c[1:])):
        raise RuntimeError(f"{op}: crow_indices must be non-decreasing")
    if nnz and (builtins.int(col.min()) < 0 or builtins.int(col.max()) >= size[1]):
        raise RuntimeError(f"{op}: col_indices must be in [0, {size[1]}) (the number of columns)")
    return csr(crow, col, vals, size)


# --- conversions ----------------------------------------------------------------------------


def linear_index(indices, sizes):
    """Row-major positions of (sparse_dim, nnz) indices in a tensor of `sizes`."""
    lin = indices[0]
    for d in range(1, len(sizes)):
        lin = lin * sizes[d] + indices[d]
    return lin


def unravel(lin, sizes):
    """The (len(sizes), n) indices of row-major positions `lin`."""
    lib = _lib()
    rows = []
    for s in reversed(sizes):
        rows.append(lin % s)
        lin = lin.div(s, rounding_mode="floor")
    if not rows:
        return lib.zeros((0, lin.shape[0]), dtype=lib.int64)
    return lib.stack(rows[::-1])


def coalesce(s):
    """The coalesced form of a COO tensor: sorted unique indices, duplicates summed."""
    lib = _lib()
    s._need(sparse_coo, "coalesce")
    if s._coalesced:
        return s
    sd = s.sparse_dim()
    sizes = s._size[:sd]
    vals = _values_of(s)
    if s._nnz() == 0 or sd == 0:
        if sd == 0 and s._nnz() > 1:
            summed = vals.sum(0, keepdim=True)
            return coo(s._indices_arr[:, :1], summed, s._size, True)
        return coo(s._indices_arr, vals, s._size, True)
    lin = linear_index(s._indices_arr, sizes)
    uniq, inv = lib.unique(lin, sorted=True, return_inverse=True)
    if uniq.shape[0] == lin.shape[0]:
        order = lib.argsort(lin)
        return coo(s._indices_arr[:, order], vals[order], s._size, True)
    out = lib.zeros((uniq.shape[0],) + tuple(vals.shape[1:]), dtype=vals.dtype)
    out = out.index_add(0, inv, vals)
    return coo(unravel(uniq, sizes), out, s._size, True)


def crow_from_rows(rows, nrows):
    """CSR's row pointers of entries whose (sorted) row indices are `rows`."""
    lib = _lib()
    counts = (
        lib.bincount(rows, minlength=nrows) if rows.numel() else lib.zeros(nrows, dtype=lib.int64)
    )
    return lib.cat([lib.zeros(1, dtype=lib.int64), counts.cumsum(0)])


def csr_rows(s):
    """The row index of each CSR entry."""
    lib = _lib()
    counts = s._crow[1:] - s._crow[:-1]
    return lib.repeat_interleave(lib.arange(s._size[0]), counts)


def to_dense(s, dtype=None, *, masked_grad=None):
    """The dense tensor, differentiably in the values."""
    lib = _lib()
    vals = _values_of(s)
    if s._layout is sparse_csr:
        idx = lib.stack([csr_rows(s), s._col])
        sd = 2
    else:
        idx = s._indices_arr
        sd = s.sparse_dim()
    sizes = s._size[:sd]
    flat = lib.zeros((math.prod(sizes),) + tuple(vals.shape[1:]), dtype=vals.dtype)
    if s._nnz():
        lin = linear_index(idx, sizes) if sd else lib.zeros(s._nnz(), dtype=lib.int64)
        flat = flat.index_add(0, lin, vals)
    out = flat.reshape(s._size)
    return out if dtype is None else out.to(dtype)


def dense_to_sparse(x, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse: the nonzero entries of a dense tensor, as a coalesced COO tensor."""
    lib = _lib()
    if isinstance(sparse_dim, _process.layout):
        layout, sparse_dim = sparse_dim, None
    if layout is not None and layout is not sparse_coo:
        if layout is sparse_csr:
            return dense_to_csr(x)
        raise RuntimeError(
            f"to_sparse: expected layout torch.sparse_coo or torch.sparse_csr; got {layout!r}"
        )
    if isinstance(x, SparseTensor):
        if x._layout is sparse_coo:
            if sparse_dim is not None and sparse_dim != x.sparse_dim():
                raise RuntimeError(
                    "to_sparse: converting a COO tensor to another sparse_dim is not supported"
                )
            return x
        return csr_to_coo(x)
    sd = x.dim() if sparse_dim is None else builtins.int(sparse_dim)
    if not 0 <= sd <= x.dim():
        raise RuntimeError(f"to_sparse: sparse_dim argument must be in [0, {x.dim()}]; got {sd}")
    mask = x != 0
    if sd < x.dim():
        mask = mask.reshape(tuple(x.shape[:sd]) + (-1,)).any(-1)
    if sd == 0:
        idx = lib.zeros((0, 1), dtype=lib.int64)
        return coo(idx, x.unsqueeze(0), tuple(x.shape), True)
    idx = lib.nonzero(mask).t().contiguous()
    vals = x[tuple(idx[d] for d in range(sd))]
    return coo(idx, vals, tuple(x.shape), True)


def dense_to_csr(x):
    """Tensor.to_sparse_csr of a dense 2-D tensor."""
    lib = _lib()
    if isinstance(x, SparseTensor):
        return x if x._layout is sparse_csr else coo_to_csr(x)
    if x.dim() != 2:
        raise RuntimeError(
            f"to_sparse_csr: expected a 2-D tensor (batched CSR is not supported); got {x.dim()}-D"
        )
    nz = lib.nonzero(x != 0)
    rows, cols = nz[:, 0].contiguous(), nz[:, 1].contiguous()
    crow = crow_from_rows(rows, x.shape[0])
    return csr(crow, cols, x[rows, cols], tuple(x.shape))


def coo_to_csr(s):
    """COO -> CSR of a 2-D tensor (coalescing first)."""
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(
            "to_sparse_csr: expected a 2-D COO tensor without dense dims; got sparse_dim "
            f"{s.sparse_dim()} and dense_dim {s.dense_dim()}"
        )
    c = coalesce(s)
    rows = c._indices_arr[0].contiguous()
    crow = crow_from_rows(rows, s._size[0])
    return csr(crow, c._indices_arr[1].contiguous(), _values_of(c), s._size)


def csr_to_coo(s):
    """CSR -> coalesced COO (CSR's entries are already in row-major order)."""
    lib = _lib()
    idx = lib.stack([csr_rows(s), s._col])
    return coo(idx, _values_of(s), s._size, _cols_sorted(s))


def _cols_sorted(s):
    if s._nnz() < 2:
        return True
    rows = csr_rows(s)
    lin = rows * max(s._size[1], 1) + s._col
    return builtins.bool((lin[1:] > lin[:-1]).all())


# --- printing -------------------------------------------------------------------------------


def _plain_str(t, indent):
    """t printed as `tensor(...)` without dtype or autograd suffixes, starting at column indent."""
    from .._tensor_str import _add_suffixes, _tensor_str
    from ..autograd.grad_mode import no_grad

    with no_grad():
        t = t.detach()
        if t.numel() == 0:
            return _add_suffixes("tensor([]", ["size=" + str(tuple(t.shape))], indent + 7)
        return "tensor(" + _tensor_str(t, indent + 7) + ")"


def sparse_str(s):
    """torch's printing of a sparse tensor: its arrays, then size, nnz, dtype and layout."""
    from .._tensor_str import _add_suffixes

    lib = _lib()
    indent = len("tensor(")
    vals = _values_of(s)
    if s._layout is sparse_coo:
        head = "tensor(indices=" + _plain_str(s._indices_arr, len("tensor(indices=")) + ",\n"
        body = head + " " * indent + "values=" + _plain_str(vals, indent + 7) + ",\n" + " " * indent
        suffixes = [f"size={tuple(s._size)}", f"nnz={s._nnz()}"]
    else:
        body = "tensor(crow_indices=" + _plain_str(s._crow, len("tensor(crow_indices=")) + ",\n"
        body += (
            " " * indent + "col_indices=" + _plain_str(s._col, indent + len("col_indices=")) + ",\n"
        )
        body += " " * indent + "values=" + _plain_str(vals, indent + 7)
        suffixes = [f"size={tuple(s._size)}", f"nnz={s._nnz()}"]
    default = lib.get_default_dtype()
    if vals.dtype not in (default, lib.int64, lib.bool):
        suffixes.append("dtype=" + repr(vals.dtype))
    suffixes.append("layout=" + repr(s._layout))
    if vals.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(vals.grad_fn).__name__}>")
    elif vals.requires_grad:
        suffixes.append("requires_grad=True")
    if s._layout is sparse_coo:
        # torch starts the size line afresh after the values
        return _add_suffixes(body + suffixes[0], suffixes[1:], indent)
    return _add_suffixes(body, suffixes, indent)
