"""Numbers read from tensor data in exported programs: torch's unbacked symbols (``u0``).

``n = x.item()`` in forward is ``aten.item.default`` (shown ``item: "Sym(u0)"``, the k-th such
read named ``u<k>``). ``ember._check(cond)`` / ``ember._check_is_size(n)`` on a condition that
reads such a number record ``aten._assert_scalar.default`` while tracing (``record``). After the
graph has torch's names, ``finish`` lays the assertions out as torch 2.13's runtime-assert pass
does:

- A check ``u0 OP c`` (a literal on one side; ``>=``, ``>``, ``<=``, ``<``) narrows u0's range;
  one the range already implies adds nothing. Right after the ``item`` node come ``u0 >= lo``
  and ``u0 <= hi`` for the finite bounds, then each narrowing check not spelled as one of
  those (``u0 < 4`` next to ``u0 <= 3``), each ``ge``/``le``/``lt`` node named after those
  already taken (torch names them after the comparisons it traced first: ``ge_1``).
- Any other check (``u0 % 2 == 0``, ``u0 <= s``) keeps its place.
- Each message is torch's: "Runtime assertion failed for expression u0 >= 0 on node 'ge_1'",
  raised as RuntimeError by ``ep.module()`` on an input that breaks it, and kept by
  ``run_decompositions`` and ``save`` (the runtime op ``_assert_scalar``).
- ``range_constraints`` gains ``u0: VR[lo, hi]``.

The length of an op's result that depends on data (``nonzero``, ``masked_select``, indexing
by a boolean mask) is such a number too: ``x.nonzero().shape[0]`` is ``aten.sym_size.int`` of
it (never the example's length folded in), and every such op gets that node with the range
``[0, numel of its input]`` asserted right after it, as torch's graphs have.

Tensor sizes computed from such a number print as ``f32[u0]`` where ``_sym_shapes.py`` derives
them (the graph's example values stay concrete)."""

import math
import operator
import sys

from .. import fx

__all__ = [
    "record",
    "finish",
    "reads_item",
    "data_dependent",
    "shape_of",
    "guard_error",
]

_INT_MAX = (1 << 63) - 1
_OPS = {operator.ge: ">=", operator.gt: ">", operator.le: "<=", operator.lt: "<"}
_FLIP = {operator.ge: operator.le, operator.gt: operator.lt, operator.le: operator.ge,
         operator.lt: operator.gt}  # fmt: skip
_TEXT = {
    **_OPS,
    operator.eq: "==",
    operator.ne: "!=",
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.floordiv: "//",
    operator.mod: "%",
}


def _aten(name, overload="default"):
    return getattr(getattr(sys.modules["ember"].ops.aten, name), overload)


def _is_item(node):
    """Whether ``node`` reads a number from data: ``x.item()``, or the length of a result whose
    length depends on data (``sym_size.int(nonzero, 0)``)."""
    if not isinstance(node, fx.Node):
        return False
    if node.op == "call_method":
        return node.target == "item"
    if node.op != "call_function":
        return False
    if node.target is _aten("sym_size", "int"):
        return _sized_by_data(node.args[0])
    return node.target is getattr(sys.modules["ember"].Tensor, "item", None) or (
        node.target is _aten("item")
    )


_SIZED_BY_DATA = frozenset({"nonzero", "masked_select", "argwhere"})


def _name(node):
    t = node.target
    return (t if isinstance(t, str) else getattr(t, "__name__", "")).partition(".")[0]


def _sized_by_data(node):
    """Whether the length (dim 0) of ``node``'s result depends on tensor data."""
    if not isinstance(node, fx.Node) or node.op not in ("call_function", "call_method"):
        return False
    name = _name(node)
    if name in _SIZED_BY_DATA:
        return True
    if name not in ("getitem", "index"):
        return False
    Tensor = sys.modules["ember"].Tensor
    masks = [n.meta.get("val") for n in node.all_input_nodes[1:]]
    return any(isinstance(v, Tensor) and v.dtype == sys.modules["ember"].bool for v in masks)


def data_dependent(node):
    """Whether the shape of ``node``'s result may depend on tensor data (it or a node it reads
    is sized by data): its sizes must be traced, never folded to the example's."""
    known = node.meta.get("data_dependent")
    if known is None:
        known = _sized_by_data(node) or any(data_dependent(n) for n in node.all_input_nodes)
        node.meta["data_dependent"] = known
    return known


