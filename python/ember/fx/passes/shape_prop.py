"""ShapeProp: runs a GraphModule on example inputs and records each node's tensor metadata in
``node.meta['tensor_meta']`` and the type of its result in ``node.meta['type']``, as torch.fx's."""

from collections import namedtuple

from ... import _C
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


_FIELDS = "shape dtype requires_grad stride memory_format is_quantized qparams"


class TensorMetadata(namedtuple("TensorMetadata", _FIELDS)):
    """TensorMetadata(shape, dtype, requires_grad, stride, memory_format, is_quantized, qparams)

    What ShapeProp records about a tensor a node computes.
    """

    __slots__ = ()


def _memory_format(t):
    import ember

    if t.is_contiguous():
        return ember.contiguous_format
    formats = {4: "channels_last", 5: "channels_last_3d"}
    name = formats.get(t.dim())
    fmt = getattr(ember, name, None) if name else None
    if fmt is not None and t.is_contiguous(memory_format=fmt):
        return fmt
    return None


def _extract_tensor_metadata(t):
    return TensorMetadata(
        shape=t.shape,
        dtype=t.dtype,
        requires_grad=t.requires_grad,
        stride=tuple(t.stride()),
        memory_format=_memory_format(t),
        is_quantized=False,
        qparams={},
    )


class ShapeProp(Interpreter):
    """ShapeProp(gm)

    ``ShapeProp(gm).propagate(*example_inputs)`` runs ``gm`` and stores, on each node that
    computes tensors, ``meta['tensor_meta']`` (TensorMetadata, or a structure of them), and
    ``meta['type']`` for every node. A node that fails raises RuntimeError naming it, from the
    original error.
    """

    def __init__(self, gm):
        super().__init__(gm)

    def run_node(self, n):
        """run_node(n) -> Any

        Runs ``n`` and records what it computed in ``n.meta``.
        """
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(
                f"ShapeProp error for: node={n.format_node()} with meta={n.meta}"
            ) from e
        found = []

        def tensor_meta(obj):
            if isinstance(obj, _C.Tensor):
                found.append(obj)
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, tensor_meta)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """propagate(*args) -> Any

        Runs the module on ``args``, filling the nodes' meta; returns the module's result.
        """
        return super().run(*args)
