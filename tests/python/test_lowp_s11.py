"""Quantize and dequantize bit for bit (cpu/quantize.cpp, Note [Quantize arithmetic]) against
torch where it is installed and against a numpy model of the same arithmetic, and the byte
transpose behind a channels-last uint8 tensor's contiguous copy (cpu/copy.cpp)."""

import numpy as np
import pytest

import ember

_QRANGE = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}
_ZPS = {"quint8": (0, 3, 128), "qint8": (0, 3, -7), "qint32": (0, 5, -12345)}


def _torch():
    torch = pytest.importorskip("torch")
    import warnings

    warnings.filterwarnings("ignore", message=".*quantize.*deprecated")
    return torch


def _data(n, scale, seed=0):
    """Ties of x / scale (k + 0.5 and its float neighbours), normal values, and extremes."""
    rng = np.random.default_rng(seed)
    k = rng.integers(-300, 300, n)
    ties = ((k + 0.5) * np.float32(scale)).astype(np.float32)
    up = np.nextafter(ties, np.float32(np.inf))
    down = np.nextafter(ties, -np.float32(np.inf))
    normal = (rng.standard_normal(n) * 100 * scale).astype(np.float32)
    pick = rng.integers(0, 4, n)
    x = np.choose(pick, [ties, up, down, normal]).astype(np.float32)
    extremes = np.array([np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 2.0**24 + 1, 0.0, -0.0], "f4")
    x[: min(n, len(extremes))] = extremes[: min(n, len(extremes))]
    return x


def _round_clamp(v, qtype):
    lo, hi = _QRANGE[qtype]
    return np.clip(np.rint(v.astype(np.float64)), lo, hi).astype(np.int64)


def _ref_per_tensor(x, scale, zp, qtype):
    inv = np.float32(1) / np.float32(scale)
    if qtype == "qint32":  # round(float(x * inv) + zp)
        v = (x * inv).astype(np.float32) + np.float32(zp)
    else:  # round(fma(x, inv, zp)): the exact product and sum, rounded once to float
        with np.errstate(over="ignore", invalid="ignore"):
            v = (x.astype(np.float64) * np.float64(inv) + zp).astype(np.float32)
    return _round_clamp(v, qtype)


def _ref_per_channel(x, scales, zps, axis, qtype):
    shape = [1] * x.ndim
    shape[axis] = -1
    inv = (np.float32(1) / scales.astype(np.float32)).reshape(shape)
    v = (x * inv).astype(np.float32) + zps.astype(np.float32).reshape(shape)
    return _round_clamp(v, qtype)


def _repr(q):
    return q.int_repr().numpy().astype(np.int64)


@pytest.mark.parametrize("qtype", ["quint8", "qint8", "qint32"])
@pytest.mark.parametrize("n", [1, 7, 16, 17, 100, 4097, 50176, 300001])
def test_quantize_per_tensor_exact(qtype, n):
    for scale in (0.1, 0.0137, 3.3):
        x = _data(n, scale, seed=n)
        for zp in _ZPS[qtype]:
            q = ember.quantize_per_tensor(ember.tensor(x), scale, zp, getattr(ember, qtype))
            np.testing.assert_array_equal(_repr(q), _ref_per_tensor(x, scale, zp, qtype))
            assert q.q_scale() == scale and q.q_zero_point() == zp


@pytest.mark.parametrize("qtype", ["quint8", "qint8", "qint32"])
def test_quantize_per_tensor_matches_torch(qtype):
    torch = _torch()
    for n in (13, 50176, 70001):
        for scale in (0.1, 0.0137, 3.3):
            x = _data(n, scale, seed=n + 1)
            for zp in _ZPS[qtype]:
                ours = ember.quantize_per_tensor(ember.tensor(x), scale, zp, getattr(ember, qtype))
                theirs = torch.quantize_per_tensor(
                    torch.tensor(x), scale, zp, getattr(torch, qtype)
                )
                np.testing.assert_array_equal(_repr(ours), theirs.int_repr().numpy())
                np.testing.assert_array_equal(
                    ours.dequantize().numpy(), theirs.dequantize().numpy()
                )


# (shape, axis): channels as long rows (inner >= 16) and as short runs (the last axis, inner 5);
# the last two are large enough to split over the thread pool.
_PER_CHANNEL = [
    ((64, 32, 3, 3), 0),
    ((6, 40), 1),
    ((2, 3, 4, 5), 1),
    ((2, 3, 4, 5), 2),
    ((8, 300, 128), 1),
    ((70000, 6), 1),
]


