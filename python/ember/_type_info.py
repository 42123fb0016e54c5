"""torch.finfo and torch.iinfo: numerical limits of ember's dtypes."""

from ._C import Tensor, get_default_dtype
from ._C import dtype as _DType

__all__ = ["finfo", "iinfo"]

_SCALAR_TYPE_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def scalar_type_name(dtype):
    """scalar_type_name(dtype) -> str

    PyTorch's C++ name of a dtype ('Float', 'Long'), as its error messages print it."""
    return _SCALAR_TYPE_NAMES[repr(dtype).split(".")[1]]


# bfloat16 has float32's exponent and an 8-bit significand; numpy has no bfloat16.
_BFLOAT16 = {
    "bits": 16,
    "eps": 2.0**-7,
    "max": float.fromhex("0x1.fep127"),
    "min": -float.fromhex("0x1.fep127"),
    "tiny": 2.0**-126,
    "smallest_normal": 2.0**-126,
    "resolution": 0.01,
}


def _dtype_name(dtype):
    if dtype is None:
        dtype = get_default_dtype()
    name = str(dtype).replace("torch.", "")
    return dtype, name


class finfo:
    """finfo(type=None)

    Machine limits of a floating dtype (default: the default dtype)."""

    def __init__(self, type=None):
        _, name = _dtype_name(type)
        self.dtype = name  # a string, as torch's finfo.dtype is ('float32')
        if name == "bfloat16":
            values = _BFLOAT16
        else:
            if name not in ("float16", "float32", "float64"):
                raise TypeError(
                    f"torch.finfo() requires a floating point input type. Use "
                    f"torch.iinfo to handle '{name}'"
                )
            import numpy as np  # on first use: see _ops.creation._numpy

            info = np.finfo(name)
            values = {
                "bits": info.bits,
                "eps": float(info.eps),
                "max": float(info.max),
                "min": float(info.min),
                "tiny": float(info.tiny),
                "smallest_normal": float(info.smallest_normal),
                "resolution": 10.0**-info.precision,
            }
        for k, v in values.items():
            setattr(self, k, v)

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """iinfo(type)

    Limits of an integer dtype."""

    def __init__(self, type):
        _, name = _dtype_name(type)
        self.dtype = name  # a string, as torch's iinfo.dtype is ('int64')
        if name not in ("uint8", "int8", "int16", "int32", "int64"):
            raise TypeError(
                f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{name}'"
            )
        import numpy as np

        info = np.iinfo(name)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)

    def __repr__(self):
        # torch prints the limits as %g floats (int64's as -9.22337e+18), the dtype unprefixed.
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


def dtype_of_to_call(args, kwargs):
    """The dtype a ``Tensor.to(*args, **kwargs)`` call asks for (a dtype argument, another
    tensor's dtype, or ``dtype=``), or None where the call keeps the dtype."""
    target = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _DType):
            target = a
        elif isinstance(a, Tensor):
            target = a.dtype
    return target
