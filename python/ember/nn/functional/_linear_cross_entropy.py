"""linear_cross_entropy (new in torch 2.13): cross entropy of linearly projected inputs, with
torch's argument checks, and torch.nn.functional's helpers that Python functionals call
(has_torch_function*, handle_torch_function) and grid_sample's mode tables."""

import math

from ...overrides import (
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)
from ._loss import cross_entropy

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "linear_cross_entropy",
]

# torch's enum values of grid_sample's modes (what its ATen kernel receives).
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
        reduction='mean', ignore_index=None, label_smoothing=0.0, options=None) -> Tensor

    cross_entropy(linear(input, linear_weight, linear_bias), target, ...). A weight of shape
    (C, d_1, ..., d_K, in_features) gives K-dimensional logits (N, C, d_1, ..., d_K).
    ``options`` (torch's chunked path, which saves memory) is not supported."""
    if has_torch_function_variadic(input, linear_weight, target, linear_bias, weight):
        return handle_torch_function(
            linear_cross_entropy,
            (input, linear_weight, target, linear_bias, weight),
            input,
            linear_weight,
            target,
            linear_bias=linear_bias,
            weight=weight,
            reduction=reduction,
            ignore_index=ignore_index,
            label_smoothing=label_smoothing,
            options=options,
        )
    if options is not None:
        raise NotImplementedError(
            "linear_cross_entropy: options (the chunked path) is not supported by ember; "
            "pass options=None"
        )
    if not 1 <= input.dim() <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively"
        )
    classes, extra = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *extra):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *extra)}, got {tuple(linear_bias.shape)}"
        )
    if extra and input.dim() == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*input.shape[:-1], classes, *extra)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    flat_w = linear_weight.reshape(classes * math.prod(extra), in_features)
    logits = (input @ flat_w.t()).reshape(logits_shape)
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
