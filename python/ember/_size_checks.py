"""``ember._check`` and ``ember._check_is_size``: the assertions torch.export's documentation uses
in exportable code. Inside a trace a condition on traced values is accepted as an assumption
about the inputs, as torch's export records it."""


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
