"""``cond``: a branch on a (tensor) predicate that graphs can carry as one node.

ember.compile and ember.fx record a call as one node. When ``ember.export`` traces it (a traced
`pred`), both branches are traced and each output becomes ``where(pred, true_out, false_out)``:
torch requires the branches' outputs to agree in shape and dtype, so selecting gives the same
values (at the price of computing both branches), and the exported graph holds ordinary ops only.
(The C++ runtime of saved programs has no comparison or where op yet, so ``ember.export.save``
refuses such a program, naming the node.)"""

from .. import _C
from .._size_checks import is_proxy

__all__ = ["cond"]


def _pred_value(pred):
    if isinstance(pred, _C.Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"cond: expected pred to be a bool or a tensor with one element; got a tensor of "
                f"shape {tuple(pred.shape)}"
            )
        return bool(pred.item())
    if isinstance(pred, (bool, int)):
        return bool(pred)
    raise RuntimeError(f"cond: expected pred to be a bool or a Tensor; got {type(pred).__name__}")


def _check_output(out):
    leaves = out if isinstance(out, (tuple, list)) else (out,)
    for leaf in leaves:
        if not isinstance(leaf, (_C.Tensor, int, float, bool)) and leaf is not None:
            raise RuntimeError(
                "cond: expected the branches to return tensors (or a tuple/list of them); got "
                f"{type(leaf).__name__}"
            )


def cond(pred, true_fn, false_fn, operands=()):
    """cond(pred, true_fn, false_fn, operands=()) -> Tensor or tuple of Tensors

    Returns ``true_fn(*operands)`` when ``pred`` is true, else ``false_fn(*operands)``.

    ``pred`` is a Python bool or a one-element tensor. Unlike a Python ``if`` on a tensor, a call
    of ``cond`` inside a function compiled with ``ember.compile`` (even with ``fullgraph=True``)
    or traced by ``ember.fx.symbolic_trace`` becomes one graph node that picks its branch each
    time the graph runs, so the capture neither breaks nor guards on the predicate's value.

    Args:
        pred (bool or Tensor): the condition.
        true_fn (callable): run on ``*operands`` when ``pred`` is true.
        false_fn (callable): run on ``*operands`` otherwise.
        operands (tuple or list of Tensors): the branches' arguments.

    Example::

        >>> x = ember.tensor([0.5, 1.0])
        >>> ember.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))
        tensor([0.4794, 0.8415])
    """
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("cond: expected true_fn and false_fn to be callables")
    if isinstance(operands, _C.Tensor):  # torch takes a lone tensor as a one-tuple
        operands = (operands,)
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(
            f"cond: expected operands to be a tuple or list; got {type(operands).__name__}"
        )
    if is_proxy(pred):
        return _traced(pred, true_fn, false_fn, tuple(operands))
    out = (true_fn if _pred_value(pred) else false_fn)(*operands)
    _check_output(out)
    return out


def _traced(pred, true_fn, false_fn, operands):
    import ember

    from ..utils import _pytree

    a, b = true_fn(*operands), false_fn(*operands)
    la, spec = _pytree.tree_flatten(a)
    lb, spec_b = _pytree.tree_flatten(b)
    if len(la) != len(lb) or str(spec) != str(spec_b):
        raise RuntimeError(
            "cond: expected true_fn and false_fn to return the same structure; got "
            f"{spec} and {spec_b}"
        )
    val = pred.node.meta.get("val")
    if getattr(val, "dtype", ember.bool) != ember.bool:
        pred = pred.bool()
    out = [ember.where(pred, x, y) for x, y in zip(la, lb)]
    return _pytree.tree_unflatten(out, spec)
