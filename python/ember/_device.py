"""ember.device: where a tensor lives: 'cpu', 'meta' (shape and dtype, no data: Note [Meta
storage] in core/storage.cpp), or a PrivateUse1 backend's device (Note [PrivateUse1] in
core/allocator.h); and the default device that factories use when given none."""

import threading

from . import _C


# The default device, per thread as torch's (its device context is a function mode, and modes
# are per thread): `stack` holds the devices of the `with ember.device(...)` blocks open in this
# thread, innermost last; `base` the one set_default_device gave (None: cpu).
class _DefaultDevice(threading.local):
    stack = ()  # class-level defaults: a thread that set nothing reads these without an exception
    base = None


_DEFAULT = _DefaultDevice()
# False until some thread first sets a default device: factories then skip the per-thread lookup.
_EVER_SET = [False]


class device:
    """device(type, index=None)

    A device such as ``device('cpu')`` or ``device('cuda', 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, idx = type.split(":", 1)
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta", "mps"):
            custom = _C._get_privateuse1_backend_name()
            if type in (custom, "privateuseone"):
                type = custom
            else:
                raise RuntimeError(
                    f"Expected one of cpu, cuda, meta, mps, {custom} device type at start of "
                    f"device string: {type}"
                )
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        _EVER_SET[0] = True
        _DEFAULT.stack = (*_DEFAULT.stack, self)
        return self

    def __exit__(self, *exc):
        _DEFAULT.stack = _DEFAULT.stack[:-1]
        return False


CPU = device("cpu")


class NoCudaError(AssertionError, RuntimeError):
    """CUDA asked of a CPU build: an AssertionError, as torch's "not compiled with CUDA", and a
    RuntimeError, as for ember's other missing devices."""


def check_device(dev, op="ember"):
    """Raises for devices ember has no kernels for; returns None for cpu/None and the device for a
    PrivateUse1 backend's."""
    if dev is None:
        return
    d = device(dev) if not isinstance(dev, device) else dev
    if d.type == _C._get_privateuse1_backend_name():
        if not _C._privateuse1_has_allocator():
            raise RuntimeError(
                f"{op}: the '{d.type}' backend registered no allocator, so it has no tensors"
            )
        return d
    if d.type == "cuda":
        raise NoCudaError(
            f"{op}: Torch not compiled with CUDA enabled (ember runs on the CPU only)"
        )
    if d.type == "meta":
        return d
    if d.type != "cpu":
        raise RuntimeError(
            f"{op}: ember was built without {d.type} support; only the 'cpu' device is available"
        )


def on_device(dev, t, requires_grad=False):
    """A freshly made CPU tensor ``t`` moved to ``dev`` (a PrivateUse1 device from check_device),
    as a leaf that requires grad when asked; ``t`` itself when dev is None."""
    if dev is None:
        return t
    out = _C._copy_to_device(t.detach(), str(dev))
    if requires_grad:
        out.requires_grad_(True)
    return out


def default_device():
    """The default device of this thread (ember.device), or None while it is the cpu."""
    stack = _DEFAULT.stack
    d = stack[-1] if stack else _DEFAULT.base
    return None if d is None or d.type == "cpu" else d


def set_default(dev):
    """Sets this thread's default device outside any `with` block (None: cpu)."""
    _EVER_SET[0] = True
    _DEFAULT.base = None if dev is None else device(dev)


def factory_device(dev, op, pin_memory=False):
    """The device a factory makes its tensor on: dev, else the default device; None for the cpu
    (check_device's answer otherwise). With pin_memory=True it raises as torch's CPU build does
    (check_pin_memory)."""
    if dev is None:
        dev = default_device() if _EVER_SET[0] else None
        check_pin_memory(pin_memory, dev)
        return dev
    dev = check_device(dev, op)
    check_pin_memory(pin_memory, dev)
    return dev


def check_generator_device(dev):
    """Generator(device=dev) of the CPU-only build: a cpu device is its only one; the rest raise
    torch's CPU build's errors (called by the binding, python/src/ops_random.cpp)."""
    if isinstance(dev, bool) or not isinstance(dev, (int, str, device)):
        raise TypeError(
            f"Generator(): argument 'device' must be torch.device, not {type(dev).__name__}"
        )
    if isinstance(dev, int):  # an accelerator's index
        if dev < 0:
            raise RuntimeError("Device index must not be negative")
        raise RuntimeError("Cannot access accelerator device when none is available.")
    kind = device(dev).type
    if kind == "cuda":
        raise RuntimeError("Cannot get CUDA generator without ATen_cuda library.")
    if kind == "mps":
        raise RuntimeError("Cannot execute getNewGenerator() without MPS backend.")
    if kind == "meta":
        raise RuntimeError("META device type not an accelerator.")
    if kind != "cpu":
        raise RuntimeError(
            "Please register PrivateUse1HooksInterface by `RegisterPrivateUse1HooksInterface` "
            "first."
        )


def check_pin_memory(pin_memory, dev):
    """A factory's pin_memory=True: pinned memory is an accelerator's, and the CPU-only build has
    no allocator for it, so the call raises torch's RuntimeError; a meta tensor has no memory to
    pin, and torch makes it."""
    if pin_memory and not is_meta(dev):
        raise RuntimeError(
            "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
            "allocator is available on this system."
        )


def is_meta(dev):
    return dev is not None and dev.type == "meta"


def meta_empty(shape, dtype, requires_grad=False, stride=None):
    """A meta tensor (no data) of shape and dtype (default dtype when None)."""
    out = _C._empty_meta(
        [int(s) for s in shape],
        None if stride is None else list(stride),
        dtype or _C.get_default_dtype(),
    )
    if requires_grad:
        out.requires_grad_(True)
    return out


def place(dev, t, requires_grad=False):
    """A freshly made CPU tensor t put on dev (None: t itself): as a meta tensor of its shape,
    dtype and strides, or moved to a PrivateUse1 device; a leaf that requires grad when asked."""
    if dev is None:
        out = t
    elif dev.type == "meta":
        out = _C._to_meta(t.detach())
    else:
        out = _C._copy_to_device(t.detach(), str(dev))
    if requires_grad:
        out.requires_grad_(True)
    return out
