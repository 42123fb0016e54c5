"""Tensor methods of torch's that programs call and the binding lacks (issue 16, drop-in
running): the method forms of top-level functions (igamma, geqrf, nonzero_static ...), the
complex casts, dim_order, and the stream/nesting queries that are no-ops or constants on ember's
CPU tensors. _tensor_methods fills them into Tensor (FILL: never over a binding's method)."""

import warnings

from .._C import Tensor, result_type
from . import aten_misc, linalg, view_copy
from ._util import check_inplace_result

__all__ = []


def _method(fn, name, sig, doc):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"{name}{sig}\n\n{doc}"
    return method


def _inplace(fn, name, sig, doc):
    def method(self, *args, **kwargs):
        if args and isinstance(args[0], Tensor):  # the operands' promoted dtype is checked first
            check_inplace_result(result_type(self, args[0]), self)
        result = fn(self, *args, **kwargs)
        check_inplace_result(result.dtype, self)
        return self.copy_(result)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"{name}{sig}\n\n{doc}"
    return method


def _cast(name, dtype_name):
    def cast(self, memory_format=None):
        from .. import _C

        target = getattr(_C, dtype_name)
        if memory_format is not None:
            return self.to(target, memory_format=memory_format)
        return self if self.dtype == target else self.to(target)

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = (
        f"{name}(memory_format=torch.preserve_format) -> Tensor\n\n"
        f"self as {dtype_name} (self itself when it already is)."
    )
    return cast


def dim_order(self, *, ambiguity_check=False):
    """dim_order(*, ambiguity_check=False) -> tuple

    The dimensions in the order they lie in memory, outermost first (larger strides first,
    ties in dimension order). With ambiguity_check=True, raises when the order is not unique
    (equal strides or dimensions of size 1)."""
    strides, sizes = self.stride(), self.shape
    if ambiguity_check is True:
        ambiguous = any(a == b for a, b in zip(strides, strides[1:])) or any(s == 1 for s in sizes)
        if ambiguous:
            raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def const_data_ptr(self):
    """const_data_ptr() -> int

    The address of the first element, for reading (as data_ptr())."""
    return self.data_ptr()


def record_stream(self, stream):
    """record_stream(stream) -> None

    Marks the tensor as used by stream so that its memory is not reused before the stream's
    work is done; every ember op is synchronous on the CPU, so nothing is to be kept."""


def resize_as(self, tensor):
    """resize_as(tensor) -> Tensor

    Deprecated out-of-place resize: self reshaped to tensor's size (the same number of elements
    is required); differentiable."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    if self.numel() != tensor.numel():
        raise RuntimeError(
            f"resize_as: expected tensor to have {self.numel()} elements; got {tensor.numel()}"
        )
    return self.reshape(tuple(tensor.shape))


def lu_solve(self, LU_data, LU_pivots):
    """lu_solve(LU_data, LU_pivots) -> Tensor

    ember.lu_solve(self, LU_data, LU_pivots)."""
    return linalg.lu_solve(self, LU_data, LU_pivots)


def _conj_physical_(self):
    from .._runtime_names import conj_physical_

    return conj_physical_(self)


def _is_nested(self):
    return False


def _removed_method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


METHODS = {
    "cfloat": _cast("cfloat", "complex64"),
    "cdouble": _cast("cdouble", "complex128"),
    "igamma": _method(
        aten_misc.igamma, "igamma", "(other) -> Tensor", "ember.igamma(self, other)."
    ),
    "igammac": _method(
        aten_misc.igammac, "igammac", "(other) -> Tensor", "ember.igammac(self, other)."
    ),
    "igamma_": _inplace(aten_misc.igamma, "igamma_", "(other) -> Tensor", "In-place igamma()."),
    "igammac_": _inplace(aten_misc.igammac, "igammac_", "(other) -> Tensor", "In-place igammac()."),
    "geqrf": _method(aten_misc.geqrf, "geqrf", "() -> (Tensor, Tensor)", "ember.geqrf(self)."),
    "orgqr": _method(aten_misc.orgqr, "orgqr", "(input2) -> Tensor", "ember.orgqr(self, input2)."),
    "ormqr": _method(
        aten_misc.ormqr,
        "ormqr",
        "(input2, input3, left=True, transpose=False) -> Tensor",
        "ember.ormqr(self, input2, input3, left, transpose).",
    ),
    "nonzero_static": _method(
        view_copy.nonzero_static,
        "nonzero_static",
        "(*, size, fill_value=-1) -> Tensor",
        "ember.nonzero_static(self, size=size, fill_value=fill_value).",
    ),
    "as_strided_": _method(
        view_copy.as_strided_,
        "as_strided_",
        "(size, stride, storage_offset=None) -> Tensor",
        "ember.as_strided_(self, size, stride, storage_offset).",
    ),
    "as_strided_scatter": _method(
        view_copy.as_strided_scatter,
        "as_strided_scatter",
        "(src, size, stride, storage_offset=None) -> Tensor",
        "ember.as_strided_scatter(self, src, size, stride, storage_offset).",
    ),
    "unsafe_split_with_sizes": _method(
        view_copy.unsafe_split_with_sizes,
        "unsafe_split_with_sizes",
        "(split_sizes, dim=0) -> List[Tensor]",
        "ember.unsafe_split_with_sizes(self, split_sizes, dim).",
    ),
    "conj_physical_": _method(
        _conj_physical_, "conj_physical_", "() -> Tensor", "ember.conj_physical_(self)."
    ),
    "dim_order": dim_order,
    "const_data_ptr": const_data_ptr,
    "record_stream": record_stream,
    "resize_as": resize_as,
    "lu_solve": lu_solve,
    "solve": _removed_method(aten_misc.solve),
    "lstsq": _removed_method(aten_misc.lstsq),
    "eig": _removed_method(aten_misc.eig),
    "symeig": _removed_method(aten_misc.symeig),
}

PROPERTIES = {"is_nested": _is_nested}

PROPERTY_DOCS = {"is_nested": "is_nested -> bool\n\nFalse: ember has no nested tensors."}
