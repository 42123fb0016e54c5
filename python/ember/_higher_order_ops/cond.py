"""``cond``: a branch on a (tensor) predicate that graphs can carry as one node.

ember.compile, ember.fx and ember.export record a call as one node. ember.export then turns it
into torch's ``higher_order.cond(pred, true_graph_0, false_graph_0, operands)`` over branch
graph modules (``CondOp`` below runs it; ember/export/_cond.py builds it), ``ember.export.save``
stores each branch as a graph in the file and the C++ runtime picks the branch when it runs."""

import types
import warnings

from .. import _C
from .._argparse import _caller_level
from .._size_checks import is_proxy

__all__ = ["CondOp", "LiftedBranch", "cond", "cond_op", "lift_closures"]


def _pred_value(pred):
    if isinstance(pred, _C.Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred}."
            )  # torch's text
        return bool(pred.item())
    if isinstance(pred, (bool, int)):
        return bool(pred)
    raise RuntimeError(f"cond: expected pred to be a bool or a Tensor; got {type(pred).__name__}")


def _exporting():
    from ..export._tracing import active

    return active("export")


def _check_output(out):
    # a traced value is a tensor being traced: a constant pred under export runs the branch on
    # the traced operands
    leaves = out if isinstance(out, (tuple, list)) else (out,)
    for leaf in leaves:
        if (
            not isinstance(leaf, (_C.Tensor, int, float, bool))
            and leaf is not None
            and not is_proxy(leaf)
        ):
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
    if isinstance(pred, (bool, int, float)) and _exporting():
        warnings.warn(
            "Pred is a Python constant. When used with torch.cond, it specializes on one of the "
            "branches. If you want torch.cond to preserve two branches, please make the predicate "
            "a boolean tensor or a SymBool.",
            UserWarning,
            stacklevel=_caller_level(),  # the user's line, through export's tracing mode
        )  # torch's text
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

    try:
        other = _pytree.tree_flatten(other_fn(*operands))[0]
    except Exception:  # the branch not taken may fail on these values; torch never runs it
        return out
    extra = _leaves([t for t in other if isinstance(t, _C.Tensor) and t.requires_grad])
    return _with_zero_grads(out, extra)


def _with_zero_grads(out, extra):
    """``out`` attached to the leaves ``extra`` through an identity whose backward gives them
    zeros."""
    from ..utils import _pytree

    leaves, spec = _pytree.tree_flatten(out)
    if not extra:
        return out
    idx = [
        i
        for i, t in enumerate(leaves)
        if isinstance(t, _C.Tensor) and (t.requires_grad or t.is_floating_point())
    ]
    if not idx:
        return out
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
    """The call recorded as one node by the tracer of ``pred`` (the raw function reached while
    tracing, as ``torch._higher_order_ops.cond``: the same node the tracing mode records for
    ``ember.cond``). Traced values a branch reads through its closure become extra operands."""
    args = lift_closures((pred, true_fn, false_fn, operands))
    return pred.tracer.create_proxy("call_function", cond, args, {})


def is_cond(target):
    """Whether a call target is ``ember.cond`` (or a function wrapping it, such as a tracing
    mode's routing wrapper)."""
    while target is not None:
        if target is cond:
            return True
        target = getattr(target, "__wrapped__", None)
    return False


def lift_closures(args):
    """``(pred, true_fn, false_fn, operands)`` of a traced cond call, with the enclosing
    function's traced values a branch reads (``+ y`` with ``y`` a forward argument) lifted as
    operands, as torch's cond lifts them: each such branch becomes a LiftedBranch and the values
    (first reached first, once each) follow the call's own operands."""
    pred, true_fn, false_fn, operands = args
    if isinstance(operands, _C.Tensor) or is_proxy(operands):
        operands = (operands,)
    if not isinstance(operands, (tuple, list)):
        return args
    n = len(operands)
    lifted, out = [], []
    for fn in (true_fn, false_fn):
        if isinstance(fn, LiftedBranch):  # lifted already (cond's own _traced, then the tracer)
            return args
        slots = []
        for k, cell in enumerate(getattr(fn, "__closure__", None) or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if is_proxy(value):
                j = next((i for i, v in enumerate(lifted) if v is value), len(lifted))
                if j == len(lifted):
                    lifted.append(value)
                slots.append((k, n + j))
        out.append(LiftedBranch(fn, n, slots) if slots else fn)
    if not lifted:
        return args
    return (pred, *out, tuple(operands) + tuple(lifted))


class LiftedBranch:
    """A branch whose closure cells ``slots`` ([(cell index, operand index)]) held traced values:
    called with the cond's operands (its own ``n`` then the lifted ones), it runs the branch with
    those cells holding the lifted operands. ``__closure__`` is the branch's own, as export's
    naming of closure tensors reads it."""

    def __init__(self, fn, n, slots):
        self.fn, self.n, self.slots = fn, n, slots
        self.__closure__ = fn.__closure__
        self.__name__ = getattr(fn, "__name__", "branch")

    def __call__(self, *operands):
        fn = self.fn
        cells = list(fn.__closure__)
        for k, i in self.slots:
            cells[k] = types.CellType(operands[i])
        rebound = types.FunctionType(
            fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells)
        )
        rebound.__kwdefaults__ = fn.__kwdefaults__
        return rebound(*operands[: self.n])


class CondOp:
    """``ember.ops.higher_order.cond``: the operator exported graphs call (torch's
    ``torch.ops.higher_order.cond``). ``cond_op(pred, true_fn, false_fn, operands)`` runs the
    branch ``pred`` picks on ``operands``; an exported branch is a graph module returning a
    tuple, read by ``getitem`` nodes."""

    __name__ = "cond"
    __qualname__ = "cond"
    __module__ = "ember.ops.higher_order"
    __ember_qualname__ = "ember.ops.higher_order.cond"
    namespace = "higher_order"
    _export_op = "cond"

    def name(self):
        return "cond"

    def __call__(self, pred, true_fn, false_fn, operands):
        if not isinstance(operands, (tuple, list)):
            raise RuntimeError(
                f"cond: expected operands to be a tuple or list; got {type(operands).__name__}"
            )
        if is_proxy(pred):  # an exported graph traced again (save's branches, a nested cond)
            return _traced(pred, true_fn, false_fn, tuple(operands))
        out = (true_fn if bool(pred) else false_fn)(*operands)  # torch's bool() of the pred
        if _C.is_grad_enabled():  # the operands the branch did not read get zeros, as torch's
            flat = (
                [t for t in out if isinstance(t, _C.Tensor)]
                if isinstance(out, (tuple, list))
                else [out]
            )
            reached = {id(t) for t in _leaves([t for t in flat if t.requires_grad])}
            extra = [
                t
                for t in operands
                if isinstance(t, _C.Tensor)
                and t.is_leaf
                and t.requires_grad
                and id(t) not in reached
            ]
            out = _with_zero_grads(out, extra)
        return out

    def __str__(self):
        return "cond"

    def __repr__(self):
        return f"<ember.ops.higher_order.cond at {id(self):#x}>"


cond_op = CondOp()
