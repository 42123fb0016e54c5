"""Fixes found by the session-18 real programs (tests/python/torch_scripts/, "# session 18")."""

from fractions import Fraction

import pytest

import ember


def _torch_linspace(start, end, steps, np_dtype):
    """torch's CPU linspace, exactly: the step in the dtype, then one fused multiply-add per
    value from the nearer end (rounded once, as an FMA rounds)."""
    import numpy as np

    lo, hi = np_dtype(start), np_dtype(end)
    step = np_dtype((hi - lo) / np_dtype(steps - 1))
    out = []
    for i in range(steps):
        if i < steps // 2:
            exact = Fraction(float(lo)) + Fraction(float(step)) * i
        else:
            exact = Fraction(float(hi)) - Fraction(float(step)) * (steps - i - 1)
        out.append(
            np_dtype(np.float64(exact)) if np_dtype is np.float64 else np_dtype(float(exact))
        )
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_rounds_as_torch(dtype):
    import numpy as np

    np_dtype = getattr(np, dtype)
    for start, end, steps in [(-1, 1, 16), (0, 1, 100), (3, -2, 64), (0.1, 7.3, 257), (-1, 1, 15)]:
        got = ember.linspace(start, end, steps, dtype=getattr(ember, dtype)).tolist()
        want = [float(v) for v in _torch_linspace(start, end, steps, np_dtype)]
        assert got == want, (start, end, steps)
    # the grid a program thresholds: torch's -0.6 is just above -0.6 in float32
    yy, xx = ember.meshgrid(ember.linspace(-1, 1, 16), ember.linspace(-1, 1, 16), indexing="ij")
    assert int(((xx**2 + yy**2) < 0.4).sum()) == 76
    assert ember.linspace(2.5, 9.0, 1).tolist() == [2.5]


def test_linspace_equals_torch():
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64"):
        for args in [(-1, 1, 16), (0.1, 7.3, 1000), (-3.3, 1e4, 4097)]:
            want = torch.linspace(*args, dtype=getattr(torch, dt)).tolist()
            assert ember.linspace(*args, dtype=getattr(ember, dt)).tolist() == want


def test_quantized_engine_switch():
    q = ember.backends.quantized
    assert q.engine == "x86"
    assert sorted(q.supported_engines) == ["fbgemm", "onednn", "qnnpack", "x86"]
    q.engine = "qnnpack"
    try:
        assert q.engine == "qnnpack"
        with pytest.raises(RuntimeError, match="^bad is not a valid value for quantized engine$"):
            q.engine = "bad"
        assert q.engine == "qnnpack"
    finally:
        q.engine = "x86"


def test_conv1d_errors_show_1d_sizes():
    w = ember.ones(4, 12, 4)
    with pytest.raises(RuntimeError) as info:
        ember.nn.functional.conv1d(ember.ones(1, 12, 3), w)
    assert str(info.value) == (
        "Calculated padded input size per channel: (3). Kernel size: (4). "
        "Kernel size can't be greater than actual input size"
    )
    with pytest.raises(RuntimeError) as info:
        ember.nn.functional.conv1d(ember.ones(1, 6, 9), w)
    assert str(info.value) == (
        "Given groups=1, weight of size [4, 12, 4], expected input[1, 6, 9] to have 12 "
        "channels, but got 6 channels instead"
    )
