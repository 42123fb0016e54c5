"""How Module._apply puts a converted parameter in place, as ember.__future__'s switches say:
change its .data (the default: optimizers holding it see the conversion), make a new Parameter
(overwrite), or swap the converted contents into the same object (swap)."""

from ... import __future__ as _future
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter


def apply_to_parameter(module, key, param, fn):
    with no_grad():
        applied = fn(param)
    swap = _future.get_swap_module_params_on_conversion()
    overwrite = _future.get_overwrite_module_params_on_conversion()
    grad = param.grad
    if swap:
        from ...utils import swap_tensors

        try:
            if grad is not None:
                param.grad = None
            swap_tensors(param, Parameter(applied, requires_grad=param.requires_grad))
        except Exception as e:
            if grad is not None:
                param.grad = grad
            raise RuntimeError(f"_apply(): Couldn't swap {module._get_name()}.{key}") from e
        out = param
    elif overwrite:
        out = Parameter(applied, param.requires_grad)
        module._parameters[key] = out
    else:
        param.data = applied
        out = param
    if grad is None:
        return
    with no_grad():
        grad_applied = fn(grad)
    if swap:
        grad_applied.requires_grad_(grad.requires_grad)
        try:
            swap_tensors(grad, grad_applied)
        except Exception as e:
            raise RuntimeError(f"_apply(): Couldn't swap {module._get_name()}.{key}.grad") from e
        out.grad = grad
    elif overwrite:
        out.grad = grad_applied.requires_grad_(grad.requires_grad)
    else:
        out.grad.data = grad_applied
