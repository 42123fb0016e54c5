"""Identity, Linear, Bilinear."""

import math

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Identity(*args, **kwargs)

    Returns its input; ignores constructor arguments.
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


def _register_bias(module, bias, size, dtype):
    """An uninitialised bias of `size` when `bias` is true, else a None bias."""
    module.register_parameter("bias", Parameter(empty(size, dtype=dtype)) if bias else None)


class Linear(Module):
    """Linear(in_features, out_features, bias=True, device=None, dtype=None)

    y = x A^T + b.
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), dtype=dtype))
        _register_bias(self, bias, out_features, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        p = self._parameters  # Note [Parameter fast path] in module.py
        if "weight" in p and "bias" in p:
            return F.linear(input, p["weight"], p["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """Bilinear(in1_features, in2_features, out_features, bias=True, device=None, dtype=None)

    y = x1^T A x2 + b.
    """

    def __init__(
        self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None
    ):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype=dtype))
        _register_bias(self, bias, out_features, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
