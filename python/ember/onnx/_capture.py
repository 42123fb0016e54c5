"""Capture for export: the model's graph (ember.fx) and two example runs of it.

The runs give every node's example result, so the mappings know dtypes and shapes. With
``dynamic_axes``, a second run with each dynamic dimension grown by one tells which sizes depend on
the inputs' dynamic dimensions: those become ``None`` in a Value's shape (and are computed in the
graph at run time), the others are constants."""

import inspect

from .. import _C
from ._registry import lookup_module


class Captured:
    """``graph`` (an ember.fx.Graph) and ``root``, the module that its targets name."""

    def __init__(self, graph, root):
        self.graph, self.root = graph, root


def is_tensor(x):
    return isinstance(x, _C.Tensor)


def _has_tensor(x):
    if is_tensor(x):
        return True
    if isinstance(x, (tuple, list)):
        return any(_has_tensor(v) for v in x)
    if isinstance(x, dict):
        return any(_has_tensor(v) for v in x.values())
    return False


def capture(model, args, kwargs):
    """(Captured, {placeholder name: example value})."""
    from .. import fx, nn

    leaf = isinstance(model, nn.Module) and type(model).__module__.startswith("ember.nn.")
    if leaf and lookup_module(model)[0] is not None:
        # A bare layer (an LSTM, a Conv2d): one call_module node of the root itself.
        graph = fx.Graph()
        names = [f"input_{i}" if i else "input" for i in range(len(args))]
        phs = [graph.placeholder(n) for n in names]
        kw = {k: graph.placeholder(k) for k in kwargs}
        graph.output(graph.call_module("", tuple(phs), kw))
        examples = dict(zip(names, args))
        examples.update(kwargs)
        return Captured(graph, model), examples
    forward = model.forward if isinstance(model, nn.Module) else model
    params = list(inspect.signature(forward).parameters.values())
    examples, concrete = {}, {}
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional):
        raise TypeError(
            f"ember.onnx.export: expected at most {len(positional)} positional arguments for "
            f"the model's forward; got {len(args)}"
        )
    for p, a in zip(positional, args):
        examples[p.name] = a
    examples.update(kwargs)
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name not in examples:
            if p.default is p.empty:
                raise TypeError(f"ember.onnx.export: missing the model argument '{p.name}'")
            examples[p.name] = p.default
        if not _has_tensor(examples[p.name]):
            concrete[p.name] = examples[p.name]
    gm = fx.symbolic_trace(model, concrete_args=concrete or None)
    return Captured(gm.graph, gm), examples


def resolve(root, target):
    """The object a get_attr or call_module target names in `root` ('' is the root)."""
    obj = root
    for part in filter(None, target.split(".")):
        obj = getattr(obj, part)
    return obj


def _map(a, fn):
    """`a` with every fx Node replaced by fn(node), through tuples, lists, dicts and slices."""
    from ..fx import Node

    if isinstance(a, Node):
        return fn(a)
    if isinstance(a, tuple):
        vals = [_map(v, fn) for v in a]
        return type(a)(*vals) if hasattr(a, "_fields") else type(a)(vals)
    if isinstance(a, list):
        return [_map(v, fn) for v in a]
    if isinstance(a, dict):
        return {k: _map(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(_map(a.start, fn), _map(a.stop, fn), _map(a.step, fn))
    return a


def _clone(x):
    if is_tensor(x):
        return x.clone()
    if isinstance(x, (tuple, list)) and not hasattr(x, "_fields"):
        return type(x)(_clone(v) for v in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x


def map_arg(a, fn):
    return _map(a, fn)


def run(captured, placeholder_values):
    """{node: example result} for every node, running the graph once on the given values."""
    env = {}
    for node in captured.graph.nodes:
        args = _map(node.args, env.__getitem__)
        kwargs = _map(node.kwargs, env.__getitem__)
        if node.op == "placeholder":
            if node.target in placeholder_values:
                # A copy: a graph that assigns into its input (x[mask] = 0) must not change
                # the caller's example.
                env[node] = _clone(placeholder_values[node.target])
            else:
                env[node] = node.args[0] if node.args else None
        elif node.op == "get_attr":
            env[node] = resolve(captured.root, node.target)
        elif node.op == "call_function":
            env[node] = node.target(*args, **kwargs)
        elif node.op == "call_method":
            env[node] = getattr(args[0], node.target)(*args[1:], **kwargs)
        elif node.op == "call_module":
            env[node] = resolve(captured.root, node.target)(*args, **kwargs)
        elif node.op == "output":
            env[node] = args[0]
    return env


def grow(x, dims):
    """`x` with each dim of `dims` one longer (its first slice repeated at the end)."""
    for d in dims:
        x = _C.cat([x, x.narrow(d, 0, 1)], d)
    return x
