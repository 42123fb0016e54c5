"""torch.sparse's constructions by a sparsity pattern: sampled_addmm (a dense product read only
at a CSR tensor's entries) and spdiags (a matrix from diagonals). Values come from dense ops
(index_select, indexing), so gradients reach the dense operands and the input's values."""

import builtins

from . import _tensor as st
from ._tensor import SparseTensor


def _lib():
    import ember

    return ember


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """sampled_addmm(input, mat1, mat2, *, beta=1., alpha=1., out=None) -> Tensor

    beta * input + alpha * (mat1 @ mat2), computed only at input's entries (a CSR result with
    input's pattern)."""
    lib = _lib()
    if not isinstance(input, SparseTensor) or input.layout is not st.sparse_csr:
        layout = input.layout if isinstance(input, lib.Tensor) else type(input).__name__
        raise NotImplementedError(
            f"sampled_addmm: expected input of layout torch.sparse_csr; got {layout}"
        )
    if out is not None:
        raise NotImplementedError("sampled_addmm: out= is not supported")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(m, lib.Tensor) or isinstance(m, SparseTensor) or m.dim() != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a strided 2-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
            f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    if (mat1.shape[0], mat2.shape[1]) != tuple(input.shape):
        raise RuntimeError(
            f"sampled_addmm: Expected input to have shape [{mat1.shape[0]}, {mat2.shape[1]}], "
            f"but got {list(input.shape)}"
        )
    rows, cols = st.csr_rows(input), input._col
    picked = (mat1.index_select(0, rows) * mat2.index_select(1, cols).t()).sum(-1)
    values = st._values_of(input)
    values = beta * values + alpha * picked if beta != 0 else alpha * picked
    return st.csr(input._crow, cols, values, input.shape)


def spdiags(diagonals, offsets, shape, layout=None):
    """spdiags(diagonals, offsets, shape, layout=None) -> Tensor

    A sparse matrix of `shape` whose diagonal offsets[i] holds diagonals[i]: element
    diagonals[i, j] lands at (j - offsets[i], j), as scipy.sparse.spdiags."""
    lib = _lib()
    if layout is None:
        layout = st.sparse_coo
    if layout not in (st.sparse_coo, st.sparse_csr):
        name = "".join(w.capitalize() for w in str(layout).rsplit(".", 1)[-1].split("_"))
        raise RuntimeError(
            f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got {name}"
        )
    if diagonals.dim() == 1:
        diagonals = diagonals.unsqueeze(0)
    if diagonals.dim() != 2 or offsets.dim() != 1:
        raise RuntimeError("Diagonals must be vector or matrix, and offsets a vector")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    if diagonals.shape[0] != offsets.shape[0]:
        raise RuntimeError(
            f"Number of diagonals ({diagonals.shape[0]}) does not match the number of offsets "
            f"({offsets.shape[0]})"
        )
    offs = [builtins.int(o) for o in offsets.tolist()]
    if len(set(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    nrows, ncols = (builtins.int(s) for s in shape)
    which, rows, cols = [], [], []
    for i, off in enumerate(offs):
        for j in range(builtins.max(off, 0), builtins.min(diagonals.shape[1], ncols, nrows + off)):
            which.append(i)
            rows.append(j - off)
            cols.append(j)
    which, cols_t = lib.tensor(which, dtype=lib.int64), lib.tensor(cols, dtype=lib.int64)
    values = diagonals[which, cols_t]
    result = st.coo(lib.tensor([rows, cols], dtype=lib.int64).reshape(2, -1), values, shape)
    return st.coo_to_csr(result) if layout is st.sparse_csr else result
