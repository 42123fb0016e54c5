"""Indexing and scattering: where, gathers along a dim, sorted-sequence search, membership, index
and mask copies, the *_scatter ops."""

import builtins

from .. import _C
from .._autocast_policy import promote as _autocast_promote
from .._C import Tensor, broadcast_shapes, from_numpy, int64
from . import _names
from .creation import tensor

__all__ = [
    "where",
    "take_along_dim",
    "searchsorted",
    "bucketize",
    "isin",
    "index_copy",
    "masked_scatter",
    "put",
    "diagonal_scatter",
    "select_scatter",
    "slice_scatter",
]


def where(condition, input=None, other=None):
    """where(condition, input, other) -> Tensor

    Elements of input where condition holds and of other elsewhere; with only condition, its
    nonzero indices."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return _C._where(condition, input, other)


def take_along_dim(input, indices, dim=None):
    """take_along_dim(input, indices, dim=None) -> Tensor

    Picks values of input at indices along dim (over the flattened input when dim is None)."""
    if indices.dtype != int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {indices.dtype}"
        )
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.dim()} dimensions for input, and {indices.dim()} "
            "dimensions for indices"
        )
    rank = builtins.max(input.dim(), 1)
    if not -rank <= dim < rank:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got "
            f"{dim})"
        )
    dim %= rank
    shape_i = list(input.shape)
    shape_x = list(indices.shape)
    shape_i[dim] = shape_x[dim] = 1
    batch = broadcast_shapes(shape_i, shape_x)
    out_i = list(batch)
    out_i[dim] = input.shape[dim]
    out_x = list(batch)
    out_x[dim] = indices.shape[dim]
    return input.expand(out_i).gather(dim, indices.expand(out_x))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
        sorter=None) -> Tensor

    For each value, the index where it would be inserted to keep sorted_sequence sorted."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got "
                "side of left while right was True"
            )
        right = side == "right"
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    values = tensor(input, dtype=seq.dtype) if scalar else input
    if seq.dtype == values.dtype == _C.bool and values.numel():  # the kernel's common dtype
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    if seq.dim() > 1 and list(seq.shape[:-1]) != list(values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the "
            "first N-1 dimensions of boundaries tensor and input value tensor must "
            f"match, but we got boundaries tensor {list(seq.shape)} and input value "
            f"tensor {list(values.shape)}"
        )
    counts = _bisect(seq, values, right)
    return counts.int() if out_int32 else counts


def _bisect(seq, values, right):
    """torch's CPU bisection for each value: the lower bound moves past `mid` while
    `not seq[mid] >= v` (`not seq[mid] > v` for the right side). A NaN compares false, so the
    probe order decides where a NaN in the sequence sends a value, as in torch: the same steps
    on every value at once, about log2(n) rounds."""
    n = seq.shape[-1]
    lo = values.new_zeros(values.shape, dtype=int64)
    hi = lo + n
    for _ in range(n.bit_length() + 1 if n else 0):
        active = lo < hi
        mid = ((lo + hi) // 2).clamp_(max=n - 1)
        at = seq.take(mid) if seq.dim() == 1 else seq.gather(-1, mid)
        past = ~((at > values) if right else (at >= values)) & active
        lo = where(past, mid + 1, lo)
        hi = where(active & ~past, mid, hi)
    return lo


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """bucketize(input, boundaries, *, out_int32=False, right=False) -> Tensor

    For each element of input, the index of the bucket of boundaries it falls in."""
    if boundaries.dim() != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor

    A bool tensor that is True where an element of elements occurs in test_elements."""
    if not isinstance(elements, Tensor):
        elements = tensor(elements, dtype=test_elements.dtype)
    if not isinstance(test_elements, Tensor):
        test_elements = tensor(test_elements, dtype=elements.dtype)
    hit = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~hit if invert else hit


