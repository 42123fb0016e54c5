"""``ember._check``, ``ember._check_is_size`` and ``ember._assert``: the assertions torch's
documentation uses in traceable and exportable code. Inside a trace a ``_check`` condition on
traced values is accepted as an assumption about the inputs, as torch's export records it."""


def is_proxy(x):
    """Whether `x` is a value being traced (an ember.fx Proxy)."""
    from .fx import Proxy

    return isinstance(x, Proxy)


def _check(cond, message=None):
    """_check(cond, message=None) -> None

    Raises RuntimeError unless `cond` is true (``message()`` gives the text when it is
    callable). Inside ``ember.export`` a condition on traced sizes is accepted as an assumption
    about the inputs, as torch's export records it."""
    if is_proxy(cond):
        return
    if not bool(cond):
        text = message() if callable(message) else message
        raise RuntimeError(text or "Expected cond to be True, but got False.")


def _check_is_size(i, message=None, *, max=None):
    """_check_is_size(i, message=None, *, max=None) -> None

    Checks that `i` can be a size: ``0 <= i`` (and ``i <= max`` when given)."""
    if is_proxy(i):
        return
    _check(i >= 0, message or (lambda: f"Expected {i} to be a size (>= 0)"))
    if max is not None:
        _check(i <= max, message or (lambda: f"Expected {i} <= {max}"))


def _assert(condition, message):
    """_assert(condition, message) -> None

    ``assert condition, message`` that tracing records (torchvision's models check input sizes
    with it): a traced condition becomes a call_function node of the graph."""
    from ._override_helpers import handle_torch_function, has_torch_function

    if type(condition) is not _tensor_class() and has_torch_function((condition,)):
        return handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


def _tensor_class():
    from . import _C

    return _C.Tensor
