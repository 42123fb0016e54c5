"""Fused QAT modules (torch.ao.nn.intrinsic.qat): conv/linear with ReLU, and conv with its
BatchNorm folded into the fake-quantized weight during training as torch does it (the weight is
scaled by gamma / sqrt(running_var + eps) before fake quantization, the convolution's output is
divided back, and the real BatchNorm then normalises with batch statistics)."""

import math

from ..... import nn
from .....nn import functional as F
from .....nn import init
from .... import _torch as _C
from ...qat import modules as nnqat
from .. import modules as nni

__all__ = [
    "LinearReLU",
    "ConvReLU1d",
    "ConvReLU2d",
    "ConvReLU3d",
    "ConvBn1d",
    "ConvBn2d",
    "ConvBn3d",
    "ConvBnReLU1d",
    "ConvBnReLU2d",
    "ConvBnReLU3d",
    "freeze_bn_stats",
    "update_bn_stats",
]


class LinearReLU(nnqat.Linear, nni._FusedModule):
    """LinearReLU(in_features, out_features, bias=True, qconfig=None)

    A fused Linear + ReLU with a fake-quantized weight, for QAT."""

    _FLOAT_MODULE = nni.LinearReLU

    def __init__(self, in_features, out_features, bias=True, qconfig=None):
        nnqat.Linear.__init__(self, in_features, out_features, bias, qconfig)

    def forward(self, input):
        return F.relu(F.linear(input, self.weight_fake_quant(self.weight), self.bias))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False)

        The QAT form of a fused LinearReLU."""
        return super().from_float(mod, use_precomputed_fake_quant)

    def to_float(self):
        """to_float()

        A float LinearReLU with this module's parameters."""
        return nni.LinearReLU(nnqat.Linear.to_float(self), nn.ReLU())


def _conv_relu(name, qat_base, float_fused, doc):
    def forward(self, input):
        return F.relu(self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias))

    def to_float(self):
        return float_fused(qat_base.to_float(self), nn.ReLU())

    return type(
        name,
        (qat_base, nni._FusedModule),
        {"forward": forward, "to_float": to_float, "_FLOAT_MODULE": float_fused, "__doc__": doc},
    )


ConvReLU1d = _conv_relu(
    "ConvReLU1d",
    nnqat.Conv1d,
    nni.ConvReLU1d,
    "ConvReLU1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, "
    "groups=1, bias=True, padding_mode='zeros', qconfig=None)\n\n"
    "A fused Conv1d + ReLU with a fake-quantized weight, for QAT.",
)
ConvReLU2d = _conv_relu(
    "ConvReLU2d",
    nnqat.Conv2d,
    nni.ConvReLU2d,
    "ConvReLU2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, "
    "groups=1, bias=True, padding_mode='zeros', qconfig=None)\n\n"
    "A fused Conv2d + ReLU with a fake-quantized weight, for QAT.",
)

ConvReLU3d = _conv_relu(
    "ConvReLU3d",
    nnqat.Conv3d,
    nni.ConvReLU3d,
    "ConvReLU3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, "
    "groups=1, bias=True, padding_mode='zeros', qconfig=None)\n\n"
    "A fused Conv3d + ReLU with a fake-quantized weight, for QAT.",
)


class _ConvBnMixin:
    """The shared part of ConvBn1d/2d and their ReLU forms."""

    _version = 2
    _with_relu = False

    def _setup(self, out_channels, bias, eps, momentum, freeze_bn, qconfig, bn_cls):
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = bn_cls(out_channels, eps, momentum, True, True)
        self.weight_fake_quant = qconfig.weight()
        if bias:
            self.bias = nn.Parameter(_C.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()
        self._enable_slow_path_for_better_numerical_stability = False

    def reset_running_stats(self):
        """reset_running_stats()

        Resets the batch norm's running statistics."""
        self.bn.reset_running_stats()

    def reset_bn_parameters(self):
        """reset_bn_parameters()

        Re-initialises the batch norm (weight uniform in [0, 1), bias zero) and the bias."""
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.weight.shape[2:])
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def update_bn_stats(self):
        """update_bn_stats()

        Lets the batch norm use and update batch statistics in training."""
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        """freeze_bn_stats()

        Freezes the batch norm's running statistics (it normalises with them from now on)."""
        self.freeze_bn = True
        self.bn.training = False
        return self

    def _forward_approximate(self, input):
        running_std = _C.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        nd = self.weight.dim()
        weight_shape = [-1] + [1] * (nd - 1)
        bias_shape = [1, -1] + [1] * (nd - 2)
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(weight_shape))
        zero_bias = _C.zeros(self.out_channels, dtype=input.dtype)
        conv = self._conv_forward(input, scaled_weight, zero_bias)
        conv_orig = conv / scale_factor.reshape(bias_shape)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(bias_shape)
        return self.bn(conv_orig)

    def _forward(self, input):
        return self._forward_approximate(input)

    def forward(self, input):
        out = self._forward(input)
        return F.relu(out) if self._with_relu else out

    def train(self, mode=True):
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False)

        The QAT form of a fused conv + bn (+ relu), sharing the conv's and bn's parameters and
        buffers."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(
                "qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
            )
        if not hasattr(mod, "qconfig") or not mod.qconfig:
            raise AssertionError("Input float module must have a valid qconfig")
        conv, bn = mod[0], mod[1]
        qat = cls(
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size,
            conv.stride,
            conv.padding,
            conv.dilation,
            conv.groups,
            conv.bias is not None,
            conv.padding_mode,
            bn.eps,
            bn.momentum,
            False,
            mod.qconfig,
        )
        qat.weight = conv.weight
        qat.bias = conv.bias
        qat.bn.weight = bn.weight
        qat.bn.bias = bn.bias
        qat.bn.running_mean = bn.running_mean
        qat.bn.running_var = bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat

    def to_float(self):
        """to_float()

        The float conv with the batch norm folded in (and ReLU after it for the ReLU forms)."""
        from .....nn.utils.fusion import fuse_conv_bn_weights

        conv = self._FLOAT_CONV_MODULE(
            self.in_channels,
            self.out_channels,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
            self.bias is not None,
            self.padding_mode,
        )
        conv.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            conv.bias = nn.Parameter(self.bias.detach())
        if self.bn.running_mean is not None:
            conv.weight, conv.bias = fuse_conv_bn_weights(
                conv.weight,
                conv.bias,
                self.bn.running_mean,
                self.bn.running_var,
                self.bn.eps,
                self.bn.weight,
                self.bn.bias,
            )
        if self._with_relu:
            return self._FLOAT_RELU_MODULE(conv, nn.ReLU())
        conv.train(self.training)
        return conv


