"""ember.testing.assert_close with torch's default tolerances per dtype."""

from ._C import Tensor

_TOLS = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def _np(x):
    import numpy as np  # on first use: see _ops.creation._numpy

    if isinstance(x, Tensor):
        t = x.detach()
        if repr(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy(), repr(x.dtype)[6:]
    a = np.asarray(x)
    return a, str(a.dtype)


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    a, adt = _np(actual)
    e, edt = _np(expected)
    if check_dtype and isinstance(actual, Tensor) and isinstance(expected, Tensor) and adt != edt:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {adt} != {edt}.")
    if a.shape != e.shape:
        raise AssertionError(
            f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}."
        )
    import numpy as np

    default_rtol, default_atol = _TOLS.get(adt, (0.0, 0.0))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if not np.allclose(
        a.astype(np.float64) if a.dtype != bool else a,
        e.astype(np.float64) if e.dtype != bool else e,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
    ):
        raise AssertionError(msg or f"Tensor-likes are not close!\nactual: {a}\nexpected: {e}")
