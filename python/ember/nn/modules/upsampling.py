"""Upsample and Fold/Unfold."""

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold", "Unfold"]


class Upsample(Module):
    """Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None,
        recompute_scale_factor=None)

    Resizes by `size` or `scale_factor` with F.interpolate.
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """UpsamplingNearest2d(size=None, scale_factor=None)

    Nearest-neighbour 2-D upsampling.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """UpsamplingBilinear2d(size=None, scale_factor=None)

    Bilinear 2-D upsampling with align_corners=True.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Fold(Module):
    """Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)

    Combines sliding local blocks (N, C*prod(k), L) into (N, C, *output_size).
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self):
        return (
            "output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
            "padding={padding}, "
            "stride={stride}".format(**self.__dict__)
        )


class Unfold(Module):
    """Unfold(kernel_size, dilation=1, padding=0, stride=1)

    Extracts sliding local blocks: (N, C, *) -> (N, C*prod(k), L).
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        s = "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}"
        return s.format(**self.__dict__)
