"""Interpreter runs a GraphModule node by node (each op kind an overridable method); Transformer
runs it on Proxies to build a new GraphModule, as torch.fx's."""

import inspect

from .. import overrides
from ..nn.modules.module import Module
from ._symbolic_trace import Tracer, _TracingMode
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Interpreter(module, garbage_collect_values=True, graph=None)

    Executes ``module``'s graph (or ``graph``) one node at a time: ``run(*args)`` calls
    ``run_node`` for each node, which dispatches to ``placeholder``, ``get_attr``,
    ``call_function``, ``call_method``, ``call_module`` or ``output``; override any of them.
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # Each value is dropped after its last use, as the generated code does.
            self.user_to_last_uses = {}
            seen = set()
            for node in reversed(self.graph.nodes):
                for inp in node.all_input_nodes:
                    if inp not in seen:
                        seen.add(inp)
                        self.user_to_last_uses.setdefault(node, []).append(inp)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """run(*args, initial_env=None, enable_io_processing=True) -> Any

        Runs the graph on ``args`` and returns what its output node returns. ``initial_env``
        maps nodes to values known in advance (those nodes are not run).
        """
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and not getattr(e, "_fx_noted", False):
                    msg = f"While executing {node.format_node()}"
                    e.args = (f"{e.args[0]}\n\n{msg}",) + e.args[1:] if e.args else (msg,)
                    try:
                        e._fx_noted = True
                    except AttributeError:
                        pass
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, ()):
                    self.env.pop(to_delete, None)
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """boxed_run(args_list) -> Any

        Runs the graph on the values in ``args_list``, clearing the list.
        """
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        """run_node(n) -> Any

        Runs node ``n``: fetches its arguments' values and calls the method named by its op.
        """
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per op kind ----------------------------------------------------------------

    def placeholder(self, target, args, kwargs):
        """placeholder(target, args, kwargs) -> Any

        The next positional input (a list of the rest for ``*args``), else the default.
        """
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from si

    def get_attr(self, target, args, kwargs):
        """get_attr(target, args, kwargs) -> Any

        The module attribute at dotted path ``target``.
        """
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """call_function(target, args, kwargs) -> Any

        Calls ``target(*args, **kwargs)``.
        """
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """call_method(target, args, kwargs) -> Any

        Calls method ``target`` of ``args[0]``.
        """
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        """call_module(target, args, kwargs) -> Any

        Calls the submodule at ``target``.
        """
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        """output(target, args, kwargs) -> Any

        The graph's result, ``args[0]``.
        """
        return args[0]

    # ---- helpers ---------------------------------------------------------------------------------

    def fetch_attr(self, target):
        """fetch_attr(target) -> Any

        The attribute of ``self.module`` at dotted path ``target``.
        """
        atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[: i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n):
        """fetch_args_kwargs_from_env(n) -> (tuple, dict)

        ``n``'s args and kwargs with each Node replaced by its computed value.
        """
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n):
        """map_nodes_to_values(args, n) -> Argument

        ``args`` with each Node replaced by its value in the environment.
        """

        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to "
                    "diagnose such issues"
                )
            return self.env[n_arg]

        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph, root):
        super().__init__()
        self.graph = graph
        self.root = root
        self._tensor_attrs = {}
        for name, t in list(root.named_buffers()):
            self._tensor_attrs[id(t)] = name
        self._param_proxy_cache = {}
        self._module_paths = {id(m): name for name, m in root.named_modules()}

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """Transformer(module)

    An Interpreter that runs the graph on Proxies, so that each node's method builds the new
    graph: override ``call_function`` and friends to rewrite nodes; ``transform()`` returns the
    resulting GraphModule.
    """

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def run_node(self, n):
        """run_node(n) -> Any

        As Interpreter's, with call_function targets as user code sees them while tracing (Note
        [Routed callables] in proxy.py).
        """
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        target = overrides.routed(n.target) if n.op == "call_function" else n.target
        return getattr(self, n.op)(target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        """placeholder(target, args, kwargs) -> Proxy

        A placeholder of the new graph (keeping the default value).
        """
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        """get_attr(target, args, kwargs) -> Proxy

        A get_attr node of the new graph.
        """
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        """call_module(target, args, kwargs) -> Proxy

        A call_module node of the new graph.
        """
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        """call_function(target, args, kwargs) -> Proxy

        A call_function node of the new graph.
        """
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """transform() -> GraphModule

        Runs the transformation and returns the new GraphModule (sharing the module's
        submodules and parameters).
        """
        with _TracingMode(self.tracer):
            result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(
                map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a)
            )
        root = self.module if isinstance(self.module, Module) else Module()
        return GraphModule(root, self.new_graph)
