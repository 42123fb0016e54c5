"""torch's `*_copy` functions (the view ops' forms that return new memory: permute_copy,
view_copy, ...) and the other storage-level helpers torch exposes at top level (as_strided_,
as_strided_scatter, empty_permuted, nonzero_static, resize_as_, unsafe_split_with_sizes).

Each `*_copy` computes the view and materializes it contiguously, so its result never shares
memory with the input (torch's contract for these ops); autograd flows through the view and the
copy as through any other op."""

from .. import _C

__all__ = [
    "alias_copy",
    "as_strided_copy",
    "ccol_indices_copy",
    "col_indices_copy",
    "crow_indices_copy",
    "detach_copy",
    "diagonal_copy",
    "expand_copy",
    "indices_copy",
    "permute_copy",
    "row_indices_copy",
    "select_copy",
    "slice_copy",
    "split_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "values_copy",
    "view_as_complex_copy",
    "view_as_real_copy",
    "view_copy",
    "as_strided_",
    "as_strided_scatter",
    "empty_permuted",
    "nonzero_static",
    "resize_as_",
    "unsafe_split_with_sizes",
]


def _fresh(t, out=None):
    """t materialized in new contiguous memory (into out when given)."""
    from .. import contiguous_format

    result = t.clone(memory_format=contiguous_format)
    if out is not None:
        out.resize_(result.shape)
        out.copy_(result)
        return out
    return result


def _fresh_all(ts):
    return tuple(_fresh(t) for t in ts)


