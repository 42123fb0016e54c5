"""Activations, normalization, dropout, linear maps and distances, as in torch.nn.functional."""

import math
import warnings

from ... import _C
from ..._ops import _names
from ..._ops import quantized as _quantized
from ..._ops.complex_more import complex_linear_guard as _complex_linear_guard
from ..._ops.creation import empty_like
from ..._ops.index import where
from ..._process import channels_last, channels_last_3d


def _raise_if_not_tensor(input, method):
    """Raises the AttributeError torch's Python code raises when it reaches input.<method> on a
    non-tensor (F.softmax("abc", 0)); a tensor input lets the caller re-raise its TypeError."""
    if not isinstance(input, _C.Tensor):
        raise AttributeError(
            f"'{type(input).__name__}' object has no attribute '{method}'"
        ) from None


_nn = _C._nn


def _float_kernel(kernel, dtype):
    """torch's NotImplementedError for a dtype its CPU kernel `kernel` lacks: these nn kernels
    take floating dtypes only. Callers check after their own argument checks (torch checks the
    shapes first and the dtype when it dispatches to the kernel)."""
    if not (dtype.is_floating_point or dtype.is_complex):
        from ..._type_info import scalar_type_name

        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


__all__ = [
    "linear",
    "bilinear",
    "relu",
    "relu_",
    "relu6",
    "leaky_relu",
    "leaky_relu_",
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "rrelu",
    "rrelu_",
    "gelu",
    "silu",
    "mish",
    "sigmoid",
    "tanh",
    "hardtanh",
    "hardtanh_",
    "hardsigmoid",
    "hardswish",
    "softplus",
    "softsign",
    "threshold",
    "threshold_",
    "prelu",
    "logsigmoid",
    "tanhshrink",
    "softshrink",
    "hardshrink",
    "glu",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "one_hot",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
]


# The binding itself (as in torch): a Python wrapper added ~10% to a small nn.Linear call.
# complex input or weight takes the composed path (ember/_ops/complex_more.py)
linear = _complex_linear_guard(_nn.linear)


def bilinear(input1, input2, weight, bias=None):
    """bilinear(input1, input2, weight, bias=None) -> Tensor

    y_k = input1^T weight_k input2 + bias_k."""
    return _nn.bilinear(input1, input2, weight, bias)


def relu(input, inplace=False):
    """relu(input, inplace=False) -> Tensor

    max(0, x)."""
    try:
        if input.is_quantized:
            return _quantized._relu(input, inplace)
        return input.relu_() if inplace else _C.relu(input)
    except (AttributeError, NotImplementedError):
        _relu_check(input)
        raise


