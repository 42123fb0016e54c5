"""Padding modules over F.pad."""

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = [
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
]

_expand = {1: _pair, 2: _quadruple, 3: _ntuple(6)}


class _PadNd(Module):
    mode = None
    ndim = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _expand[self.ndim](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(Module):
    ndim = 1

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _expand[self.ndim](padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """ConstantPad1d(padding, value)

    Pads the last dim with a constant.
    """

    ndim = 1


class ConstantPad2d(_ConstantPadNd):
    """ConstantPad2d(padding, value)

    Pads the last two dims with a constant.
    """

    ndim = 2


class ConstantPad3d(_ConstantPadNd):
    """ConstantPad3d(padding, value)

    Pads the last three dims with a constant.
    """

    ndim = 3


class _ZeroPad:
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """ZeroPad1d(padding)

    Pads the last dim with zeros.
    """


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """ZeroPad2d(padding)

    Pads the last two dims with zeros.
    """


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """ZeroPad3d(padding)

    Pads the last three dims with zeros.
    """


def _make(name, mode, ndim):
    return type(name, (_PadNd,), {"mode": mode, "ndim": ndim, "__module__": __name__})


ReflectionPad1d = _make("ReflectionPad1d", "reflect", 1)
ReflectionPad2d = _make("ReflectionPad2d", "reflect", 2)
ReflectionPad3d = _make("ReflectionPad3d", "reflect", 3)
ReplicationPad1d = _make("ReplicationPad1d", "replicate", 1)
ReplicationPad2d = _make("ReplicationPad2d", "replicate", 2)
ReplicationPad3d = _make("ReplicationPad3d", "replicate", 3)
CircularPad1d = _make("CircularPad1d", "circular", 1)
CircularPad2d = _make("CircularPad2d", "circular", 2)
CircularPad3d = _make("CircularPad3d", "circular", 3)


# Docstrings of the classes made above (torch's signature, then ours).
_HOW = {
    "reflect": "with their values mirrored at the border (border excluded)",
    "replicate": "by repeating their border values",
    "circular": "by wrapping values around from the other end",
}
for _cls in (
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
):
    _cls.__doc__ = (
        f"{_cls.__name__}(padding)\n\nPads the last {_cls.ndim} dim(s) {_HOW[_cls.mode]}."
    )
