"""Quantized tensors: dtypes, quantize/dequantize with torch's rounding, parameters, views,
copies, printing, unsupported ops and save/load."""

import io
import warnings

import numpy as np
import pytest

import ember


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    return torch


def _ref_quantize(x, scale, zp, lo, hi):
    """numpy reference, torch's rule (Note [Quantize arithmetic] in cpu/quantize.cpp): round half
    to even of x * (1/scale) + zp (one rounding of the sum for 8-bit types; qint32 adds in
    float32), clamped; quint4x2 (hi 15) adds zp after the rounding."""
    inv = np.float32(1.0) / np.float32(scale)
    x = x.astype(np.float32)
    if hi == 15:
        return np.clip(np.rint(x * inv) + zp, lo, hi)
    if hi == 2**31 - 1:
        return np.clip(np.rint((x * inv).astype(np.float32) + np.float32(zp)), lo, hi)
    return np.clip(
        np.rint((x.astype(np.float64) * np.float64(inv) + zp).astype(np.float32)), lo, hi
    )


def test_dtypes():
    for name, size in (("qint8", 1), ("quint8", 1), ("qint32", 4), ("quint4x2", 1)):
        dt = getattr(ember, name)
        assert repr(dt) == "torch." + name
        assert dt.is_floating_point is False
        assert dt.is_complex is False
        assert dt.itemsize == size
    with pytest.raises(RuntimeError, match="isSignedType not supported for quantized types"):
        ember.qint8.is_signed
    assert ember.qint8 != ember.int8 and ember.quint8 != ember.uint8


def test_qschemes():
    assert repr(ember.per_tensor_affine) == "torch.per_tensor_affine"
    assert repr(ember.per_channel_affine) == "torch.per_channel_affine"
    assert repr(ember.per_tensor_symmetric) == "torch.per_tensor_symmetric"
    assert repr(ember.per_channel_symmetric) == "torch.per_channel_symmetric"


@pytest.mark.parametrize(
    "dtype, lo, hi, repr_dtype",
    [
        ("quint8", 0, 255, np.uint8),
        ("qint8", -128, 127, np.int8),
        ("qint32", -(2**31), 2**31 - 1, np.int32),
        ("quint4x2", 0, 15, np.uint8),
    ],
)
def test_quantize_per_tensor_matches_the_rounding_rule(dtype, lo, hi, repr_dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [rng.normal(0, 3, 200), [0.05, 0.15, 0.25, -0.25, 0.35, 1e6, -1e6, 0.0]]
    ).astype(np.float32)
    q = ember.quantize_per_tensor(ember.tensor(x), 0.1, 3, getattr(ember, dtype))
    assert q.is_quantized and q.dtype == getattr(ember, dtype)
    assert q.qscheme() is ember.per_tensor_affine
    assert q.q_scale() == 0.1 and q.q_zero_point() == 3
    r = q.int_repr()
    assert not r.is_quantized
    np.testing.assert_array_equal(r.numpy(), _ref_quantize(x, 0.1, 3, lo, hi).astype(repr_dtype))
    deq = q.dequantize()
    assert deq.dtype == ember.float32
    np.testing.assert_allclose(
        deq.numpy(), (r.numpy().astype(np.float32) - 3) * np.float32(0.1), rtol=1e-6
    )


def test_half_to_even_ties():
    q = ember.quantize_per_tensor(ember.tensor([0.5, 1.5, 2.5, -0.5, -1.5]), 1.0, 0, ember.qint8)
    assert q.int_repr().tolist() == [0, 2, 2, 0, -2]


def test_tensor_scale_and_list_forms():
    x = ember.tensor([0.3, -0.2, 1.0])
    a = ember.quantize_per_tensor(x, ember.tensor(0.1), ember.tensor(2), ember.quint8)
    b = ember.quantize_per_tensor(x, float(ember.tensor(0.1)), 2, ember.quint8)
    assert a.int_repr().tolist() == b.int_repr().tolist()
    assert a.q_scale() == b.q_scale()
    qs = ember.quantize_per_tensor(
        [x, x * 2], ember.tensor([0.1, 0.2]), ember.tensor([1, 2]), ember.quint8
    )
    assert isinstance(qs, tuple) and len(qs) == 2
    assert qs[1].q_zero_point() == 2
    deq = ember.dequantize(qs)
    assert isinstance(deq, tuple) and deq[0].shape == (3,)


