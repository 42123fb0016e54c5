"""``tree_flatten_spec``: the leaves of a value in the order a TreeSpec gives (torch.fx._pytree).

The forward of a graph whose inputs are the leaves of nested arguments (``ep.module()``) starts
by flattening its arguments with it, as torch's generated code does."""

import collections

from ..utils import _pytree

__all__ = ["tree_flatten_spec"]


def tree_flatten_spec(pytree, spec):
    """tree_flatten_spec(pytree, spec) -> list

    The leaves of ``pytree`` read along ``spec``: a dict's values by the spec's keys (another
    key order, or extra keys, still flatten), a sequence's items by position. Raises
    RuntimeError where ``pytree`` does not have the spec's structure."""
    if spec.is_leaf():
        return [pytree]
    if spec.type in (dict, collections.OrderedDict):
        if not isinstance(pytree, dict) or any(k not in pytree for k in spec.context):
            raise RuntimeError(f"tree_flatten_spec: expected a dict with keys {spec.context}")
        children = [pytree[k] for k in spec.context]
    elif spec.type in (tuple, list):  # torch's generated code passes the args as a list
        if not isinstance(pytree, (tuple, list)) or len(pytree) != spec.num_children:
            raise RuntimeError(
                f"tree_flatten_spec: expected a sequence of {spec.num_children} items; got "
                f"{pytree!r:.80}"
            )
        children = list(pytree)
    else:
        node = _pytree._node_of(pytree)
        kind = "namedtuple" if _pytree._is_namedtuple(pytree) else type(pytree)
        if node is None or kind is not spec.type:
            raise RuntimeError(
                f"tree_flatten_spec: expected a {getattr(spec.type, '__name__', spec.type)}; got "
                f"{type(pytree).__name__}"
            )
        children = node.flatten(pytree)[0]
        if len(children) != spec.num_children:
            raise RuntimeError(
                f"tree_flatten_spec: expected {spec.num_children} items; got {len(children)}"
            )
    return [leaf for c, s in zip(children, spec.children_specs) for leaf in tree_flatten_spec(c, s)]
