"""torch.library's triton_op and wrap_triton, as a torch install without triton has them.

torch's triton_op is a custom op whose implementation calls only torch ops and triton kernels
wrapped by wrap_triton, so the implementation itself is its fake kernel (run on fake inputs it
gives the outputs' metadata) and torch.compile traces into it. ember launches no triton kernels:
the op runs its implementation eagerly, its fake kernel is the implementation, and wrap_triton
fails where torch's does without triton, on importing it (ModuleNotFoundError)."""

__all__ = ["triton_op", "wrap_triton"]


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """triton_op(name, fn=None, /, *, mutates_args, schema=None) -> CustomOpDef

    A custom operator ``"namespace::name"`` backed by fn (torch's: fn calls torch ops and
    wrap_triton'd kernels), its own fake kernel. Usable as a decorator."""
    from .library import custom_op

    def inner(fn):
        op = custom_op(name, fn, mutates_args=mutates_args, schema=schema)
        op.register_fake(fn)
        return op

    return inner if fn is None else inner(fn)


def wrap_triton(triton_kernel, /):
    """wrap_triton(triton_kernel, /)

    torch's wrapper that lets compile trace a triton kernel's launch. It needs triton, as
    torch's does (ModuleNotFoundError without it); ember has no device to launch a kernel on."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    if not isinstance(triton_kernel, (JITFunction, Autotuner)):
        raise RuntimeError(
            "wrap_triton only works on functions annotated with triton.jit or triton.autotune"
        )
    raise NotImplementedError(
        "wrap_triton: ember launches no triton kernels (it has no GPU backend)"
    )
