"""nn.Sequential's fused BatchNorm2d -> ReLU -> MaxPool2d(2) block.

Note [Fused BatchNorm, ReLU and max-pool] (csrc/ember/cpu/batch_norm_relu_pool.cpp) has the
kernels: one forward and one backward pass over the activation instead of about ten, with the
same bits as the three modules run one by one. Sequential takes the fused path only where nothing
could tell the difference but the time: the three modules are exactly those classes with no
hooks and not compiled, the BatchNorm is training, the input is a plain contiguous float32 CPU
tensor of even height and width, and no mode, transform, tracer, profiler, autocast or
saved-tensor hook is active (those see each op, so they get the ops). The one visible trace is
the output's grad_fn, which is this block's node rather than max_pool2d's.
"""

import sys

from ... import _C
from ... import overrides as _overrides
from ..._C import Tensor, float32
from ..._C import _nn as _cnn
from ...autograd import _engine
from ...autograd import forward_ad as _forward_ad
from ...autograd.function import Function
from .. import functional as F
from . import module as _module
from .activation import ReLU
from .batchnorm import BatchNorm2d
from .pooling import MaxPool2d

_TWO = (2, (2, 2), [2, 2])
_ZERO = (0, (0, 0), [0, 0])
_ONE = (1, (1, 1), [1, 1])


class _BatchNormReluMaxPool(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, momentum, eps):
        out, slots, mean, invstd = _cnn._batch_norm_relu_max_pool2x2(
            x, weight, bias, running_mean, running_var, momentum, eps
        )
        ctx.save_for_backward(x, weight, bias, slots, mean, invstd)
        ctx.eps = eps
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, slots, mean, invstd = ctx.saved_tensors
        need = ctx.needs_input_grad[:3]
        if _C.is_grad_enabled():  # create_graph: the three ops' graph, so it differentiates again
            return (*_graph_grads(x, weight, bias, grad, ctx.eps, need), None, None, None, None)
        gx, gw, gb = _cnn._batch_norm_relu_max_pool2x2_backward(
            grad.contiguous(), x, slots, weight, mean, invstd
        )
        return (
            gx if need[0] else None,
            gw if need[1] else None,
            gb if need[2] else None,
            None,
            None,
            None,
            None,
        )


def _graph_grads(x, weight, bias, grad, eps, need):
    from ...autograd import grad as _grad

    inputs = [t for t, n in zip((x, weight, bias), need) if n]
    y = F.max_pool2d(F.relu(F.batch_norm(x, None, None, weight, bias, True, 0.0, eps)), 2)
    found = iter(_grad(y, inputs, grad, create_graph=True))
    return [next(found) if n else None for n in need]


def _plain(t, size):
    return t is None or (
        type(t) in (Tensor, _module.Parameter, _module.Buffer)
        and t.dtype == float32
        and t.device.type == "cpu"
        and t.dim() == 1
        and t.numel() == size
        and t.is_contiguous()
    )


def _quiet():
    """No global hook, mode, transform, tracer, profiler, autocast or saved-tensor hook."""
    if (
        _module._global_forward_pre_hooks
        or _module._global_forward_hooks
        or _module._global_backward_hooks
        or _module._global_backward_pre_hooks
        or _overrides._active
        or _engine._transform_count
        or _forward_ad._is_active()
        or _C._profiler_enabled()
        or _C._autocast_is_active()
        or _C._top_saved_tensors_hooks() is not None
        or _C._is_anomaly_enabled()
    ):
        return False
    # Not imported means not capturing; importing them here would cost the first call.
    dynamo, jit = sys.modules.get("ember._dynamo"), sys.modules.get("ember.jit")
    return not (
        (dynamo is not None and dynamo.is_compiling())
        or (jit is not None and (jit.is_tracing() or jit.is_scripting()))
    )


def _hookless(m):
    return not (
        m._forward_pre_hooks
        or m._forward_hooks
        or m._backward_hooks
        or m._backward_pre_hooks
        or "forward" in m.__dict__
    )


def run(bn, relu, pool, x):
    """max_pool2d(relu(bn(x)), 2) in one pass, or None where the modules must run one by one."""
    if not (
        type(bn) is BatchNorm2d
        and type(relu) is ReLU
        and type(pool) is MaxPool2d
        and bn.training
        and type(x) is Tensor
        and x.dtype == float32
        and x.device.type == "cpu"
        and x.dim() == 4
        and x.shape[2] % 2 == 0
        and x.shape[3] % 2 == 0
        and x.numel() > 0
        and x.shape[1] == bn.num_features
        and x.is_contiguous()
        and pool.kernel_size in _TWO
        and pool.stride in _TWO
        and pool.padding in _ZERO
        and pool.dilation in _ONE
        and not pool.return_indices
        and _hookless(bn)
        and _hookless(relu)
        and _hookless(pool)
    ):
        return None
    c = x.shape[1]
    if not (
        _plain(bn.weight, c)
        and _plain(bn.bias, c)
        and _plain(bn.running_mean, c)
        and _plain(bn.running_var, c)
        and _quiet()
    ):
        return None
    running_mean, running_var, weight, bias, _, momentum, eps = bn._batch_norm_args()
    return _BatchNormReluMaxPool.apply(x, weight, bias, running_mean, running_var, momentum, eps)
