"""The quantized dtypes and quantization schemes the workflows name (ember.qint8, ember.quint8,
ember.per_tensor_affine, ...). They come from the quantized-tensor core when the extension has
them; until then each is a named stand-in that compares, hashes and prints as the real one, so the
observers, fake quantization and the prepare passes work without quantized tensors."""

from ... import _C

try:  # the quantized-tensor core's qscheme objects
    from ..._ops import quantized as _core
except ImportError:
    _core = None


class _StandIn:
    """A named constant that prints as torch's (torch.quint8, torch.per_tensor_affine)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_lookup, (self.name,))


_standins = {}


def _lookup(name):
    found = getattr(_C, name, None)
    if found is None and _core is not None:
        found = getattr(_core, name, None)
    if found is None:
        found = _standins.setdefault(name, _StandIn(name))
    return found


qint8 = _lookup("qint8")
quint8 = _lookup("quint8")
qint32 = _lookup("qint32")
quint4x2 = _lookup("quint4x2")
per_tensor_affine = _lookup("per_tensor_affine")
per_tensor_symmetric = _lookup("per_tensor_symmetric")
per_channel_affine = _lookup("per_channel_affine")
per_channel_symmetric = _lookup("per_channel_symmetric")
per_channel_affine_float_qparams = _lookup("per_channel_affine_float_qparams")

float32 = _C.float32
float16 = _C.float16
int8 = _C.int8
uint8 = _C.uint8
int16 = _C.int16
int32 = _C.int32

QUANTIZED_DTYPES = (qint8, quint8, qint32, quint4x2)
PER_TENSOR = (per_tensor_affine, per_tensor_symmetric)
PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)
SYMMETRIC = (per_tensor_symmetric, per_channel_symmetric)


def bits(dtype):
    """The storage width of an integer or quantized dtype."""
    if dtype in (qint32, int32):
        return 32
    if dtype == int16:
        return 16
    if dtype == quint4x2:
        return 4
    return 8


def int_range(dtype):
    """(min, max) a quantized or integer dtype can hold (torch.iinfo's for the quantized ones)."""
    if dtype in (qint8, int8):
        return -128, 127
    if dtype in (quint8, uint8):
        return 0, 255
    if dtype in (qint32, int32):
        return -(2**31), 2**31 - 1
    if dtype == int16:
        return -(2**15), 2**15 - 1
    if dtype == quint4x2:
        return 0, 15
    raise TypeError(f"int_range: expected an integer or quantized dtype; got {dtype}")
