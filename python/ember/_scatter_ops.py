"""The *_scatter ops (a copy of input with one view of it replaced by src, through copy_, whose
derivative sends src's part of the gradient back to src), vdot and histogram."""

from ._type_info import scalar_type_name

__all__ = ["diagonal_scatter", "select_scatter", "slice_scatter", "vdot", "histogram"]


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
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal_scatter")


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: t.select(dim, index), "select_scatter")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    key = (slice(None),) * (dim % input.dim()) + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[key], "slice_scatter")


def vdot(input, other):
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


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """Counts (or weights) of input's elements per bin; the last bin includes its right edge."""
    import ember as E

    from . import return_types

    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    x = input.detach().reshape(-1)
    if isinstance(bins, E.Tensor):
        edges = bins.to(input.dtype)
    else:
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if lo == hi:  # an empty range widens by half a unit each side, as torch's does
            lo, hi = lo - 0.5, hi + 0.5
        edges = E.linspace(lo, hi, bins + 1, dtype=input.dtype)
    n = edges.numel() - 1
    idx = E.bucketize(x, edges, right=True) - 1
    idx = E.where(x == edges[-1], E.full([], n - 1, dtype=idx.dtype), idx)
    keep = (idx >= 0) & (idx < n)
    w = E.ones_like(x) if weight is None else weight.detach().reshape(-1).to(input.dtype)
    hist = E.zeros(n, dtype=input.dtype).index_add(0, idx[keep], w[keep])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram(hist, edges)
