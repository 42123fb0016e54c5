"""ember.fx: torch.fx's toolkit for capturing and transforming programs as graphs.

``symbolic_trace`` records a module's or function's operations into a ``Graph`` of ``Node``s;
``GraphModule`` turns a Graph back into a runnable module with readable generated code;
``Interpreter``/``Transformer`` run and rewrite graphs node by node; ``passes.shape_prop`` and
``subgraph_rewriter`` are passes over them."""

from . import experimental, passes, proxy, subgraph_rewriter  # noqa: F401  (torch.fx's submodules)
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = [
    "Graph",
    "GraphModule",
    "Node",
    "Proxy",
    "Tracer",
    "Interpreter",
    "Transformer",
    "replace_pattern",
    "PH",
    "symbolic_trace",
    "wrap",
    "map_arg",
    "has_side_effect",
]