def _relu_check(input):
    """torch's errors for relu of a non-tensor or a bool tensor."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(
            f"relu(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        ) from None
    if input.dtype == _C.bool:
        raise RuntimeError("Boolean inputs not supported for relu") from None


def relu_(input):
    """relu_(input) -> Tensor

    In-place relu."""
    try:
        return input.relu_()
    except (AttributeError, NotImplementedError):
        _relu_check(input)
        raise


def relu6(input, inplace=False):
    """relu6(input, inplace=False) -> Tensor

    min(max(0, x), 6)."""
    if isinstance(input, _C.Tensor) and input.is_quantized:
        return _quantized._hardtanh(input, 0.0, 6.0, inplace)
    return _nn.relu6_(input) if inplace else _nn.relu6(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """leaky_relu(input, negative_slope=0.01, inplace=False) -> Tensor

    max(0, x) + negative_slope * min(0, x)."""
    if isinstance(input, _C.Tensor) and input.is_quantized:
        return _quantized._leaky_relu(input, negative_slope, inplace)
    if inplace:
        return _nn.leaky_relu_(input, negative_slope)
    return _nn.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu_(input, negative_slope=0.01) -> Tensor

    In-place leaky_relu."""
    return _nn.leaky_relu_(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """elu(input, alpha=1.0, inplace=False)

    x if x > 0 else alpha * (exp(x) - 1)."""
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


def elu_(input, alpha=1.0):
    """elu_(input, alpha=1.) -> Tensor

    In-place elu."""
    return _nn.elu_(input, alpha)


def selu(input, inplace=False):
    """selu(input, inplace=False) -> Tensor

    scale * elu(x, alpha) with the self-normalizing constants."""
    return _nn.selu_(input) if inplace else _nn.selu(input)


def celu(input, alpha=1.0, inplace=False):
    """celu(input, alpha=1., inplace=False) -> Tensor

    max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return _nn.celu_(input, alpha) if inplace else _nn.celu(input, alpha)


def selu_(input):
    """selu_(input) -> Tensor

    In-place selu."""
    return _nn.selu_(input)


def celu_(input, alpha=1.0):
    """celu_(input, alpha=1.) -> Tensor

    In-place celu."""
    return _nn.celu_(input, alpha)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """rrelu(input, lower=1./8, upper=1./3, training=False, inplace=False) -> Tensor

    leaky_relu with a slope drawn from U(lower, upper) per element in training, else the mean."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = empty_like(input).uniform_(lower, upper)
    result = where(input >= 0, input, input * slope)
    return input.copy_(result) if inplace else result


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu_(input, lower=1./8, upper=1./3, training=False) -> Tensor

    In-place rrelu."""
    return rrelu(input, lower, upper, training, inplace=True)


def gelu(input, approximate="none"):
    """gelu(input, approximate = 'none') -> Tensor

    x * Phi(x); approximate='tanh' uses the tanh approximation."""
    if isinstance(input, _C.Tensor) and input.is_quantized:
        return _quantized._gelu(input, approximate)
    return _nn.gelu(input, approximate)


def silu(input, inplace=False):
    """silu(input, inplace=False)

    x * sigmoid(x)."""
    try:
        return _nn.silu_(input) if inplace else _nn.silu(input)
    except NotImplementedError:
        if not input.is_complex():
            raise
    # over the complex sigmoid (the kernel refused the complex tensor, leaving it unchanged)
    return input.mul_(input.sigmoid()) if inplace else input * input.sigmoid()


def mish(input, inplace=False):
    """mish(input, inplace=False)

    x * tanh(softplus(x))."""
    return _nn.mish_(input) if inplace else _nn.mish(input)


def sigmoid(input):
    """sigmoid(input) -> Tensor

    1 / (1 + exp(-x))."""
    try:
        return _C.sigmoid(input)
    except TypeError:
        _raise_if_not_tensor(input, "sigmoid")
        raise
    except NotImplementedError:
        if input.is_complex():  # the Tensor method's complex path (no cost to a real call)
            return input.sigmoid()
        raise


def tanh(input):
    """tanh(input) -> Tensor

    Hyperbolic tangent."""
    try:
        return _C.tanh(input)
    except TypeError:
        _raise_if_not_tensor(input, "tanh")
        raise
    except NotImplementedError:
        if input.is_complex():  # the Tensor method's complex path (no cost to a real call)
            return input.tanh()
        raise


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """hardtanh(input, min_val=-1., max_val=1., inplace=False) -> Tensor

    Clamps into [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: expected min_val <= max_val; got {min_val} > {max_val}")
    if (
        isinstance(input, _C.Tensor)
        and input.dtype == _C.uint8
        and min(int(min_val), int(max_val)) < 0
    ):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if isinstance(input, _C.Tensor) and input.is_quantized:
        return _quantized._hardtanh(input, min_val, max_val, inplace)
    if inplace:
        return _nn.hardtanh_(input, min_val, max_val)
    return _nn.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh_(input, min_val=-1., max_val=1.) -> Tensor

    In-place hardtanh."""
    return _nn.hardtanh_(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    """hardsigmoid(input, inplace=False)

    relu6(x + 3) / 6."""
    if isinstance(input, _C.Tensor) and input.is_quantized and not inplace:
        return _quantized._hardsigmoid(input)
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input, inplace=False):
    """hardswish(input, inplace=False)

    x * relu6(x + 3) / 6."""
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def softplus(input, beta=1.0, threshold=20.0):
    """softplus(input, beta=1, threshold=20) -> Tensor

    log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    return _nn.softplus(input, beta, threshold)


def softsign(input):
    """softsign(input) -> Tensor

    x / (1 + |x|)."""
    if isinstance(input, _C.Tensor) and input.is_complex():  # the kernel is real
        return input / (1 + input.abs())
    try:
        return _nn.softsign(input)
    except TypeError:
        _raise_if_not_tensor(input, "abs")
        raise


def threshold(input, threshold, value, inplace=False):
    """threshold(input, threshold, value, inplace=False)

    x if x > threshold else value."""
    if isinstance(input, _C.Tensor) and input.is_quantized and not inplace:
        return _quantized._threshold(input, threshold, value)
    if inplace:
        return _nn.threshold_(input, threshold, value)
    return _nn.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """threshold_(input, threshold, value) -> Tensor

    In-place threshold."""
    return _nn.threshold_(input, threshold, value)


def prelu(input, weight):
    """prelu(input, weight) -> Tensor

    max(0, x) + weight * min(0, x), weight per channel (dim 1)."""
    out = _nn.prelu(input, weight)
    if input.dtype != weight.dtype and not _C._autocast_is_active():  # autocast casts both
        from ..._type_info import scalar_type_name

        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {scalar_type_name(input.dtype)} and "
            f"{scalar_type_name(weight.dtype)}"
        )
    _float_kernel("prelu_cpu", input.dtype)
    return out


def logsigmoid(input):
    """logsigmoid(input) -> Tensor

    log(sigmoid(x)), computed stably."""
    if isinstance(input, _C.Tensor) and input.dtype == _C.bool:  # before the negation inside
        _float_kernel("log_sigmoid_cpu", input.dtype)
    return _nn.log_sigmoid(input)


def tanhshrink(input):
    """tanhshrink(input) -> Tensor

    x - tanh(x)."""
    if isinstance(input, _C.Tensor) and input.is_complex():  # the kernel is real
        return input - input.tanh()
    try:
        return _nn.tanhshrink(input)
    except TypeError:
        _raise_if_not_tensor(input, "tanh")
        raise


def softshrink(input, lambd=0.5):
    """softshrink(input, lambd=0.5) -> Tensor

    x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    if isinstance(input, _C.Tensor):  # torch's lambd check is a kernel of floating dtypes
        _float_kernel("softshrink_check", input.dtype)
    return _nn.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    """hardshrink(input, lambd=0.5) -> Tensor

    x if |x| > lambd else 0."""
    return _nn.hardshrink(input, lambd)


def glu(input, dim=-1):
    """glu(input, dim=-1) -> Tensor

    a * sigmoid(b) where a, b are the halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        d = dim + input.dim() if -input.dim() <= dim < 0 else dim
        if 0 <= d < input.dim() and input.shape[d] % 2 == 0:  # after torch's shape checks
            _float_kernel("glu_cpu", input.dtype)
    return _nn.glu(input, dim)


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def _verify_spatial_size(size):
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {size}"
        )