def shape_of(proxy):
    """``proxy.shape`` of a result sized by data: its length ``aten.sym_size.int(proxy, 0)``,
    its other dims the example's (static); None for a result only computed from one (its
    shape is traced as it is read)."""
    if not _sized_by_data(proxy.node):
        return None
    val = proxy.node.meta["val"]
    length = proxy.tracer.create_proxy("call_function", _aten("sym_size", "int"), (proxy, 0), {})
    return sys.modules["ember"].Size((length, *val.shape[1:]))


def reads_item(node):
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if _is_item(n):
            return True
        stack.extend(n.all_input_nodes)
    return False


def record(tracer, cond, message):
    """``ember._check(cond)`` on a traced condition: an assertion node where it reads a number
    read from data (a check of sizes only is an assumption about the inputs, as before); a
    condition the example inputs break raises now, as eager's ``_check``."""
    if not reads_item(cond.node):
        return
    if cond.node.meta.get("val") is False:
        text = message() if callable(message) else message
        raise RuntimeError(text or "Expected cond to be True, but got False.")
    tracer.create_proxy("call_function", _aten("_assert_scalar"), (cond, ""), {})


def _bound(node, items):
    """(item node, op, literal) of a comparison ``u OP c`` / ``c OP u`` of an integer read."""
    if node.op != "call_function" or node.target not in _OPS or len(node.args) != 2:
        return None
    a, b = node.args
    if a in items and type(b) is int:
        return a, node.target, b
    if b in items and type(a) is int:
        return b, _FLIP[node.target], a
    return None


def _narrow(lo, hi, op, c):
    """The range after ``u OP c``; None where ``[lo, hi]`` implies it already."""
    if op is operator.gt:
        op, c = operator.ge, c + 1
    elif op is operator.lt:
        op, c = operator.le, c - 1
    if op is operator.ge:
        return None if lo >= c else (c, hi)
    return None if hi <= c else (lo, c)


def _expression(node, names):
    if not isinstance(node, fx.Node):
        return repr(node)
    if node in names:
        return names[node]
    if node.op == "call_function" and node.target in _TEXT and len(node.args) == 2:
        a, b = (_expression(x, names) for x in node.args)
        return f"{a} {_TEXT[node.target]} {b}"
    return node.name


def _message(cmp, names):
    return f"Runtime assertion failed for expression {_expression(cmp, names)} on node '{cmp.name}'"


def finish(graph, dynamic=()):
    """Rewrites the item reads and assertions of a renamed export graph as torch's (see the
    module's note); returns ``{"u0": (lo, hi)}`` for the program's range constraints.
    ``dynamic``: the names of the inputs with dynamic dims (a tensor computed from one has no
    fixed numel to bound a count by, as in torch, whose bound is then symbolic and not asserted)."""
    assert_op, item_op = _aten("_assert_scalar"), _aten("item")
    _size_every_data_sized_result(graph)
    items = [n for n in graph.nodes if _is_item(n)]
    if not items:
        return {}
    names, ranges = {}, {}
    for k, item in enumerate(items):
        if item.target is _aten("sym_size", "int"):
            counted = _counted(item.args[0])
            fixed = counted is not None and not _reads_any(counted, set(dynamic))
            # torch bounds a count of a dynamic-sized tensor by int64's max - 1 (no assertion)
            ranges[item] = (0, counted.meta["val"].numel() if fixed else _INT_MAX - 1)
        else:
            item.op, item.target, item.kwargs = "call_function", item_op, {}
            ranges[item] = (-_INT_MAX, _INT_MAX)
        names[item] = f"u{k}"
        item.meta["sym_expr"] = names[item]
    ints = [n for n in items if type(n.meta.get("val")) is int]
    narrowing = {n: [] for n in ints}
    general, traced = [], []
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not assert_op:
            continue
        cmp = node.args[0]
        bound = _bound(cmp, set(ints)) if isinstance(cmp, fx.Node) else None
        if bound is None:
            general.append(node)
            continue
        item, op, c = bound
        new = _narrow(*ranges[item], op, c)
        if new is not None:
            ranges[item] = new
            narrowing[item].append((op, c))
        graph.erase_node(node)  # its name is free again; its comparison's is not yet
        traced.append(cmp)
    for item in ints:
        lo, hi = ranges[item]
        checks = [(operator.ge, lo)] if lo > -_INT_MAX else []
        checks += [(operator.le, hi)] if hi < _INT_MAX - 1 else []  # max - 1: no bound
        spelled = set(checks)
        checks += [(op, c) for op, c in narrowing[item] if (op, c) not in spelled]
        at = item
        for op, c in checks:
            with graph.inserting_after(at):
                cmp = graph.call_function(op, (item, c))
            cmp.meta["val"] = op(item.meta["val"], c)
            with graph.inserting_after(cmp):
                at = graph.call_function(assert_op, (cmp, _message(cmp, names)))
            for n in (cmp, at):
                if "stack_trace" in item.meta:
                    n.meta["stack_trace"] = item.meta["stack_trace"]
            cmp.meta["sym_expr"] = _expression(cmp, names)
    for cmp in dict.fromkeys(traced):
        if not cmp.users:
            graph.erase_node(cmp)
    for node in general:
        cmp = node.args[0]
        node.args = (cmp, _message(cmp, names) if isinstance(cmp, fx.Node) else "")
        if isinstance(cmp, fx.Node):
            cmp.meta["sym_expr"] = _expression(cmp, names)
    return {names[n]: ranges[n] for n in ints}


