"""The int8 kernels (csrc/ember/cpu/quantized.cpp through ember.ao.nn.quantized._ops): each
against the float result of its dequantized inputs (within one quantization step of the output)
and against torch's quantized ops (x86 engine) where torch is installed."""

import warnings

import numpy as np
import pytest
from _cpu_tier import torch_int8_exact

import ember
from ember.ao.nn.quantized import _ops as qops


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    torch.backends.quantized.engine = "x86"
    return torch


RNG = np.random.default_rng(0)


def _q(x, scale, zp, dtype):
    return ember.quantize_per_tensor(ember.tensor(np.asarray(x, np.float32)), scale, zp, dtype)


def _weight(shape, per_channel, affine=False):
    w = RNG.normal(0, 0.5, shape).astype(np.float32)
    if per_channel:
        scales = np.abs(w.reshape(shape[0], -1)).max(1) / 127 + 1e-4
        zps = RNG.integers(-3, 4, shape[0]) if affine else np.zeros(shape[0], np.int64)
        return w, ember.quantize_per_channel(
            ember.tensor(w), ember.tensor(scales), ember.tensor(zps), 0, ember.qint8
        )
    zp = 2 if affine else 0
    return w, ember.quantize_per_tensor(
        ember.tensor(w), float(np.abs(w).max() / 120), zp, ember.qint8
    )


def _to_torch(torch, q):
    r = torch.tensor(q.int_repr().numpy())
    if q.qscheme().name.startswith("per_tensor"):
        return torch._make_per_tensor_quantized_tensor(r, q.q_scale(), q.q_zero_point())
    return torch._make_per_channel_quantized_tensor(
        r,
        torch.tensor(q.q_per_channel_scales().numpy()),
        torch.tensor(q.q_per_channel_zero_points().numpy()),
        q.q_per_channel_axis(),
    )


def _within_one_step(out, ref_float, scale, zp, dtype, relu=False):
    ref = ember.quantize_per_tensor(ember.tensor(ref_float.astype(np.float32)), scale, zp, dtype)
    a = out.int_repr().numpy().astype(np.int64)
    b = ref.int_repr().numpy().astype(np.int64)
    if relu:
        b = np.maximum(b, zp)
    assert np.abs(a - b).max() <= 1


def _deq(q):
    return q.dequantize().numpy().astype(np.float64)


@pytest.mark.parametrize("m, k, n", [(1, 16, 16), (5, 30, 33), (64, 64, 70), (7, 3, 1)])
@pytest.mark.parametrize(
    "per_channel, affine", [(False, False), (True, False), (True, True), (False, True)]
)
@pytest.mark.parametrize("relu", [False, True])
def test_linear_against_float_reference(m, k, n, per_channel, affine, relu):
    x = RNG.normal(0, 1, (m, k)).astype(np.float32)
    qx = _q(x, 0.03, 120, ember.quint8)
    _, qw = _weight((n, k), per_channel, affine)
    bias = RNG.normal(0, 1, n).astype(np.float32)
    packed = qops.linear_prepack(qw, ember.tensor(bias))
    out = (qops.linear_relu if relu else qops.linear)(qx, packed, 0.05, 64)
    assert out.dtype == ember.quint8 and out.shape == (m, n)
    assert out.q_scale() == 0.05 and out.q_zero_point() == 64
    ref = _deq(qx) @ _deq(qw).T + bias
    _within_one_step(out, ref, 0.05, 64, ember.quint8, relu)


def test_linear_without_bias_and_batched_input():
    x = RNG.normal(0, 1, (2, 3, 20)).astype(np.float32)
    qx = _q(x, 0.02, 128, ember.quint8)
    _, qw = _weight((12, 20), False)
    out = qops.linear(qx, qops.linear_prepack(qw, None), 0.04, 100)
    assert out.shape == (2, 3, 12)
    ref = _deq(qx) @ _deq(qw).T
    _within_one_step(out, ref, 0.04, 100, ember.quint8)


