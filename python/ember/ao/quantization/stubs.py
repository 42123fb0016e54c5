"""QuantStub, DeQuantStub and QuantWrapper (torch.ao.quantization.stubs): markers of where a
model's tensors enter and leave the quantized domain, swapped for Quantize/DeQuantize by
convert."""

from ...nn.modules.module import Module

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class QuantStub(Module):
    """QuantStub(qconfig=None)

    The identity before calibration; observes its output once prepared and becomes a Quantize
    module when converted."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(Module):
    """DeQuantStub(qconfig=None)

    The identity before conversion; becomes a DeQuantize module when converted."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(Module):
    """QuantWrapper(module)

    Wraps a module between a QuantStub and a DeQuantStub that take its qconfig."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))
