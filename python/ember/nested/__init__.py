"""ember.nested: torch.nested's nested tensors (a batch of tensors of different sizes) in the
strided and jagged layouts; see _tensor.py for how they are stored and which ops they run."""

import builtins
import math
import sys

from ._tensor import NestedTensor, jagged, make, to_padded_tensor

__all__ = [
    "as_nested_tensor",
    "masked_select",
    "narrow",
    "nested_tensor",
    "nested_tensor_from_jagged",
    "to_padded_tensor",
    "NestedTensor",
]


def _ember():
    return sys.modules["ember"]


def _build(tensors, layout, op):
    """A nested tensor whose buffer is the (differentiable) concatenation of ``tensors``."""
    ember = _ember()
    if layout is None:
        layout = ember.strided
    if layout is not ember.strided and layout is not jagged:
        raise RuntimeError(f"{op}(): only torch.strided and torch.jagged layouts are supported")
    for i, t in enumerate(tensors):
        if t.dim() != tensors[0].dim():
            raise RuntimeError(
                f"All Tensors given to {op} must have the same dimension. Found dimension "
                f"{t.dim()} for Tensor at index {i} and dimension {tensors[0].dim()} for Tensor "
                "at index 0."
            )
    shapes = [tuple(t.shape) for t in tensors]
    if layout is jagged:
        if not tensors or tensors[0].dim() == 0 or len({s[1:] for s in shapes}) != 1:
            raise RuntimeError(
                "Cannot represent given tensor list as a nested tensor with the jagged layout. "
                "Note that the jagged layout only allows for a single ragged dimension. For "
                "example: (B, *, D_0, D_1, ..., D_N), with ragged * dim."
            )
        offsets = [0]
        for s in shapes:
            offsets.append(offsets[-1] + s[0])
        return make(ember.cat(list(tensors)), shapes, offsets, jagged)
    offsets = [0]
    for s in shapes:
        offsets.append(offsets[-1] + math.prod(s))
    flat = [t.reshape(-1) for t in tensors]
    buffer = ember.cat(flat) if flat else ember.empty(0)
    return make(buffer, shapes, offsets, ember.strided)


def nested_tensor(
    tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
):
    """nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False) -> Tensor

    A nested tensor (a leaf) holding copies of ``tensor_list``'s tensors (or nested lists of
    numbers), in layout ``ember.strided`` (the default) or ``ember.jagged``."""
    ember = _ember()
    tensors = [
        (t.detach() if isinstance(t, ember.Tensor) else ember.tensor(t)).to(
            dtype=dtype, device=device
        )
        for t in tensor_list
    ]
    nt = _build(tensors, layout, "nested_tensor")  # concatenating copies: a new leaf
    if requires_grad:
        nt.requires_grad_(True)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """as_nested_tensor(ts, dtype=None, device=None, layout=None) -> Tensor

    A nested tensor of the tensors in ``ts`` (a list, or a tensor's slices along dim 0) that
    keeps their autograd history."""
    ember = _ember()
    if isinstance(ts, NestedTensor):
        if layout is None or layout is ts.layout:
            return ts.to(dtype=dtype, device=device) if dtype or device else ts
        ts = ts.unbind()
    elif isinstance(ts, ember.Tensor):
        ts = ts.unbind(0)
    elif not isinstance(ts, (list, tuple)) or not builtins.all(
        isinstance(t, ember.Tensor) for t in ts
    ):
        raise TypeError(
            "as_nested_tensor(): Expected first argument to be a tensor or a list / "
            "tuple of tensors "
        )
    tensors = [t.to(dtype=dtype, device=device) for t in ts]
    return _build(tensors, layout, "as_nested_tensor")


def _from_offsets(values, offsets, ragged_idx=1):
    offsets = [builtins.int(o) for o in offsets]
    shapes = []
    for i in range(len(offsets) - 1):
        shape = list(values.shape)
        shape[ragged_idx - 1] = offsets[i + 1] - offsets[i]
        shapes.append(tuple(shape))
    return make(values, shapes, offsets, jagged, None, ragged_idx)


def nested_tensor_from_jagged(
    values, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None, max_seqlen=None
):
    """nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
        min_seqlen=None, max_seqlen=None) -> Tensor

    A jagged nested tensor viewing ``values`` (the components concatenated along the ragged
    dim, ``jagged_dim`` of the result, 1 by default) with component i at rows
    offsets[i]:offsets[i + 1] (or the running sums of ``lengths``)."""
    ember = _ember()
    if offsets is None:
        if lengths is None:
            raise RuntimeError(
                "nested_tensor_from_jagged(): At least one of offsets or lengths is required."
            )
        offsets = ember.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    elif lengths is not None:
        raise NotImplementedError(
            "nested_tensor_from_jagged(): offsets and lengths together (a non-contiguous view) "
            "are not supported by ember"
        )
    ragged_idx = 1 if jagged_dim is None else jagged_dim
    if not 1 <= ragged_idx <= values.dim():
        raise RuntimeError(
            f"nested_tensor_from_jagged(): expected jagged_dim in [1, {values.dim()}], got "
            f"{jagged_dim}"
        )
    return _from_offsets(values, offsets.tolist(), ragged_idx)


def masked_select(tensor, mask):
    """masked_select(tensor, mask) -> Tensor

    A jagged nested tensor whose component i holds the elements of tensor[i] where mask[i] is
    True (tensor and mask broadcast to one shape, the first dim the batch)."""
    ember = _ember()
    if mask.dtype is not ember.bool:
        raise RuntimeError(f"Mask must be bool, got {mask.dtype}")
    tensor, mask = ember.broadcast_tensors(tensor, mask)
    counts = mask.reshape(mask.shape[0], -1).sum(-1)
    offsets = [0] + ember.cumsum(counts, 0).tolist()
    return _from_offsets(tensor[mask], offsets)


def narrow(tensor, dim, start, length, layout=None):
    """narrow(tensor, dim, start, length, layout=torch.strided) -> Tensor

    A nested tensor of tensor[i].narrow(dim - 1, start[i], length[i]) (start and length ints or
    one per row). The jagged layout (dim 1 only) holds copies of the rows' slices, concatenated;
    torch's is a non-contiguous view of tensor."""
    ember = _ember()
    rows = tensor.unbind(0)
    starts = start.tolist() if isinstance(start, ember.Tensor) else [start] * len(rows)
    lengths = length.tolist() if isinstance(length, ember.Tensor) else [length] * len(rows)
    if layout is jagged and dim != 1:
        raise RuntimeError("jagged layout only supports dim=1")
    parts = [r.narrow(dim - 1, s, n) for r, s, n in zip(rows, starts, lengths)]
    return as_nested_tensor(parts, layout=layout)
