"""weight_norm / remove_weight_norm: w = g * v / ||v||, recomputed by a forward pre-hook."""

import warnings

from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, pow, dim):
    """The `pow`-norm of `v` over all dims but `dim` (kept, size 1); dim=-1: the whole tensor."""
    if dim == -1:
        return v.abs().pow(pow).sum().pow(1.0 / pow)
    dims = [d for d in range(v.dim()) if d != dim]
    return v.abs().pow(pow).sum(dims, keepdim=True).pow(1.0 / pow)


def _weight_norm(v, g, dim):
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that rebuilds `name` from `name_g` and `name_v`."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """weight_norm(module, name='weight', dim=0)

    Reparameterises `module.name` as g * v / ||v|| (norm over all dims but `dim`)."""
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """remove_weight_norm(module, name='weight')

    Undoes weight_norm, leaving a plain parameter `name`."""
    return _remove_norm_hook(module, WeightNorm, name, "weight_norm")


def _remove_norm_hook(module, hook_type, name, what):
    """Removes the `hook_type` pre-hook on `name`, restoring a plain parameter."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
