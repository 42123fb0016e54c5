"""Folding an eval-mode BatchNorm into the convolution or linear layer before it (torch's
nn.utils.fusion): y = bn(conv(x)) becomes one conv with rescaled weight and shifted bias."""

import copy

from ... import _C
from ..._ops.creation import ones_like, zeros_like
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False)

    The convolution weight and bias with batch-norm statistics and affine parameters folded in."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = _C.rsqrt(bn_rv + bn_eps)
    # Output channels are dim 0 of a convolution's weight and dim 1 of a transposed one's.
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """fuse_conv_bn_eval(conv, bn, transpose=False)

    A copy of an eval-mode convolution with the following batch norm folded into its weight and
    bias."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn must track running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)

    The Linear weight and bias with batch-norm statistics and affine parameters folded in."""
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * _C.rsqrt(bn_rv + bn_eps)
    w = linear_w * scale.unsqueeze(-1)
    b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """fuse_linear_bn_eval(linear, bn)

    A copy of an eval-mode Linear with the following batch norm folded into its weight and bias."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features or "
            "bn.num_features must equal 1"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn must track running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