def _reads_any(node, names):
    """Whether ``node`` is computed from a placeholder named in ``names``."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op == "placeholder" and n.name in names:
            return True
        todo.extend(n.all_input_nodes)
    return False


def _counted(node):
    """The tensor whose nonzero entries a result sized by data has as its length: nonzero's
    (argwhere's) input, the boolean mask of an indexing or masked_select; None if unknown."""
    if _name(node) in ("nonzero", "argwhere"):
        return node.all_input_nodes[0] if node.all_input_nodes else None
    Tensor, boolean = sys.modules["ember"].Tensor, sys.modules["ember"].bool
    for n in node.all_input_nodes[1:]:
        v = n.meta.get("val")
        if isinstance(v, Tensor) and v.dtype == boolean:
            return n
    return None


def _size_every_data_sized_result(graph):
    """torch's form of an op sized by data: ``aten.nonzero.default``, its length read by a
    ``sym_size.int`` node right after it (added where the program reads none; not for a second
    result counting the same tensor, whose length is the same symbol in torch)."""
    nonzero, sym_size = _aten("nonzero"), _aten("sym_size", "int")
    seen = set()  # the tensors counted so far: a second result counting one reuses its symbol
    for node in list(graph.nodes):
        if not _sized_by_data(node):
            continue
        if _name(node) == "nonzero":  # x.nonzero() / ember.nonzero(x)
            node.op, node.target, node.kwargs = "call_function", nonzero, {}
        counted, read = _counted(node), any(u.target is sym_size for u in node.users)
        if read or counted in seen:
            seen.add(counted)
            continue
        seen.add(counted)
        with graph.inserting_after(node):
            size = graph.call_function(sym_size, (node, 0))
        size.meta["val"] = node.meta["val"].shape[0]
        if "stack_trace" in node.meta:
            size.meta["stack_trace"] = node.meta["stack_trace"]


def implied(node):
    """The outcome of a comparison ``u OP c`` of a number read from data that the checks
    recorded before (``_check(u >= 0); _check(u <= 5)``, then ``if u < 6:``) decide, as torch's
    value ranges decide it; None where they do not (the branch is then guard_error's)."""
    items = [n for n in node.graph.nodes if _is_item(n)]
    bound = _bound(node, items)
    if bound is None:
        return None
    item, op, c = bound
    lo, hi = -math.inf, math.inf
    assert_scalar = _aten("_assert_scalar")
    for check in node.graph.nodes:
        if check.target is not assert_scalar or not isinstance(check.args[0], fx.Node):
            continue
        known = _bound(check.args[0], items)
        if known is not None and known[0] is item:
            lo, hi = _narrow(lo, hi, known[1], known[2]) or (lo, hi)
    ends = {op(lo, c), op(hi, c)}  # a comparison with a constant is monotonic in u
    return ends.pop() if len(ends) == 1 else None


def guard_error(node):
    """The error of a Python branch on a number read from data (``if x.item() // 2 >= 5``) while
    exporting: torch's GuardOnDataDependentSymNode text (a RuntimeError), or None where the
    condition reads no such number."""
    if not reads_item(node):
        return None
    items = [n for n in node.graph.nodes if _is_item(n)]
    expr = _expression(node, {n: f"u{k}" for k, n in enumerate(items)})
    return RuntimeError(
        f"Could not guard on data-dependent expression {expr} (unhinted: {expr}).  (Size-like "
        "symbols: none)\n\nA Python branch needs the value of a number read from tensor data; "
        "use torch._check(...) to state what holds, or ember.cond / tensor ops for the branch."
    )
