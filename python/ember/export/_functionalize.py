"""run_decompositions' first step: buffers (and user inputs) updated in place become
BUFFER_MUTATION (USER_INPUT_MUTATION) outputs.

As torch's training IR, a captured program keeps a buffer's update in place (``add_`` on
``b_seen``; a train-mode ``batch_norm`` updating its running statistics), and its signature
lists no mutation. torch's ``run_decompositions`` makes such a program functional: each
update computes a new value, later reads of the buffer read that value, and the buffers' last
values are returned first, as BUFFER_MUTATION outputs (in the order of the buffer inputs),
which ``module()`` and the C++ runtime copy back. A train-mode batch_norm becomes the batch
statistics' normalization and the running statistics' new values (``old * (1 - m) + stat *
m``, the variance unbiased, as eager's update)."""

import operator
import sys

from .. import fx
from . import _ops
from .graph_signature import (
    ExportGraphSignature,
    InputKind,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["functionalize"]


def _ember():
    return sys.modules["ember"]


def _mutated_arg(node, buffer_of):
    """The buffer placeholder ``node`` updates in place (its first argument), or None."""
    if node.op not in ("call_function", "call_method") or not node.args:
        return None
    first = node.args[0]
    if first not in buffer_of:
        return None
    if _in_place_overload(node.target):
        return first
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    method = node.op == "call_method" or getattr(_ember().Tensor, name, None) is node.target
    if (method and name in _ops.INPLACE_METHODS) or node.kwargs.get("inplace") is True:
        return first
    return None


def _in_place_overload(target):
    """Whether target is an in-place ATen overload (``aten.add_.Tensor``)."""
    aten = getattr(target, "namespace", None) == "aten"
    return aten and target.overloadpacket._name.endswith("_")


def _functional(node):
    """(target, kwargs) of the out-of-place form of an in-place call."""
    kwargs = dict(node.kwargs)
    if kwargs.get("inplace") is True:
        kwargs["inplace"] = False
        return node.target, kwargs
    if _in_place_overload(node.target):  # aten.add_.Tensor -> aten.add.Tensor
        packet = getattr(_ember().ops.aten, node.target.overloadpacket._name[:-1])
        return getattr(packet, node.target._overloadname), kwargs
    name = node.target if node.op == "call_method" else node.target.__name__
    return getattr(_ember().Tensor, _ops.INPLACE_METHODS[name]), kwargs


def _is_training_batch_norm(node, buffer_of):
    from ._capture import _bn_call, _training_batch_norm

    if node.op != "call_function" or not _training_batch_norm(node.target, node.args, node.kwargs):
        return False
    a = _bn_call(node.target, node.args, node.kwargs)
    return a["running_mean"] in buffer_of and a["running_var"] in buffer_of


def functionalize(graph, signature):
    """(graph, signature) with the in-place buffer updates made functional, or None when the
    program updates no buffer in place."""
    from ._capture import _bn_call

    ember = _ember()
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    buffer_of = {  # the tensors the program may update: buffers and user inputs
        node: spec.target if spec.kind == InputKind.BUFFER else spec.arg.name
        for node, spec in zip(placeholders, signature.input_specs)
        if spec.kind in (InputKind.BUFFER, InputKind.USER_INPUT)
    }
    kind_of = {
        node: OutputKind.BUFFER_MUTATION
        if spec.kind == InputKind.BUFFER
        else OutputKind.USER_INPUT_MUTATION
        for node, spec in zip(placeholders, signature.input_specs)
    }
    if not any(
        _mutated_arg(n, buffer_of) is not None or _is_training_batch_norm(n, buffer_of)
        for n in graph.nodes
    ):
        return None
    new = fx.Graph()
    env, latest = {}, {}  # old node -> new value; buffer placeholder -> its latest value

    def call(target, *args, **kwargs):
        node = new.call_function(target, tuple(args), kwargs)
        vals = fx.map_arg((args, kwargs), lambda n: n.meta.get("val"))
        with ember.no_grad():
            node.meta["val"] = target(*vals[0], **vals[1])
        return node

    def update(buffer, value):
        latest[buffer] = value
        env[buffer] = value  # later reads of the buffer read its new value

    for node in graph.nodes:
        if node.op == "output":
            items, _ = _flatten(fx.map_arg(node.args[0], lambda n: env[n]))
            # torch's order: the buffers' updates, then the user inputs', each in input order
            order = [p for p in placeholders if p in latest]
            order.sort(key=lambda p: kind_of[p] != OutputKind.BUFFER_MUTATION)
            new.output(tuple(latest[p] for p in order) + tuple(items))
            mutations = [
                OutputSpec(kind_of[p], TensorArgument(latest[p].name), buffer_of[p]) for p in order
            ]
            users = [  # the outputs' nodes have new names in the new graph
                OutputSpec(spec.kind, TensorArgument(item.name), spec.target)
                for spec, item in zip(signature.output_specs, items)
            ]
            specs = mutations + users
            continue
        buffer = _mutated_arg(node, buffer_of)
        if buffer is not None:
            target, kwargs = _functional(node)
            args = fx.map_arg(node.args, lambda n: env[n])
            value = call(target, *args, **fx.map_arg(kwargs, lambda n: env[n]))
            value.meta.update({k: v for k, v in node.meta.items() if k != "val"})
            env[node] = value
            update(buffer, value)
            continue
        if _is_training_batch_norm(node, buffer_of):
            a = _bn_call(node.target, node.args, node.kwargs)
            m = float(a["momentum"])
            x = env[a["input"]]
            w, b = (env.get(a[k], a[k]) if a[k] is not None else None for k in ("weight", "bias"))
            env[node] = call(ember.nn.functional.batch_norm, x, None, None, w, b, True, m, a["eps"])
            dims = [0] + list(range(2, x.meta["val"].dim()))
            stats = {
                "running_mean": call(ember.mean, x, dims),
                "running_var": call(ember.var, x, dims, True),  # unbiased, as eager's update
            }
            for stat, value in stats.items():
                buffer = a[stat]
                scaled = call(operator.mul, env[buffer], 1.0 - m)
                update(buffer, call(operator.add, scaled, call(operator.mul, value, m)))
            continue
        env[node] = new.node_copy(node, lambda n: env[n])
        env[node].meta.update(node.meta)
    new.lint()
    return new, ExportGraphSignature(list(signature.input_specs), specs)


def _flatten(value):
    from .exported_program import tree_flatten

    return tree_flatten(value)
