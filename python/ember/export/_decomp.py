"""Decomposition tables of ExportedProgram.run_decompositions (torch.export's API).

torch's table maps an op overload (``torch.ops.aten.gelu.default``) to a Python function that
computes it from other ops. ember's captured graphs name the same overloads (_aten_names.py);
a table key names the operator by its aten overload or packet (``ember.ops.aten.gelu``, with
``import ember as torch`` the same object), by its name (``"aten::gelu"``), or is an ember
function itself. Each call of the operator (function, method or Python operator) is replaced by
the function's own calls, traced on the node's arguments; the program is then mapped onto the
runtime op set as without a table. ``default_decompositions()`` gives an empty, editable table:
ember's lowering to runtime ops needs none, so every entry is the user's choice."""

import operator

from .. import fx

_OPERATORS = {
    operator.add: "add",
    operator.sub: "sub",
    operator.mul: "mul",
    operator.truediv: "div",
    operator.matmul: "matmul",
    operator.neg: "neg",
    operator.pow: "pow",
}


class CustomDecompTable(dict):
    """CustomDecompTable()

    The table ``default_decompositions()`` returns: a dict from operators to decomposition
    functions; ``pop`` of an operator it does not hold is not an error (ember decomposes
    nothing by default)."""

    def pop(self, key, *default):
        return super().pop(key, *(default or (None,)))

    def copy(self):
        return CustomDecompTable(self)


def default_decompositions():
    """default_decompositions() -> CustomDecompTable

    The table run_decompositions uses by default: empty in ember (see the module docstring)."""
    return CustomDecompTable()


def _key_name(key):
    if isinstance(key, str):
        return key.split("::")[-1].split(".")[0], None
    packet = getattr(key, "overloadpacket", None)
    if packet is not None:
        return str(getattr(packet, "__name__", packet)).split(".")[-1], None
    qual = getattr(key, "_qualified_op_name", None)
    if qual is not None:
        return str(qual).split("::")[-1].split(".")[-1], None
    if callable(key):
        return None, key
    raise TypeError(f"run_decompositions: expected op overloads or functions as keys; got {key!r}")


class _Table:
    def __init__(self, table):
        self.by_id, self.by_name = {}, {}
        for key, fn in table.items():
            if fn is None:
                continue
            if not callable(fn):
                raise TypeError(
                    f"run_decompositions: expected decomp_table[{key!r}] to be a function; got "
                    f"{fn!r}"
                )
            name, func = _key_name(key)
            if func is not None:
                self.by_id[id(func)] = fn
                name = getattr(func, "__name__", None)
            if name:
                self.by_name.setdefault(name, fn)

    def find(self, node):
        if node.op == "call_function":
            hit = self.by_id.get(id(node.target))
            if hit is not None:
                return hit
            packet = getattr(node.target, "overloadpacket", None)  # aten.gelu.default -> gelu
            name = _OPERATORS.get(node.target) or getattr(
                packet, "_name", getattr(node.target, "__name__", None)
            )
        elif node.op == "call_method":
            name = node.target
        else:
            return None
        return self.by_name.get(name) if name else None


def _trace(fn, args, kwargs):
    """(Graph of fn traced on the Nodes among args/kwargs, those Nodes in order)."""
    nodes = []
    fx.map_arg((args, kwargs), nodes.append)
    names = [f"a{i}" for i in range(len(nodes))]

    def call(values):
        it = iter(values)
        a, k = fx.map_arg((args, kwargs), lambda _: next(it))
        return fn(*a, **k)

    scope = {"_call": call}
    params = ", ".join(names)
    exec(f"def decomposition({params}):\n    return _call([{params}])\n", scope)
    return fx.Tracer().trace(scope["decomposition"]), nodes


def splice(graph, fn, args, read, meta):
    """Traces ``fn`` on ``args`` (their Nodes as inputs) and copies its calls into ``graph``,
    reading each input Node through ``read``; returns the result (a node or a tuple of them).
    The new nodes get ``meta``'s entries but its example value (the caller's to set)."""
    sub, inputs = _trace(fn, args, {})
    env, it = {}, iter(inputs)
    for sn in sub.nodes:
        if sn.op == "placeholder":
            env[sn] = read(next(it))
        elif sn.op == "output":
            return fx.map_arg(sn.args[0], lambda m: env[m])
        else:
            env[sn] = graph.node_copy(sn, lambda m: env[m])
            env[sn].meta.update({k: v for k, v in meta.items() if k != "val"})
    return None


def apply(graph, table, find=None):
    """A new Graph with each call the table covers replaced by its decomposition's calls
    (``find(node)``: the decomposition of a node, or None, in place of a table); ``graph``
    itself when there is none."""
    if find is None:
        table = _Table(table)
        find = table.find
    calls = [n for n in graph.nodes if n.op in ("call_function", "call_method")]
    if not any(find(n) is not None for n in calls):
        return graph
    new = fx.Graph()
    env = {}
    for node in graph.nodes:
        fn = find(node) if node.op in ("call_function", "call_method") else None
        if fn is None:
            source = node.args[0] if node.target is operator.getitem else None
            if isinstance(env.get(source), tuple):  # an item of a decomposed multi-output call
                env[node] = env[source][node.args[1]]
            else:
                env[node] = new.node_copy(node, lambda n: env[n])
            env[node].meta.update(node.meta)
            continue
        sub, inputs = _trace(fn, node.args, node.kwargs)
        sub_env = {}
        placeholders = iter(inputs)
        for sn in sub.nodes:
            if sn.op == "placeholder":
                sub_env[sn] = env[next(placeholders)]
            elif sn.op == "output":
                out = sn.args[0]
                many = isinstance(out, (tuple, list)) and all(isinstance(o, fx.Node) for o in out)
                if not (isinstance(out, fx.Node) or (many and out)):
                    raise RuntimeError(
                        f"run_decompositions: the decomposition of {node.target} returned "
                        f"{out!r}; expected tensors computed from its inputs"
                    )
                env[node] = tuple(sub_env[o] for o in out) if many else sub_env[out]
            elif sn.op == "get_attr":
                raise RuntimeError(
                    f"run_decompositions: the decomposition of {node.target} reads a tensor "
                    "constant; expected it to compute from its inputs only"
                )
            else:
                sub_env[sn] = new.node_copy(sn, lambda n: sub_env[n])
        if isinstance(env[node], fx.Node):
            env[node].meta.update(node.meta)
        else:  # each result takes its part of the call's example value
            val = node.meta.get("val")
            for i, n in enumerate(env[node]):
                if isinstance(val, (tuple, list)) and i < len(val):
                    n.meta["val"] = val[i]
    new.lint()
    return new