@torch_int8_exact
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_linear_matches_torch(per_channel, relu):
    torch = _torch()
    x = RNG.normal(0, 1, (33, 100)).astype(np.float32)
    qx = _q(x, 0.025, 128, ember.quint8)
    _, qw = _weight((70, 100), per_channel)
    bias = RNG.normal(0, 1, 70).astype(np.float32)
    ours = (qops.linear_relu if relu else qops.linear)(
        qx, qops.linear_prepack(qw, ember.tensor(bias)), 0.05, 60
    )
    op = torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear
    theirs = op(
        _to_torch(torch, qx),
        torch.ops.quantized.linear_prepack(_to_torch(torch, qw), torch.tensor(bias)),
        0.05,
        60,
    )
    a, b = ours.int_repr().numpy().astype(int), theirs.int_repr().numpy().astype(int)
    assert np.abs(a - b).max() <= 1
    assert (a == b).mean() > 0.99


def _choose_qparams(lo, hi, qmax):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (float(hi) - float(lo)) / qmax
    if np.float32(scale) == 0:
        scale = 0.1
    zp_min = 0 - lo / scale
    zp_max = qmax - hi / scale
    zp = zp_min if abs(0) - abs(lo / scale) < abs(qmax) - abs(hi / scale) else zp_max
    return np.float32(scale), int(np.clip(np.rint(zp), 0, qmax))


@pytest.mark.parametrize("m", [1, 4, 17, 64])
@pytest.mark.parametrize("reduce_range", [True, False])
def test_linear_dynamic_against_reference(m, reduce_range):
    x = RNG.normal(0, 1, (m, 50)).astype(np.float32)
    w, qw = _weight((40, 50), True)
    bias = RNG.normal(0, 1, 40).astype(np.float32)
    packed = qops.linear_prepack(qw, ember.tensor(bias))
    out = qops.linear_dynamic(ember.tensor(x), packed, reduce_range)
    assert out.dtype == ember.float32 and out.shape == (m, 40)
    s, z = _choose_qparams(x.min(), x.max(), 127 if reduce_range else 255)
    xq = np.clip(np.rint(x * (np.float32(1) / s)) + z, 0, 127 if reduce_range else 255)
    ref = ((xq - z) * s) @ _deq(qw).T + bias
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)
    # and near the float layer
    assert np.abs(out.numpy() - (x @ w.T + bias)).max() < 0.1 * np.abs(x @ w.T).max()
    relu = qops.linear_relu_dynamic(ember.tensor(x), packed, reduce_range)
    np.testing.assert_allclose(relu.numpy(), np.maximum(out.numpy(), 0), rtol=1e-6)


