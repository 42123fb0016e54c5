"""Quantized Conv1d, Conv2d and Conv3d (torch.ao.nn.quantized.Conv1d/Conv2d/Conv3d)."""

from .. import _ops
from .utils import (
    WeightedQuantizedModule,
    _ember,
    _is_float_module,
    _pair,
    _pair_from_first,
    _quantize_weight,
    _single,
    _tensor,
    _triple,
)

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

_SUPPORTED_PADDING = {"zeros", "reflect"}


class _ConvNd(WeightedQuantizedModule):
    _FLOAT_MODULE_NAME = ""
    _FUSED_NAMES = ()

    def __init__(self, *args, **kwargs):
        raise NotImplementedError

    def _init(
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
        padding_mode="zeros",
    ):
        super().__init__()
        e = _ember()
        if out_channels <= 0:
            raise ValueError(f"out_channels must be greater than 0, got {out_channels}")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        if padding_mode not in _SUPPORTED_PADDING:
            raise ValueError(
                f"'padding_mode' {padding_mode} is not supported by quantized convolution"
            )
        self.padding_mode = padding_mode
        weight_shape = [out_channels, in_channels // self.groups]
        qweight = e._empty_affine_quantized(
            weight_shape + list(kernel_size), scale=1, zero_point=0, dtype=e.qint8
        )
        bias_float = e.zeros(out_channels, dtype=e.float32) if bias else None
        self.set_weight_bias(qweight, bias_float)
        self.scale = 1.0
        self.zero_point = 0

    def set_weight_bias(self, w, b):
        """set_weight_bias(w, b) -> None

        Replaces the qint8 weight and float bias (packing them)."""
        self._packed_params = _ops.conv_prepack(
            w, b, self._kernel_stride(), self._kernel_padding(), self.dilation, self.groups
        )

    def _kernel_stride(self):
        return list(self.stride)

    def _kernel_padding(self):
        return list(self.padding) if self.padding_mode == "zeros" else [0] * len(self.padding)

    def _weight_bias(self):
        return _ops.conv_unpack(self._packed_params)

    def weight(self):
        """weight() -> Tensor

        The qint8 weight."""
        return self._weight_bias()[0]

    def bias(self):
        """bias() -> Optional[Tensor]

        The float bias."""
        return self._weight_bias()[1]

    def extra_repr(self):
        s = (
            "{in_channels}, {out_channels}, kernel_size={kernel_size}"
            ", stride={stride}, scale={scale}, zero_point={zero_point}"
        )
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s.format(**self.__dict__)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        w, b = self._weight_bias()
        destination[prefix + "weight"] = w
        destination[prefix + "bias"] = b
        destination[prefix + "scale"] = _tensor(self.scale)
        destination[prefix + "zero_point"] = _tensor(self.zero_point)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def _padded(self, x):
        if self.padding_mode == "zeros":
            return x
        e = _ember()
        pad = []
        for p in reversed(self.padding):
            pad += [p, p]
        return e.quantize_per_tensor(
            e.nn.functional.pad(x.dequantize(), pad, mode=self.padding_mode),
            x.q_scale(),
            x.q_zero_point(),
            x.dtype,
        )

    @classmethod
    def get_qconv(cls, mod, activation_post_process, weight_post_process=None):
        """get_qconv(mod, activation_post_process, weight_post_process=None) -> module

        The quantized convolution of a float one with the given observers."""
        e = _ember()
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        weight_post_process(mod.weight)
        if weight_post_process.dtype != e.qint8:
            raise AssertionError(
                f"Weight observer must have a dtype of qint8, got {weight_post_process.dtype}"
            )
        qweight = _quantize_weight(mod.weight.float(), weight_post_process)
        qconv = cls(
            mod.in_channels,
            mod.out_channels,
            mod.kernel_size,
            mod.stride,
            mod.padding,
            mod.dilation,
            mod.groups,
            mod.bias is not None,
            mod.padding_mode,
        )
        qconv.set_weight_bias(qweight, mod.bias)
        if activation_post_process is None or activation_post_process.dtype == e.float32:
            return qconv
        act_scale, act_zp = activation_post_process.calculate_qparams()
        qconv.scale = float(act_scale)
        qconv.zero_point = int(act_zp)
        return qconv

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> module

        The quantized module of an observed float convolution (or fused ConvReLU, or QAT
        convolution)."""
        if hasattr(mod, "weight_fake_quant"):
            if not hasattr(mod, "activation_post_process"):
                raise AssertionError("Input QAT module must have observer attached")
            if type(mod).__name__.startswith("ConvBn") and hasattr(mod, "bn"):
                mod.weight, mod.bias = _fuse_conv_bn_weights(mod)
            return cls.get_qconv(mod, mod.activation_post_process, mod.weight_fake_quant)
        names = (cls._FLOAT_MODULE_NAME,) + cls._FUSED_NAMES
        if not _is_float_module(mod, names):
            raise AssertionError(
                f"nnq.{cls.__name__}.from_float only works for "
                f"{cls._FLOAT_MODULE_NAME} but got: {type(mod).__name__}"
            )
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined.")
        activation_post_process = getattr(mod, "activation_post_process", None)
        if type(mod).__name__ in cls._FUSED_NAMES:
            mod = mod[0]
        return cls.get_qconv(mod, activation_post_process, mod.qconfig.weight())

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        """from_reference(ref_qconv, output_scale, output_zero_point) -> module

        The quantized module of a reference quantized convolution."""
        qconv = cls(
            ref_qconv.in_channels,
            ref_qconv.out_channels,
            ref_qconv.kernel_size,
            ref_qconv.stride,
            ref_qconv.padding,
            ref_qconv.dilation,
            ref_qconv.groups,
            ref_qconv.bias is not None,
            ref_qconv.padding_mode,
        )
        qconv.set_weight_bias(ref_qconv.get_quantized_weight(), ref_qconv.bias)
        qconv.scale = float(output_scale)
        qconv.zero_point = int(output_zero_point)
        return qconv


def _fuse_conv_bn_weights(mod):
    e = _ember()
    bn = mod.bn
    std = e.sqrt(bn.running_var + bn.eps)
    w = mod.weight * (bn.weight / std).reshape([-1] + [1] * (mod.weight.dim() - 1))
    b = mod.bias if mod.bias is not None else e.zeros_like(bn.running_mean)
    b = (b - bn.running_mean) * bn.weight / std + bn.bias
    return e.nn.Parameter(w.detach()), e.nn.Parameter(b.detach())


class Conv1d(_ConvNd):
    """Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        bias=True, padding_mode='zeros')

    A 1-d convolution on quint8 tensors with int8 weights."""

    _FLOAT_MODULE_NAME = "Conv1d"
    _FUSED_NAMES = ("ConvReLU1d",)

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
        kernel_size = _single(kernel_size)
        stride = _single(stride)
        padding = padding if isinstance(padding, str) else _single(padding)
        dilation = _single(dilation)
        self._init(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            _single(0),
            groups,
            bias,
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConv1d"

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError("Input shape must be `(N, C, L)`!")
        return _ops.conv1d(self._padded(input), self._packed_params, self.scale, self.zero_point)


class Conv2d(_ConvNd):
    """Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        bias=True, padding_mode='zeros')

    A 2-d convolution on quint8 tensors with int8 weights (im2col and the int8 GEMM), the output
    requantized with `scale` and `zero_point`."""

    _FLOAT_MODULE_NAME = "Conv2d"
    _FUSED_NAMES = ("ConvReLU2d",)

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
        kernel_size = _pair(kernel_size)
        stride = _pair(stride)
        padding = _pair(padding)
        dilation = _pair(dilation)
        self._init(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            _pair(0),
            groups,
            bias,
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConv2d"

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return _ops.conv2d(self._padded(input), self._packed_params, self.scale, self.zero_point)


class Conv3d(_ConvNd):
    """Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        bias=True, padding_mode='zeros')

    A 3-d convolution on quint8 tensors with int8 weights, the output requantized with `scale`
    and `zero_point` (`_ops.conv3d`)."""

    _FLOAT_MODULE_NAME = "Conv3d"
    _FUSED_NAMES = ("ConvReLU3d",)

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
        if padding_mode == "reflect":
            raise AssertionError("Conv3d does not support reflection padding")
        self._init(
            in_channels,
            out_channels,
            _triple(kernel_size),
            _triple(stride),
            _triple(padding),
            _triple(dilation),
            False,
            _triple(0),
            groups,
            bias,
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConv3d"

    def forward(self, input):
        if input.dim() != 5:
            raise ValueError("Input shape must be `(N, C, D, H, W)`!")
        return _ops.conv3d(input, self._packed_params, self.scale, self.zero_point)


_ = _pair_from_first
