"""numpy's `axis`/`keepdims` keywords for ember's Python-level functions (Note [numpy keywords]
in python/src/numpy_kwargs.cpp covers the bindings): torch's builtins take them everywhere."""

import functools

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def _takes_dim(fn):
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return "dim" in names or "keepdim" in names


def _renaming(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = {_ALIASES.get(k, k): v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return wrapper


def accepting_numpy_names(fn):
    """fn wrapped to take axis/keepdims when it is a plain Python function taking dim/keepdim;
    fn itself otherwise."""
    if type(fn).__name__ == "function" and _takes_dim(fn):
        return _renaming(fn)
    return fn