def alias_copy(input, *, out=None):
    """alias_copy(input, *, out=None) -> Tensor

    A copy of input (the copying form of the alias view)."""
    return _fresh(input, out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """as_strided_copy(input, size, stride, storage_offset=None, *, out=None) -> Tensor

    as_strided(input, size, stride, storage_offset), materialized in new memory."""
    return _fresh(input.as_strided(size, stride, storage_offset), out)


def detach_copy(input, *, out=None):
    """detach_copy(input, *, out=None) -> Tensor

    A copy of input detached from the autograd graph."""
    return _fresh(input.detach(), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None) -> Tensor

    diagonal(input, offset, dim1, dim2), materialized in new memory."""
    return _fresh(input.diagonal(offset, dim1, dim2), out)


def expand_copy(input, size, *, implicit=False, out=None):
    """expand_copy(input, size, *, implicit=False, out=None) -> Tensor

    input.expand(size), materialized in new memory (every element stored)."""
    return _fresh(input.expand(*size), out)


def permute_copy(input, dims, *, out=None):
    """permute_copy(input, dims, *, out=None) -> Tensor

    permute(input, dims), materialized contiguously in new memory."""
    return _fresh(input.permute(*dims), out)


def select_copy(input, dim, index, *, out=None):
    """select_copy(input, dim, index, *, out=None) -> Tensor

    select(input, dim, index), materialized in new memory."""
    return _fresh(input.select(dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None) -> Tensor

    input's elements start:end:step along dim, materialized in new memory."""
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return _fresh(input[tuple(index)], out)


def split_copy(input, split_size, dim=0, *, out=None):
    """split_copy(input, split_size, dim=0, *, out=None) -> List[Tensor]

    split(input, split_size, dim), each piece in new memory."""
    return _fresh_all(input.split(split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    """split_with_sizes_copy(input, split_sizes, dim=0, *, out=None) -> List[Tensor]

    split_with_sizes(input, split_sizes, dim), each piece in new memory."""
    return _fresh_all(input.split(list(split_sizes), dim))


def squeeze_copy(input, dim=None, *, out=None):
    """squeeze_copy(input, dim=None, *, out=None) -> Tensor

    squeeze(input, dim), materialized in new memory."""
    return _fresh(input.squeeze() if dim is None else input.squeeze(dim), out)


def t_copy(input, *, out=None):
    """t_copy(input, *, out=None) -> Tensor

    t(input), materialized contiguously in new memory."""
    return _fresh(input.t(), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    """transpose_copy(input, dim0, dim1, *, out=None) -> Tensor

    transpose(input, dim0, dim1), materialized contiguously in new memory."""
    return _fresh(input.transpose(dim0, dim1), out)


def unbind_copy(input, dim=0, *, out=None):
    """unbind_copy(input, dim=0, *, out=None) -> tuple of Tensors

    unbind(input, dim), each slice in new memory."""
    return _fresh_all(input.unbind(dim))


def unfold_copy(input, dimension, size, step, *, out=None):
    """unfold_copy(input, dimension, size, step, *, out=None) -> Tensor

    input.unfold(dimension, size, step), materialized in new memory."""
    return _fresh(input.unfold(dimension, size, step), out)


def unsqueeze_copy(input, dim, *, out=None):
    """unsqueeze_copy(input, dim, *, out=None) -> Tensor

    unsqueeze(input, dim), materialized in new memory."""
    return _fresh(input.unsqueeze(dim), out)


def view_copy(input, size, *, out=None):
    """view_copy(input, size, *, out=None) -> Tensor

    input.view(size) (a shape, or a dtype to reinterpret the bytes as), in new memory."""
    if isinstance(size, _C.dtype):
        return _fresh(input.view(size), out)
    return _fresh(input.view(*size) if isinstance(size, (list, tuple)) else input.view(size), out)


def view_as_real_copy(input, *, out=None):
    """view_as_real_copy(input, *, out=None) -> Tensor

    view_as_real(input), materialized in new memory."""
    from .. import view_as_real

    return _fresh(view_as_real(input), out)


def view_as_complex_copy(input, *, out=None):
    """view_as_complex_copy(input, *, out=None) -> Tensor

    view_as_complex(input), materialized in new memory."""
    from .. import view_as_complex

    return _fresh(view_as_complex(input), out)


def _sparse_part(name):
    def fn(input, *, out=None):
        return _fresh(getattr(input, name)(), out)

    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__doc__ = (
        f"{name}_copy(input, *, out=None) -> Tensor\n\n"
        f"A sparse tensor's {name}() (see ember.sparse), copied into new memory."
    )
    return fn


indices_copy = _sparse_part("indices")
values_copy = _sparse_part("values")
crow_indices_copy = _sparse_part("crow_indices")
col_indices_copy = _sparse_part("col_indices")
ccol_indices_copy = _sparse_part("ccol_indices")
row_indices_copy = _sparse_part("row_indices")


def as_strided_(input, size, stride, storage_offset=None):
    """as_strided_(input, size, stride, storage_offset=None) -> Tensor

    Makes input, in place, the view of its own storage with the given size, stride and offset
    (the input's own offset when none is given); returns input."""
    offset = input.storage_offset() if storage_offset is None else storage_offset
    view = input.as_strided(size, stride, offset)  # checks the bounds against the storage
    with _no_grad():
        input.set_(input.detach(), offset, tuple(view.shape), tuple(view.stride()))
    return input


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor

    A copy of input whose elements at as_strided(size, stride, storage_offset) are src's."""
    out = input.clone()
    view = out.as_strided(size, stride, storage_offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(
            f"as_strided_scatter: expected src to have a size equal to the slice of self; "
            f"got src size {list(src.shape)} and slice size {list(view.shape)}"
        )
    view.copy_(src)
    return out


def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
    requires_grad=False, pin_memory=False) -> Tensor

    An uninitialized tensor of the given size whose dimensions lie in memory in the order
    physical_layout lists them (outermost first)."""
    from .creation import empty

    size, layout_ = list(size), list(physical_layout)
    if sorted(layout_) != list(range(len(size))):
        raise RuntimeError(
            f"empty_permuted: expected physical_layout to be a permutation of the dimensions "
            f"0..{len(size) - 1}; got {layout_}"
        )
    physical = empty([size[d] for d in layout_], dtype=dtype, device=device, pin_memory=pin_memory)
    inverse = [layout_.index(d) for d in range(len(size))]
    result = physical.permute(*inverse)
    if requires_grad:
        result.requires_grad_(True)
    return result


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero_static(input, *, size, fill_value=-1) -> Tensor

    The indices of input's nonzero elements as nonzero() gives them, cut or padded with
    fill_value to exactly `size` rows."""
    from .creation import full

    if size < 0:
        raise RuntimeError(f"nonzero_static: expected size to be non-negative; got {size}")
    found = input.nonzero()
    if found.shape[0] >= size:
        return found[:size].clone()
    pad = full((size - found.shape[0], found.shape[1]), fill_value, dtype=found.dtype)
    from .. import cat

    return cat([found, pad], 0)


def resize_as_(input, the_template, *, memory_format=None):
    """resize_as_(input, the_template, *, memory_format=None) -> Tensor

    Resizes input in place to the_template's size (as input.resize_(the_template.shape))."""
    return input.resize_as_(the_template, memory_format=memory_format)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """unsafe_split_with_sizes(input, split_sizes, dim=0) -> List[Tensor]

    split_with_sizes without the checks on views of its outputs (the same results)."""
    return tuple(input.split(list(split_sizes), dim))
