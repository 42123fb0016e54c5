"""ember.autograd: backward, grad, custom Functions, grad modes and gradient checks."""

from .. import _C
from .._C import Tensor
from . import functional, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401

Variable = Tensor


def _seq(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulates gradients of `tensors` into the leaves' `.grad`."""
    tensors = _seq(tensors)
    grads = _seq(grad_tensors if grad_tensors is not None else grad_variables) or [None] * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _C._backward(tensors, grads, retain_graph, create_graph, _seq(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns d(outputs)/d(inputs) without touching `.grad`."""
    single = isinstance(inputs, Tensor)
    outs = _seq(outputs)
    go = _seq(grad_outputs)
    if go is not None:
        go = [g if g is not None else None for g in go]
    if allow_unused is None:
        allow_unused = materialize_grads
    result = _C._grad(outs, _seq(inputs), go, retain_graph, create_graph, allow_unused)
    if materialize_grads:
        import ember

        result = tuple(ember.zeros_like(i) if r is None else r for r, i in zip(result, _seq(inputs)))
    return result if not single else tuple(result)
