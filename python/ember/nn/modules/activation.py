"""Activation modules: thin wrappers over ember.nn.functional with torch's reprs."""

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Threshold",
    "ReLU",
    "RReLU",
    "Hardtanh",
    "ReLU6",
    "Sigmoid",
    "Hardsigmoid",
    "Tanh",
    "SiLU",
    "Mish",
    "Hardswish",
    "ELU",
    "CELU",
    "SELU",
    "GLU",
    "GELU",
    "Hardshrink",
    "LeakyReLU",
    "LogSigmoid",
    "Softplus",
    "Softshrink",
    "PReLU",
    "Softsign",
    "Tanhshrink",
    "Softmin",
    "Softmax",
    "Softmax2d",
    "LogSoftmax",
]


def _inplace_suffix(inplace):
    return ", inplace=True" if inplace else ""


class _InplaceOnly(Module):
    """An activation whose only option is `inplace`; subclasses name their functional."""

    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _Stateless(Module):
    """An activation without options; subclasses name their functional."""

    _fn = None

    def forward(self, input):
        return getattr(F, self._fn)(input)


class Threshold(Module):
    """Threshold(threshold, value, inplace=False)

    y = x if x > threshold else value.
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(_InplaceOnly):
    """ReLU(inplace=False)

    max(0, x).
    """

    _fn = "relu"


class RReLU(Module):
    """RReLU(lower=0.125, upper=0.3333333333333333, inplace=False)

    Leaky ReLU with a random slope in [lower, upper] while training.
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)

    clamp(x, min_val, max_val).
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """ReLU6(inplace=False)

    min(max(0, x), 6).
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """Sigmoid(*args, **kwargs)

    1 / (1 + exp(-x)).
    """

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """Tanh(*args, **kwargs)

    tanh(x).
    """

    def forward(self, input):
        return input.tanh()


class Hardsigmoid(_InplaceOnly):
    """Hardsigmoid(inplace=False)

    Piecewise-linear sigmoid: clamp(x / 6 + 1 / 2, 0, 1).
    """

    _fn = "hardsigmoid"

    def extra_repr(self):
        return ""


class Hardswish(_InplaceOnly):
    """Hardswish(inplace=False)

    x * hardsigmoid(x).
    """

    _fn = "hardswish"

    def extra_repr(self):
        return ""


class SiLU(_InplaceOnly):
    """SiLU(inplace=False)

    x * sigmoid(x).
    """

    _fn = "silu"


class Mish(_InplaceOnly):
    """Mish(inplace=False)

    x * tanh(softplus(x)).
    """

    _fn = "mish"


class SELU(_InplaceOnly):
    """SELU(inplace=False)

    scale * elu(x, alpha) with the self-normalising constants.
    """

    _fn = "selu"


class ELU(Module):
    """ELU(alpha=1.0, inplace=False)

    x if x > 0 else alpha * (exp(x) - 1).
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """CELU(alpha=1.0, inplace=False)

    max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
    """

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    """GLU(dim=-1)

    First half of `dim` times the sigmoid of the second half.
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """GELU(approximate='none')

    x * Phi(x), exact or with the tanh approximation.
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class Hardshrink(Module):
    """Hardshrink(lambd=0.5)

    x where |x| > lambd, else 0.
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Softshrink(lambd=0.5)

    x - lambd * sign(x) where |x| > lambd, else 0.
    """

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class LeakyReLU(Module):
    """LeakyReLU(negative_slope=0.01, inplace=False)

    x if x >= 0 else negative_slope * x.
    """

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class LogSigmoid(_Stateless):
    """LogSigmoid(*args, **kwargs)

    log(sigmoid(x)).
    """

    _fn = "logsigmoid"


class Softsign(_Stateless):
    """Softsign(*args, **kwargs)

    x / (1 + |x|).
    """

    _fn = "softsign"


class Tanhshrink(_Stateless):
    """Tanhshrink(*args, **kwargs)

    x - tanh(x).
    """

    _fn = "tanhshrink"


class Softplus(Module):
    """Softplus(beta=1.0, threshold=20.0)

    log(1 + exp(beta * x)) / beta, linear above `threshold`.
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """PReLU(num_parameters=1, init=0.25, device=None, dtype=None)

    max(0, x) + weight * min(0, x) with a learnt weight (one, or one per channel).
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxLike(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return getattr(F, self._fn)(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxLike):
    """Softmin(dim=None)

    softmax(-x) along `dim`.
    """

    _fn = "softmin"


class Softmax(_SoftmaxLike):
    """Softmax(dim=None)

    exp(x) / sum(exp(x)) along `dim`.
    """

    _fn = "softmax"


class LogSoftmax(_SoftmaxLike):
    """LogSoftmax(dim=None)

    log(softmax(x)) along `dim`.
    """

    _fn = "log_softmax"


class Softmax2d(Module):
    """Softmax2d(*args, **kwargs)

    Softmax over the channel dim of (N, C, H, W) or (C, H, W) input.
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3)
