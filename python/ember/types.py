"""ember.types, as torch.types: the type aliases annotations use."""

import builtins
from typing import Union

from ._C import Tensor
from ._device import device as _device_cls

_int = builtins.int
_float = builtins.float
_bool = builtins.bool
_complex = builtins.complex
Number = Union[_int, _float, _bool]
Device = Union[_device_cls, str, _int, None]
_size = Union[tuple, list]
_TensorOrTensors = Union[Tensor, tuple]

__all__ = ["Number", "Device"]
