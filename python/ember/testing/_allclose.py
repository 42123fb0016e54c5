"""ember.testing.assert_allclose: torch's deprecated comparison (assert_close with its older
defaults: dtypes may differ, NaNs compare equal, looser float16/float32/float64 tolerances)."""

import warnings

from .._C import Tensor, float16, float32, float64
from .._ops.creation import tensor
from ._comparison import assert_close

__all__ = ["assert_allclose"]

_TOLERANCES = {float16: (1e-3, 1e-3), float32: (1e-4, 1e-5), float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg='')

    Deprecated (FutureWarning): assert_close(actual, expected) with dtypes allowed to differ,
    equal_nan=True and, unless given, the tolerances of the less precise of the two dtypes
    (float16 1e-3/1e-3, float32 1e-4/1e-5, float64 1e-5/1e-8; exact for other dtypes)."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol = max(p[0] for p in pairs)
        atol = max(p[1] for p in pairs)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