def _empty_norm(input, weight, bias):
    """torch's batch_norm of an empty input: no statistics and no checks of the running ones,
    a copy of the input scaled by weight[0] and shifted by bias[0] (so the graph stays
    connected)."""
    out = input.clone()
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def _check_running_stats(input, running_mean, running_var, training):
    """torch's checks of the running statistics, which come before its dtype check: their sizes,
    then (training) the strided statistics' dtype, then (evaluating) that both are given, then
    that both or neither are."""
    if isinstance(input, _C.Tensor) and input.dim() >= 2:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if isinstance(t, _C.Tensor) and t.numel() != input.shape[1]:
                raise RuntimeError(
                    f"{name} should contain {input.shape[1]} elements not {t.numel()}"
                )
    if training and isinstance(input, _C.Tensor):
        _strided_stats_dtype(input)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if not training and t is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-05,
):
    """batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
        momentum=0.1, eps=1e-05)

    Batch normalization over dim 1; updates running stats in place when training."""
    if training:
        _verify_batch_size(input.size())
    if isinstance(input, _C.Tensor) and input.numel() == 0:
        return _empty_norm(input, weight, bias)
    _check_running_stats(input, running_mean, running_var, training)
    if training:  # torch writes expanded running stats unchecked; ember updates copies of them
        running_mean, running_var = _unaliased(running_mean), _unaliased(running_var)
    return _nn.batch_norm(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        training,
        0.0 if momentum is None else momentum,
        eps,
    )


def _strided_stats_dtype(input):
    """torch computes the training statistics of an input that is neither contiguous nor
    channels-last with mean(), whose dtype check (a RuntimeError) runs before the kernel's."""
    dtype = input.dtype
    if dtype.is_floating_point or dtype.is_complex or input.is_contiguous():
        return
    formats = {4: channels_last, 5: channels_last_3d}
    if input.dim() in formats and input.is_contiguous(memory_format=formats[input.dim()]):
        return
    from ..._type_info import scalar_type_name

    raise RuntimeError(
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        f"complex dtype. Got: {scalar_type_name(dtype)}"
    )


def _unaliased(t):
    """t, or a copy of it where elements share memory (an expanded tensor): an in-place update
    of such a tensor is refused, and torch's result there is one of the racing writes."""
    if isinstance(t, _C.Tensor) and any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
        return t.clone()
    return t


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05)

    Normalization over the trailing normalized_shape dims."""
    return _nn.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-05)

    Normalization over groups of channels."""
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    _verify_batch_size(
        [input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:])
    )
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-05,
):
    """instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
        use_input_stats=True, momentum=0.1, eps=1e-05)

    Normalization of each (sample, channel) plane."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    if isinstance(input, _C.Tensor) and input.numel() == 0 and input.dim() >= 2:
        # torch normalizes the (1, N * C, ...) reshape with the affine parameters repeated N
        # times, so an empty batch has no weight[0] to read
        n = input.size(0)
        return _empty_norm(
            input,
            None if weight is None else weight.repeat(n),
            None if bias is None else bias.repeat(n),
        )
    return _nn.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps
    )


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """dropout(input, p=0.5, training=True, inplace=False)

    Zeroes elements with probability p and scales the rest by 1 / (1 - p)."""
    _check_p(p)
    if training and 0 < p < 1 and isinstance(input, _C.Tensor) and input.numel():
        dt = input.dtype
        if not (dt.is_floating_point or dt.is_complex):  # torch's float mask can't be cast back
            from ..._type_info import scalar_type_name

            raise RuntimeError(
                "result type Float can't be cast to the desired output type " + scalar_type_name(dt)
            )
    return _nn.dropout_(input, p, training) if inplace else _nn.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout(input, p=0.5, training=False, inplace=False)

    Dropout that keeps zero mean and unit variance (for selu)."""
    _check_p(p)
    if inplace:
        return _nn.alpha_dropout_(input, p, training)
    return _nn.alpha_dropout(input, p, training)


