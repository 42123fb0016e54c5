"""Float fused modules (torch.ao.nn.intrinsic): sequential containers that mark a pattern
(conv + bn + relu, linear + relu, ...) to be swapped as one unit by prepare/convert."""

from ..... import nn

__all__ = [
    "ConvReLU1d",
    "ConvReLU2d",
    "ConvReLU3d",
    "LinearReLU",
    "ConvBn1d",
    "ConvBn2d",
    "ConvBn3d",
    "ConvBnReLU1d",
    "ConvBnReLU2d",
    "ConvBnReLU3d",
    "BNReLU2d",
    "BNReLU3d",
    "LinearBn1d",
    "LinearLeakyReLU",
    "LinearTanh",
    "ConvAdd2d",
    "ConvAddReLU2d",
]


class _FusedModule(nn.Sequential):
    pass


def _check(name, mods, types):
    if len(mods) != len(types) or not all(type(m) is t for m, t in zip(mods, types)):
        got = ", ".join(type(m).__name__ for m in mods)
        want = ", ".join(t.__name__ for t in types)
        raise AssertionError(f"{name}: expected modules of types {want}; got {got}")


def _fused(name, types, doc):
    def __init__(self, *mods):
        _check(name, mods, types)
        _FusedModule.__init__(self, *mods)

    return type(name, (_FusedModule,), {"__init__": __init__, "__doc__": doc})


ConvReLU1d = _fused(
    "ConvReLU1d",
    (nn.Conv1d, nn.ReLU),
    "ConvReLU1d(conv, relu)\n\nA Conv1d followed by ReLU, swapped as one unit.",
)
ConvReLU2d = _fused(
    "ConvReLU2d",
    (nn.Conv2d, nn.ReLU),
    "ConvReLU2d(conv, relu)\n\nA Conv2d followed by ReLU, swapped as one unit.",
)
ConvReLU3d = _fused(
    "ConvReLU3d",
    (nn.Conv3d, nn.ReLU),
    "ConvReLU3d(conv, relu)\n\nA Conv3d followed by ReLU, swapped as one unit.",
)
LinearReLU = _fused(
    "LinearReLU",
    (nn.Linear, nn.ReLU),
    "LinearReLU(linear, relu)\n\nA Linear followed by ReLU, swapped as one unit.",
)
ConvBn1d = _fused(
    "ConvBn1d",
    (nn.Conv1d, nn.BatchNorm1d),
    "ConvBn1d(conv, bn)\n\nA Conv1d followed by BatchNorm1d (for QAT; folded when converted).",
)
ConvBn2d = _fused(
    "ConvBn2d",
    (nn.Conv2d, nn.BatchNorm2d),
    "ConvBn2d(conv, bn)\n\nA Conv2d followed by BatchNorm2d (for QAT; folded when converted).",
)
ConvBn3d = _fused(
    "ConvBn3d",
    (nn.Conv3d, nn.BatchNorm3d),
    "ConvBn3d(conv, bn)\n\nA Conv3d followed by BatchNorm3d (for QAT; folded when converted).",
)
ConvBnReLU1d = _fused(
    "ConvBnReLU1d",
    (nn.Conv1d, nn.BatchNorm1d, nn.ReLU),
    "ConvBnReLU1d(conv, bn, relu)\n\nConv1d, BatchNorm1d and ReLU, swapped as one unit.",
)
ConvBnReLU2d = _fused(
    "ConvBnReLU2d",
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU),
    "ConvBnReLU2d(conv, bn, relu)\n\nConv2d, BatchNorm2d and ReLU, swapped as one unit.",
)
ConvBnReLU3d = _fused(
    "ConvBnReLU3d",
    (nn.Conv3d, nn.BatchNorm3d, nn.ReLU),
    "ConvBnReLU3d(conv, bn, relu)\n\nConv3d, BatchNorm3d and ReLU, swapped as one unit.",
)
BNReLU2d = _fused(
    "BNReLU2d",
    (nn.BatchNorm2d, nn.ReLU),
    "BNReLU2d(batch_norm, relu)\n\nBatchNorm2d followed by ReLU, swapped as one unit.",
)
BNReLU3d = _fused(
    "BNReLU3d",
    (nn.BatchNorm3d, nn.ReLU),
    "BNReLU3d(batch_norm, relu)\n\nBatchNorm3d followed by ReLU, swapped as one unit.",
)
LinearBn1d = _fused(
    "LinearBn1d",
    (nn.Linear, nn.BatchNorm1d),
    "LinearBn1d(linear, bn)\n\nA Linear followed by BatchNorm1d (folded when converted).",
)
LinearLeakyReLU = _fused(
    "LinearLeakyReLU",
    (nn.Linear, nn.LeakyReLU),
    "LinearLeakyReLU(linear, leaky_relu)\n\nA Linear followed by LeakyReLU.",
)
LinearTanh = _fused(
    "LinearTanh", (nn.Linear, nn.Tanh), "LinearTanh(linear, tanh)\n\nA Linear followed by Tanh."
)


class ConvAdd2d(_FusedModule):
    """ConvAdd2d(conv, add)

    A Conv2d whose output is added to a second input."""

    def __init__(self, conv, add):
        super().__init__(conv)
        self.add = add

    def forward(self, x1, x2):
        return self.add(self[0](x1), x2)


class ConvAddReLU2d(_FusedModule):
    """ConvAddReLU2d(conv, add, relu)

    A Conv2d whose output is added to a second input, then ReLU."""

    def __init__(self, conv, add, relu):
        super().__init__(conv)
        self.add = add
        self.relu = relu

    def forward(self, x1, x2):
        return self.relu(self.add(self[0](x1), x2))
