"""Static int8 convolution on oneDNN (Note [oneDNN int8]) and NHWC max pooling of quantized
tensors: the oneDNN route against ember's own int8 kernel, the float reference and torch's
quantized ops (x86 engine); batches cut into chunks (a shorter last chunk), groups, strides,
dilation, zero and non-zero input zero points, fused ReLU; an eager-converted CNN against
torch's."""

import warnings

import numpy as np
import pytest
from _cpu_tier import torch_int8_exact

import ember
from ember.ao.nn.quantized import _ops as qops

pytestmark = pytest.mark.filterwarnings("ignore")

RNG = np.random.default_rng(7)


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    torch.backends.quantized.engine = "x86"
    return torch


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


def _qweight(shape, per_channel):
    w = RNG.normal(0, 0.5, shape).astype(np.float32)
    if per_channel:
        scales = np.abs(w.reshape(shape[0], -1)).max(1) / 127 + 1e-4
        return ember.quantize_per_channel(
            ember.tensor(w),
            ember.tensor(scales),
            ember.zeros(shape[0], dtype=ember.int64),
            0,
            ember.qint8,
        )
    return ember.quantize_per_tensor(ember.tensor(w), float(np.abs(w).max() / 120), 0, ember.qint8)


CASES = [
    # (n, c, h, w, oc, k, stride, padding, dilation, groups)
    (10, 1, 12, 12, 16, 3, 1, 1, 1, 1),  # one input channel; chunks 3+3+3+1
    (6, 8, 9, 7, 12, 3, 2, 0, 1, 1),
    (5, 4, 10, 10, 4, 3, 1, 2, 2, 4),  # depthwise, dilated
    (4, 6, 5, 5, 9, 1, 1, 0, 1, 3),  # grouped 1x1
    (1, 16, 12, 12, 32, 5, 1, 2, 1, 1),  # one image: oneDNN's own threads
    (3, 32, 14, 14, 64, 3, 1, 1, 1, 1),
]


