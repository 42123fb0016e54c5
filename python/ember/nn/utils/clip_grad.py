"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_."""

import math

from ..._C import Tensor, stack
from ..._ops.creation import tensor, zeros
from ...autograd.grad_mode import no_grad

__all__ = [
    "clip_grad_norm_",
    "clip_grad_norm",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(t, p):
    a = t.abs()
    if p == math.inf:
        return a.max() if t.numel() else zeros((), dtype=t.dtype)
    if p == -math.inf:
        return a.min()
    if p == 0:
        return (a != 0).sum().to(t.dtype)
    if p == 1:
        return a.sum()
    if p == 2:
        return a.mul(a).sum().sqrt()
    return a.pow(p).sum().pow(1.0 / p)


def _dtensor_total_norm(tensors, norm_type):
    """The total norm of DTensors (None when there are none), computed by the DTensor rules as
    torch's: each one's norm stays partial (over sharded dims) until the norm of their stack
    reduces them all at once, so the ranks agree on the result with one collective."""
    first = next((t for t in tensors if type(t).__name__ == "DTensor"), None)
    if first is None:
        return None
    import importlib

    lib = importlib.import_module(type(first).__module__)._lib()
    norms = [lib.linalg.vector_norm(t, norm_type) for t in tensors]
    return lib.linalg.vector_norm(lib.stack(norms), norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None)

    The norm of the norms of `tensors` (as if they were concatenated into one vector)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    with no_grad():
        total_norm = _dtensor_total_norm(tensors, norm_type)
        if total_norm is None:
            norms = stack([_vector_norm(t, norm_type) for t in tensors])
            total_norm = _vector_norm(norms, norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so "
            "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
            "norm anyway, set `error_if_nonfinite=False`"
        )
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None)

    Scales the gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    if type(total_norm).__name__ == "DTensor":
        total_norm = total_norm.to_local()
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None)

    Rescales the grads in place to a total norm of at most `max_norm`; returns the norm."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None)

    Deprecated alias of clip_grad_norm_."""
    import warnings

    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """clip_grad_value_(parameters, clip_value, foreach=None)

    Clamps every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
