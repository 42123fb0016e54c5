"""ember.device: where a tensor lives (only 'cpu' has kernels today)."""


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
            raise RuntimeError(
                "Expected one of cpu, cuda, meta, mps device type at start of device string: "
                + str(type)
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
    """Raises for devices ember has no kernels for; returns None for cpu/None."""
    if dev is None:
        return
    d = device(dev) if not isinstance(dev, device) else dev
    if d.type == "cuda":
        raise NoCudaError(
            f"{op}: Torch not compiled with CUDA enabled (ember runs on the CPU only)"
        )
    if d.type != "cpu":
        raise RuntimeError(
            f"{op}: ember was built without {d.type} support; only the 'cpu' device is available"
        )
