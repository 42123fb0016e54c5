"""torch.library.get_ctx for ember's fake kernels: the context a fake kernel asks for a size that
depends on the data (``ctx.new_dynamic_size()``, as a custom nonzero's fake kernel does).

ember's fake kernels run on concrete tensors (opcheck's test_faketensor) or on meta tensors (the
Meta key), with no symbolic sizes. Under opcheck a dynamic size is its lower bound, and the test
accepts any real size where the fake output has that bound, as torch's test accepts any size
where the fake output has an unbacked size. On meta tensors the size cannot be known, and
``get_ctx()`` raises torch's error, as torch's meta kernel does."""

import threading
import warnings

_local = threading.local()


class FakeImplCtx:
    """FakeImplCtx(op)

    What ``get_ctx()`` returns inside a fake kernel that opcheck runs."""

    def __init__(self, op):
        self._op = op
        self._dynamic = []  # the values handed out by new_dynamic_size

    def new_dynamic_size(self, *, min=0, max=None):
        """new_dynamic_size(*, min=0, max=None) -> int

        A size that depends on the data (the number of nonzeros): ember's fake kernels run on
        concrete shapes, so it is ``min``, which opcheck reads as "any size"."""
        if min < 0:
            raise ValueError(
                f"ctx.new_dynamic_size(min={min}, ...): expected min to be greater than or equal "
                "to 0: this API can only create non-negative sizes."
            )
        self._dynamic.append(min)
        return min

    def create_unbacked_symint(self, *, min=2, max=None):
        """create_unbacked_symint(*, min=2, max=None) -> int

        Deprecated: new_dynamic_size."""
        warnings.warn(
            "`create_unbacked_symint` is deprecated, please use `new_dynamic_size` instead",
            FutureWarning,
            stacklevel=2,
        )
        return self.new_dynamic_size(min=min, max=max)


def get_ctx():
    """get_ctx() -> FakeImplCtx

    The context of the fake kernel running on this thread (None outside one)."""
    getter = getattr(_local, "getter", None)
    return None if getter is None else getter()


class _ctx_getter:
    def __init__(self, getter):
        self.getter = getter

    def __enter__(self):
        self.prev = getattr(_local, "getter", None)
        _local.getter = self.getter

    def __exit__(self, *exc):
        _local.getter = self.prev
        return False


def run_fake(fn, op, args, kwargs):
    """(fn's outputs, the dynamic sizes it asked for): the fake kernel run as opcheck runs it."""
    ctx = FakeImplCtx(op)
    with _ctx_getter(lambda: ctx):
        return fn(*args, **kwargs), ctx._dynamic


def meta_kernel(qualname, fn):
    """The op's Meta kernel: its fake kernel, where get_ctx() raises torch's error (a meta tensor
    has no data, so a data-dependent size cannot be given)."""
    code = getattr(fn, "__code__", None)
    source = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"

    def error_on_ctx():
        raise RuntimeError(
            f"{qualname} ({source}): You're trying to run this operator with meta Tensors (as "
            "opposed to FakeTensors), but this operator may return an output Tensor with "
            "data-dependent shape. Meta Tensors don't support operators with outputs that have "
            "data-dependent shapes but FakeTensors do. If your operator does not return an "
            "output with data-dependent shape, make sure the FakeTensor and/or meta kernel does "
            "not call torch.library.get_ctx(). Otherwise, please use FakeTensors."
        )

    def meta(*args, **kwargs):
        with _ctx_getter(error_on_ctx):
            return fn(*args, **kwargs)

    return meta


def shapes_match(real, fake, dynamic):
    """Whether a fake output's shape is the real one's, a size from new_dynamic_size matching any
    real size."""
    return len(real) == len(fake) and all(r == f or (f in dynamic) for r, f in zip(real, fake))


def check_outputs(op, real, fake, dynamic):
    """opcheck's test_faketensor comparison of the real and fake outputs (tensors), raising
    torch's errors: a count mismatch (AssertionError), a shape or dtype mismatch (RuntimeError,
    torch's MetadataMismatchError)."""
    context = f"When comparing the output of {op} on FakeTensor and concrete Tensors, found"
    if len(fake) != len(real):
        raise AssertionError(f"{context} mismatch in number of returns {len(fake)} != {len(real)}")
    for idx, (r, f) in enumerate(zip(real, fake)):
        if not shapes_match(r.shape, f.shape, dynamic):
            why = f"Shapes {r.shape} and {f.shape} are not equal!"
        elif r.dtype != f.dtype:
            why = f"Dtypes {r.dtype} and {f.dtype} are not equal!"
        else:
            continue
        where = "" if len(real) == 1 else f" for output[{idx}]"
        raise RuntimeError(f"{context} mismatched tensor metadata{where}: {why}")
