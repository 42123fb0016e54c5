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


def _op_name(node):
    t = node.target
    return t if isinstance(t, str) else getattr(t, "__name__", repr(t))


def explain(f, *extra_args, **extra_kwargs):
    """explain(f, *extra_args, **extra_kwargs)

    ``explain(f)(*args, **kwargs)`` captures ``f`` once for those arguments (running it) and
    returns an ExplainOutput: the graphs captured, the graph breaks and their reasons, the ops
    per graph and the guards."""

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
                ops.append(
                    [
                        _op_name(n)
                        for n in gm.graph.nodes
                        if n.op in ("call_function", "call_method")
                    ]
                )
        return ExplainOutput(graphs, reasons, ops, guards)

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
