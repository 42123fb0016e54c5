"""ember.autograd: backward, grad, custom Functions, grad modes and gradient checks."""

from .._C import Tensor
from . import forward_ad, functional, graph, profiler, profiler_util  # noqa: F401
from ._engine import backward, grad  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401

Variable = Tensor
