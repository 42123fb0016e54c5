"""Node: one operation of an fx Graph, with torch.fx's fields and editing methods."""

import builtins
import collections
import operator

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Target", "Argument"]

Target = object  # a str (placeholder, get_attr, call_method, call_module) or a callable
Argument = object  # a Node, a constant, or a tuple/list/dict/slice of Arguments

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root")

# Functions whose call is kept by dead-code elimination although nothing uses its result.
_side_effectful_functions = {operator.setitem, builtins.print}

# Random ops (by name) are impure too: removing one would change the random stream seen by the
# ops after it.
_RANDOM_NAMES = frozenset(
    """dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout rrelu rrelu_
    rand rand_like randn randn_like randint randint_like randperm bernoulli multinomial normal
    poisson gumbel_softmax fractional_max_pool2d fractional_max_pool3d uniform exponential
    geometric cauchy log_normal random""".split()
)


def has_side_effect(fn):
    """has_side_effect(fn) -> fn

    Marks ``fn`` as side-effectful: graph nodes calling it are never removed as dead code.
    """
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a, fn):
    """map_aggregate(a, fn) -> Argument

    Applies ``fn`` to every leaf of ``a``, descending into tuples, lists, dicts and slices;
    lists and dicts come back immutable.
    """
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        # torch.return_types are structseqs, which torch rebuilds as plain tuples
        if not hasattr(a, "_fields") or type(a).__module__ == "ember.return_types":
            return t
        return type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a, fn):
    """map_arg(a, fn) -> Argument

    Applies ``fn`` to every Node in ``a`` (descending into collections), leaving the rest as is.
    """
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _target_name(target):
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    if mod == "builtins":
        return f"builtins.{name}"
    if mod and mod.startswith("ember"):
        from ._codegen import ember_qualified_name, shown_name  # lazy: codegen needs Node

        q = ember_qualified_name(target)
        if q is not None:
            return shown_name(q)
    return f"{mod}.{name}" if mod else name


ArgsKwargsPair = collections.namedtuple("ArgsKwargsPair", ["args", "kwargs"])
ArgsKwargsPair.__doc__ = "ArgsKwargsPair(args, kwargs): Node.normalized_arguments' result."


