"""Shape operations on sparse COO tensors (cat, stack, unsqueeze, index_select) and the sparse
layouts of the zeros/empty factories. Each builds the result's indices and takes its values
from the operands' values through differentiable dense ops, so gradients reach the values as
torch's do. CSR operands go through COO and back."""

import builtins

from . import _tensor as st
from ._tensor import SparseTensor


def _lib():
    import ember

    return ember


def _as_coo(s):
    if s._layout is st.sparse_csr:
        return st.csr_to_coo(s)
    return s


def _values(s):
    return st._values_of(s)


def _dims(s):
    return s._indices_arr.shape[0], len(s._size) - s._indices_arr.shape[0]


def cat(tensors, dim=0, *, out=None):
    """cat(tensors, dim=0) -> Tensor

    The sparse operands concatenated along dim (torch's sparse cat: indices offset along a sparse
    dim; along a dense dim each operand's values padded with zeros)."""
    lib = _lib()
    tensors = list(tensors)
    if out is not None:
        raise NotImplementedError("cat: out= is not supported for sparse tensors")
    for k, t in enumerate(tensors):
        if not isinstance(t, SparseTensor):
            raise RuntimeError(
                f"Concatenating sparse tensors, but a dense tensor was found at position {k}."
            )
    csr = builtins.all(t._layout is st.sparse_csr for t in tensors)
    parts = [_as_coo(t) for t in tensors]
    first = parts[0]
    n = len(first._size)
    d = st._wrap_dim(dim, n, "cat")
    sparse_dim, dense_dim = _dims(first)
    for k, t in enumerate(parts):
        if _dims(t) != (sparse_dim, dense_dim):
            raise RuntimeError(
                "All tensors must have the same sparse_dim and dense_dim: "
                f"{sparse_dim}, {dense_dim}, but tensor at position {k} has "
                f"{_dims(t)[0]}, {_dims(t)[1]}."
            )
        for j in range(n):
            if j != d and t._size[j] != first._size[j]:
                raise RuntimeError(
                    f"All tensors must have the same shape: {list(first._size)} (except in the "
                    f"concatenating dimension), but found shape: {list(t._size)} at position {k}."
                )
    size = list(first._size)
    size[d] = builtins.sum(t._size[d] for t in parts)
    if d < sparse_dim:
        idx, offset = [], 0
        for t in parts:
            i = t._indices_arr.clone()
            i[d] += offset
            offset += t._size[d]
            idx.append(i)
        values = lib.cat([_values(t) for t in parts], 0)
    else:
        vd, before = d - sparse_dim + 1, 0
        idx, vals = [], []
        for t in parts:
            v = _values(t)
            after = size[d] - before - t._size[d]
            pad = [0, 0] * (v.dim() - 1 - vd) + [before, after]
            vals.append(lib.nn.functional.pad(v, pad))
            idx.append(t._indices_arr)
            before += t._size[d]
        values = lib.cat(vals, 0)
    result = st.coo(lib.cat(idx, 1), values, size)
    return st.coo_to_csr(result) if csr and n == 2 else result


