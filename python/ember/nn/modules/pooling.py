"""Pooling modules over the F pooling functions."""

from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


def _as_given(x):
    return x


class _WindowPoolNd(Module):
    """Stores kernel_size, stride (kernel_size when None) and padding, through `_ntuple`."""

    _fn = None
    _ntuple = staticmethod(_as_given)

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = self._ntuple(kernel_size)
        self.stride = self._ntuple(stride if stride is not None else kernel_size)
        self.padding = self._ntuple(padding)

    def _pool(self, input, *args, **kwargs):
        return getattr(F, self._fn)(
            input, self.kernel_size, self.stride, self.padding, *args, **kwargs
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _MaxPoolNd(_WindowPoolNd):
    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__(kernel_size, stride, padding)
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._pool(
            input, self.dilation, ceil_mode=self.ceil_mode, return_indices=self.return_indices
        )

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """MaxPool1d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
        ceil_mode=False)

    Max over sliding windows of (N, C, L) input.
    """

    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
        ceil_mode=False)

    Max over sliding windows of (N, C, H, W) input.
    """

    _fn = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    """MaxPool3d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
        ceil_mode=False)

    Max over sliding windows of (N, C, D, H, W) input.
    """

    _fn = "max_pool3d"


class _AvgPoolNd(_WindowPoolNd):
    """Base of the AvgPool modules (torch's class structure)."""


class AvgPool1d(_AvgPoolNd):
    """AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)

    Mean over sliding windows of (N, C, L) input.
    """

    _ntuple = staticmethod(_single)
    _fn = "avg_pool1d"

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return self._pool(input, self.ceil_mode, self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
        divisor_override=None)

    Mean over sliding windows of (N, C, H, W) input.
    """

    _fn = "avg_pool2d"

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return self._pool(input, self.ceil_mode, self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    """AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
        divisor_override=None)

    Mean over sliding windows of (N, C, D, H, W) input.
    """

    _fn = "avg_pool3d"


class _AdaptivePoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size):
        super().__init__(output_size)
        del self.return_indices

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)


def _make(name, base, fn):
    return type(name, (base,), {"_fn": fn, "__module__": __name__})


AdaptiveAvgPool1d = _make("AdaptiveAvgPool1d", _AdaptiveAvgPoolNd, "adaptive_avg_pool1d")
AdaptiveAvgPool2d = _make("AdaptiveAvgPool2d", _AdaptiveAvgPoolNd, "adaptive_avg_pool2d")
AdaptiveAvgPool3d = _make("AdaptiveAvgPool3d", _AdaptiveAvgPoolNd, "adaptive_avg_pool3d")
AdaptiveMaxPool1d = _make("AdaptiveMaxPool1d", _AdaptiveMaxPoolNd, "adaptive_max_pool1d")
AdaptiveMaxPool2d = _make("AdaptiveMaxPool2d", _AdaptiveMaxPoolNd, "adaptive_max_pool2d")
AdaptiveMaxPool3d = _make("AdaptiveMaxPool3d", _AdaptiveMaxPoolNd, "adaptive_max_pool3d")


# Docstrings of the classes made above (torch's signature, then ours).
for _cls in (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d):
    _cls.__doc__ = f"{_cls.__name__}(output_size)\n\nModule form of {_cls._fn}."
for _cls in (AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d):
    _cls.__doc__ = (
        f"{_cls.__name__}(output_size, return_indices=False)\n\nModule form of {_cls._fn}."
    )


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self):
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


LPPool1d = _make("LPPool1d", _LPPoolNd, "lp_pool1d")
LPPool2d = _make("LPPool2d", _LPPoolNd, "lp_pool2d")
LPPool3d = _make("LPPool3d", _LPPoolNd, "lp_pool3d")
for _cls in (LPPool1d, LPPool2d, LPPool3d):
    _cls.__doc__ = (
        f"{_cls.__name__}(norm_type, kernel_size, stride=None, ceil_mode=False)\n\n"
        f"Module form of {_cls._fn}: the p-norm of each window."
    )


class _MaxUnpoolNd(_WindowPoolNd):
    def forward(self, input, indices, output_size=None):
        return getattr(F, self._fn)(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool1d(_MaxUnpoolNd):
    """MaxUnpool1d(kernel_size, stride=None, padding=0)

    Partial inverse of MaxPool1d, given its indices.
    """

    _ntuple = staticmethod(_single)
    _fn = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    """MaxUnpool2d(kernel_size, stride=None, padding=0)

    Partial inverse of MaxPool2d, given its indices.
    """

    _ntuple = staticmethod(_pair)
    _fn = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    """MaxUnpool3d(kernel_size, stride=None, padding=0)

    Partial inverse of MaxPool3d, given its indices.
    """

    _ntuple = staticmethod(_triple)
    _fn = "max_unpool3d"
