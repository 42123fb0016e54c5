"""grouped_mm: the grouped matrix product of Mixture-of-Experts layers, as one product per
group over slices that `offs` marks (composed from matmul, so autograd needs nothing more)."""

from ... import _C
from ..._ops.creation import zeros

__all__ = ["grouped_mm"]

_FLOATS = (_C.float32, _C.bfloat16, _C.float16)
_NAMES = {_C.float32: "Float", _C.float64: "Double", _C.int32: "Int", _C.int64: "Long"}


def _bounds(offs):
    ends = [int(e) for e in offs.tolist()]
    return list(zip([0] + ends[:-1], ends))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None) -> Tensor

    One matrix product per group. 2-D mat_a with 3-D mat_b: rows offs[i-1]:offs[i] of mat_a
    times mat_b[i]; 3-D mat_a with 2-D mat_b: mat_a[i] times columns offs[i-1]:offs[i] of
    mat_b; both 2-D: the contraction dim is split by offs and the result stacks the groups;
    both 3-D: a batched product (offs must be None). Rows or columns past offs[-1] are zero
    (torch leaves them unset)."""
    if mat_a.dtype not in _FLOATS:
        name = _NAMES.get(mat_a.dtype, str(mat_a.dtype).rsplit(".", 1)[-1])
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got {name}")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if mat_a.dim() not in (2, 3) or mat_b.dim() not in (2, 3):
        raise RuntimeError(
            f"Multiplicands must be 2D or 3D but got mat_a.dim()={mat_a.dim()} and "
            f"mat_b.dim()={mat_b.dim()}"
        )
    a2, b2 = mat_a.dim() == 2, mat_b.dim() == 2
    if (offs is not None) != (a2 or b2):
        raise RuntimeError(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d"
        )
    if offs is not None and offs.dtype != _C.int32:
        raise RuntimeError("Offsets have to be int32")
    if not (a2 and b2) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if not a2 and not b2:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        return mat_a @ mat_b
    groups = _bounds(offs)
    if a2 and b2:
        return _C.stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in groups])
    if len(groups) != (mat_b.shape[0] if a2 else mat_a.shape[0]):
        raise RuntimeError("matrix batch sizes have to match")
    if a2:
        parts = [mat_a[s:e] @ mat_b[i] for i, (s, e) in enumerate(groups)]
        rest = mat_a.shape[0] - (groups[-1][1] if groups else 0)
        if rest > 0:
            parts.append(zeros(rest, mat_b.shape[-1], dtype=mat_a.dtype))
        return _C.cat(parts, 0)
    parts = [mat_a[i] @ mat_b[:, s:e] for i, (s, e) in enumerate(groups)]
    rest = mat_b.shape[1] - (groups[-1][1] if groups else 0)
    if rest > 0:
        parts.append(zeros(mat_a.shape[1], rest, dtype=mat_a.dtype))
    return _C.cat(parts, 1)
