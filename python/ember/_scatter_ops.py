"""The *_scatter ops (a copy of input with one view of it replaced by src) and vdot, composed
from views and copy_ (whose derivative sends src's part of the gradient back to src)."""

__all__ = ["diagonal_scatter", "select_scatter", "slice_scatter", "vdot"]


def _scatter_into(input, src, view_fn, op):
    out = input.clone()
    view = view_fn(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
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
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected both vectors to have same dtype, but found {input.dtype} and "
                           f"{other.dtype}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got "
                           f"{input.shape[0]} and {other.shape[0]} elements respectively")
    return (input * other).sum()
