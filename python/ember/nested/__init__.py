"""ember.nested: torch.nested's nested tensors (a batch of tensors of different sizes) in the
strided and jagged layouts; see _tensor.py for how they are stored and which ops they run."""

import builtins
import math
import sys

from ._tensor import NestedTensor, jagged, make, to_padded_tensor

__all__ = ["as_nested_tensor", "nested_tensor", "to_padded_tensor", "NestedTensor"]


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
