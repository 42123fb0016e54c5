"""torch.utils._python_dispatch: TorchDispatchMode, the modes that see every ATen overload a
program runs (Note [Dispatch modes] in ember/_dispatch_bridge.py says how ember reaches them and
what they do not see)."""

import contextlib

from .. import _C, _dispatch_bridge

__all__ = ["TorchDispatchMode"]


class TorchDispatchMode:
    """TorchDispatchMode()

    Subclass it and define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``:
    inside ``with MyMode():`` each ATen overload (``ember.ops.aten.add.Tensor``, with ``name()``,
    ``_schema``, ``overloadpacket``, ``tags``) and each custom op reaches it, the mode switched
    off meanwhile, so ``func(*args, **kwargs)`` computes the result (through the modes entered
    before this one). Modes nest: the innermost sees a call first."""

    def __init__(self, _dispatch_key=None):
        if _dispatch_key is not None:
            raise NotImplementedError(
                "TorchDispatchMode: a dispatch key is not supported by ember (its modes run "
                "above the CPU kernels)"
            )

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        stack = _dispatch_bridge.modes()
        if not stack or stack[-1] is not self:
            raise AssertionError(
                "TorchDispatchMode.__exit__: this mode is not the innermost active one; exit "
                "modes in the reverse order of entering them"
            )
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        """A new mode of this class; enter it with ``with``."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


def _get_current_dispatch_mode():
    """The innermost active dispatch mode of this thread, or None."""
    stack = _dispatch_bridge.modes()
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack():
    """This thread's active dispatch modes, outermost first."""
    return list(_dispatch_bridge.modes())


def _push_mode(mode):
    _dispatch_bridge.modes().append(mode)
    _C._set_python_dispatch(True)
    _dispatch_bridge.enter_bridge()


def _pop_mode(k=None):
    """Removes and returns the innermost mode (or the innermost of type ``k``)."""
    stack = _dispatch_bridge.modes()
    if not stack:
        raise AssertionError("Trying to pop empty mode stack")
    index = len(stack) - 1
    if k is not None:
        index = next((i for i in reversed(range(len(stack))) if type(stack[i]) is k), None)
        if index is None:
            raise AssertionError(f"Attempted to pop a mode of type {k} that is not active")
    mode = stack.pop(index)
    _C._set_python_dispatch(bool(stack))
    _dispatch_bridge.exit_bridge()
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily(k=None):
    mode = _pop_mode(k)
    try:
        yield mode
    finally:
        _push_mode(mode)


@contextlib.contextmanager
def _disable_current_modes():
    """Every dispatch mode of this thread off inside the block (popped, then pushed back)."""
    stack = _dispatch_bridge.modes()
    saved = list(stack)
    while stack:
        _pop_mode()
    try:
        yield saved
    finally:
        for mode in saved:
            _push_mode(mode)
