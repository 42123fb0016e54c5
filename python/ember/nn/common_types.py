"""ember.nn.common_types, as torch.nn.common_types: the size and tensor aliases module code
annotates with."""

from typing import Optional, Union

from .._C import Tensor

_scalar_or_tuple_any_t = Union[int, tuple]
_scalar_or_tuple_1_t = Union[int, tuple]
_scalar_or_tuple_2_t = Union[int, tuple]
_scalar_or_tuple_3_t = Union[int, tuple]
_size_any_t = _scalar_or_tuple_any_t
_size_1_t = _scalar_or_tuple_1_t
_size_2_t = _scalar_or_tuple_2_t
_size_3_t = _scalar_or_tuple_3_t
_size_any_opt_t = Union[Optional[int], tuple]
_size_2_opt_t = Union[Optional[int], tuple]
_size_3_opt_t = Union[Optional[int], tuple]
_ratio_2_t = Union[float, tuple]
_ratio_3_t = Union[float, tuple]
_ratio_any_t = Union[float, tuple]
_tensor_list_t = Union[Tensor, tuple]
_maybe_indices_t = Union[Tensor, tuple]

__all__ = []
