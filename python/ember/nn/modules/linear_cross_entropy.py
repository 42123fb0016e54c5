"""nn.LinearCrossEntropyLoss (new in torch 2.13): a Linear projection to class logits and the
cross entropy of them, as F.linear_cross_entropy."""

import math

from ..functional import linear_cross_entropy
from .linear import Linear
from .module import Module

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(Module):
    """LinearCrossEntropyLoss(in_features, num_classes, *, out_features=(), bias=False,
        device=None, dtype=None, reduction='mean', weight=None, ignore_index=None,
        label_smoothing=0.0, options=None)

    Holds ``linear`` (its weight flat: (num_classes * prod(out_features), in_features)) and
    computes F.linear_cross_entropy(input, weight viewed as (C, *out_features, in), target)."""

    def __init__(
        self,
        in_features,
        num_classes,
        *,
        out_features=(),
        bias=False,
        device=None,
        dtype=None,
        reduction="mean",
        weight=None,
        ignore_index=None,
        label_smoothing=0.0,
        options=None,
    ):
        super().__init__()
        self.in_features = in_features
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.reduction = reduction
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        self.linear = Linear(
            in_features,
            num_classes * math.prod(self.out_features),
            bias=bias,
            device=device,
            dtype=dtype,
        )
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return linear_cross_entropy(
            input,
            self.linear.weight.view(*shape, self.in_features),
            target,
            linear_bias=None if bias is None else bias.view(shape),
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