def test_quantize_per_channel():
    x = ember.tensor([[0.1, -0.5, 1.0], [2.0, -3.0, 0.25]])
    scales = ember.tensor([0.1, 0.5], dtype=ember.float64)
    zps = ember.tensor([0, 2])
    q = ember.quantize_per_channel(x, scales, zps, 0, ember.qint8)
    assert q.qscheme() is ember.per_channel_affine
    assert q.q_per_channel_axis() == 0
    assert q.q_per_channel_scales().dtype == ember.float64
    assert q.q_per_channel_scales().tolist() == [0.1, 0.5]
    assert q.q_per_channel_zero_points().tolist() == [0, 2]
    assert q.int_repr().tolist() == [[1, -5, 10], [6, -4, 2]]
    np.testing.assert_allclose(
        q.dequantize().numpy(), [[0.1, -0.5, 1.0], [2.0, -3.0, 0.0]], atol=1e-6
    )
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        q.q_scale()
    # along the last dim
    q1 = ember.quantize_per_channel(
        x, ember.tensor([0.1, 0.2, 0.5]), ember.tensor([0, 0, 1]), 1, ember.quint8
    )
    assert q1.q_per_channel_axis() == 1
    # 0.25 / 0.5 + 1 = 1.5 rounds to 2: torch rounds after adding the zero point
    assert q1.int_repr().tolist() == [[1, 0, 3], [20, 0, 2]]


def test_per_tensor_accessors_refuse_float_tensors():
    with pytest.raises(NotImplementedError, match="aten::q_scale"):
        ember.randn(2).q_scale()
    with pytest.raises(RuntimeError, match="kPerChannelAffine"):
        ember.quantize_per_tensor(ember.randn(2), 0.1, 0, ember.quint8).q_per_channel_scales()


def test_make_quantized_tensors():
    q = ember._make_per_tensor_quantized_tensor(ember.tensor([1, 2], dtype=ember.int32), 0.5, 1)
    assert q.dtype == ember.qint32 and q.dequantize().tolist() == [0.0, 0.5]
    q8 = ember._make_per_tensor_quantized_tensor(ember.tensor([1, 200], dtype=ember.uint8), 2.0, 0)
    assert q8.dtype == ember.quint8 and q8.dequantize().tolist() == [2.0, 400.0]
    qc = ember._make_per_channel_quantized_tensor(
        ember.tensor([[1, 2], [3, 4]], dtype=ember.int8),
        ember.tensor([1.0, 0.5], dtype=ember.float64),
        ember.tensor([0, 1]),
        0,
    )
    assert qc.dtype == ember.qint8
    assert qc.dequantize().tolist() == [[1.0, 2.0], [1.0, 1.5]]


def test_views_and_copies_keep_the_parameters():
    x = ember.arange(24, dtype=ember.float32).reshape(2, 3, 4) / 10
    q = ember.quantize_per_tensor(x, 0.1, 5, ember.quint8)
    ints = q.int_repr()
    for view, ref in (
        (q.reshape(6, 4), ints.reshape(6, 4)),
        (q.view(4, 6), ints.view(4, 6)),
        (q[1], ints[1]),
        (q[:, 1:], ints[:, 1:]),
        (q.select(2, 3), ints.select(2, 3)),
        (q.transpose(0, 2), ints.transpose(0, 2)),
        (q.permute(2, 0, 1), ints.permute(2, 0, 1)),
        (q.unsqueeze(0), ints.unsqueeze(0)),
        (q.flatten(), ints.flatten()),
        (q.transpose(0, 2).contiguous(), ints.transpose(0, 2).contiguous()),
        (q.clone(), ints.clone()),
        (q[[1, 0]], ints[[1, 0]]),
        (q.detach(), ints),
    ):
        assert view.is_quantized and view.dtype == ember.quint8
        assert view.q_scale() == 0.1 and view.q_zero_point() == 5
        assert view.int_repr().tolist() == ref.tolist()
    c = q.transpose(0, 2).contiguous()
    assert c.is_contiguous()


