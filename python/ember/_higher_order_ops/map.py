"""``map(f, xs, *args)``: ``f`` applied to each slice of ``xs`` along dim 0, results stacked
(torch._higher_order_ops.map).

Eagerly (and under ember's tracers, which record the ops it runs) it is the loop its definition
states: ``stack([f(xs[i], *args) for i in range(len)])`` over the leaves of pytrees, so autograd
flows through it as through any composite. The checks and their texts are torch's."""

from .. import _C
from .._size_checks import is_proxy

__all__ = ["map"]


def map(f, xs, *args):  # noqa: A001 (torch's name)
    """map(f, xs, *args) -> Tensor or pytree of Tensors

    ``f(x_i, *args)`` for each slice ``x_i`` of the tensors of ``xs`` (a tensor or a pytree of
    tensors, all with one leading size) along dim 0, each result leaf stacked along a new dim 0.

    Example::

        >>> xs = ember.arange(6.0).reshape(3, 2)
        >>> ember._higher_order_ops.map(lambda x, y: x * y, xs, ember.tensor(2.0))
        tensor([[ 0.,  2.],
                [ 4.,  6.],
                [ 8., 10.]])
    """
    from ..utils import _pytree

    flat_xs, xs_spec = _pytree.tree_flatten(xs)
    if not all(isinstance(t, _C.Tensor) or is_proxy(t) for t in flat_xs):
        raise RuntimeError(f"Mapped xs can only consist of tensors. Got xs {flat_xs}.")
    shapes = [t.shape for t in flat_xs]
    if not shapes:
        raise RuntimeError("map: expected xs to hold at least one tensor")
    if any(len(s) == 0 for s in shapes):
        raise RuntimeError(f"map: expected the mapped tensors to have a dim 0; got shapes {shapes}")
    n = shapes[0][0]
    if n == 0:
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    if any(s[0] != n for s in shapes):
        raise RuntimeError(
            f"Leading dimensions of mapped xs must be consistent. Got shapes {shapes}."
        )
    results = [f(_pytree.tree_unflatten([t[i] for t in flat_xs], xs_spec), *args) for i in range(n)]
    flat, out_spec = zip(*(_pytree.tree_flatten(r) for r in results))
    stacked = []
    for leaves in zip(*flat):
        if not all(isinstance(leaf, _C.Tensor) or is_proxy(leaf) for leaf in leaves):
            raise RuntimeError(f"Cannot stack {leaves}.")
        stacked.append(_stack(list(leaves)))
    return _pytree.tree_unflatten(stacked, out_spec[0])


def _stack(leaves):
    import ember  # the public function: tracers record it

    return ember.stack(leaves)
