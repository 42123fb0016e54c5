"""ember.device: where a tensor lives: 'cpu', or a PrivateUse1 backend's device (Note
[PrivateUse1] in core/allocator.h)."""

from . import _C


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
