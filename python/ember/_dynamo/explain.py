"""explain: what ember.compile makes of a function, for one call (torch._dynamo.explain)."""

from . import config
from .eval_frame import _Cache

__all__ = ["explain", "ExplainOutput", "GraphCompileReason"]


class GraphCompileReason:
    """Why a capture broke: ``reason``, the user's frames (``user_stack``), ``graph_break``."""

    def __init__(self, reason, user_stack, graph_break=True):
        self.reason, self.user_stack, self.graph_break = reason, user_stack, graph_break

    def __repr__(self):
        return f"GraphCompileReason(reason={self.reason!r}, user_stack={self.user_stack!r})"


class ExplainOutput:
    """The report: ``graphs`` (GraphModules), ``graph_count``, ``graph_break_count``,
    ``break_reasons``, ``op_count``, ``ops_per_graph``, ``out_guards``."""

    def __init__(self, graphs, break_reasons, ops_per_graph, out_guards):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.break_reasons = break_reasons
        self.graph_break_count = len(break_reasons)
        self.ops_per_graph = ops_per_graph
        self.op_count = sum(len(ops) for ops in ops_per_graph)
        self.out_guards = out_guards
        self.compile_times = ""

    def __str__(self):
        lines = [
            f"Graph Count: {self.graph_count}",
            f"Graph Break Count: {self.graph_break_count}",
            f"Op Count: {self.op_count}",
            "Break Reasons:",
        ]
        for i, r in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {r.reason}", "    User Stack:"]
            lines += [f"      {f}" for f in r.user_stack]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines += [f"    {op}" for op in ops]
        lines.append("Out Guards:")
        lines += [f"  Guard {i}: {g}" for i, g in enumerate(self.out_guards, 1)]
        return "\n".join(lines) + "\n"

    __repr__ = __str__


def _torch_ops(gm):
    """The graph's ops as torch's explain lists them: the targets of call_function nodes.

    torch's graphs record ``x.relu()`` as a call_method node (not listed) and ``x @ y`` as a
    call of ``operator.matmul``; ember records both as calls of Tensor's methods, so a method
    is left out unless it is an operator's (``__matmul__`` is listed as ``operator.matmul``)."""
    import operator

    from .. import _C

    ops = []
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        name = getattr(n.target, "__name__", None)
        if isinstance(name, str) and getattr(_C.Tensor, name, None) is n.target:
            if not (name.startswith("__") and name.endswith("__")):
                continue  # a method call (torch: call_method)
            base = name[2:-2]
            fn = getattr(operator, base, None) or getattr(operator, base[1:], None)
            if fn is None and base.startswith("i"):
                fn = getattr(operator, base, None)
            if fn is None:
                continue
            ops.append(fn)
            continue
        ops.append(n.target)
    return ops


def explain(f, *extra_args, **extra_kwargs):
    """explain(f, *extra_args, **extra_kwargs)

    ``explain(f)(*args, **kwargs)`` captures ``f`` once for those arguments (running it) and
    returns an ExplainOutput: the graphs captured, the graph breaks and their reasons, the ops
    per graph (the called functions and operators, as torch lists them: method calls such as
    ``x.relu()`` are not counted) and the guards."""

    def inner(*args, **kwargs):
        from ..nn.modules.module import Module
        from .backends import lookup_backend

        root = f if isinstance(f, Module) else getattr(f, "__self__", None)
        fn = f.__call__ if isinstance(f, Module) else f
        cache = _Cache(
            fn, root if isinstance(root, Module) else None, lookup_backend("eager"), False, None
        )
        with config.patch(recompile_limit=max(config.recompile_limit, 1)):
            cache(*args, **kwargs)
        graphs, reasons, ops, guards = [], [], [], []
        for entry in cache.entries:
            guards.extend(entry.guards)
            reasons.extend(GraphCompileReason(r, s) for r, s in entry.breaks)
            for gm in entry.graph_modules:
                graphs.append(gm)
                ops.append(_torch_ops(gm))
        return ExplainOutput(graphs, reasons, ops, guards)

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
