"""``ember.cond``, ``ember._check`` and ``ember._check_is_size``: the control-flow operator and the
assertions that torch.export's documentation uses in exportable code.

``cond(pred, true_fn, false_fn, operands)`` calls one branch eagerly. When ``ember.export``
traces it (a traced `pred`), both branches are traced and each output becomes
``where(pred, true_out, false_out)``: torch requires the branches' outputs to agree in shape and
dtype, so selecting gives the same values (at the price of computing both branches), and the
exported graph holds ordinary ops only. (The C++ runtime of saved programs has no comparison or
where op yet, so ``ember.export.save`` refuses such a program, naming the node.)"""

__all__ = ["cond"]


def _is_proxy(x):
    from .fx import Proxy

    return isinstance(x, Proxy)


def _any_proxy(xs):
    return any(_is_proxy(x) for x in xs)


def cond(pred, true_fn, false_fn, operands=()):
    """cond(pred, true_fn, false_fn, operands=()) -> Tensor or tuple of Tensors

    ``true_fn(*operands)`` if `pred` (a bool, or a one-element tensor) holds, else
    ``false_fn(*operands)``; both must return tensors of the same shapes and dtypes. Exported
    programs keep both branches (see the module's docstring)."""
    from . import _C

    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: expected true_fn and false_fn to be callables")
    if not isinstance(operands, (tuple, list)):
        raise TypeError(
            f"cond: expected operands to be a tuple or list; got {type(operands).__name__}"
        )
    if _is_proxy(pred):
        return _traced(pred, true_fn, false_fn, tuple(operands))
    if isinstance(pred, _C.Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"cond: expected pred to have one element; got {pred.numel()}")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int)):
        raise TypeError(f"cond: expected pred to be a bool or a tensor; got {type(pred).__name__}")
    return (true_fn if pred else false_fn)(*operands)


def _traced(pred, true_fn, false_fn, operands):
    import ember

    from .utils import _pytree

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


def _check(cond, message=None):
    """_check(cond, message=None) -> None

    Raises RuntimeError unless `cond` is true (``message()`` gives the text when it is
    callable). Inside ``ember.export`` a condition on traced sizes is accepted as an assumption
    about the inputs, as torch's export records it."""
    if _is_proxy(cond):
        return
    if not bool(cond):
        text = message() if callable(message) else message
        raise RuntimeError(text or "Expected cond to be True, but got False.")


def _check_is_size(i, message=None, *, max=None):
    """_check_is_size(i, message=None, *, max=None) -> None

    Checks that `i` can be a size: ``0 <= i`` (and ``i <= max`` when given)."""
    if _is_proxy(i):
        return
    _check(i >= 0, message or (lambda: f"Expected {i} to be a size (>= 0)"))
    if max is not None:
        _check(i <= max, message or (lambda: f"Expected {i} <= {max}"))