def test_unsupported_ops_raise_torchs_error():
    q = ember.quantize_per_tensor(ember.randn(3), 0.1, 0, ember.quint8)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::add.*QuantizedCPU"):
        q + q
    with pytest.raises(NotImplementedError, match="QuantizedCPU"):
        q.sum()
    with pytest.raises(NotImplementedError, match="QuantizedCPU"):
        ember.exp(q)


def test_relu_of_quantized_tensor_keeps_parameters():
    q = ember.quantize_per_tensor(ember.tensor([-1.0, 0.0, 0.5]), 0.1, 20, ember.quint8)
    r = ember.nn.functional.relu(q)
    assert r.is_quantized and r.q_zero_point() == 20
    assert r.dequantize().tolist() == pytest.approx([0.0, 0.0, 0.5])
    m = ember.nn.ReLU()(q)
    assert m.int_repr().tolist() == [20, 20, 25]


def test_printing_matches_torch():
    torch = _torch()
    cases = [
        (np.array([-1.0, 0.05, 0.15, 0.25, 2.0, 100.0], np.float32), 0.1, 10, "quint8"),
        (np.arange(12, dtype=np.float32).reshape(3, 4) / 7, 0.02, 0, "qint8"),
        (np.array([], np.float32), 0.1, 0, "quint8"),
        (np.array([1.5, -2.25], np.float32), 0.25, -3, "qint32"),
    ]
    for x, s, z, dt in cases:
        ours = ember.quantize_per_tensor(ember.tensor(x), s, z, getattr(ember, dt))
        theirs = torch.quantize_per_tensor(torch.tensor(x), s, z, getattr(torch, dt))
        assert repr(ours) == repr(theirs)
    x = np.array([[0.1, -0.5, 1.0], [2.0, -3.0, 0.25]], np.float32)
    ours = ember.quantize_per_channel(
        ember.tensor(x),
        ember.tensor([0.1, 0.5], dtype=ember.float64),
        ember.tensor([0, 2]),
        0,
        ember.qint8,
    )
    theirs = torch.quantize_per_channel(
        torch.tensor(x),
        torch.tensor([0.1, 0.5], dtype=torch.float64),
        torch.tensor([0, 2]),
        0,
        torch.qint8,
    )
    assert repr(ours) == repr(theirs)


def test_quantize_matches_torch_bit_for_bit():
    torch = _torch()
    rng = np.random.default_rng(1)
    x = rng.normal(0, 2, (64, 33)).astype(np.float32)
    for dt, s, z in (("quint8", 0.017, 128), ("qint8", 0.03, -4), ("qint32", 0.001, 7)):
        ours = ember.quantize_per_tensor(ember.tensor(x), s, z, getattr(ember, dt))
        theirs = torch.quantize_per_tensor(torch.tensor(x), s, z, getattr(torch, dt))
        np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
        np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    scales = rng.uniform(0.01, 0.1, 64)
    zps = rng.integers(-10, 10, 64)
    ours = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor(scales), ember.tensor(zps), 0, ember.qint8
    )
    theirs = torch.quantize_per_channel(
        torch.tensor(x), torch.tensor(scales), torch.tensor(zps), 0, torch.qint8
    )
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())


def _roundtrip(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf)


def test_save_load_roundtrip():
    q = ember.quantize_per_tensor(ember.randn(4, 5), 0.05, 3, ember.quint8)
    qc = ember.quantize_per_channel(
        ember.randn(3, 4),
        ember.tensor([0.1, 0.2, 0.3], dtype=ember.float64),
        ember.tensor([0, 1, -1]),
        0,
        ember.qint8,
    )
    got = _roundtrip({"a": q, "view": q[1:], "c": qc})
    for ours, theirs in ((got["a"], q), (got["view"], q[1:]), (got["c"], qc)):
        assert ours.dtype == theirs.dtype and ours.qscheme() is theirs.qscheme()
        assert ours.int_repr().tolist() == theirs.int_repr().tolist()
    assert got["a"].q_scale() == 0.05 and got["a"].q_zero_point() == 3
    assert got["c"].q_per_channel_zero_points().tolist() == [0, 1, -1]


