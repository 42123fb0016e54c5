"""Shape and layout: splits, stacks, rotations, at-least-n-d views, diagonals, products of index
sets."""

import builtins
import functools
import itertools
import math

from .. import _C
from .._C import Tensor, cat, hstack, int64, meshgrid, promote_types, stack
from . import _names
from .creation import empty, eye, tensor, zeros
from .index import where

__all__ = [
    "diff",
    "rot90",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "column_stack",
    "dstack",
    "ravel",
    "cartesian_prod",
    "combinations",
    "block_diag",
    "diag_embed",
    "diagflat",
    "unravel_index",
]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor

    The n-th forward difference along dim, after prepend and append are concatenated."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    parts = [p if p.dim() else p.expand([1]) for p in (prepend,) if p is not None]
    parts += [input] + [a if a.dim() else a.expand([1]) for a in (append,) if a is not None]
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        hi, lo = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = hi != lo if x.dtype == _C.bool else hi - lo
    return x


def rot90(input, k=1, dims=(0, 1)):
    """rot90(input, k=1, dims=(0, 1)) -> Tensor

    input rotated by k quarter turns in the plane of dims (from the first towards the second)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    n = input.dim()
    for d in dims:  # both dims range-checked before they are compared, as torch's
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
    d0, d1 = dims[0] % n, dims[1] % n
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def tensor_split(input, indices_or_sections, dim=0):
    """tensor_split(input, indices_or_sections, dim=0) -> List of Tensors

    Views of input along dim: a number of nearly equal parts, or cut at the given indices."""
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype != int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have int64 dtype"
            )
        ios = ios.item() if ios.dim() == 0 else ios.tolist()
    size = input.shape[dim]
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(size, ios)
        bounds = list(itertools.accumulate([q + 1] * r + [q] * (ios - r)))[:-1]
    else:
        bounds = list(ios)
    out, start = [], 0
    for b in bounds + [size]:
        b = builtins.min(builtins.max(b if b >= 0 else b + size, 0), size)
        stop = builtins.max(b, start)
        out.append(input.narrow(dim, start, stop - start))
        start = b  # the next piece starts at this index even when it went back ([3, 1])
    return tuple(out)


def _split_dim(name, input, ios, dim, min_dims):
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, "
            f"but got a tensor with {input.dim()} dimensions!"
        )
    if isinstance(ios, int) and (ios == 0 or input.shape[dim] % ios):
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of "
            f"the dimension {input.shape[dim]} is not divisible by the split_size "
            f"{ios}!"
        )
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections):
    """hsplit(input, indices_or_sections) -> List of Tensors

    tensor_split along the second dimension (the first for 1-D input)."""
    return _split_dim("hsplit", input, indices_or_sections, 0 if input.dim() == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    """vsplit(input, indices_or_sections) -> List of Tensors

    tensor_split along the first dimension of an input with at least two."""
    return _split_dim("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """dsplit(input, indices_or_sections) -> List of Tensors

    tensor_split along the third dimension of an input with at least three."""
    return _split_dim("dsplit", input, indices_or_sections, 2, 3)


def _atleast(shape_fn, tensors):
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
        return tuple(shape_fn(t) for t in tensors)
    if len(tensors) == 1:
        return shape_fn(tensors[0])
    return tuple(shape_fn(t) for t in tensors)


def atleast_1d(*tensors):
    """atleast_1d(*tensors) -> Tensor or tuple of Tensors

    Each input viewed with at least one dimension."""
    return _atleast(lambda t: t.reshape(1) if t.dim() == 0 else t, tensors)


def atleast_2d(*tensors):
    """atleast_2d(*tensors) -> Tensor or tuple of Tensors

    Each input viewed with at least two dimensions."""
    return _atleast(
        lambda t: t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t,
        tensors,
    )


def _3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.reshape(1, -1, 1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_3d(*tensors):
    """atleast_3d(*tensors) -> Tensor or tuple of Tensors

    Each input viewed with at least three dimensions."""
    return _atleast(_3d, tensors)


def column_stack(tensors):
    """column_stack(tensors) -> Tensor

    Stacks tensors as columns: 1-D and 0-d inputs become columns, then hstack."""
    return hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


def dstack(tensors):
    """dstack(tensors) -> Tensor

    Concatenates tensors along the third dimension after making each at least 3-D."""
    return cat([_3d(t) for t in tensors], 2)


def ravel(input):
    """ravel(input) -> Tensor

    input flattened to one dimension (a view when possible)."""
    return input.reshape(-1)


def cartesian_prod(*tensors):
    """cartesian_prod(*tensors) -> Tensor

    The Cartesian product of 1-D tensors, one row per combination."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> seq

    The r-element combinations of the elements of a 1-D tensor, one per row."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(pick(range(input.shape[0]), r))
    if not idx:
        return empty(0, r, dtype=input.dtype)
    return input.index_select(0, tensor(idx).reshape(-1)).reshape(len(idx), r)


