"""Comparisons of numbers read from tensor data during a capture (torch's unbacked SymBool).

Under ``capture_scalar_outputs`` (or ``fullgraph=True``) ``n = t.item()`` is a graph value
(``capture.UnbackedScalar``, torch's ``u0``). Comparing it (``n >= 0``, ``n <= x.shape[0]``)
records the comparison in the graph and gives a ``capture.SymBool`` (methods here):

- ``ember._check(cond)`` / ``ember._check_is_size(n)`` on it record
  ``aten._assert_scalar.default(cond, "Runtime assertion failed for expression u0 >= 0 on node
  'ge'")``, torch's runtime assertion: a later call whose value breaks the condition raises
  RuntimeError with that text, where eager's ``_check`` would have raised too.
- ``bool()`` of it (a Python branch) needs the value: a graph break, or torch's UserError
  under ``fullgraph`` (``capture.Capture.data_dependent_use``)."""

from ..fx._codegen import BINARY_OPS

__all__ = ["SymBoolMethods", "compare", "expression", "dynamic_shape_reason"]


class SymBoolMethods:
    """What the outcome of comparing a number read from tensor data adds to the number class
    (``capture.SymBool``: a graph value passed to ops as its node, as any captured number)."""

    __slots__ = ()

    def __bool__(self):
        if not self.cap.in_call and not self.cap.finished:
            self.cap.data_dependent_use(self)
        return self.value

    def __repr__(self):
        return f"SymBool({expression(self.node, self.cap)})"

    def _record_check(self, message):
        """``ember._check(self, message)``: a runtime assertion in the graph; the capture run
        itself is eager's call, so a false condition raises now, as eager's ``_check``."""
        if self.cap.finished:
            return self.value
        from .._op_overloads import ops

        self.cap.sym_nodes.discard(self.node)  # the assertion uses it: not dropped
        text = (
            f"Runtime assertion failed for expression {expression(self.node, self.cap)} on "
            f"node '{self.node.name}'"
        )
        self.cap.graph.call_function(ops.aten._assert_scalar.default, (self.node, text))
        return self.value


def compare(fn, a, b, cap):
    """``(value, node)`` of ``fn(a, b)``, a comparison with a captured number on either side:
    the node compares the sides' nodes (numbers stay literals)."""
    node = cap.graph.call_function(fn, (_node(a), _node(b)))
    value = fn(_value(a), _value(b))
    node.meta["val"] = value
    cap.sym_nodes.add(node)  # dropped at the end unless an assertion or an op reads it
    return value, node


def _node(x):
    return x.node if hasattr(x, "node") and hasattr(x, "cap") else x


def _value(x):
    return x.value if hasattr(x, "node") and hasattr(x, "cap") else x


def expression(node, cap):
    """``node`` as torch writes a symbolic expression: ``u0`` for the k-th number read from
    data, ``u0 >= 0`` for a comparison of it, a node's name for another graph value."""
    if not hasattr(node, "op"):
        return repr(node)
    name = cap.unbacked_names.get(node)
    if name is not None:
        return name
    if node.op == "call_function" and node.target in BINARY_OPS and len(node.args) == 2:
        a, b = (expression(x, cap) for x in node.args)
        return f"{a} {BINARY_OPS[node.target]} {b}"
    return node.name


def dynamic_shape_reason(name, args, kwargs):
    """torch's break reason for a call whose result's shape depends on tensor data (indexing by
    a boolean mask, masked_select, repeat_interleave with tensor repeats), which torch captures
    only with ``capture_dynamic_output_shape_ops``; None for any other call. (torch 2.13 traces
    nonzero, argwhere and unique without it.)"""
    from .. import _C

    op = None
    if name in ("__getitem__", "getitem") and len(args) > 1:
        index = args[1] if isinstance(args[1], tuple) else (args[1],)
        if any(isinstance(i, _C.Tensor) and i.dtype is _bool() for i in index):
            op = "aten.nonzero.default"
    elif name == "masked_select":
        op = "aten.masked_select.default"
    elif name == "repeat_interleave":
        repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
        op = "aten.repeat_interleave.Tensor" if isinstance(repeats, _C.Tensor) else None
    if op is None:
        return None
    return (
        f"Dynamic shape operator\n  Explanation: Operator `{op}`'s output shape depends on input "
        "Tensor data.\n  Hint: Enable tracing of dynamic shape operators with "
        "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`"
    )


def _bool():
    import sys

    return sys.modules["ember"].bool
