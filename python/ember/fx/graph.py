"""Graph: torch.fx's IR, a doubly linked list of Nodes with the methods that build, edit, check
and print it."""

import copy
import inspect
import warnings

from . import _codegen
from ._namespace import Namespace, target_to_str
from .node import Node, _format_arg, map_arg

__all__ = ["Graph", "PythonCode"]

PythonCode = _codegen.PythonCode


class _NodeList:
    """A live view of a graph's nodes, in order (or reversed)."""

    def __init__(self, graph, direction="_next"):
        self._graph = graph
        self._direction = direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        direction = self._direction
        cur = getattr(root, direction)
        while cur is not root:
            nxt = getattr(cur, direction)  # read before yielding: the caller may erase cur
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _NodeList(self._graph, "_prev" if self._direction == "_next" else "_next")

    def __repr__(self):
        return repr(list(self))


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class Graph:
    """Graph(owning_module=None, tracer_cls=None, tracer_extras=None)

    The intermediate representation of ember.fx: Nodes in execution order. Build one by hand
    with ``placeholder``/``call_function``/``output`` or get one from ``symbolic_trace``.
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._body_transformer = None  # on_generate_code: edits the generated body's lines
        self._pytree_info = None  # _codegen.PyTreeInfo: forward takes and returns nested values

    # ---- properties --------------------------------------------------------------------------

    @property
    def owning_module(self):
        """owning_module -> Module | None: the GraphModule this graph belongs to."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """nodes -> _NodeList: the nodes in order (a live view; ``reversed()`` works)."""
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """find_nodes(*, op, target=None, sort=True) -> list[Node]

        The nodes of kind ``op`` (and calling ``target`` when given), in graph order.
        """
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ----------------------------------------------------------------------------

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """create_node(op, target, args=None, kwargs=None, name=None, type_expr=None) -> Node

        Creates a node and inserts it at the current insert point (the end by default).
        """
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """placeholder(name, type_expr=None, default_value=inspect.Signature.empty) -> Node

        An input of the graph, named ``name`` in the generated forward's signature.
        """
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """get_attr(qualified_name, type_expr=None) -> Node

        Reads the attribute ``qualified_name`` (a parameter, buffer or tensor) of the module.
        """
        mod = self._owning_module
        if mod is not None and not _has_attr_path(mod, qualified_name):
            warnings.warn(
                "Attempted to insert a get_attr Node with no underlying reference in the "
                "owning GraphModule! Call GraphModule.add_submodule to add the necessary "
                "submodule, GraphModule.add_parameter to add the necessary Parameter, or "
                "nn.Module.register_buffer to add the necessary buffer",
                stacklevel=2,
            )
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """call_module(module_name, args=None, kwargs=None, type_expr=None) -> Node

        Calls the submodule at dotted path ``module_name``.
        """
        mod = self._owning_module
        if mod is not None and not _has_attr_path(mod, module_name):
            warnings.warn(
                "Attempted to insert a call_module Node with no underlying reference in the "
                "owning GraphModule! Call GraphModule.add_submodule to add the necessary "
                "submodule",
                stacklevel=2,
            )
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """call_method(method_name, args=None, kwargs=None, type_expr=None) -> Node

        Calls method ``method_name`` of ``args[0]`` with the remaining arguments.
        """
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """call_function(the_function, args=None, kwargs=None, type_expr=None) -> Node

        Calls the free function ``the_function`` (``ember.relu``, ``operator.add``, ...).
        """
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """output(result, type_expr=None) -> Node

        The graph's result: ``result`` (a Node or a structure of Nodes) is what forward returns.
        """
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """node_copy(node, arg_transform=lambda x: x) -> Node

        Copies ``node`` (possibly of another graph) into this graph; ``arg_transform`` maps its
        input Nodes to this graph's.
        """
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """graph_copy(g, val_map, return_output_node=False) -> Argument | None

        Appends copies of the nodes of ``g`` (all but its output) to this graph, recording in
        ``val_map`` the new node of each old one; returns what ``g``'s output returned, mapped.
        """
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def inserting_before(self, n=None):
        """inserting_before(n=None) -> context manager

        New nodes go right before ``n`` inside the ``with`` block (the start when None).
        """
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """inserting_after(n=None) -> context manager

        New nodes go right after ``n`` (one after another) inside the ``with`` block.
        """
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # ---- editing -----------------------------------------------------------------------------

    def erase_node(self, to_erase):
        """erase_node(to_erase) -> None

        Removes a node that no other node uses.
        """
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users "
                f"in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        # The name stays taken, as torch.fx keeps it: a node created later gets a fresh suffix.
        # Drop the uses it made.
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node=None):
        """eliminate_dead_code(is_impure_node=None) -> bool

        Removes the nodes whose results nothing uses, except impure ones (in-place methods,
        random ops, side-effectful functions, placeholders, the output). Returns True if the
        graph changed.
        """
        self.lint()
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # ---- checks and output -------------------------------------------------------------------

    def lint(self):
        """lint() -> None

        Checks the graph's invariants: ops are known, each node's inputs are defined before it
        and belong to this graph, names are unique, users agree with args, and get_attr /
        call_module targets exist in the owning module.
        """
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in _codegen_ops:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for inp in node._input_nodes:
                if inp.graph is not self:
                    raise RuntimeError(
                        f"Argument '{inp}' of Node '{node}' does not belong to this Graph, but "
                        "was used as an argument! If you are copying nodes from another graph, "
                        "make sure to use ``arg_transform`` on node_copy() to remap values"
                    )
                if inp not in seen:
                    raise RuntimeError(
                        f"Argument '{inp}' of Node '{node}' was used before it has been defined! "
                        "Please check that Nodes in the graph are topologically ordered"
                    )
                if node not in inp.users:
                    raise RuntimeError(f"Node '{inp}' does not list its user '{node}'")
            for user in node.users:
                if node not in user._input_nodes:
                    raise RuntimeError(f"Node '{node}' lists '{user}', which does not use it")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
        mod = self._owning_module
        if mod is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module") and not _has_attr_path(mod, node.target):
                    raise RuntimeError(
                        f"Node {node} target {node.target} references nonexistent attribute "
                        f"{node.target} of {type(mod).__name__}"
                    )

    def python_code(self, root_module="self", *, verbose=False):
        """python_code(root_module='self', *, verbose=False) -> PythonCode

        The source of the forward function computing this graph, with its globals.
        """
        return _codegen.python_code(self, root_module, verbose=verbose)

    def on_generate_code(self, make_transformer):
        """on_generate_code(make_transformer) -> context manager

        Installs ``make_transformer(previous)`` as the transformer of the generated code: a
        function from the list of the forward body's lines (each ending in a newline, without
        indentation) to a new list, applied by ``python_code`` (and so by
        ``GraphModule.recompile``). Takes effect at once; used in a with block, the previous
        transformer comes back on exit.
        """
        prior = self._body_transformer
        self._body_transformer = make_transformer(prior)
        graph = self

        class _Restore:
            def __enter__(self):
                return graph

            def __exit__(self, *exc):
                graph._body_transformer = prior
                return False

        return _Restore()

    def process_inputs(self, *args):
        """process_inputs(*args) -> tuple

        The inputs as the generated forward receives them (ember's code generator does not
        flatten inputs: unchanged)."""
        return args

    def process_outputs(self, out):
        """process_outputs(out) -> Any

        The output as the caller receives it (unchanged)."""
        return out

    def __str__(self):
        return_type = [""]
        lines = [n.format_node(None, return_type) for n in self.nodes]
        body = "".join(f"    {s}\n" for s in lines if s)
        return f"graph(){return_type[0]}:\n{body}".rstrip("\n")

    def print_tabular(self):
        """print_tabular() -> None

        Prints the nodes as a table of opcode, name, target, args and kwargs.
        """
        rows = [
            [n.op, n.name, n._pretty_print_target(), _format_arg(n.args), _format_arg(n.kwargs)]
            for n in self.nodes
        ]
        header = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
        fmt = "  ".join("{:<%d}" % w for w in widths)
        print(fmt.format(*header))
        print(fmt.format(*("-" * w for w in widths)))
        for r in rows:
            print(fmt.format(*r))

    # ---- copying and pickling ----------------------------------------------------------------

    def __deepcopy__(self, memo=None):
        memo = {} if memo is None else memo
        g = Graph(tracer_cls=self._tracer_cls, tracer_extras=self._tracer_extras)
        g._pytree_info = self._pytree_info
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        if out is not None:
            rv, old_out = out
            new_out = g.output(rv, type_expr=old_out.type)
            new_out.meta = copy.copy(old_out.meta)
        return g

    def __reduce__(self):
        from ._pickle import graph_state

        return (_rebuild_graph, (graph_state(self),))


def _rebuild_graph(state):
    from ._pickle import graph_from_state

    return graph_from_state(state)


_codegen_ops = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def _get_attr(root, target):
    """The attribute of ``root`` at the dotted path ``target`` (``layer1.0.weight``)."""
    for part in target.split("."):
        root = getattr(root, part)
    return root


def _has_attr_path(mod, target):
    try:
        _get_attr(mod, target)
    except AttributeError:
        return False
    return True
