"""spectral_norm / remove_spectral_norm: weight / sigma(weight), sigma by power iteration."""

from ..._C import dot, matmul
from ..._ops.creation import empty
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .weight_norm import _remove_norm_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    return x / x.norm().clamp(min=eps)


class SpectralNorm:
    """The forward pre-hook that rebuilds `name` from `name_orig` and the u, v buffers."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # The buffers are updated in place, so the estimate carries over between calls.
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(matmul(weight_mat.t(), u), self.eps))
                    u.copy_(_normalize(matmul(weight_mat, v), self.eps))
                u, v = u.clone(), v.clone()
        sigma = dot(u, matmul(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = _normalize(empty(h, dtype=weight.dtype).normal_(0, 1), fn.eps)
            v = _normalize(empty(w, dtype=weight.dtype).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None)

    Divides `module.name` by its largest singular value, estimated by power iteration."""
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """remove_spectral_norm(module, name='weight')

    Undoes spectral_norm, leaving a plain parameter `name`."""
    return _remove_norm_hook(module, SpectralNorm, name, "spectral_norm")