def _conv_bn(name, conv_cls, bn_cls, float_fused, with_relu, float_relu, doc):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=None,
        padding_mode="zeros",
        eps=1e-05,
        momentum=0.1,
        freeze_bn=False,
        qconfig=None,
    ):
        conv_cls.__init__(
            self,
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=False,
            padding_mode=padding_mode,
        )
        self._setup(out_channels, bias, eps, momentum, freeze_bn, qconfig, bn_cls)

    return type(
        name,
        (_ConvBnMixin, conv_cls, nni._FusedModule),
        {
            "__init__": __init__,
            "_FLOAT_MODULE": float_fused,
            "_FLOAT_CONV_MODULE": conv_cls,
            "_FLOAT_BN_MODULE": bn_cls,
            "_FLOAT_RELU_MODULE": float_relu,
            "_with_relu": with_relu,
            "__doc__": doc,
        },
    )


_CB_SIG = (
    "(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
    "bias=None, padding_mode='zeros', eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None)\n\n"
)
ConvBn1d = _conv_bn(
    "ConvBn1d",
    nn.Conv1d,
    nn.BatchNorm1d,
    nni.ConvBn1d,
    False,
    None,
    "ConvBn1d" + _CB_SIG + "A fused Conv1d + BatchNorm1d for QAT, the batch norm folded into the "
    "fake-quantized weight.",
)
ConvBn2d = _conv_bn(
    "ConvBn2d",
    nn.Conv2d,
    nn.BatchNorm2d,
    nni.ConvBn2d,
    False,
    None,
    "ConvBn2d" + _CB_SIG + "A fused Conv2d + BatchNorm2d for QAT, the batch norm folded into the "
    "fake-quantized weight.",
)
ConvBnReLU1d = _conv_bn(
    "ConvBnReLU1d",
    nn.Conv1d,
    nn.BatchNorm1d,
    nni.ConvBnReLU1d,
    True,
    nni.ConvReLU1d,
    "ConvBnReLU1d" + _CB_SIG + "ConvBn1d followed by ReLU, for QAT.",
)
ConvBnReLU2d = _conv_bn(
    "ConvBnReLU2d",
    nn.Conv2d,
    nn.BatchNorm2d,
    nni.ConvBnReLU2d,
    True,
    nni.ConvReLU2d,
    "ConvBnReLU2d" + _CB_SIG + "ConvBn2d followed by ReLU, for QAT.",
)

ConvBn3d = _conv_bn(
    "ConvBn3d",
    nn.Conv3d,
    nn.BatchNorm3d,
    nni.ConvBn3d,
    False,
    None,
    "ConvBn3d" + _CB_SIG + "A fused Conv3d + BatchNorm3d for QAT, the batch norm folded into the "
    "fake-quantized weight.",
)
ConvBnReLU3d = _conv_bn(
    "ConvBnReLU3d",
    nn.Conv3d,
    nn.BatchNorm3d,
    nni.ConvBnReLU3d,
    True,
    nni.ConvReLU3d,
    "ConvBnReLU3d" + _CB_SIG + "ConvBn3d followed by ReLU, for QAT.",
)


def _freeze_all(mod, freeze):
    if isinstance(mod, _ConvBnMixin):
        if freeze:
            mod.freeze_bn_stats()
        else:
            mod.update_bn_stats()


def update_bn_stats(mod):
    """update_bn_stats(mod)

    For model.apply: lets every fused conv-bn QAT module update its batch-norm statistics."""
    _freeze_all(mod, False)


def freeze_bn_stats(mod):
    """freeze_bn_stats(mod)

    For model.apply: freezes the batch-norm statistics of every fused conv-bn QAT module."""
    _freeze_all(mod, True)
