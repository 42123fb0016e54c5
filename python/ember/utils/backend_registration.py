"""Out-of-tree backends on the PrivateUse1 key, as torch.utils.backend_registration.

A backend registers an allocator and kernels for the PrivateUse1 dispatch key (in C++:
``register_privateuse1_allocator`` and ``EMBER_REGISTER_KERNEL(op, PrivateUse1, fn)``; from Python:
``ember.library`` kernels with dispatch key "PrivateUse1"), then names its device here:
``rename_privateuse1_backend("npu")`` makes ``device="npu"`` tensors, and
``generate_methods_for_privateuse1_backend()`` adds ``Tensor.npu()``, ``Tensor.is_npu`` and
``Module.npu()``. See Note [PrivateUse1] in csrc/ember/core/allocator.h.
"""

import sys

from .. import _C

__all__ = ["rename_privateuse1_backend", "generate_methods_for_privateuse1_backend"]


def rename_privateuse1_backend(backend_name: str) -> None:
    """rename_privateuse1_backend(backend_name) -> None

    Names the PrivateUse1 device type ``backend_name``: device strings, printing and
    ``tensor.device`` use it from then on. Allowed once per process."""
    _C._rename_privateuse1_backend(backend_name)


def _get_privateuse1_backend_name() -> str:
    return _C._get_privateuse1_backend_name()


def generate_methods_for_privateuse1_backend(
    for_tensor=True,
    for_module=True,
    for_packed_sequence=True,
    for_storage=False,
    unsupported_dtype=None,
):
    """generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=False, unsupported_dtype=None) -> None

    Adds the renamed backend's methods: ``Tensor.is_<name>``, ``Tensor.<name>(device=None,
    non_blocking=False)``, ``Module.<name>(device=None)``, ``PackedSequence.<name>()``."""  # noqa: E501
    name = _C._get_privateuse1_backend_name()
    if name == "privateuseone":
        raise RuntimeError(
            "generate_methods_for_privateuse1_backend: rename the backend first "
            "(ember.utils.rename_privateuse1_backend)"
        )

    def target(device):
        if device is None:
            return f"{name}:0"
        if isinstance(device, int):
            return f"{name}:{device}"
        return str(device)

    def check_dtype(t):
        if unsupported_dtype and t.dtype in unsupported_dtype:
            raise RuntimeError(f"Can not support dtype {t.dtype} for the '{name}' backend")

    if for_tensor:

        def is_backend(self):
            return self._device_str.split(":")[0] == name

        def to_backend(self, device=None, non_blocking=False, **kwargs):
            check_dtype(self)
            return self.to(target(device))

        from .._ops._tensor_methods import install_backend_methods

        to_backend.__doc__ = f"{name}(device=None, non_blocking=False) -> Tensor"
        install_backend_methods(
            {f"is_{name}": property(is_backend, doc=f"is_{name} -> bool"), name: to_backend}
        )

    if for_module:
        from ..nn import Module

        def module_to_backend(self, device=None):
            return self._apply(lambda t: getattr(t, name)(device))

        module_to_backend.__doc__ = f"{name}(device=None) -> Module"
        _set(Module, name, module_to_backend)

    if for_packed_sequence:
        from ..nn.utils import rnn

        packed = getattr(rnn, "PackedSequence", None)
        if packed is not None:

            def packed_to_backend(self, *args, **kwargs):
                return self.to(target(None))

            _set(packed, name, packed_to_backend)

    if for_storage:
        raise NotImplementedError("generate_methods_for_privateuse1_backend: for_storage")


def _set(owner, attr, value):
    if attr in vars(owner):
        raise RuntimeError(
            f"The custom device module of {owner.__name__} has already been registered with {attr}"
        )
    setattr(owner, attr, value)


def _register_device_module(device_type, module):
    """_register_device_module(device_type, module) -> None

    Makes ``module`` the runtime module of ``device_type`` (``ember.<device_type>``), as a backend's
    ``torch_npu`` is ``torch.npu``."""
    from .._device import device

    device_type = device(device_type).type
    root = sys.modules["ember"]
    if hasattr(root, device_type):
        raise RuntimeError(
            f"The runtime module of '{device_type}' has already been registered with "
            f"'{getattr(root, device_type)}'"
        )
    setattr(root, device_type, module)
    sys.modules[f"ember.{device_type}"] = module
