"""Grad-mode switches usable as context managers and as decorators."""

import functools
import inspect

from .. import _C

# Bound once: these run on every with-block, where attribute lookups on _C showed up.
_is_grad_enabled = _C.is_grad_enabled
_set_grad_enabled = _C._set_grad_enabled


class _DecoratorContextManager:
    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(lambda: self.__class__(*self._args), fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)

        return wrapper

    _args = ()


def _wrap_generator(make_ctx, fn):
    """A decorated generator function runs each step of its generator (first, send, throw,
    close) inside the mode, and the caller's code between steps outside it, as torch's does."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_ctx():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException as exc:
                    with make_ctx():
                        response = gen.throw(exc)
                else:
                    with make_ctx():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return wrapper


class no_grad(_DecoratorContextManager):
    """no_grad()

    Disables gradient recording inside the block."""

    def __enter__(self):
        self._prev = _is_grad_enabled()
        _set_grad_enabled(False)

    def __exit__(self, *exc):
        _set_grad_enabled(self._prev)


class enable_grad(_DecoratorContextManager):
    """enable_grad(orig_func=None)

    Enables gradient recording inside the block (e.g. within no_grad)."""

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode)

    Sets grad mode now (as a function) or for a block (as a context manager)."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._mode = bool(mode)
        self._args = (mode,)
        _C._set_grad_enabled(self._mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)
        return super().__call__(fn)


class inference_mode(_DecoratorContextManager):
    """inference_mode(mode=True)

    Like no_grad, for code that will never need gradients."""

    def __init__(self, mode=True):
        self._mode = bool(mode)
        self._args = (mode,)

    def __enter__(self):
        self._prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        # torch's InferenceMode(enabled) sets grad mode to `not enabled`: inference_mode(False)
        # turns gradients on, even inside no_grad.
        _C._set_grad_enabled(not self._mode)
        _C._set_inference_mode(self._mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev[0])
        _C._set_inference_mode(self._prev[1])

    def __call__(self, fn):
        if isinstance(fn, bool):
            return inference_mode(fn)
        return super().__call__(fn)


# ember's engine runs a backward pass on the calling thread; the switch below is kept so that
# programs written for torch's multithreaded engine run, and reads back what was set.
_multithreading = [True]


def is_multithreading_enabled():
    """is_multithreading_enabled() -> bool

    Whether set_multithreading_enabled last enabled multithreaded backward (True by default)."""
    return _multithreading[0]


class set_multithreading_enabled(_DecoratorContextManager):
    """set_multithreading_enabled(mode)

    Sets whether backward may run on several threads, now (as a function) or for a block (as a
    context manager). ember's backward runs on the calling thread either way."""

    def __init__(self, mode):
        self._prev = _multithreading[0]
        self._args = (mode,)
        _multithreading[0] = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _multithreading[0] = self._prev

    def clone(self):
        return self.__class__(self._args[0])
