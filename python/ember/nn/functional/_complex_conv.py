"""Complex convolutions, as torch's: each conv of a complex input and weight is four real
convolutions over the parts, (xr*wr - xi*wi) + i (xr*wi + xi*wr), so gradients follow from the
real kernels'. The guard sits in C++ (ember._C._complex_guard): a real call costs no Python frame.
"""

from ..._ops.complex import _guard, _make
from ..._type_info import scalar_type_name


def _same_dtype(input, other, what):
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"Input type ({scalar_type_name(input.dtype)}) and {what} type "
            f"({scalar_type_name(other.dtype)}) should be the same"
        )


def with_complex_path(conv):
    """conv, taking the parts' path when its input or weight is complex."""

    def path(input, weight, bias=None, *args, **kwargs):
        _same_dtype(input, weight, "weight")
        if bias is not None:
            _same_dtype(input, bias, "bias")
        xr, xi, wr, wi = input.real, input.imag, weight.real, weight.imag
        re = conv(xr, wr, None, *args, **kwargs) - conv(xi, wi, None, *args, **kwargs)
        im = conv(xr, wi, None, *args, **kwargs) + conv(xi, wr, None, *args, **kwargs)
        out = _make(re, im)
        if bias is None:
            return out
        return out + bias.reshape([-1] + [1] * (weight.dim() - 2))  # over the channel dim

    return _guard(conv, path, 2)
