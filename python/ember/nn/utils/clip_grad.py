"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_."""

from ..._C import Tensor
from ..._ops.creation import tensor
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


def _lib():
    import ember

    return ember


def _foreach_supported(tensors):
    """torch's test for its foreach path (_has_foreach_support): plain tensors, parameters and
    DTensors, whose foreach functions have sharding rules."""
    from ..parameter import Parameter

    return all(type(t) in (Tensor, Parameter) or type(t).__name__ == "DTensor" for t in tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None)

    The norm of the norms of `tensors` (as if they were concatenated into one vector)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    # looked up when called: while a function mode is on (DTensors) these are its routes, so a
    # sharded tensor's norm stays partial until the norm of the stack reduces them all at once
    lib = _lib()
    with no_grad():
        if foreach is not False and _foreach_supported(tensors):
            norms = lib._foreach_norm(tensors, norm_type)
        else:
            norms = [lib.linalg.vector_norm(t, norm_type) for t in tensors]
        total_norm = lib.linalg.vector_norm(lib.stack(list(norms)), norm_type)
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
    _scale_grads(
        [p.grad for p in _as_list(parameters) if p.grad is not None], max_norm, total_norm, foreach
    )


def _scale_grads(grads, max_norm, total_norm, foreach):
    if not grads:
        return
    if type(total_norm).__name__ == "DTensor":
        total_norm = total_norm.full_tensor()
    with no_grad():
        # one factor for all, in the norm's dtype (as torch's: no cast per gradient)
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        if foreach is not False and _foreach_supported(grads):
            _lib()._foreach_mul_(grads, coef)
        else:
            for g in grads:
                g.mul_(coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None)

    Rescales the grads in place to a total norm of at most `max_norm`; returns the norm."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _scale_grads(grads, max_norm, total_norm, foreach)
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
