"""ember.nn.grad, as torch.nn.grad: the gradients of conv1d/2d/3d with respect to their input
and weight, given the gradient of the output. Each runs the convolution under autograd on a
stand-in for the unknown argument and takes the gradient (the convolution is linear in each
argument, so the stand-in's values do not matter)."""

from .._ops.creation import zeros
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from . import functional as F

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _input_grad(n, input_size, weight, grad_output, stride, padding, dilation, groups):
    with enable_grad():
        x = zeros(tuple(input_size), dtype=grad_output.dtype, requires_grad=True)
        out = _CONV[n](x, weight.detach(), None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(
                f"conv{n}d_input: expected grad_output of shape {tuple(out.shape)} for "
                f"input_size {tuple(input_size)}; got {tuple(grad_output.shape)}"
            )
        return _grad(out, x, grad_output)[0]


def _weight_grad(n, input, weight_size, grad_output, stride, padding, dilation, groups):
    with enable_grad():
        w = zeros(tuple(weight_size), dtype=grad_output.dtype, requires_grad=True)
        out = _CONV[n](input.detach(), w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(
                f"conv{n}d_weight: expected grad_output of shape {tuple(out.shape)} for "
                f"weight_size {tuple(weight_size)}; got {tuple(grad_output.shape)}"
            )
        return _grad(out, w, grad_output)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1)

    The gradient of conv1d with respect to an input of input_size."""
    return _input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1)

    The gradient of conv1d with respect to a weight of weight_size."""
    return _weight_grad(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1)

    The gradient of conv2d with respect to an input of input_size."""
    return _input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1)

    The gradient of conv2d with respect to a weight of weight_size."""
    return _weight_grad(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1)

    The gradient of conv3d with respect to an input of input_size."""
    return _input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1)

    The gradient of conv3d with respect to a weight of weight_size."""
    return _weight_grad(3, input, weight_size, grad_output, stride, padding, dilation, groups)
