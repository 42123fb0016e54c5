"""``fuse``: folds each BatchNorm that follows a Conv (or Linear) into that layer, for inference,
as torch.fx.experimental.optimization.fuse does."""

import copy

from ...nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ...nn.modules.conv import Conv1d, Conv2d, Conv3d
from ...nn.modules.linear import Linear
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from .._symbolic_trace import symbolic_trace
from ..graph_module import GraphModule

__all__ = ["fuse", "matches_module_pattern", "replace_node_module"]

_PATTERNS = [
    (Conv1d, BatchNorm1d),
    (Conv2d, BatchNorm2d),
    (Conv3d, BatchNorm3d),
    (Linear, BatchNorm1d),
]


def _parent_name(target):
    *parent, name = target.rsplit(".", 1)
    return (parent[0] if parent else ""), name


def matches_module_pattern(pattern, node, modules):
    """matches_module_pattern(pattern, node, modules) -> bool

    True when ``node`` calls a module of type ``pattern[1]`` on the result of a call of a module
    of type ``pattern[0]`` (``modules``: name -> module)."""
    if len(node.args) == 0:
        return False
    nodes = (node.args[0], node)
    for expected_type, current in zip(pattern, nodes):
        if not hasattr(current, "op") or current.op != "call_module":
            return False
        if not isinstance(current.target, str) or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected_type:
            return False
    return True


def replace_node_module(node, modules, new_module):
    """replace_node_module(node, modules, new_module)

    Makes the module ``node`` calls ``new_module`` (in its parent and in ``modules``)."""
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    parent = modules[parent_name] if parent_name else modules[""]
    setattr(parent, name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """fuse(model, inplace=False, no_trace=False) -> GraphModule

    Traces ``model`` (unless ``no_trace``: it is a GraphModule already) and folds every
    BatchNorm whose input is a Conv1d/2d/3d or Linear used by nothing else into that layer's
    weight and bias; the BatchNorm calls disappear from the graph. Only for inference: a
    BatchNorm in training mode (or without running statistics) is left alone. ``model`` is
    deep-copied first unless ``inplace``.
    """
    if not inplace:
        model = copy.deepcopy(model)
    if no_trace and not isinstance(model, GraphModule):
        raise RuntimeError("fuse: expected a GraphModule when no_trace=True")
    fx_model = model if no_trace else symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)
    for pattern in _PATTERNS:
        for node in list(new_graph.nodes):
            if not matches_module_pattern(pattern, node, modules):
                continue
            first = node.args[0]
            if len(first.users) > 1:  # the layer's output is used elsewhere too
                continue
            layer, bn = modules[first.target], modules[node.target]
            if bn.training or not bn.track_running_stats:
                continue
            if pattern[0] is Linear:
                fused = fuse_linear_bn_eval(layer, bn)
            else:
                fused = fuse_conv_bn_eval(layer, bn)
            replace_node_module(first, modules, fused)
            node.replace_all_uses_with(first)
            new_graph.erase_node(node)
    return GraphModule(fx_model, new_graph)