@_autocast_promote
def index_copy(input, dim, index, source):
    """index_copy(input, dim, index, source) -> Tensor

    A copy of input with the slices at index along dim replaced by source."""
    if index.dtype != int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {index.dtype}"
        )
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    if source.dtype != input.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{input.dtype} and (source) {source.dtype}"
        )
    flat = input.reshape(1) if input.dim() == 0 else input
    dim = dim + flat.dim() if dim < 0 else dim
    if not 0 <= dim < flat.dim():
        raise IndexError(
            f"index_copy_(): dim {dim} out of range for a tensor of {input.dim()} dimensions"
        )
    src = source.reshape(1) if source.dim() == 0 else source
    if src.dim() != flat.dim() or src.size(dim) != index.numel():
        raise RuntimeError(
            f"index_copy_(): source {tuple(source.shape)} must match self {tuple(input.shape)} "
            f"apart from dim {dim}, and have {index.numel()} (the number of indices) there"
        )
    out = flat.clone()
    out[(slice(None),) * dim + (index.reshape(-1),)] = src
    return out.reshape(input.shape)


def masked_scatter(input, mask, source):
    """masked_scatter(input, mask, source) -> Tensor

    A copy of input whose positions where mask holds take consecutive values of source."""
    if mask.dtype != _C.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"masked_scatter_: expected self and source to have same dtypes but got "
            f"{input.dtype} and {source.dtype}"
        )
    m = mask
    if mask.shape != input.shape:  # the out-of-place form broadcasts both, as torch's
        m, input = _C.broadcast_tensors(mask, input)
    flat = m.reshape(-1)
    pos = (flat.long().cumsum(0) - 1).clamp(min=0)
    if builtins.bool(flat.any()) and pos[-1].item() >= source.numel():
        raise RuntimeError(
            "masked_scatter: expected source to have at least as many elements as ones in mask"
        )
    if source.numel() == 0:
        return input.clone()
    picked = source.reshape(-1).gather(0, pos).reshape(input.shape)
    return where(m, picked, input)


def put(input, index, source, accumulate=False):
    """put(input, index, source, accumulate=False) -> Tensor

    A copy of input with the elements at flat indices index set (or added) from source."""
    flat = input.reshape(-1)
    idx = index.reshape(-1)
    idx = where(idx < 0, idx + flat.numel(), idx)
    out = flat.index_put((idx,), source.reshape(-1).to(input.dtype), accumulate)
    return out.reshape(input.shape)


def _scatter_into(input, src, view_fn, op):
    out = input.clone()
    view = view_fn(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(
            f"{op}: expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )
    view.copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor

    A copy of input with its diagonal (offset, dim1, dim2) replaced by src."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal_scatter")


def select_scatter(input, src, dim, index):
    """select_scatter(input, src, dim, index) -> Tensor

    A copy of input with its slice input.select(dim, index) replaced by src."""
    return _scatter_into(input, src, lambda t: t.select(dim, index), "select_scatter")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor

    A copy of input with the slice start:end:step along dim replaced by src."""
    key = (slice(None),) * (dim % input.dim()) + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[key], "slice_scatter")


def _fill_diagonal_(self, fill_value, wrap=False):
    """fill_diagonal_(fill_value, wrap=False) -> Tensor

    Writes fill_value on the main diagonal in place; with wrap=True a tall matrix's diagonal
    starts again below each square block."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    import numpy as np

    rows, cols = self.shape[0], self.shape[1]
    mask = np.zeros(tuple(self.shape), dtype=bool)
    if self.dim() > 2:
        idx = np.arange(rows)
        mask[(idx,) * self.dim()] = True
    else:
        # Tall matrices wrap after every cols + 1 rows when asked, as torch (and numpy).
        step = cols + 1
        flat = mask.reshape(-1)
        end = rows * cols if wrap else min(rows, cols) * cols
        flat[0:end:step] = True
    return self.masked_fill_(from_numpy(mask), fill_value)


# ---- torch's grad_fn names (see _names.py) ----

masked_scatter = _names.named(masked_scatter, "MaskedScatterBackward0")
put = _names.named(put, "PutBackward0")
