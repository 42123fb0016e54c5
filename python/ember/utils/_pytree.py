"""ember.utils._pytree, as torch.utils._pytree: flattening nested containers (lists, tuples,
named tuples, struct sequences (torch.return_types), dicts, OrderedDicts, defaultdicts, deques
and registered classes; None is a leaf) into their leaves and a TreeSpec that rebuilds them;
tree_map and friends on top."""

import collections
import dataclasses

__all__ = [
    "TreeSpec",
    "LeafSpec",
    "register_pytree_node",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_all",
    "tree_any",
    "treespec_pprint",
]


@dataclasses.dataclass(frozen=True)
class _Node:
    flatten: object  # obj -> (children, context)
    unflatten: object  # (children, context) -> obj


_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, **_):
    """register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None)

    Makes instances of cls containers: flatten_fn(obj) gives (children, context) and
    unflatten_fn(children, context) rebuilds the object."""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES[cls] = _Node(flatten_fn, unflatten_fn)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, _dict_flatten, lambda c, keys: dict(zip(keys, c)))
register_pytree_node(
    collections.OrderedDict, _dict_flatten, lambda c, keys: collections.OrderedDict(zip(keys, c))
)
register_pytree_node(
    collections.defaultdict,
    lambda d: (list(d.values()), (d.default_factory, list(d.keys()))),
    lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)),
)
register_pytree_node(
    collections.deque,
    lambda d: (list(d), d.maxlen),
    lambda c, maxlen: collections.deque(c, maxlen=maxlen),
)


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _is_structseq_class(cls):
    """A C-style struct sequence (torch.return_types, os.stat_result): built from one sequence."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "n_fields", None), int)
        and isinstance(getattr(cls, "n_sequence_fields", None), int)
    )


def _is_named_sequence_class(cls):
    """A tuple class whose items have names: a namedtuple (built from its items, ``_fields``) or
    a struct sequence (built from one sequence, ``_is_structseq_class``)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and (hasattr(cls, "_fields") or _is_structseq_class(cls))
    )


def _make_sequence(cls, items):
    """A sequence of class ``cls`` (list, tuple or ``_is_named_sequence_class``) holding
    ``items``."""
    if cls is list:
        return list(items)
    if cls is tuple or _is_structseq_class(cls):
        return cls(items)
    return cls(*items)


# a structseq's spec holds its class as the type, rebuilt in _unflatten from the children
_STRUCTSEQ = _Node(lambda t: (list(t), None), None)


def _node_of(obj):
    if _is_namedtuple(obj):
        return _Node(lambda t: (list(t), type(t)), lambda c, cls: cls(*c))
    if type(obj) not in _NODES and _is_structseq_class(type(obj)):
        return _STRUCTSEQ
    return _NODES.get(type(obj))


class TreeSpec:
    """TreeSpec(type, context, children_specs)

    The structure of a flattened tree: the container type, its context (keys, fields) and the
    specs of its children; num_leaves counts the leaves below."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        return (
            isinstance(other, TreeSpec)
            and type(other) is type(self)
            and self.type is other.type
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    def __repr__(self):
        name = getattr(self.type, "__name__", str(self.type))
        children = ", ".join(repr(c) for c in self.children_specs)
        return f"TreeSpec({name}, {self.context}, [{children}])"

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    """LeafSpec()

    The spec of one leaf."""

    def __init__(self):
        self.type = None
        self.context = None
        self.children_specs = []
        self.num_leaves = 1
        self.num_children = 0

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __repr__(self):
        return "*"


def _flatten(tree, is_leaf, leaves):
    node = None if (is_leaf is not None and is_leaf(tree)) else _node_of(tree)
    if node is None:
        leaves.append(tree)
        return LeafSpec()
    children, context = node.flatten(tree)
    kind = "namedtuple" if _is_namedtuple(tree) else type(tree)
    return TreeSpec(kind, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """tree_flatten(tree, is_leaf=None) -> (list, TreeSpec)

    The leaves of tree in order and the spec that tree_unflatten rebuilds it from."""
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def _unflatten(it, spec):
    if spec.is_leaf():
        return next(it)
    children = [_unflatten(it, c) for c in spec.children_specs]
    if spec.type == "namedtuple":
        return spec.context(*children)
    if spec.type not in _NODES and _is_structseq_class(spec.type):
        return spec.type(children)
    return _NODES[spec.type].unflatten(children, spec.context)


def tree_unflatten(leaves, treespec):
    """tree_unflatten(leaves, treespec) -> tree

    The tree of treespec's structure holding `leaves`."""
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
            f"to a pytree that holds {treespec.num_leaves} items ({treespec})."
        )
    return _unflatten(iter(leaves), treespec)


def tree_leaves(tree, is_leaf=None):
    """tree_leaves(tree, is_leaf=None) -> list

    The leaves of tree in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """tree_structure(tree, is_leaf=None) -> TreeSpec

    The spec of tree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """tree_map(func, tree, *rests, is_leaf=None) -> tree

    The tree of the same structure whose leaves are func(leaf, *matching leaves of rests)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_flatten(r, is_leaf)[0] for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    """tree_map_(func, tree, *rests, is_leaf=None) -> tree

    Calls func on each leaf (with the matching leaves of rests) for its effect; returns tree."""
    leaves = tree_leaves(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    """tree_map_only(type_or_types, func, tree, is_leaf=None) -> tree

    tree_map applying func only to leaves of the given type(s), the others kept."""
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """tree_all(pred, tree, is_leaf=None) -> bool

    Whether pred holds for every leaf."""
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred, tree, is_leaf=None):
    """tree_any(pred, tree, is_leaf=None) -> bool

    Whether pred holds for some leaf."""
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def treespec_pprint(treespec):
    """treespec_pprint(treespec) -> str

    The spec written as its tree with * for each leaf."""
    return repr(treespec)
