"""``cond``: a branch on a (tensor) predicate that graphs can carry as one node.

ember.compile and ember.fx record a call as one node. When ``ember.export`` traces it (a traced
`pred`), both branches are traced and each output becomes ``where(pred, true_out, false_out)``:
torch requires the branches' outputs to agree in shape and dtype, so selecting gives the same
values (at the price of computing both branches), and the exported graph holds ordinary ops only.
A program exported with a cond node keeps it: ``ember.export.save`` stores each branch as a
graph in the file and the C++ runtime picks the branch when it runs (ember/export/_cond.py)."""

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
    taken = _pred_value(pred)
    out = (true_fn if taken else false_fn)(*operands)
    _check_output(out)
    if _C.is_grad_enabled():
        out = _zero_grads_of_untaken(false_fn if taken else true_fn, operands, out)
    return out


def _leaves(outputs):
    """The leaf tensors requiring grad that `outputs`' autograd graphs reach."""
    found, seen = {}, {}  # `seen` keeps the node wrappers alive, so their ids stay unique
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen[id(fn)] = fn
        var = getattr(fn, "variable", None)
        if var is not None:
            found[id(var)] = var
            continue
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    found.update((id(t), t) for t in outputs if t.grad_fn is None and t.requires_grad)
    return list(found.values())


def _zero_grads_of_untaken(other_fn, operands, out):
    """torch traces both branches and lifts the tensors either reads as operands of one node, so
    a backward through the result gives zeros (not None) to the parameters only the branch not
    taken reads. Eagerly that is: run the other branch once to find the leaves its result reaches,
    and attach them to the result through an identity whose backward returns zeros for them."""
    from ..utils import _pytree

    leaves, spec = _pytree.tree_flatten(out)
    if not any(isinstance(t, _C.Tensor) and t.requires_grad for t in leaves):
        return out
    try:
        other = _pytree.tree_flatten(other_fn(*operands))[0]
    except Exception:  # the branch not taken may fail on these values; torch never runs it
        return out
    extra = _leaves([t for t in other if isinstance(t, _C.Tensor) and t.requires_grad])
    if not extra:
        return out
    idx = [i for i, t in enumerate(leaves) if isinstance(t, _C.Tensor) and t.requires_grad]
    res = _ZeroGradsTo.apply(len(idx), *[leaves[i] for i in idx], *extra)
    res = res if isinstance(res, tuple) else (res,)
    for i, t in zip(idx, res):
        leaves[i] = t
    return _pytree.tree_unflatten(leaves, spec)


def _identity_function():
    from ..autograd import Function

    class ZeroGradsTo(Function):
        @staticmethod
        def forward(ctx, n, *tensors):
            ctx.n = n
            ctx.shapes = [(t.shape, t.dtype) for t in tensors[n:]]
            return tuple(t.view_as(t) for t in tensors[:n])

        @staticmethod
        def backward(ctx, *grads):
            import ember

            zeros = [ember.zeros(s, dtype=d) for s, d in ctx.shapes]
            return (None, *grads, *zeros)

    return ZeroGradsTo


class _Lazy:
    def __getattr__(self, name):
        fn = _identity_function()
        globals()["_ZeroGradsTo"] = fn
        return getattr(fn, name)


_ZeroGradsTo = _Lazy()


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