def _pair(case, per_channel, in_zp, relu):
    """The same convolution through oneDNN and through ember's own kernel."""
    n, c, h, w, oc, k, stride, padding, dilation, groups = case
    x = RNG.normal(0.5, 1, (n, c, h, w)).astype(np.float32)
    qx = ember.quantize_per_tensor(ember.tensor(x), 0.03, in_zp, ember.quint8)
    qw = _qweight((oc, c // groups, k, k), per_channel)
    bias = ember.tensor(RNG.normal(0, 1, oc).astype(np.float32))
    args = ([stride] * 2, [padding] * 2, [dilation] * 2, groups)
    fast, own = qops.conv_prepack(qw, bias, *args), qops.conv_prepack(qw, bias, *args)
    own._onednn_ok = False
    a = qops.conv2d(qx, fast, 0.08, 70, relu=relu)
    b = qops.conv2d(qx, own, 0.08, 70, relu=relu)
    return qx, qw, bias, args, fast, a, b


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("in_zp,relu", [(0, True), (100, False), (100, True)])
def test_onednn_conv_matches_own_kernel(case, per_channel, in_zp, relu):
    _, _, _, _, packed, a, b = _pair(case, per_channel, in_zp, relu)
    assert a.shape == b.shape and a.dtype == ember.quint8
    assert (a.q_scale(), a.q_zero_point()) == (0.08, 70)
    x, y = a.int_repr().numpy().astype(int), b.int_repr().numpy().astype(int)
    # oneDNN adds the output zero point before rounding, torch's requantization after: an exact
    # half with an odd zero point can round one apart.
    assert np.abs(x - y).max() <= 1
    assert (x == y).mean() > 0.99


@torch_int8_exact
@pytest.mark.parametrize("case", CASES[:4])
def test_onednn_conv_matches_torch(case):
    torch = _torch()
    qx, qw, bias, args, _, ours, _ = _pair(case, True, 100, False)
    packed = torch.ops.quantized.conv2d_prepack(
        _to_torch(torch, qw), torch.tensor(bias.numpy()), *args
    )
    theirs = torch.ops.quantized.conv2d(_to_torch(torch, qx), packed, 0.08, 70)
    a, b = ours.int_repr().numpy().astype(int), theirs.int_repr().numpy().astype(int)
    assert np.abs(a - b).max() <= 1
    assert (a == b).mean() > 0.99


def test_weight_packed_once_per_shape():
    qx, _, _, _, packed, a, _ = _pair(CASES[1], True, 0, True)
    cached = dict(packed._onednn)
    again = qops.conv2d(qx, packed, 0.08, 70, relu=True)
    assert np.array_equal(again.int_repr().numpy(), a.int_repr().numpy())
    assert packed._onednn.keys() == cached.keys()
    assert all(packed._onednn[k] is cached[k] for k in cached)


def test_conv_output_is_channels_last_and_chains():
    qx, qw, bias, args, packed, a, b = _pair(CASES[5], True, 0, True)
    assert a.is_contiguous(memory_format=ember.channels_last)
    # a second convolution reads the first one's NHWC output as it is
    qw2 = _qweight((16, 64, 3, 3), True)
    fast = qops.conv_prepack(qw2, None, [1, 1], [1, 1], [1, 1], 1)
    own = qops.conv_prepack(qw2, None, [1, 1], [1, 1], [1, 1], 1)
    own._onednn_ok = False
    x, y = qops.conv2d(a, fast, 0.1, 5), qops.conv2d(a, own, 0.1, 5)
    assert np.abs(x.int_repr().numpy().astype(int) - y.int_repr().numpy().astype(int)).max() <= 1


def test_conv1d_on_onednn_matches_float_reference():
    x = RNG.normal(0, 1, (4, 4, 20)).astype(np.float32)
    qx = ember.quantize_per_tensor(ember.tensor(x), 0.03, 100, ember.quint8)
    qw = _qweight((6, 4, 3), True)
    bias = RNG.normal(0, 1, 6).astype(np.float32)
    out = qops.conv1d(qx, qops.conv_prepack(qw, ember.tensor(bias), [2], [1], [1], 1), 0.05, 80)
    ref = ember.nn.functional.conv1d(
        qx.dequantize(), qw.dequantize(), ember.tensor(bias), 2, 1
    ).numpy()
    expect = ember.quantize_per_tensor(ember.tensor(ref), 0.05, 80, ember.quint8)
    diff = out.int_repr().numpy().astype(int) - expect.int_repr().numpy().astype(int)
    assert out.shape == (4, 6, 10) and np.abs(diff).max() <= 1


POOLS = [
    # (kernel, stride, padding, dilation, ceil_mode)
    (2, None, 0, 1, False),
    (3, 2, 1, 1, False),
    (3, 2, 1, 1, True),
    ((2, 3), (1, 2), (1, 0), (2, 1), True),
]


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool2d_matches_float_and_torch(pool, dtype, channels_last):
    k, s, p, d, ceil = pool
    x = RNG.normal(0, 1, (2, 19, 11, 9)).astype(np.float32)
    q = ember.quantize_per_tensor(ember.tensor(x), 0.02, 3, getattr(ember, dtype))
    if channels_last:
        q = q.contiguous(memory_format=ember.channels_last)
    out = ember.nn.functional.max_pool2d(q, k, s, p, d, ceil_mode=ceil)
    assert out.dtype == q.dtype and (out.q_scale(), out.q_zero_point()) == (0.02, 3)
    ref = ember.nn.functional.max_pool2d(q.dequantize(), k, s, p, d, ceil_mode=ceil)
    np.testing.assert_array_equal(out.dequantize().numpy(), ref.numpy())
    torch = _torch()
    tq = torch.quantize_per_tensor(torch.tensor(x), 0.02, 3, getattr(torch, dtype))
    theirs = torch.nn.functional.max_pool2d(tq, k, s, p, d, ceil_mode=ceil)
    np.testing.assert_array_equal(out.int_repr().numpy(), theirs.int_repr().numpy())


def test_max_pool2d_bad_padding_still_raises():
    q = ember.quantize_per_tensor(ember.rand(1, 2, 6, 6), 0.1, 0, ember.quint8)
    with pytest.raises(RuntimeError):
        ember.nn.functional.max_pool2d(q, 2, 2, 2)


def _cnn(lib):
    nn = lib.nn
    aq = lib.ao.quantization

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = aq.QuantStub()
            self.c1 = nn.Conv2d(1, 16, 3, padding=1)
            self.r1 = nn.ReLU()
            self.c2 = nn.Conv2d(16, 32, 3, padding=1)
            self.r2 = nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(32 * 4 * 4, 10)
            self.dequant = aq.DeQuantStub()

        def forward(self, x):
            x = self.pool(self.r1(self.c1(self.quant(x))))
            x = self.pool(self.r2(self.c2(x)))
            return self.dequant(self.fc(x.flatten(1)))

    return M().eval()


@pytest.mark.parametrize(
    "backend", ["x86", "fbgemm", pytest.param("onednn", marks=torch_int8_exact)]
)
def test_converted_cnn_matches_torch(backend):
    torch = _torch()
    rs = np.random.RandomState(3)
    sd = {
        k: (rs.randn(*v.shape) * 0.3).astype(np.float32)
        for k, v in _cnn(ember).state_dict().items()
    }
    calib = [rs.rand(8, 1, 16, 16).astype(np.float32) for _ in range(3)]
    outs = []
    for lib in (ember, torch):
        torch.backends.quantized.engine = "onednn" if backend == "onednn" else "x86"
        m = _cnn(lib)
        m.load_state_dict({k: lib.tensor(v) for k, v in sd.items()})
        m.qconfig = lib.ao.quantization.get_default_qconfig(backend)
        aq = lib.ao.quantization
        m = aq.prepare(aq.fuse_modules(m, [["c1", "r1"], ["c2", "r2"]]))
        for x in calib:
            m(lib.tensor(x))
        m = aq.convert(m)
        outs.append(m(lib.tensor(calib[0])).numpy())
        torch.backends.quantized.engine = "x86"
    ours, theirs = outs
    step = np.abs(ours).max() / 100
    assert np.abs(ours - theirs).max() <= 2 * step
    assert np.mean(np.isclose(ours, theirs, atol=1e-6)) > 0.95
