"""torch's shape, indexing and construction helpers, composed from existing ops."""

import builtins
import functools
import itertools
import math
import operator

import ember as E  # the package being initialised; attributes are read at call time
from ._C import Tensor

__all__ = [
    "diff",
    "cross",
    "kron",
    "rot90",
    "tensordot",
    "take_along_dim",
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
    "searchsorted",
    "bucketize",
    "isin",
    "unique_consecutive",
    "tril_indices",
    "triu_indices",
    "cartesian_prod",
    "combinations",
    "block_diag",
    "diag_embed",
    "diagflat",
    "vander",
    "unravel_index",
    "index_copy",
    "masked_scatter",
    "empty_strided",
    "put",
    "chain_matmul",
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    parts = [p if p.dim() else p.expand([1]) for p in (prepend,) if p is not None]
    parts += [input] + [a if a.dim() else a.expand([1]) for a in (append,) if a is not None]
    x = E.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        hi, lo = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = hi != lo if x.dtype == E.bool else hi - lo
    return x


def cross(input, other, dim=None):
    a, b = E.broadcast_tensors(input, other)
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
    return E.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def kron(input, other):
    nd = builtins.max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    # Interleave: a's axis i with b's axis i, so each a element scales a whole copy of b.
    ai = a.reshape([s for d in a.shape for s in (d, 1)])
    bi = b.reshape([s for d in b.shape for s in (1, d)])
    return (ai * bi).reshape([x * y for x, y in zip(a.shape, b.shape)])


def rot90(input, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims[0] % input.dim(), dims[1] % input.dim()
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


def tensordot(a, b, dims=2, out=None):
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
    da = [d % a.dim() for d in da]
    db = [d % b.dim() for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size "
                f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in dim {y}"
            )
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    am = a.permute(fa + da).reshape(-1, k)
    bm = b.permute(db + fb).reshape(k, -1)
    return E.mm(am, bm).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


def take_along_dim(input, indices, dim=None):
    if indices.dtype != E.int64:
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
    batch = E.broadcast_shapes(shape_i, shape_x)
    out_i = list(batch)
    out_i[dim] = input.shape[dim]
    out_x = list(batch)
    out_x[dim] = indices.shape[dim]
    return input.expand(out_i).gather(dim, indices.expand(out_x))


def tensor_split(input, indices_or_sections, dim=0):
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype != E.int64:
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
        start = stop
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
    return _split_dim("hsplit", input, indices_or_sections, 0 if input.dim() == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    return _split_dim("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _split_dim("dsplit", input, indices_or_sections, 2, 3)


def _atleast(shape_fn, tensors):
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
        return tuple(shape_fn(t) for t in tensors)
    if len(tensors) == 1:
        return shape_fn(tensors[0])
    return tuple(shape_fn(t) for t in tensors)


def atleast_1d(*tensors):
    return _atleast(lambda t: t.reshape(1) if t.dim() == 0 else t, tensors)


def atleast_2d(*tensors):
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
    return _atleast(_3d, tensors)


def column_stack(tensors):
    return E.hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


def dstack(tensors):
    return E.cat([_3d(t) for t in tensors], 2)


def ravel(input):
    return input.reshape(-1)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
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
    values = E.tensor(input, dtype=seq.dtype) if scalar else input
    if seq.dim() > 1 and list(seq.shape[:-1]) != list(values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the "
            "first N-1 dimensions of boundaries tensor and input value tensor must "
            f"match, but we got boundaries tensor {list(seq.shape)} and input value "
            f"tensor {list(values.shape)}"
        )
    cmp = operator.le if right else operator.lt
    if seq.dtype.is_floating_point or values.dtype.is_floating_point:
        # torch orders NaN after every number.
        base = cmp

        def cmp(a, b):
            return base(a, b) | (E.isnan(b) & (~E.isnan(a) | right))

    if seq.dim() == 1:
        counts = cmp(seq, values.unsqueeze(-1)).sum(-1)
    else:
        counts = cmp(seq.unsqueeze(-2), values.unsqueeze(-1)).sum(-1)
    return counts.int() if out_int32 else counts


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not isinstance(elements, Tensor):
        elements = E.tensor(elements, dtype=test_elements.dtype)
    if not isinstance(test_elements, Tensor):
        test_elements = E.tensor(test_elements, dtype=elements.dtype)
    hit = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~hit if invert else hit


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    x = input.reshape(-1) if dim is None else input.movedim(dim, 0)
    n = x.shape[0]
    if n == 0:
        values, starts = x, E.zeros(0, dtype=E.int64)
    else:
        change = x[1:] != x[:-1]
        if x.dim() > 1:
            change = change.reshape(n - 1, -1).any(1)
        starts = E.cat([E.zeros(1, dtype=E.bool), change]).nonzero().reshape(-1)
        starts = E.cat([E.zeros(1, dtype=E.int64), starts])
        values = x.index_select(0, starts)
    values = values if dim is None else values.movedim(0, dim)
    out = [values]
    if return_inverse:
        group = E.zeros(n, dtype=E.int64)
        if n:
            group = E.cat([E.zeros(1, dtype=E.int64), change.long()]).cumsum(0)
        out.append(group.reshape(input.shape) if dim is None else group)
    if return_counts:
        out.append(E.diff(starts, append=E.tensor([n])) if n else E.zeros(0, dtype=E.int64))
    return out[0] if len(out) == 1 else tuple(out)


def _tri_indices(row, col, offset, dtype, upper):
    keep = (lambda r, c: c - r >= offset) if upper else (lambda r, c: c - r <= offset)
    pairs = [(r, c) for r in range(row) for c in range(col) if keep(r, c)]
    rows = [p[0] for p in pairs]
    cols = [p[1] for p in pairs]
    return E.tensor([rows, cols], dtype=dtype).reshape(2, len(pairs))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, dtype or E.int64, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, dtype or E.int64, True)


def cartesian_prod(*tensors):
    if len(tensors) == 1:
        return tensors[0]
    grids = E.meshgrid(*tensors, indexing="ij")
    return E.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return E.empty(0, dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(pick(range(input.shape[0]), r))
    if not idx:
        return E.empty(0, r, dtype=input.dtype)
    return input.index_select(0, E.tensor(idx).reshape(-1)).reshape(len(idx), r)


def block_diag(*tensors):
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                f"Input {i} has {t.dim()} dimensions"
            )
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return E.empty(1, 0)
    dtype = functools.reduce(E.promote_types, [m.dtype for m in mats])
    width = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        h, w = m.shape
        pieces = [
            E.zeros(h, left, dtype=dtype),
            m.to(dtype),
            E.zeros(h, width - left - w, dtype=dtype),
        ]
        rows.append(E.cat(pieces, 1))
        left += w
    return E.cat(rows, 0)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    nd = input.dim() + 1
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.dim() else 1
    x = input if input.dim() else input.reshape(1)
    m = x.unsqueeze(-1) * E.eye(n, dtype=x.dtype)
    k = builtins.abs(offset)
    if k:
        lead = list(m.shape[:-2])
        m = E.cat([m, E.zeros(lead + [n, k], dtype=m.dtype)], -1)
        m = E.cat([E.zeros(lead + [k, n + k], dtype=m.dtype), m], -2)
        if offset > 0:  # the padding put the diagonal below; offsets above are its transpose
            m = m.mT
    return m.movedim([-2, -1], [d1, d2])


def diagflat(input, offset=0):
    return diag_embed(input.reshape(-1), offset)


def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    base = x.long() if not x.dtype.is_floating_point else x
    if n == 0:
        return E.empty(x.shape[0], 0, dtype=base.dtype)
    cols = E.cat(
        [E.ones(x.shape[0], 1, dtype=base.dtype), base.unsqueeze(1).expand(x.shape[0], n - 1)], 1
    ).cumprod(1)
    return cols if increasing else cols.flip([1])


def unravel_index(indices, shape):
    if not isinstance(indices, Tensor):
        indices = E.tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype == E.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    total = math.prod(shape)
    if builtins.bool(((indices < -total) | (indices >= total)).any()):
        raise ValueError(
            "'indices' must be in range [-%d, %d), but got %s" % (total, total, indices)
        )
    rem = E.where(indices < 0, indices + total, indices).long()
    out = []
    for s in reversed(shape):
        out.append(rem % s)
        rem = rem // s
    return tuple(reversed(out))


def index_copy(input, dim, index, source):
    if index.dtype != E.int64:
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
    if mask.dtype != E.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"masked_scatter_: expected self and source to have same dtypes but got "
            f"{input.dtype} and {source.dtype}"
        )
    m = mask.expand_as(input) if mask.shape != input.shape else mask
    flat = m.reshape(-1)
    pos = (flat.long().cumsum(0) - 1).clamp(min=0)
    if builtins.bool(flat.any()) and pos[-1].item() >= source.numel():
        raise RuntimeError(
            "masked_scatter: expected source to have at least as many elements as ones in mask"
        )
    if source.numel() == 0:
        return input.clone()
    picked = source.reshape(-1).gather(0, pos).reshape(input.shape)
    return E.where(m, picked, input)


def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
):
    extent = (
        1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if builtins.all(size) else 0
    )
    base = E.empty(extent, dtype=dtype)
    out = base.as_strided(list(size), list(stride))
    return out.requires_grad_(True) if requires_grad else out


def put(input, index, source, accumulate=False):
    flat = input.reshape(-1)
    idx = index.reshape(-1)
    idx = E.where(idx < 0, idx + flat.numel(), idx)
    out = flat.index_put((idx,), source.reshape(-1).to(input.dtype), accumulate)
    return out.reshape(input.shape)


def chain_matmul(*matrices):
    out = matrices[0]
    for m in matrices[1:]:
        out = E.mm(out, m)
    return out


def _window(name, n, periodic, dtype, fn):
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dtype = dtype or E.get_default_dtype()
    if n <= 1:
        return E.ones(n, dtype=dtype)
    denom = n if periodic else n - 1
    k = E.arange(n, dtype=E.float64)
    return fn(k, denom).to(dtype)


def hann_window(window_length, periodic=True, *, dtype=None, **_):
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: 0.5 - 0.5 * E.cos(2 * math.pi * k / d),
    )


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, **_):
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: alpha - beta * E.cos(2 * math.pi * k / d),
    )


def blackman_window(window_length, periodic=True, *, dtype=None, **_):
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: 0.42 - 0.5 * E.cos(2 * math.pi * k / d) + 0.08 * E.cos(4 * math.pi * k / d),
    )


def bartlett_window(window_length, periodic=True, *, dtype=None, **_):
    return _window(
        "bartlett_window", window_length, periodic, dtype, lambda k, d: 1 - (2 * k / d - 1).abs()
    )


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, **_):
    def kaiser(k, d):
        r = 2 * k / d - 1
        return E.i0(beta * E.sqrt((1 - r * r).clamp(min=0))) / E.i0(
            E.tensor(float(beta), dtype=E.float64)
        )

    return _window("kaiser_window", window_length, periodic, dtype, kaiser)
