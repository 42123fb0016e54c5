"""ember.autograd: backward, grad, custom Functions, grad modes and gradient checks."""

# torch.autograd re-exports these from torch.overrides (Functions written for subclasses use them)
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like  # noqa: E402,F401
from . import forward_ad, functional, graph, profiler, profiler_util  # noqa: F401
from ._engine import backward, grad  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .variable import Variable  # noqa: F401