def test_torch_reads_ember_quantized_checkpoints_and_back(tmp_path):
    torch = _torch()
    q = ember.quantize_per_tensor(ember.randn(6), 0.05, 3, ember.quint8)
    path = tmp_path / "q.pt"
    ember.save({"q": q}, path)
    t = torch.load(path)["q"]
    assert t.dtype == torch.quint8 and t.q_scale() == 0.05 and t.q_zero_point() == 3
    assert t.int_repr().tolist() == q.int_repr().tolist()
    tq = torch.quantize_per_channel(
        torch.randn(3, 4),
        torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64),
        torch.tensor([0, 1, 2]),
        0,
        torch.qint8,
    )
    torch.save({"w": tq}, path)
    w = ember.load(path)["w"]
    assert w.dtype == ember.qint8 and w.qscheme() is ember.per_channel_affine
    assert w.int_repr().tolist() == tq.int_repr().tolist()
    assert w.q_per_channel_scales().tolist() == tq.q_per_channel_scales().tolist()


def test_max_pool2d_of_quantized_tensor():
    q = ember.quantize_per_tensor(ember.randn(2, 3, 8, 8), 0.05, 100, ember.quint8)
    F = ember.nn.functional
    for kwargs in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}):
        out = F.max_pool2d(q, **kwargs)
        assert out.is_quantized and out.q_scale() == 0.05 and out.q_zero_point() == 100
        ref = F.max_pool2d(q.dequantize(), **kwargs)
        assert ember.equal(out.dequantize(), ref)


# Session 17 (Note [Quantized fills, copies and comparisons] in python/src/quantized.cpp):
# comparisons compare the dequantized values, fills and copies quantize the float written, and
# the ops torch has no QuantizedCPU kernel for raise its errors instead of computing.
def _s17_cases(T):
    x = T.quantize_per_tensor(T.tensor([[-1.0, 0.5, 2.0], [3.0, -0.25, 1.0]]), 0.25, 3, T.quint8)
    y = T.quantize_per_tensor(T.tensor([[-1.0, 1.5, 2.0], [3.0, -0.25, 0.0]]), 0.25, 3, T.quint8)
    c = T.quantize_per_channel(
        T.tensor([[-1.0, 0.5, 2.0], [3.0, -0.25, 1.0]]),
        T.tensor([0.25, 0.5]),
        T.tensor([0, 1]),
        0,
        T.qint8,
    )
    m = T.tensor([[True, False, True], [False, False, True]])
    f = T.ones(2, 3)
    return {
        "eq": lambda: T.eq(x, y),
        "ne_op": lambda: x != y,
        "lt_number": lambda: x < 1.0,
        "ge_float": lambda: T.ge(x, f),
        "float_eq_q": lambda: f == x,
        "number_lt_q": lambda: 1 < x,
        "channel_vs_tensor": lambda: c == y,
        "channel_le": lambda: T.le(c, 1.0),
        "fill": lambda: x.clone().fill_(0.375),
        "fill_clamped": lambda: x.clone().fill_(1000.0),
        "fill_tensor": lambda: x.clone().fill_(T.tensor(2)),
        "fill_channel": lambda: c.clone().fill_(0.3),
        "zero_": lambda: x.clone().zero_(),
        "copy_float": lambda: x.clone().copy_(T.full((2, 3), 0.375)),
        "copy_channel": lambda: c.clone().copy_(T.full((2, 3), 0.375)),
        "copy_double": lambda: x.clone().copy_(T.zeros(2, 3, dtype=T.float64)),
        "copy_shape": lambda: x.clone().copy_(T.zeros(3)),
        "masked_fill": lambda: x.masked_fill(m, 0.375),
        "masked_fill_": lambda: x.clone().masked_fill_(m, T.tensor(1e6)),
        "masked_fill_row": lambda: x.masked_fill(T.tensor([True, False, True]), 0.5),
        "masked_fill_bigger": lambda: x.masked_fill(T.ones(2, 2, 3, dtype=T.bool), -0.5),
        "masked_fill_channel": lambda: c.masked_fill(m, 0.5),
        "max": lambda: x.max(),
        "min_dim": lambda: T.min(x, 1)[0],
        "max_channel": lambda: T.max(c),
        "max_dim_channel": lambda: c.max(0),
        "amax": lambda: T.amax(x),
        "amin_dim": lambda: x.amin(1),
        "argmax": lambda: x.argmax(),
        "exp": lambda: T.exp(x),
        "clamp": lambda: T.clamp(x, 0.0, 1.0),
        "clamp_min_float": lambda: T.clamp_min(x, 0.5),
        "clamp_min_int": lambda: x.clamp_min(0),
        "clamp_max_": lambda: x.clone().clamp_max_(0.5),
        "clamp_float_tensor": lambda: T.clamp(x, min=T.tensor(0.5)),
        "clamp_int_tensor": lambda: T.clamp(x, max=T.tensor(1)),
        "clamp_": lambda: x.clone().clamp_(0, 1),
    }