@pytest.mark.parametrize("shape,axis", _PER_CHANNEL)
@pytest.mark.parametrize("qtype", ["quint8", "qint8", "qint32"])
def test_quantize_per_channel_exact(shape, axis, qtype):
    rng = np.random.default_rng(3)
    c = shape[axis]
    scales = rng.uniform(0.005, 0.2, c)
    scales[0] = 0.1
    zps = rng.integers(*((0, 255) if qtype == "quint8" else (-20, 20)), c)
    x = _data(int(np.prod(shape)), 0.1, seed=c).reshape(shape)
    q = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor(scales), ember.tensor(zps), axis, getattr(ember, qtype)
    )
    np.testing.assert_array_equal(_repr(q), _ref_per_channel(x, scales, zps, axis, qtype))
    # dequantize: float(q) - zp in float, times the double scale, rounded to float
    bshape = [1] * len(shape)
    bshape[axis] = -1
    r = _repr(q)
    want = (
        (r.astype(np.float32) - zps.astype(np.float32).reshape(bshape)).astype(np.float64)
        * scales.reshape(bshape)
    ).astype(np.float32)
    np.testing.assert_array_equal(q.dequantize().numpy(), want)


@pytest.mark.parametrize("shape,axis", _PER_CHANNEL)
@pytest.mark.parametrize("qtype", ["quint8", "qint8", "qint32"])
def test_quantize_per_channel_matches_torch(shape, axis, qtype):
    torch = _torch()
    rng = np.random.default_rng(4)
    c = shape[axis]
    scales = rng.uniform(0.005, 0.2, c)
    zps = rng.integers(*((0, 255) if qtype == "quint8" else (-20, 20)), c)
    x = _data(int(np.prod(shape)), 0.05, seed=c + 1).reshape(shape)
    ours = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor(scales), ember.tensor(zps), axis, getattr(ember, qtype)
    )
    theirs = torch.quantize_per_channel(
        torch.tensor(x), torch.tensor(scales), torch.tensor(zps), axis, getattr(torch, qtype)
    )
    np.testing.assert_array_equal(_repr(ours), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())


def test_quantize_ties_round_after_the_zero_point():
    # x / scale = 0.5, 1.5, 2.5, -0.5 with zero point 3: 3.5 -> 4, 4.5 -> 4, 5.5 -> 6, 2.5 -> 2
    x = ember.tensor([0.5, 1.5, 2.5, -0.5])
    for qtype in (ember.quint8, ember.qint8, ember.qint32):
        q = ember.quantize_per_tensor(x, 1.0, 3, qtype)
        assert q.int_repr().tolist() == [4, 4, 6, 2]
    q = ember.quantize_per_channel(
        x.reshape(1, 4), ember.tensor([1.0]), ember.tensor([3]), 0, ember.qint8
    )
    assert q.int_repr().tolist() == [[4, 4, 6, 2]]


def test_quint4x2_adds_the_zero_point_after_rounding():
    x = np.array([0.05, 0.15, 0.25, -0.25, 0.35, 9.0, -9.0] * 5, np.float32)
    q = ember.quantize_per_tensor(ember.tensor(x), 0.1, 3, ember.quint4x2)
    inv = np.float32(1) / np.float32(0.1)
    np.testing.assert_array_equal(_repr(q), np.clip(np.rint(x * inv) + 3, 0, 15))
    torch = _torch()
    theirs = torch.quantize_per_tensor(torch.tensor(x), 0.1, 3, torch.quint4x2)
    np.testing.assert_array_equal(q.dequantize().numpy(), theirs.dequantize().numpy())


def test_quantize_nan_as_torch():
    # NaN: qmax per tensor (8-bit), 0 per channel (8-bit), qmin for qint32, as torch gives
    x = np.array([np.nan] * 40, np.float32)
    want = {"quint8": (255, 0), "qint8": (127, 0), "qint32": (-(2**31), -(2**31))}
    for qtype, (pt, pc) in want.items():
        t = getattr(ember, qtype)
        q = ember.quantize_per_tensor(ember.tensor(x), 0.5, 0, t)
        assert set(q.int_repr().tolist()) == {pt}
        qc = ember.quantize_per_channel(
            ember.tensor(x).reshape(2, 20), ember.tensor([0.5, 0.5]), ember.tensor([0, 0]), 0, t
        )
        assert set(qc.int_repr().reshape(-1).tolist()) == {pc}


