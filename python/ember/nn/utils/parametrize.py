"""Parametrizations: a tensor attribute computed by modules from stored originals, as
torch.nn.utils.parametrize (the module's class is swapped for a subclass with a property)."""

import contextlib
import copy

from ..._C import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]


_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """cached() -> context manager

    Inside the block each parametrized tensor is computed once, on first access, and the same
    tensor is returned after that (a recurrent loop reading a parametrized weight each step
    computes it once); the cache empties when the outermost block exits."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to `original` (or original0, ...)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        new = original
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # a parametrization without an inverse keeps `original` as is
        if not isinstance(new, (Tensor, list, tuple)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        original_dtype, original_shape = original.dtype, original.shape
        if isinstance(new, Tensor):
            self.is_tensor = True
            self.ntensors = 1
            if new.dtype != original.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            with no_grad():
                if new is not original:
                    original.data = new.detach()
            _register_parameter_or_buffer(self, "original", original)
        else:
            self.is_tensor = False
            self.ntensors = len(new)
            for i, originali in enumerate(new):
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach(), original.requires_grad)
                else:
                    originali = originali.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not unsafe:
            # forward(right_inverse(original)) must live where the original did
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, unless "
                    f"`unsafe` flag is enabled.\nunparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {z.dtype}"
                )
            if z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, unless "
                    f"`unsafe` flag is enabled.\nunparametrized shape: {original_shape}\n"
                    f"parametrized shape: {z.shape}"
                )

    def right_inverse(self, value):
        """Sets the originals so that the parametrized tensor becomes `value`."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, v in enumerate(value):
                    getattr(self, f"original{i}").copy_(v)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict()."
        )

    def deepcopy(self, memo):
        replica = memo.get(id(self))
        if replica is None:
            replica = self.__new__(self.__class__)
            memo[id(self)] = replica
            replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    module.__class__ = type(
        f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate, "__deepcopy__": deepcopy}
    )


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        if not _cache_enabled:
            return self.parametrizations[tensor_name]()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = self.parametrizations[tensor_name]()
        return value

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    """Whether `module` (or its `tensor_name`) has parametrizations."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def _check_appended(module, tensor_name, parametrization):
    """A parametrization added on top of others maps the current tensor's space to itself."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    for what, have, got in (("dtype", y.dtype, x.dtype), ("shape", y.shape, x.shape)):
        if have != got:
            raise ValueError(
                f"Registering a parametrization may not change the {what} of the tensor, unless "
                f"the `unsafe` flag is enabled.\nmodule.{tensor_name}.{what}: {have}\n"
                f"parametrization(module.{tensor_name}).{what}: {got}"
            )
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
        )
    for what, have, got in (("dtype", y.dtype, z.dtype), ("shape", y.shape, z.shape)):
        if have != got:
            raise ValueError(
                f"The tensor returned by parametrization.right_inverse must have the same {what} "
                f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {have}\nreturned {what}: {got}"
            )


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes `module.tensor_name` the output of `parametrization` applied to the stored original."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations of `tensor_name`, keeping its value (or the original)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                original.data = getattr(module, tensor_name).detach()
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        with no_grad():
            t = getattr(module, tensor_name)
        if isinstance(parametrizations.original0, Parameter):
            original = Parameter(t.detach(), parametrizations.original0.requires_grad)
        else:
            original = t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The class of `module` before parametrizations swapped it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copies the parametrizations (and their originals) of `from_module` onto `to_module`."""
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        plist = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for p in plist:
            register_parametrization(to_module, name, p)
        with no_grad():
            if plist.is_tensor:
                to_module.parametrizations[name].original.copy_(plist.original)
            else:
                for i in range(plist.ntensors):
                    getattr(to_module.parametrizations[name], f"original{i}").copy_(
                        getattr(plist, f"original{i}")
                    )
    return to_module