def _s17_outcome(T, fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome compared is the error
        # the first sentence: torch appends its dispatch keys to the NotImplementedError's text
        return type(e).__name__, str(e).split("\n")[0].split(". This could be")[0]
    if r.is_quantized:
        return str(r.dtype).split(".")[-1], r.int_repr().tolist(), r.dequantize().tolist()
    return str(r.dtype).split(".")[-1], r.tolist()


def test_quantized_comparisons_fills_and_refusals():
    got = {k: _s17_outcome(ember, fn) for k, fn in _s17_cases(ember).items()}
    # the comparisons against numpy on the dequantized values
    x = np.array([[-0.75, 0.5, 2.0], [3.0, -0.25, 1.0]])
    y = np.array([[-0.75, 1.5, 2.0], [3.0, -0.25, 0.0]])
    assert got["eq"] == ("bool", (x == y).tolist())
    assert got["lt_number"] == ("bool", (x < 1.0).tolist())
    assert got["number_lt_q"] == ("bool", (x > 1).tolist())
    assert got["channel_vs_tensor"] == (
        "bool",
        (np.array([[-1, 0.5, 2], [3, -0.5, 1]]) == y).tolist(),
    )
    # 0.375 / 0.25 + 3 = 4.5 rounds half to even; per channel each row its own parameters
    assert got["fill"][:2] == ("quint8", [[4] * 3] * 2)
    assert got["fill_clamped"][1] == [[255] * 3] * 2
    assert got["fill_channel"][1] == [[1] * 3, [2] * 3]
    assert got["copy_float"] == got["fill"]
    assert got["masked_fill"][1] == [[4, 5, 4], [15, 2, 4]]
    assert got["masked_fill_"][1] == [[255, 5, 255], [15, 2, 255]]
    assert got["max"][1] == 15 and got["min_dim"][1] == [0, 2]
    assert got["clamp"][1] == [[3, 5, 7], [7, 3, 7]]
    for k in ("amax", "amin_dim", "argmax", "exp", "clamp_min_int", "clamp_", "zero_"):
        assert got[k][0] == "NotImplementedError" and "'QuantizedCPU' backend" in got[k][1], k
    assert "'aten::amax.out'" in got["amax"][1] and "'aten::clamp.out'" in got["clamp_"][1]
    assert got["clamp_min_float"] == (
        "RuntimeError",
        "promoteTypes with quantized numbers is not handled yet; figure out what the correct "
        "rules should be, offending types: QUInt8 Float",
    )
    assert got["masked_fill_channel"][0] == "RuntimeError"
    assert got["max_channel"][1].startswith("Max operator for quantized tensors only works")
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    want = {k: _s17_outcome(torch, fn) for k, fn in _s17_cases(torch).items()}
    assert got == want
