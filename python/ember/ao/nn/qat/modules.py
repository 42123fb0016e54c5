"""Quantization-aware-training modules (torch.ao.nn.qat): float modules whose weight passes
through a fake-quantizer (qconfig.weight()) on every forward."""

from .... import nn
from ....nn import functional as F

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "Embedding"]


def _fake_quant_weight(self):
    return self.weight_fake_quant(self.weight)


class Linear(nn.Linear):
    """Linear(in_features, out_features, bias=True, qconfig=None, device=None, dtype=None)

    nn.Linear with a fake-quantized weight, for quantization-aware training."""

    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return F.linear(input, _fake_quant_weight(self), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False)

        The QAT form of a float Linear (or a fused LinearReLU's Linear), sharing its parameters
        and taking its qconfig."""
        from ..intrinsic import LinearReLU

        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(
                " qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
            )
        if not hasattr(mod, "qconfig") or not mod.qconfig:
            raise AssertionError("Input float module must have a valid qconfig")
        qconfig = mod.qconfig
        if type(mod) is LinearReLU:
            mod = mod[0]
        qat = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=qconfig)
        qat.weight = mod.weight
        qat.bias = mod.bias
        return qat

    def to_float(self):
        """to_float()

        A float Linear with this module's parameters."""
        linear = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = nn.Parameter(self.bias.detach())
        linear.train(self.training)
        return linear


def _conv_qat(name, base, doc):
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
        qconfig=None,
        device=None,
        dtype=None,
    ):
        base.__init__(
            self,
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
            padding_mode=padding_mode,
            device=device,
            dtype=dtype,
        )
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return self._conv_forward(input, _fake_quant_weight(self), self.bias)

    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not cls._FLOAT_MODULE and not _is_fused_of(mod, cls._FLOAT_MODULE):
            raise AssertionError(
                "qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
            )
        if not hasattr(mod, "qconfig") or not mod.qconfig:
            raise AssertionError("Input float module must have a valid qconfig")
        qconfig = mod.qconfig
        if not isinstance(mod, base):
            mod = mod[0]
        return _conv_from(cls, mod, qconfig)

    def to_float(self):
        conv = base(
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
        conv.train(self.training)
        return conv

    return type(
        name,
        (base,),
        {
            "__init__": __init__,
            "forward": forward,
            "from_float": classmethod(from_float),
            "to_float": to_float,
            "_FLOAT_MODULE": base,
            "__doc__": doc,
        },
    )


def _is_fused_of(mod, float_type):
    from ..intrinsic import _FusedModule

    return isinstance(mod, _FusedModule) and len(mod) and type(mod[0]) is float_type


def _conv_from(cls, conv, qconfig):
    qat = cls(
        conv.in_channels,
        conv.out_channels,
        conv.kernel_size,
        stride=conv.stride,
        padding=conv.padding,
        dilation=conv.dilation,
        groups=conv.groups,
        bias=conv.bias is not None,
        padding_mode=conv.padding_mode,
        qconfig=qconfig,
    )
    qat.weight = conv.weight
    qat.bias = conv.bias
    return qat


Conv1d = _conv_qat(
    "Conv1d",
    nn.Conv1d,
    "Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
    "bias=True, padding_mode='zeros', qconfig=None, device=None, dtype=None)\n\n"
    "nn.Conv1d with a fake-quantized weight, for quantization-aware training.",
)
Conv2d = _conv_qat(
    "Conv2d",
    nn.Conv2d,
    "Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
    "bias=True, padding_mode='zeros', qconfig=None, device=None, dtype=None)\n\n"
    "nn.Conv2d with a fake-quantized weight, for quantization-aware training.",
)
Conv3d = _conv_qat(
    "Conv3d",
    nn.Conv3d,
    "Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
    "bias=True, padding_mode='zeros', qconfig=None, device=None, dtype=None)\n\n"
    "nn.Conv3d with a fake-quantized weight, for quantization-aware training.",
)


class Embedding(nn.Embedding):
    """Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
        scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None, qconfig=None)

    nn.Embedding with a fake-quantized weight (float qparams per row), for QAT."""

    _FLOAT_MODULE = nn.Embedding

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, qconfig=None, **kwargs):
        super().__init__(num_embeddings, embedding_dim, padding_idx, **kwargs)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return F.embedding(input, _fake_quant_weight(self), self.padding_idx)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False)

        The QAT form of a float Embedding, sharing its weight."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError("qat.Embedding.from_float only works for Embedding")
        qat = cls(mod.num_embeddings, mod.embedding_dim, mod.padding_idx, qconfig=mod.qconfig)
        qat.weight = mod.weight
        return qat
