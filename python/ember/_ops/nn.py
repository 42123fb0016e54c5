"""torch's top-level forms of neural-network ops (torch.embedding, torch.batch_norm, torch.selu,
torch.dropout ...): those whose argument order differs from torch.nn.functional's, and the
bindings of ember._C._nn that torch also exposes at top level. The F functions torch exposes
unchanged (torch.conv2d ...) the package root imports from ember.nn.functional itself."""

from .. import _C
from ..nn import functional

_nn = _C._nn

__all__ = [
    "embedding",
    "adaptive_max_pool1d",
    "constant_pad_nd",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "prelu",
    "hardshrink",
    "threshold",
    "threshold_",
    "bilinear",
    "dropout",
    "dropout_",
    "feature_dropout",
    "feature_dropout_",
    "alpha_dropout",
    "alpha_dropout_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "cosine_similarity",
    "pairwise_distance",
    "softmax",
    "log_softmax",
]


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False) -> Tensor

    torch.embedding takes (weight, indices), the reverse of F.embedding."""
    return functional.embedding(
        input,
        weight,
        None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


def adaptive_max_pool1d(input, output_size):
    """adaptive_max_pool1d(input, output_size) -> (Tensor, Tensor)

    Returns (values, indices), as torch's top-level form does."""
    return functional.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input, pad, value=0):
    """constant_pad_nd(input, pad, value=0) -> Tensor

    input padded with value by pad (pairs of amounts, last dimension first)."""
    return functional.pad(input, pad, "constant", value)


# Top-level names torch has (torch.selu, torch.dropout, ...) with torch's positional orders.
def batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True
):
    """batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
        cudnn_enabled) -> Tensor

    Batch normalization with torch's top-level argument order (weight and bias first)."""
    return _nn.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
        cudnn_enable=True) -> Tensor

    Layer normalization over the trailing normalized_shape dimensions."""
    return _nn.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-05,
        cudnn_enabled=True) -> Tensor

    Group normalization over num_groups groups of channels."""
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(
    input,
    weight,
    bias,
    running_mean,
    running_var,
    use_input_stats,
    momentum,
    eps,
    cudnn_enabled=True,
):
    """instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
        cudnn_enabled) -> Tensor

    Instance normalization with torch's top-level argument order."""
    return _nn.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps
    )


selu, selu_, celu, celu_ = _nn.selu, _nn.selu_, _nn.celu, _nn.celu_
prelu, hardshrink, threshold, threshold_ = _nn.prelu, _nn.hardshrink, _nn.threshold, _nn.threshold_
bilinear = _nn.bilinear
dropout, dropout_ = _nn.dropout, _nn.dropout_
feature_dropout, feature_dropout_ = _nn.feature_dropout, _nn.feature_dropout_
alpha_dropout, alpha_dropout_ = _nn.alpha_dropout, _nn.alpha_dropout_
feature_alpha_dropout = _nn.feature_alpha_dropout
feature_alpha_dropout_ = _nn.feature_alpha_dropout_
cosine_similarity, pairwise_distance = _nn.cosine_similarity, _nn.pairwise_distance


# torch.softmax / torch.log_softmax and the Tensor methods share the kernels.
def softmax(input, dim, dtype=None):
    """softmax(input, dim, *, dtype=None) -> Tensor

    exp(input) normalized to sum to 1 along dim (computed in dtype when given)."""
    return _nn.softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """log_softmax(input, dim, *, dtype=None) -> Tensor

    The log of softmax along dim, computed without forming softmax first."""
    return _nn.log_softmax(input, dim, dtype)


# --- method forms (installed by _tensor_methods) -----------------------------------------


def tensor_hardshrink(self, lambd=0.5):
    """hardshrink(lambd=0.5) -> Tensor

    hardshrink with self as input."""
    return _nn.hardshrink(self, lambd)


def tensor_prelu(self, weight):
    """prelu(weight) -> Tensor

    prelu with self as input."""
    return _nn.prelu(self, weight)


tensor_hardshrink.__name__ = "hardshrink"
tensor_prelu.__name__ = "prelu"
