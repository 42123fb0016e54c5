"""``ember._check``, ``ember._check_is_size`` and ``ember._assert``: the assertions torch's
documentation uses in traceable and exportable code. Inside a trace a ``_check`` condition on
traced sizes is accepted as an assumption about the inputs, as torch's export records it; one on
a number read from tensor data (``x.item()``: torch's unbacked ``u0``) becomes a runtime
assertion of the graph, in ember.export (export/_unbacked.py) and in ember.compile
(_dynamo/unbacked.py)."""

import warnings


def is_proxy(x):
    """Whether `x` is a value being traced (an ember.fx Proxy)."""
    from .fx import Proxy

    return isinstance(x, Proxy)


def _check(cond, message=None):
    """_check(cond, message=None) -> None

    Raises RuntimeError unless `cond` is true (``message()`` gives the text when it is
    callable). Traced conditions: see the module's note."""
    if is_proxy(cond):
        record = getattr(cond.tracer, "record_check", None)
        if record is not None:  # ember.export: an assertion on a number read from data
            record(cond, message)
        return
    record = getattr(type(cond), "_record_check", None)
    if record is not None:  # a comparison captured by ember.compile: a runtime assertion
        cond = record(cond, message)
    if not bool(cond):
        text = message() if callable(message) else message
        raise RuntimeError(text or "Expected cond to be True, but got False.")


def _check_is_size(i, message=None, *, max=None):
    """_check_is_size(i, message=None, *, max=None) -> None

    Checks that `i` can be a size: ``0 <= i`` (and ``i <= max`` when given). Deprecated in
    torch 2.13 (a FutureWarning, as torch's) in favour of ``_check(i >= 0)``."""
    warnings.warn(
        "_check_is_size will be removed in a future PyTorch release along with "
        "guard_size_oblivious.     Use _check(i >= 0) instead.",
        FutureWarning,
        stacklevel=2,
    )
    if is_proxy(i) and getattr(i.tracer, "record_check", None) is None:
        return
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


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