def _feature(input, p, training, inplace, alpha=False):
    f = (
        (_nn.feature_alpha_dropout_ if inplace else _nn.feature_alpha_dropout)
        if alpha
        else (_nn.feature_dropout_ if inplace else _nn.feature_dropout)
    )
    return f(input, p, training)


def _unbatched(fn, input, p, training, inplace):
    # A channel-first input without a batch dim gets one for the call.
    result = fn(input.unsqueeze(0), p, training, inplace)
    return input if inplace else result.squeeze(0)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """feature_alpha_dropout(input, p=0.5, training=False, inplace=False)

    alpha_dropout of whole channels."""
    _check_p(p)
    return _feature(input, p, training, inplace, alpha=True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """dropout1d(input, p=0.5, training=True, inplace=False)

    Zeroes whole channels of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
            "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
        )
    if input.dim() == 2:
        return _unbatched(_feature, input, p, training, inplace)
    return _feature(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """dropout2d(input, p=0.5, training=True, inplace=False)

    Zeroes whole channels of (N, C, H, W) inputs."""
    _check_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise "
            "dropout on inputs with 2 spatial dimensions, a channel dimension, and an optional "
            "batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
            "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
            "dim. This behavior will change in a future release to interpret the input as one "
            "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
            "dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """dropout3d(input, p=0.5, training=True, inplace=False)

    Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise "
            "dropout on inputs with 3 spatial dimensions, a channel dimension, and an optional "
            "batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if input.dim() == 4:
        return _unbatched(_feature, input, p, training, inplace)
    return _feature(input, p, training, inplace)


def one_hot(tensor, num_classes=-1):
    """one_hot(tensor, num_classes=-1) -> LongTensor

    int64 one-hot encoding with a new last dim of size num_classes (-1: max + 1)."""
    if isinstance(tensor, _C.Tensor) and tensor.numel() == 0 and num_classes == 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    return _nn.one_hot(tensor, num_classes)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """normalize(input, p=2.0, dim=1, eps=1e-12, out=None)

    input / max(||input||_p along dim, eps)."""
    try:
        if input.is_complex():  # the kernel is real: over the (real) norm's complex path
            result = input / input.norm(p, dim, keepdim=True).clamp_min(eps)
        else:
            result = _nn.normalize(input, float(p), dim, eps)
    except (TypeError, AttributeError):
        _raise_if_not_tensor(input, "norm")
        raise
    if out is not None:
        return out.copy_(result)
    return result


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor

    Cosine of the angle between x1 and x2 along dim."""
    return _nn.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor

    ||x1 - x2 + eps||_p along the last dim."""
    p = float(p)
    if (p < 0 or p == math.inf) and isinstance(x1, _C.Tensor) and isinstance(x2, _C.Tensor):
        shape = _C.broadcast_shapes(x1.shape, x2.shape)
        if len(shape) and shape[-1] == 0:  # a min/max over nothing: no identity, as torch
            ps = {math.inf: "inf", -math.inf: "-inf"}.get(p, f"{p:g}")
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ps} norm on the dimension "
                f"{len(shape) - 1}because this dimension is empty and the operation does not "
                "have an identity"
            )
    if any(isinstance(t, _C.Tensor) and t.is_complex() for t in (x1, x2)):
        from ...linalg import vector_norm  # the kernel is real; torch's norm of the difference

        return vector_norm(x1 - x2 + eps, p, -1, keepdim)
    return _nn.pairwise_distance(x1, x2, p, eps, keepdim)


# ---- torch's grad_fn names (see ember/_ops/_names.py) ----

celu = _names.named(celu, "CeluBackward0")
glu = _names.named(glu, "GluBackward0")
prelu = _names.named(prelu, "PreluKernelBackward0")
rrelu = _names.named(rrelu, "RreluWithNoiseBackward0")
group_norm = _names.named(group_norm, "NativeGroupNormBackward0")
pairwise_distance = _names.named(pairwise_distance, "NormBackward1")
