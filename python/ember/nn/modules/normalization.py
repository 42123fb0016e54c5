"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm."""

import numbers

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


def _shape_tuple(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


def _affine_parameters(module, affine, shape, bias, dtype):
    """Registers `weight` and `bias` of `shape` (either may be None), before reset_parameters."""
    for name, wanted in (("weight", affine), ("bias", affine and bias)):
        module.register_parameter(name, Parameter(empty(shape, dtype=dtype)) if wanted else None)


def _reset_affine(module):
    """Ones for the weight and zeros for the bias, where the module has them."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """LayerNorm(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None,
        dtype=None)

    Normalizes over the trailing `normalized_shape` dims, with optional affine parameters.
    """

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, self.normalized_shape, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        p = self._parameters  # Note [Parameter fast path] in module.py
        if "weight" in p and "bias" in p:
            return F.layer_norm(input, self.normalized_shape, p["weight"], p["bias"], self.eps)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        s = "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
        s += "bias={use_bias}"
        return s.format(**self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    """GroupNorm(num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None, *,
        bias=True)

    Normalizes each of `num_groups` channel groups, with per-channel affine weight and bias.
    """

    def __init__(
        self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True
    ):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, num_channels, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None
        )


class RMSNorm(Module):
    """RMSNorm(normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None)

    x / sqrt(mean(x^2) + eps) * weight over the trailing `normalized_shape` dims.
    """

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__
        )


class LocalResponseNorm(Module):
    """LocalResponseNorm(size, alpha=0.0001, beta=0.75, k=1.0)

    Normalizes each channel by the activity of its neighbouring channels.
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
