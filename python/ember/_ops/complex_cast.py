"""Casting complex values into a real dtype: torch keeps the real parts and warns once a process
(the TORCH_WARN_ONCE in its copy kernel), whichever call gets there first: copy_, to, the dtype
methods (float(), long(), ...), dequantize."""

import functools

from .. import _C
from .._C import Tensor
from .._warn_once import warn_once


def warn_discard_imag():
    """torch's UserWarning for a complex -> real cast, the first time in this process."""
    warn_once("complex_to_real", "Casting complex values to real discards the imaginary part")


def copy_guard(orig):
    """Tensor.copy_ that warns when complex values go into a real tensor (behind the C++
    guard: a copy with no complex operand costs no Python frame)."""

    def path(self, src, *args, **kwargs):
        if isinstance(src, Tensor) and src.dtype.is_complex and not self.dtype.is_complex:
            warn_discard_imag()
        return orig(self, src, *args, **kwargs)

    return functools.update_wrapper(_C._complex_guard(orig, path, 2), orig)