def stack(tensors, dim=0, *, out=None):
    """stack(tensors, dim=0) -> Tensor

    The sparse operands stacked along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack expects a non-empty TensorList")
    n = len(tensors[0].shape) + 1
    d = st._wrap_dim(dim, n, "stack")
    return cat([unsqueeze(t, d) if isinstance(t, SparseTensor) else t for t in tensors], d, out=out)


def unsqueeze(s, dim):
    """unsqueeze(dim) -> Tensor

    The sparse tensor with a size-1 dim inserted (sparse if before the dense dims)."""
    lib = _lib()
    s = _as_coo(s)
    n = len(s._size)
    d = st._wrap_dim(dim, n + 1, "unsqueeze")
    sparse_dim, _ = _dims(s)
    size = list(s._size)
    size.insert(d, 1)
    if d <= sparse_dim:
        i = s._indices_arr
        zero = lib.zeros(1, i.shape[1], dtype=i.dtype)
        idx = lib.cat([i[:d], zero, i[d:]], 0)
        return st.coo(idx, _values(s), size, s._coalesced)
    return st.coo(s._indices_arr, _values(s).unsqueeze(d - sparse_dim + 1), size, s._coalesced)


def index_select(s, dim, index):
    """index_select(dim, index) -> Tensor

    The slices of the sparse tensor at index along dim (repeats allowed)."""
    lib = _lib()
    if (
        not isinstance(index, lib.Tensor)
        or isinstance(index, SparseTensor)
        or index.dtype not in (lib.int64, lib.int32)
        or index.dim() > 1
    ):
        raise IndexError(
            "index_select() argument index must be 1-D strided (non-sparse) long-tensor."
        )
    csr = s._layout is st.sparse_csr
    s = _as_coo(s)
    n = len(s._size)
    d = st._wrap_dim(dim, n, "index_select")
    index = index.reshape(-1).to(lib.int64)
    if index.numel():
        bad = index[(index < 0) | (index >= s._size[d])]
        if bad.numel():
            raise IndexError(
                f"index_select(): index contains {builtins.int(bad[0])} that is out of range "
                f"for tensor of size {list(s._size)} at dimension {d}"
            )
    size = list(s._size)
    size[d] = index.numel()
    sparse_dim, _ = _dims(s)
    if d < sparse_dim:
        i = s._indices_arr
        out_pos, src = (index[:, None] == i[d][None, :]).nonzero(as_tuple=True)
        idx = i.index_select(1, src).clone()
        idx[d] = out_pos
        result = st.coo(idx, _values(s).index_select(0, src), size)
    else:
        values = _values(s).index_select(d - sparse_dim + 1, index)
        result = st.coo(s._indices_arr, values, size, s._coalesced)
    return st.coo_to_csr(result) if csr else result


def empty_sparse(fn, layout, shape, dtype, requires_grad):
    """zeros/empty with layout=sparse_coo or sparse_csr: an all-zero sparse tensor of that shape
    (COO: every dim sparse; CSR: 2-D)."""
    lib = _lib()
    dtype = dtype if dtype is not None else lib.get_default_dtype()
    if layout is st.sparse_coo:
        idx = lib.zeros(len(shape), 0, dtype=lib.int64)
        out = st.coo(idx, lib.zeros(0, dtype=dtype), shape, coalesced=True)
    elif layout is st.sparse_csr:
        if len(shape) != 2:
            raise RuntimeError(
                f"torch.{fn}: Only batched sparse compressed (non-block) tensors are supported, "
                f"but got size {list(shape)}"
            )
        crow = lib.zeros(shape[0] + 1, dtype=lib.int64)
        col = lib.zeros(0, dtype=lib.int64)
        out = st.csr(crow, col, lib.zeros(0, dtype=dtype), shape)
    else:
        raise NotImplementedError(f"{fn}: layout {layout!r} is not supported")
    if requires_grad:
        out.requires_grad_(True)
    return out


def zeros_like(input, *, dtype=None, layout=None, requires_grad=False, **kwargs):
    """zeros_like(input, *, dtype=None, layout=None, ...) -> Tensor

    An all-zero sparse tensor of input's size and layout (empty_like's answer too: torch's
    sparse empty_like has no entries)."""
    layout = layout if layout is not None else input.layout
    if layout is not st.sparse_coo and layout is not st.sparse_csr:
        return _lib().zeros(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)
    return empty_sparse("zeros_like", layout, input.shape, dtype or input.dtype, requires_grad)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """norm(input, p='fro', dim=None, ...) -> Tensor

    The norm of all the sparse tensor's elements (its coalesced values; the zeros add
    nothing); a norm over dims raises, as torch's sparse norm takes none."""
    if dim is not None or out is not None:
        raise NotImplementedError("norm: a sparse tensor's norm is taken over all its elements")
    values = _values(st.coalesce(_as_coo(input)))
    return _lib().linalg.vector_norm(values, 2 if p == "fro" else p, dtype=dtype)