def test_quantize_nan_matches_torch():
    torch = _torch()
    x = np.array([np.nan, 1.0, -np.inf, np.inf] * 10, np.float32)
    for qtype in ("quint8", "qint8", "qint32"):
        ours = ember.quantize_per_tensor(ember.tensor(x), 0.5, 1, getattr(ember, qtype))
        theirs = torch.quantize_per_tensor(torch.tensor(x), 0.5, 1, getattr(torch, qtype))
        np.testing.assert_array_equal(_repr(ours), theirs.int_repr().numpy())
        ours = ember.quantize_per_channel(
            ember.tensor(x).reshape(2, 20), ember.tensor([0.5, 0.25]), ember.tensor([1, 2]), 0,
            getattr(ember, qtype),
        )  # fmt: skip
        theirs = torch.quantize_per_channel(
            torch.tensor(x).reshape(2, 20), torch.tensor([0.5, 0.25]), torch.tensor([1, 2]), 0,
            getattr(torch, qtype),
        )  # fmt: skip
        np.testing.assert_array_equal(_repr(ours), theirs.int_repr().numpy())


@pytest.mark.parametrize("qtype", ["quint8", "qint8", "qint32"])
def test_dequantize_per_tensor_exact(qtype):
    lo, hi = _QRANGE[qtype]
    rng = np.random.default_rng(5)
    dt = {"quint8": np.uint8, "qint8": np.int8, "qint32": np.int32}[qtype]
    for n in (5, 50176, 70001):
        r = rng.integers(lo, hi, n, endpoint=True).astype(dt)
        for scale, zp in ((0.0137, 3), (3.3e-5, 17), (0.1, 0)):
            q = ember._make_per_tensor_quantized_tensor(ember.tensor(r), scale, zp)
            diff = (r.astype(np.int64) - zp + 2**31) % 2**32 - 2**31  # int32, wrapping
            want = diff.astype(np.float32) * np.float32(scale)
            np.testing.assert_array_equal(q.dequantize().numpy(), want)


def test_quantize_round_trip_within_half_a_step():
    x = np.random.default_rng(6).uniform(-1, 1, (64, 1, 28, 28)).astype(np.float32)
    q = ember.quantize_per_tensor(ember.tensor(x), 0.01, 100, ember.quint8)
    err = np.abs(q.dequantize().numpy() - x)
    assert err.max() <= 0.005 + 1e-6


def test_float_qparams_per_channel():
    # per_channel_affine_float_qparams: round(x * (1 / s) + zp) with a float zero point
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 33)).astype(np.float32)
    scales = rng.uniform(0.01, 0.05, 6)
    zps = rng.uniform(50, 200, 6).astype(np.float32)
    q = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor(scales), ember.tensor(zps), 0, ember.quint8
    )
    inv = (np.float32(1) / scales.astype(np.float32))[:, None]
    want = np.clip(np.rint((x * inv).astype(np.float32) + zps[:, None]), 0, 255)
    np.testing.assert_array_equal(_repr(q), want.astype(np.int64))
    back = (
        (_repr(q).astype(np.float64) - zps[:, None].astype(np.float64)) * scales[:, None]
    ).astype(np.float32)
    np.testing.assert_array_equal(q.dequantize().numpy(), back)


@pytest.mark.parametrize("shape", [(64, 64, 7, 7), (3, 17, 5, 9), (2, 48, 16, 16), (1, 3, 40, 40)])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool", "float32"])
def test_channels_last_contiguous_copy(shape, dtype):
    rng = np.random.default_rng(8)
    a = rng.integers(0, 256, shape).astype(np.uint8)
    a = a.astype(np.int8) if dtype == "int8" else a % 2 == 1 if dtype == "bool" else a.astype(dtype)
    cl = ember.tensor(a).contiguous(memory_format=ember.channels_last)
    assert not cl.is_contiguous()
    flat = cl.reshape(shape[0], -1)
    np.testing.assert_array_equal(flat.numpy(), a.reshape(shape[0], -1))
    np.testing.assert_array_equal(cl.contiguous().numpy(), a)
    # and the other way: NCHW -> NHWC
    np.testing.assert_array_equal(
        ember.tensor(a).permute(0, 2, 3, 1).contiguous().numpy(), a.transpose(0, 2, 3, 1)
    )


def test_quantized_channels_last_flatten_matches_torch():
    torch = _torch()
    x = np.random.default_rng(9).uniform(0, 2, (64, 64, 7, 7)).astype(np.float32)
    ours = ember.quantize_per_tensor(ember.tensor(x), 0.01, 0, ember.quint8)
    ours = ours.contiguous(memory_format=ember.channels_last).reshape(64, -1)
    theirs = torch.quantize_per_tensor(torch.tensor(x), 0.01, 0, torch.quint8)
    theirs = theirs.contiguous(memory_format=torch.channels_last).reshape(64, -1)
    np.testing.assert_array_equal(_repr(ours), theirs.int_repr().numpy())
