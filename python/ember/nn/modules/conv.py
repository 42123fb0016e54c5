"""Convolution modules: Conv1d/2d/3d and ConvTranspose1d/2d/3d with torch's checks and init."""

import math

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _register_bias
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_VALID_PADDING_STRINGS = {"same", "valid"}
_VALID_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    _ntuple = None
    _fn = None

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _VALID_PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {_VALID_PADDING_STRINGS}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _VALID_PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_VALID_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            # F.pad order (last dim first), split as torch does for 'same'.
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, dtype=dtype))
        _register_bias(self, bias, out_channels, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        nt = self._ntuple
        padding_ = padding if isinstance(padding, str) else nt(padding)
        super().__init__(
            in_channels,
            out_channels,
            nt(kernel_size),
            nt(stride),
            padding_,
            nt(dilation),
            False,
            nt(0),
            groups,
            bias,
            padding_mode,
            dtype=dtype,
        )

    def _conv_forward(self, input, weight, bias):
        fn = getattr(F, self._fn)
        if self.padding_mode != "zeros":
            return fn(
                F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                weight,
                bias,
                self.stride,
                self._ntuple(0),
                self.dilation,
                self.groups,
            )
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        p = self._parameters  # Note [Parameter fast path] in module.py
        if "weight" in p and "bias" in p:
            return self._conv_forward(input, p["weight"], p["bias"])
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        bias=True, padding_mode='zeros', device=None, dtype=None)

    1-D convolution over (N, C_in, L) or (C_in, L) input.
    """

    _ntuple = staticmethod(_single)
    _fn = "conv1d"


class Conv2d(_Conv):
    """Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        bias=True, padding_mode='zeros', device=None, dtype=None)

    2-D convolution over (N, C_in, H, W) or (C_in, H, W) input.
    """

    _ntuple = staticmethod(_pair)
    _fn = "conv2d"


class Conv3d(_Conv):
    """Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        bias=True, padding_mode='zeros', device=None, dtype=None)

    3-D convolution over (N, C_in, D, H, W) or unbatched input.
    """

    _ntuple = staticmethod(_triple)
    _fn = "conv3d"


class _ConvTransposeNd(_ConvNd):
    _ntuple = None
    _fn = None

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}'
            )
        nt = self._ntuple
        super().__init__(
            in_channels,
            out_channels,
            nt(kernel_size),
            nt(stride),
            nt(padding),
            nt(dilation),
            True,
            nt(output_padding),
            groups,
            bias,
            padding_mode,
            dtype=dtype,
        )

    def _output_padding(
        self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None
    ):
        if output_size is None:
            return self._ntuple(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have "
                f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                f"(got {len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = (
                (input.size(d + num_non_spatial_dims) - 1) * stride[d]
                - 2 * padding[d]
                + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                + 1
            )
            min_sizes.append(dim_size)
            max_sizes.append(dim_size + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})"
                )
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        n = len(self.kernel_size)
        output_padding = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, n, self.dilation
        )
        return getattr(F, self._fn)(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0,
        output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
        dtype=None)

    1-D transposed convolution (the gradient of Conv1d).
    """

    _ntuple = staticmethod(_single)
    _fn = "conv_transpose1d"


class ConvTranspose2d(_ConvTransposeNd):
    """ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
        output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
        dtype=None)

    2-D transposed convolution (the gradient of Conv2d).
    """

    _ntuple = staticmethod(_pair)
    _fn = "conv_transpose2d"


class ConvTranspose3d(_ConvTransposeNd):
    """ConvTranspose3d(in_channels, out_channels, kernel_size, stride=1, padding=0,
        output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
        dtype=None)

    3-D transposed convolution (the gradient of Conv3d).
    """

    _ntuple = staticmethod(_triple)
    _fn = "conv_transpose3d"