def block_diag(*tensors):
    """block_diag(*tensors) -> Tensor

    A block-diagonal matrix with the given tensors as its blocks."""
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                f"Input {i} has {t.dim()} dimensions"
            )
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return empty(1, 0)
    dtype = functools.reduce(promote_types, [m.dtype for m in mats])
    width = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        h, w = m.shape
        pieces = [
            zeros(h, left, dtype=dtype),
            m.to(dtype),
            zeros(h, width - left - w, dtype=dtype),
        ]
        rows.append(cat(pieces, 1))
        left += w
    return cat(rows, 0)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor

    Tensors whose (offset) diagonals in the planes dim1 x dim2 hold the last dim of input."""
    nd = input.dim() + 1
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.dim() else 1
    x = input if input.dim() else input.reshape(1)
    # selected, not multiplied by the identity: off-diagonal zeros stay +0 (and 0, not NaN, next
    # to an infinity), as torch's zeros with the diagonal written in
    m = where(eye(n, dtype=_C.bool), x.unsqueeze(-1), zeros([], dtype=x.dtype))
    k = builtins.abs(offset)
    if k:
        lead = list(m.shape[:-2])
        m = cat([m, zeros(lead + [n, k], dtype=m.dtype)], -1)
        m = cat([zeros(lead + [k, n + k], dtype=m.dtype), m], -2)
        if offset > 0:  # the padding put the diagonal below; offsets above are its transpose
            m = m.mT
    return m.movedim([-2, -1], [d1, d2])


def diagflat(input, offset=0):
    """diagflat(input, offset=0) -> Tensor

    A 2-D tensor with the flattened input on its offset diagonal."""
    return diag_embed(input.reshape(-1), offset)


def unravel_index(indices, shape):
    """unravel_index(indices, shape) -> tuple of Tensors

    Converts flat indices into coordinate tensors for a tensor of the given shape."""
    if not isinstance(indices, Tensor):
        indices = tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    total = math.prod(shape)
    if builtins.bool(((indices < -total) | (indices >= total)).any()):
        raise ValueError(
            "'indices' must be in range [-%d, %d), but got %s" % (total, total, indices)
        )
    rem = where(indices < 0, indices + total, indices).long()
    out = []
    for s in reversed(shape):
        out.append(rem % s)
        rem = rem // s
    return tuple(reversed(out))


# --- method forms (installed by _tensor_methods) -----------------------------------------


def tril_(self, diagonal=0):
    """tril_(diagonal=0) -> Tensor

    In-place form of tril()."""
    return self.copy_(self.tril(diagonal))


def triu_(self, diagonal=0):
    """triu_(diagonal=0) -> Tensor

    In-place form of triu()."""
    return self.copy_(self.triu(diagonal))


def _geometry(view_fn):
    def method(self, *args):
        return _C._set_geometry_(self, view_fn(self, *args))

    return method


# ---- torch's grad_fn names (see _names.py) ----

rot90 = _names.named(rot90, "Rot90Backward0")
block_diag = _names.named(block_diag, "BlockDiagBackward0")
diag_embed = _names.named(diag_embed, "DiagEmbedBackward0")
diagflat = _names.named(diagflat, "DiagEmbedBackward0")