class Node:
    """Node(graph, name, op, target, args, kwargs, return_type=None)

    One operation of a Graph. ``op`` is one of placeholder, get_attr, call_function,
    call_method, call_module, output; ``target`` is what it calls or reads; ``args`` and
    ``kwargs`` may contain other Nodes (its inputs), whose ``users`` then contain this node.
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise ValueError(f"Node: expected op in {_OPS[:-1]}; got {op!r}")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(
            target, str
        ):
            raise ValueError(f"Node target for {op} must be a str; got {target!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node target for call_function must be callable; got {target!r}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}  # an ordered set of the nodes in args and kwargs
        self._args = ()
        self._kwargs = {}
        self.users = {}  # the nodes that use this one, in insertion order (an ordered set)
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._sort_key = ()
        self.meta = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list ---------------------------------------------------------------------

    @property
    def next(self):
        """next -> Node: the node after this one in the graph (the root sentinel at the end)."""
        return self._next

    @property
    def prev(self):
        """prev -> Node: the node before this one in the graph."""
        return self._prev

    def prepend(self, x):
        """prepend(x) -> None

        Moves or inserts node ``x`` immediately before this node.
        """
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """append(x) -> None

        Moves or inserts node ``x`` immediately after this node.
        """
        self._next.prepend(x)

    def _remove_from_list(self):
        # The node keeps its own links so that an iteration standing on it can go on.
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- arguments and uses ------------------------------------------------------------------

    @property
    def args(self):
        """args -> tuple: the positional arguments, Nodes standing for the values they compute."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """kwargs -> dict: the keyword arguments."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """all_input_nodes -> list[Node]: the distinct Nodes in args and kwargs, in order."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        """update_arg(idx, arg) -> None

        Replaces positional argument ``idx`` with ``arg``.
        """
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """insert_arg(idx, arg) -> None

        Inserts ``arg`` into the positional arguments at ``idx``.
        """
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """update_kwarg(key, arg) -> None

        Sets keyword argument ``key`` to ``arg``.
        """
        kwargs = dict(self.kwargs)
        kwargs[key] = arg
        self.kwargs = kwargs

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        seen = self._input_nodes

        def collect(n):
            # a node of another graph is accepted here, as torch's: Graph.lint() reports it
            seen.setdefault(n)
            return n

        self._args = map_arg(tuple(new_args), collect)
        self._kwargs = map_arg(dict(new_kwargs), collect)
        for n in seen:
            n.users.setdefault(self)

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):  # fmt: skip
        """replace_all_uses_with(replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False) -> list[Node]

        Makes every user of this node (for which ``delete_user_cb`` is true) use ``replace_with``
        instead; returns the users changed.
        """  # noqa: E501
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), but "
                    "replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        to_process = list(self.users)
        changed = []
        for user in to_process:
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input, new_input):
        """replace_input_with(old_input, new_input) -> None

        Replaces every use of node ``old_input`` in this node's arguments with ``new_input``.
        """

        def swap(n):
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---- queries -----------------------------------------------------------------------------

    @property
    def stack_trace(self):
        """stack_trace -> str | None: where in user code the node was traced from."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    def normalized_arguments(
        self, root, arg_types=None, kwarg_types=None, normalize_to_only_use_kwargs=False
    ):
        """normalized_arguments(root, arg_types=None, kwarg_types=None,
            normalize_to_only_use_kwargs=False) -> ArgsKwargsPair or None

        The node's arguments matched to the signature of its Python function or module's
        forward, with defaults filled in: the first argument positional (when given so) and
        the rest by keyword, or all by keyword with ``normalize_to_only_use_kwargs``. None for
        other nodes and targets without a Python signature (methods, ember's built-in ops,
        Python operators)."""
        import inspect

        if self.op == "call_module":
            fn = getattr(root.get_submodule(self.target), "forward", None)
        elif self.op == "call_function" and inspect.isfunction(inspect.unwrap(self.target)):
            fn = inspect.unwrap(self.target)  # through ember's C guards (F.relu's sparse guard)
        else:
            return None
        try:
            bound = inspect.signature(fn).bind(*self.args, **self.kwargs)
        except (TypeError, ValueError):
            return None
        bound.apply_defaults()
        kwargs = dict(bound.arguments)
        if any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            for p in inspect.signature(fn).parameters.values()
        ):
            return None
        args = ()
        if not normalize_to_only_use_kwargs and self.args and kwargs:
            first = next(iter(kwargs))
            args = (kwargs.pop(first),)
        return ArgsKwargsPair(args, kwargs)

    def is_impure(self):
        """is_impure() -> bool

        True when the node must not be removed although nothing uses it: placeholders and
        outputs, in-place methods (names ending in ``_``), op overloads writing an argument,
        random ops, side-effectful functions.
        """
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            t = self.target
            if t in _side_effectful_functions:
                return True
            schema = getattr(t, "_schema", None)  # an OpOverload writing an argument (copy_)
            if schema is not None and any(a.is_write for a in schema.arguments):
                return True
            name = getattr(t, "__name__", "")
            return (
                name.startswith("_assert")  # torch._assert, aten._assert_scalar, ...
                or name.endswith("_")
                and not name.endswith("__")
                or name in _RANDOM_NAMES
                or (self.kwargs.get("inplace") is True)
            )
        if self.op == "call_method":
            return self.target.endswith("_") or self.target in _RANDOM_NAMES
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is None:
                return False
            try:
                sub = mod.get_submodule(self.target)
            except AttributeError:
                return False
            if getattr(sub, "_is_impure", False):
                return True
            # Dropout-like layers draw random numbers while training; in-place layers write.
            return getattr(sub, "inplace", False) is True or (
                type(sub).__name__.lower().endswith("dropout") and sub.training
            )
        return False

    def _pretty_print_target(self):
        return _target_name(self.target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """format_node(placeholder_names=None, maybe_return_typename=None) -> str | None

        The node as one line of the graph's printout, as torch.fx formats it:
        ``%name : [num_users=1] = call_function[target=torch.relu](args = (%x,), kwargs = {})``.
        """
        if self.op == "placeholder":
            arg = self.target
            if placeholder_names is not None:
                placeholder_names.append(arg)
                return None
            default = f"={self.args[0]!r}" if self.args else ""
            users = len(self.users)
            return f"%{self.name} : [num_users={users}] = placeholder[target={arg}{default}]"
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {self.type}"
            return f"return {self.args[0]}"
        if self.op == "get_attr":
            users = len(self.users)
            return f"%{self.name} : [num_users={users}] = get_attr[target={self.target}]"
        return (
            f"%{self.name} : [num_users={len(self.users)}] = "
            f"{self.op}[target={self._pretty_print_target()}]"
            f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
        )

    def __repr__(self):
        return self.name


def _format_arg(arg, max_list_len=float("inf")):
    if isinstance(arg, Node):
        return "%" + str(arg)
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)
