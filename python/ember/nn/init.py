"""ember.nn.init: in-place parameter initialisers, as torch.nn.init (all run under no_grad)."""

import math
import warnings

from .._C import float64
from .._ops import creation as _creation
from .._ops.creation import empty, empty_like
from .._ops.index import where
from .._ops.random import randperm
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]


def calculate_gain(nonlinearity, param=None):
    """calculate_gain(nonlinearity, param=None)

    The recommended gain for a nonlinearity, as torch.nn.init.calculate_gain."""
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """uniform_(tensor, a=0.0, b=1.0, generator=None)

    Fills `tensor` from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """normal_(tensor, mean=0.0, std=1.0, generator=None)

    Fills `tensor` from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None)

    Fills `tensor` from N(mean, std^2) truncated to [a, b] (rejection sampling)."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            stacklevel=2,
        )
    if tensor.is_meta:  # no values to draw
        return tensor
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            _redraw_outside(tensor, mean, std, a, b, generator)
        else:
            _uniform_under_peak(tensor, mean, std, a, b, generator)
        return tensor


# torch 2.13's two rejection samplers, draw for draw (the same seed gives the same values): most
# of the mass inside [a, b] redraws N(mean, std) where it falls outside; little mass inside
# proposes U(a, b) and accepts where log U(0, 1) <= the log density below its peak on [a, b].
def _redraw_outside(tensor, mean, std, a, b, generator):
    lo = _creation.tensor(a, dtype=tensor.dtype).item()  # the bounds as tensor's dtype holds them
    hi = _creation.tensor(b, dtype=tensor.dtype).item()
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        mask = (result < lo) | (result > hi)
        if not mask.any():
            break
        result = where(mask, empty_like(result).normal_(mean, std, generator=generator), result)
    if result is not tensor:
        tensor.copy_(result)


def _uniform_under_peak(tensor, mean, std, a, b, generator):
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_density(x):
        return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    candidates, accept = empty_like(tensor), empty_like(tensor)
    tensor.uniform_(a, b, generator=generator)
    log_density(candidates.copy_(tensor))
    pending = accept.uniform_(generator=generator).log_().gt(candidates)
    result = tensor
    while pending.any():
        candidates.uniform_(a, b, generator=generator)
        result = where(pending, candidates, result)
        log_density(candidates)
        rejected = accept.uniform_(generator=generator).log_().gt(candidates)
        pending = where(pending, rejected, pending)
    if result is not tensor:
        tensor.copy_(result)


def constant_(tensor, val):
    """constant_(tensor, val)

    Fills `tensor` with `val`."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """ones_(tensor)

    Fills `tensor` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """zeros_(tensor)

    Fills `tensor` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """eye_(tensor)

    Fills a 2-D `tensor` with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_creation.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    """dirac_(tensor, groups=1)

    Fills a 3/4/5-D `tensor` with the Dirac delta (identity convolution)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    with no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in sizes[2:])
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """xavier_uniform_(tensor, gain=1.0, generator=None)

    Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # torch's order of operations: the same bound to the last bit
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """xavier_normal_(tensor, gain=1.0, generator=None)

    Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """kaiming_uniform_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None)

    He uniform: U(-b, b) with b = gain * sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # torch's order of operations: the same bound to the last bit
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """kaiming_normal_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None)

    He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """orthogonal_(tensor, gain=1, generator=None)

    Fills `tensor` with a (semi-)orthogonal matrix from the QR of a Gaussian matrix.

    ember has no linalg.qr yet, so the factorisation runs in numpy on the sampled matrix."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:  # a meta tensor has no values to set
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    # drawn in tensor's dtype, as torch: the same samples from the same seed
    drawn = empty(rows, cols, dtype=tensor.dtype, device="cpu").normal_(0, 1, generator=generator)
    flattened = drawn.to(float64).numpy()
    if rows < cols:
        flattened = flattened.T
    import numpy as _np  # on first use: see ember._ops.creation._numpy

    q, r = _np.linalg.qr(flattened)
    q = q * _np.sign(_np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(
            _creation.tensor(_np.ascontiguousarray(q)).reshape(tensor.shape).to(tensor.dtype)
        )
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """sparse_(tensor, sparsity, std=0.01, generator=None)

    Fills a 2-D `tensor` from N(0, std^2) with a fraction `sparsity` of each column zeroed."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = randperm(rows)
            tensor[row_indices[:num_zeros], col_idx] = 0
    return tensor


def _deprecated(fn, name):
    def wrapper(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{name}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return fn(*args, **kwargs)

    wrapper.__name__ = name
    # torch's signature of the target (its docstring's first line; absent under python -OO)
    params = ((fn.__doc__ or "").splitlines() or [""])[0][len(fn.__name__) :] or "(...)"
    wrapper.__doc__ = f"{name}{params}\n\nDeprecated alias of {fn.__name__}."
    return wrapper


uniform = _deprecated(uniform_, "uniform")
normal = _deprecated(normal_, "normal")
constant = _deprecated(constant_, "constant")
xavier_uniform = _deprecated(xavier_uniform_, "xavier_uniform")
xavier_normal = _deprecated(xavier_normal_, "xavier_normal")
kaiming_uniform = _deprecated(kaiming_uniform_, "kaiming_uniform")
kaiming_normal = _deprecated(kaiming_normal_, "kaiming_normal")
orthogonal = _deprecated(orthogonal_, "orthogonal")
eye = _deprecated(eye_, "eye")
dirac = _deprecated(dirac_, "dirac")
sparse = _deprecated(sparse_, "sparse")
