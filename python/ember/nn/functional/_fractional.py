"""Fractional max pooling (Graham, "Fractional Max-Pooling", 2014), as torch's.

Each (batch, channel) plane draws one sample u in [0, 1) per spatial dimension (or takes it from
`_random_samples`, shape (N, C, dims)); window i of a dimension starts at
floor((i + u) * alpha) - floor(u * alpha), alpha = (input - pool) / (output - 1), and the last
window starts at input - pool. The arithmetic is done in the input's dtype, as torch's kernel
does it, so equal samples give torch's windows. The pooling is a gather of each window's
elements and a max over them, which makes it differentiable; indices are flat positions within
each plane, as torch's."""

from ..._autocast_policy import fp32 as _autocast_fp32
from ..._ops.creation import from_numpy
from ..._ops.random import rand

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _starts(samples, in_size, out_size, pool, dtype):
    """(planes, out_size) int64 window starts for the planes' samples of one dimension."""
    import numpy as np  # (not at import: `import ember` leaves numpy unloaded)

    u = samples.astype(dtype)
    if out_size == 1:
        return np.full((u.shape[0], 1), in_size - pool, dtype=np.int64)
    alpha = dtype(in_size - pool) / dtype(out_size - 1)
    i = np.arange(out_size - 1, dtype=dtype)
    first = ((i[None, :] + u[:, None]) * alpha).astype(np.int64)
    starts = first - (u * alpha).astype(np.int64)[:, None]
    last = np.full((u.shape[0], 1), in_size - pool, dtype=np.int64)
    return np.concatenate([starts, last], 1)


def _pool(name, nd, input, kernel_size, output_size, output_ratio, _random_samples):
    import numpy as np

    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    unbatched = input.dim() == nd + 1
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): expected {nd + 1}D or {nd + 2}D tensor for input; got {input.dim()}D"
        )
    x = input.unsqueeze(0) if unbatched else input
    spatial = list(x.shape[2:])
    pool = _tuple(kernel_size, nd)
    if output_size is None:
        ratio = _tuple(output_ratio, nd)
        out = [int(s * r) for s, r in zip(spatial, ratio)]
    else:
        out = list(_tuple(output_size, nd))
    for axis, o, p, s in zip(_AXES[nd], out, pool, spatial):
        if o + p - 1 >= s:
            raise RuntimeError(f"{name}(): pool {axis} {p} too large relative to input {axis} {s}")
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = rand(n, c, nd, dtype=input.dtype)
    if _random_samples.dim() != 3 or _random_samples.size(2) != nd:
        got = _random_samples.size(2) if _random_samples.dim() == 3 else _random_samples.dim()
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {got}.")
    dtype = np.float64 if str(input.dtype) == "torch.float64" else np.float32
    samples = _random_samples.detach().float().numpy().reshape(-1, nd)[: n * c]
    if samples.shape[0] < n * c:
        raise RuntimeError(
            f"{name}(): expected _random_samples to hold {n} x {c} samples; "
            f"got {_random_samples.size(0)} x {_random_samples.size(1)}"
        )
    # torch's kernels take the samples' dimensions in reverse for 2-D (width first) and in order
    # for 3-D (time, height, width)
    order = [1, 0] if nd == 2 else [0, 1, 2]
    starts = [_starts(samples[:, order[d]], spatial[d], out[d], pool[d], dtype) for d in range(nd)]
    # flat positions within a plane of every window element: (planes, prod(out), prod(pool))
    strides = [int(np.prod(spatial[d + 1 :])) for d in range(nd)]
    pos = np.zeros((n * c,) + tuple(out) + tuple(pool), dtype=np.int64)
    for d in range(nd):
        shape = [n * c] + [1] * (2 * nd)
        shape[1 + d] = out[d]
        offs = [1] * (2 * nd + 1)
        offs[1 + nd + d] = pool[d]
        pos = pos + (starts[d].reshape(shape) + np.arange(pool[d]).reshape(offs)) * strides[d]
    pos = pos.reshape(n, c, int(np.prod(out)) * int(np.prod(pool)))
    flat = x.reshape(n, c, -1)
    windows = flat.gather(2, from_numpy(pos)).reshape(n, c, int(np.prod(out)), -1)
    values, which = windows.max(3)
    index = from_numpy(pos.reshape(n, c, int(np.prod(out)), -1)).gather(3, which.unsqueeze(3))
    values = values.reshape(n, c, *out)
    index = index.reshape(n, c, *out)
    if unbatched:
        values, index = values.squeeze(0), index.squeeze(0)
    return values, index


_SIGNATURE = """(input, kernel_size, output_size=None, output_ratio=None,
        return_indices=False, _random_samples=None)"""


def _define(nd, with_indices, doc):
    """fractional_max_pool{nd}d, or its _with_indices form that always returns (output, indices);
    both pool as _pool."""
    op = f"fractional_max_pool{nd}d"

    def pool(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        out, idx = _pool(op, nd, input, kernel_size, output_size, output_ratio, _random_samples)
        return (out, idx) if with_indices or return_indices else out

    name = op + "_with_indices" if with_indices else op
    returns = "(Tensor, Tensor)" if with_indices else "Tensor"
    pool.__name__ = pool.__qualname__ = name
    pool.__doc__ = f"{name}{_SIGNATURE} -> {returns}\n\n    {doc}"
    return _autocast_fp32(pool)  # on torch's autocast float32 list


fractional_max_pool2d_with_indices = _define(
    2,
    True,
    """2-D fractional max pooling of (N, C, H, W) or (C, H, W) input; returns the maxima and their
    flat positions within each plane.""",
)
fractional_max_pool2d = _define(
    2,
    False,
    """2-D fractional max pooling: windows of kernel_size at pseudo-random fractional strides that
    give output_size (or input size * output_ratio); with return_indices, (output, indices).""",
)
fractional_max_pool3d_with_indices = _define(
    3,
    True,
    """3-D fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input; returns the maxima and
    their flat positions within each volume.""",
)
fractional_max_pool3d = _define(
    3,
    False,
    """3-D fractional max pooling (see fractional_max_pool2d); with return_indices,
    (output, indices).""",
)