@pytest.mark.parametrize("m", [1, 8, 64])
def test_linear_dynamic_matches_torch(m):
    torch = _torch()
    x = RNG.normal(0, 1, (m, 96)).astype(np.float32)
    _, qw = _weight((80, 96), True)
    bias = RNG.normal(0, 1, 80).astype(np.float32)
    ours = qops.linear_dynamic(ember.tensor(x), qops.linear_prepack(qw, ember.tensor(bias)), True)
    theirs = torch.ops.quantized.linear_dynamic(
        torch.tensor(x),
        torch.ops.quantized.linear_prepack(_to_torch(torch, qw), torch.tensor(bias)),
        True,
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("per_channel", [True, False])
def test_linear_dynamic_output_as_torch_bit_for_bit(per_channel):
    """The float output of dynamic linear is fma(acc, sa * sw, bias), one rounding (fbgemm's):
    activations on their own grid (integers from -60 to 67: scale 1, zero point 60 with
    reduce_range) so that only the output scaling is compared, on any CPU tier."""
    torch = _torch()
    x = RNG.integers(-60, 68, (9, 40)).astype(np.float32)
    x[0, :2] = -60, 67
    _, qw = _weight((24, 40), per_channel)
    bias = RNG.normal(0, 1, 24).astype(np.float32)
    packed = qops.linear_prepack(qw, ember.tensor(bias))
    tpacked = torch.ops.quantized.linear_prepack(_to_torch(torch, qw), torch.tensor(bias))
    for ours, op in (
        (qops.linear_dynamic, torch.ops.quantized.linear_dynamic),
        (qops.linear_relu_dynamic, torch.ops.quantized.linear_relu_dynamic),
    ):
        got = ours(ember.tensor(x), packed, True).numpy()
        np.testing.assert_array_equal(got, op(torch.tensor(x), tpacked, True).numpy())


CONV_CASES = [
    # (n, c, h, w, oc, k, stride, padding, dilation, groups)
    (1, 3, 8, 8, 16, 3, 1, 1, 1, 1),
    (2, 8, 9, 7, 12, 3, 2, 0, 1, 1),
    (1, 4, 10, 10, 4, 3, 1, 2, 2, 4),
    (3, 6, 5, 5, 9, 1, 1, 0, 1, 3),
    (1, 16, 12, 12, 32, 5, 1, 2, 1, 1),
]


def _float_conv(x, w, b, stride, padding, dilation, groups):
    return ember.nn.functional.conv2d(
        ember.tensor(x.astype(np.float32)),
        ember.tensor(w.astype(np.float32)),
        None if b is None else ember.tensor(b),
        stride,
        padding,
        dilation,
        groups,
    ).numpy()


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_conv2d_against_float_reference(case, per_channel, relu):
    n, c, h, w_, oc, k, stride, padding, dilation, groups = case
    x = RNG.normal(0, 1, (n, c, h, w_)).astype(np.float32)
    qx = _q(x, 0.03, 100, ember.quint8)
    _, qw = _weight((oc, c // groups, k, k), per_channel)
    bias = RNG.normal(0, 1, oc).astype(np.float32)
    packed = qops.conv_prepack(
        qw, ember.tensor(bias), [stride] * 2, [padding] * 2, [dilation] * 2, groups
    )
    out = qops.conv2d(qx, packed, 0.08, 70, relu=relu)
    ref = _float_conv(_deq(qx), _deq(qw), bias, stride, padding, dilation, groups)
    assert out.shape == ref.shape
    _within_one_step(out, ref, 0.08, 70, ember.quint8, relu)


@torch_int8_exact
@pytest.mark.parametrize("case", CONV_CASES[:3])
def test_conv2d_matches_torch(case):
    torch = _torch()
    n, c, h, w_, oc, k, stride, padding, dilation, groups = case
    x = RNG.normal(0, 1, (n, c, h, w_)).astype(np.float32)
    qx = _q(x, 0.03, 100, ember.quint8)
    _, qw = _weight((oc, c // groups, k, k), True)
    bias = RNG.normal(0, 1, oc).astype(np.float32)
    args = ([stride] * 2, [padding] * 2, [dilation] * 2, groups)
    ours = qops.conv2d(qx, qops.conv_prepack(qw, ember.tensor(bias), *args), 0.08, 70)
    packed = torch.ops.quantized.conv2d_prepack(_to_torch(torch, qw), torch.tensor(bias), *args)
    theirs = torch.ops.quantized.conv2d(_to_torch(torch, qx), packed, 0.08, 70)
    a, b = ours.int_repr().numpy().astype(int), theirs.int_repr().numpy().astype(int)
    assert np.abs(a - b).max() <= 1
    assert (a == b).mean() > 0.99


def test_conv1d_against_float_reference():
    x = RNG.normal(0, 1, (2, 4, 20)).astype(np.float32)
    qx = _q(x, 0.03, 100, ember.quint8)
    _, qw = _weight((6, 4, 3), True)
    bias = RNG.normal(0, 1, 6).astype(np.float32)
    out = qops.conv1d(qx, qops.conv_prepack(qw, ember.tensor(bias), [2], [1], [1], 1), 0.05, 80)
    ref = ember.nn.functional.conv1d(
        ember.tensor(_deq(qx).astype(np.float32)),
        ember.tensor(_deq(qw).astype(np.float32)),
        ember.tensor(bias),
        2,
        1,
    ).numpy()
    assert out.shape == ref.shape
    _within_one_step(out, ref, 0.05, 80, ember.quint8)


@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_add_mul_against_reference(dtype):
    dt = getattr(ember, dtype)
    zp = 0 if dtype == "qint8" else 128
    a = _q(RNG.normal(0, 1, (3, 17)), 0.02, zp, dt)
    b = _q(RNG.normal(0, 1, (3, 17)), 0.03, zp // 2, dt)
    for fn, ref, relu in (
        (qops.add, _deq(a) + _deq(b), False),
        (qops.mul, _deq(a) * _deq(b), False),
        (qops.add_relu, _deq(a) + _deq(b), True),
        (qops.mul_relu, _deq(a) * _deq(b), True),
    ):
        out = fn(a, b, 0.05, zp)
        assert out.dtype == dt and out.q_scale() == 0.05
        _within_one_step(out, ref, 0.05, zp, dt, relu)


def test_add_mul_cat_match_torch():
    torch = _torch()
    a = _q(RNG.normal(0, 1, (4, 9)), 0.02, 128, ember.quint8)
    b = _q(RNG.normal(0, 1, (4, 9)), 0.03, 100, ember.quint8)
    ta, tb = _to_torch(torch, a), _to_torch(torch, b)
    for ours, theirs in (
        (qops.add(a, b, 0.05, 120), torch.ops.quantized.add(ta, tb, 0.05, 120)),
        (qops.add_relu(a, b, 0.05, 120), torch.ops.quantized.add_relu(ta, tb, 0.05, 120)),
        (qops.mul(a, b, 0.01, 120), torch.ops.quantized.mul(ta, tb, 0.01, 120)),
        (qops.cat([a, b], 1, 0.04, 110), torch.ops.quantized.cat([ta, tb], 1, 0.04, 110)),
    ):
        x, y = ours.int_repr().numpy().astype(int), theirs.int_repr().numpy().astype(int)
        assert np.abs(x - y).max() <= 1


# Scales whose zero-point products round (0.02 * 3), output scales that put sums near ties, and
# 200 elements: torch's vector body (64 elements a block, AVX-512 CPUs included) and its scalar
# tail both run.
_QARITH = [
    (0.02, 3, 0.03, 250, 0.05, 7),
    (0.5, 128, 0.25, 1, 0.5, 128),
    (0.1, 200, 0.1, 0, 0.2, 33),
]


@pytest.mark.parametrize("params", _QARITH)
@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_add_mul_bitwise_as_torch(params, dtype):
    """Note [Quantized add and mul]: every integer equal to torch's, for dense operands, a
    broadcast row, a strided view and channels-last tensors."""
    torch = _torch()
    sa, za, sb, zb, so, zo = params
    lo = 0 if dtype == "quint8" else -128
    za, zb, zo = (z if lo == 0 else z - 128 for z in (za, zb, zo))
    ints = RNG.integers(lo, lo + 256, (2, 4, 5, 5))
    other = RNG.integers(lo, lo + 256, (2, 4, 5, 5))
    dt, np_dt = getattr(ember, dtype), np.uint8 if lo == 0 else np.int8

    def pair(lib, x, s, z):
        t = lib.tensor(x.astype(np_dt))
        qd = getattr(lib, dtype)
        if lib is ember:
            return ember._C._quantized.from_repr_per_tensor(t, qd, s, z)
        return lib._make_per_tensor_quantized_tensor(t, s, z)

    a, b = pair(ember, ints, sa, za), pair(ember, other, sb, zb)
    ta, tb = pair(torch, ints, sa, za), pair(torch, other, sb, zb)
    cases = [
        (a, b, ta, tb),
        (a, b[:1, :1, :1, :1], ta, tb[:1, :1, :1, :1]),  # one value broadcast
        (a.transpose(2, 3), b, ta.transpose(2, 3), tb),  # strided
        (
            a.contiguous(memory_format=ember.channels_last),
            b.contiguous(memory_format=ember.channels_last),
            ta.contiguous(memory_format=torch.channels_last),
            tb.contiguous(memory_format=torch.channels_last),
        ),
    ]
    for x, y, tx, ty in cases:
        for name in ("add", "add_relu", "mul", "mul_relu"):
            ours = getattr(qops, name)(x, y, so, zo)
            theirs = getattr(torch.ops.quantized, name)(tx, ty, so, zo)
            assert ours.dtype == dt and ours.q_scale() == so and ours.q_zero_point() == zo
            np.testing.assert_array_equal(
                ours.int_repr().numpy(), theirs.int_repr().numpy(), err_msg=name
            )


def test_cat_keeps_integers_of_matching_parameters():
    a = _q(RNG.normal(0, 1, (2, 3)), 0.1, 10, ember.quint8)
    b = _q(RNG.normal(0, 1, (1, 3)), 0.1, 10, ember.quint8)
    c = qops.cat([a, b], 0)
    assert c.q_scale() == 0.1 and c.shape == (3, 3)
    assert c.int_repr().tolist() == a.int_repr().tolist() + b.int_repr().tolist()


def test_scalar_ops():
    a = _q([0.5, -0.2, 1.0], 0.1, 10, ember.quint8)
    np.testing.assert_allclose(_deq(qops.add_scalar(a, 0.3)), [0.8, 0.1, 1.3], atol=0.051)
    m = qops.mul_scalar(a, 2.0)
    np.testing.assert_allclose(_deq(m), [1.0, -0.4, 2.0], atol=1e-6)
    m = qops.mul_scalar(a, -1.0)
    np.testing.assert_allclose(_deq(m), [-0.5, 0.2, -1.0], atol=1e-6)


def test_batch_norm_against_reference_and_torch():
    c = 5
    x = RNG.normal(0, 1, (2, c, 4, 3)).astype(np.float32)
    qx = _q(x, 0.03, 120, ember.quint8)
    w, b = RNG.uniform(0.5, 1.5, c).astype(np.float32), RNG.normal(0, 1, c).astype(np.float32)
    mean, var = RNG.normal(0, 0.3, c).astype(np.float32), RNG.uniform(0.5, 2, c).astype(np.float32)
    args = [ember.tensor(v) for v in (w, b, mean, var)]
    out = qops.batch_norm(qx, *args, 1e-5, 0.04, 100)
    sh = (1, c, 1, 1)
    ref = (_deq(qx) - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + 1e-5) * w.reshape(
        sh
    ) + b.reshape(sh)
    _within_one_step(out, ref, 0.04, 100, ember.quint8)
    torch = _torch()
    theirs = torch.ops.quantized.batch_norm2d(
        _to_torch(torch, qx), *[torch.tensor(v) for v in (w, b, mean, var)], 1e-5, 0.04, 100
    )
    d = np.abs(out.int_repr().numpy().astype(int) - theirs.int_repr().numpy().astype(int))
    assert d.max() <= 1


@pytest.mark.parametrize("dtype", ["quint8", "quint4x2"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_against_reference(dtype, mode):
    rows, dim = 20, 7
    w = RNG.normal(0, 1, (rows, dim)).astype(np.float32)
    qmax = 15 if dtype == "quint4x2" else 255
    lo, hi = w.min(1), w.max(1)
    scales = (hi - lo) / qmax
    zps = -lo / scales  # float zero points
    qw = ember.quantize_per_channel(
        ember.tensor(w),
        ember.tensor(scales),
        ember.tensor(zps.astype(np.float32)),
        0,
        getattr(ember, dtype),
    )
    assert qw.qscheme() is ember.per_channel_affine_float_qparams
    deq = _deq(qw)
    assert np.abs(deq - w).max() <= scales.max() / 2 + 1e-5
    idx = np.array([1, 4, 4, 19, 0, 7, 3], np.int64)
    off = np.array([0, 3, 3, 5], np.int64)
    bag = ember.ao.nn.quantized.EmbeddingBag(rows, dim, mode=mode, dtype=getattr(ember, dtype))
    bag.set_weight(qw)
    out = bag(ember.tensor(idx), ember.tensor(off)).numpy()
    ref = []
    bounds = list(off) + [len(idx)]
    for s, e in zip(bounds[:-1], bounds[1:]):
        rows_ = deq[idx[s:e]]
        if e == s:
            ref.append(np.zeros(dim))
        else:
            ref.append({"sum": rows_.sum(0), "mean": rows_.mean(0), "max": rows_.max(0)}[mode])
    np.testing.assert_allclose(out, np.array(ref), rtol=1e-5, atol=1e-5)
