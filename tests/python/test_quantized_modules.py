"""The quantized modules (ember.ao.nn.quantized, .dynamic, ember.ao.nn.intrinsic.quantized):
torch's constructors, printing, state dict layout, from_float with duck-typed observers, and
outputs against torch's modules with the same weights."""

import collections
import io
import warnings

import numpy as np
import pytest
from _cpu_tier import torch_int8_exact

import ember
import ember.ao.nn.intrinsic.quantized as nniq
import ember.ao.nn.quantized as nnq
import ember.ao.nn.quantized.dynamic as nnqd
import ember.nn.quantized
import ember.nn.quantized.dynamic


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    torch.backends.quantized.engine = "x86"
    return torch


RNG = np.random.default_rng(0)


# ---- minimal observers (the real ones live in ember.ao.quantization) ----


class _MinMax(ember.nn.Module):
    """Records the range of what it sees; affine quint8 for activations, symmetric qint8 (per
    tensor or per channel along dim 0) for weights."""

    def __init__(self, dtype, qscheme, ch_axis=0, quant_min=None, quant_max=None):
        super().__init__()
        self.dtype, self.qscheme, self.ch_axis = dtype, qscheme, ch_axis
        info = {ember.quint8: (0, 255), ember.qint8: (-128, 127), ember.quint4x2: (0, 15)}
        lo, hi = info[dtype]
        self.quant_min = lo if quant_min is None else quant_min
        self.quant_max = hi if quant_max is None else quant_max
        self.lo = self.hi = None

    def forward(self, x_in):
        x = x_in.detach().numpy()
        if self.qscheme.name.startswith("per_channel"):
            x = np.moveaxis(x, self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
            lo, hi = x.min(1), x.max(1)
        else:
            lo, hi = x.min(), x.max()
        self.lo = lo if self.lo is None else np.minimum(self.lo, lo)
        self.hi = hi if self.hi is None else np.maximum(self.hi, hi)
        return x_in

    def calculate_qparams(self):
        if self.qscheme is ember.per_channel_affine_float_qparams:
            scale = (self.hi - self.lo) / float(self.quant_max - self.quant_min)
            scale = np.where(scale > 0, scale, 1.0)
            return ember.tensor(scale.astype(np.float32)), ember.tensor(
                (-self.lo / scale).astype(np.float32)
            )
        lo, hi = np.minimum(self.lo, 0), np.maximum(self.hi, 0)
        if self.qscheme.name.endswith("symmetric"):
            scale = np.maximum(-lo, hi) / ((self.quant_max - self.quant_min) / 2)
            scale = np.maximum(scale, 1e-8)
            zp = np.zeros_like(scale, dtype=np.int64)
        else:
            scale = np.maximum((hi - lo) / (self.quant_max - self.quant_min), 1e-8)
            zp = np.clip(np.rint(self.quant_min - lo / scale), self.quant_min, self.quant_max)
        return ember.tensor(np.atleast_1d(scale).astype(np.float32)), ember.tensor(
            np.atleast_1d(zp).astype(np.int64)
        )


_QConfig = collections.namedtuple("QConfig", ["activation", "weight"])


def _qconfig(per_channel=True):
    scheme = ember.per_channel_symmetric if per_channel else ember.per_tensor_symmetric
    return _QConfig(
        activation=lambda: _MinMax(ember.quint8, ember.per_tensor_affine),
        weight=lambda: _MinMax(ember.qint8, scheme),
    )


def _observed(mod, x):
    """mod with a qconfig and an activation_post_process that has seen mod(x)."""
    mod.qconfig = _qconfig()
    obs = _MinMax(ember.quint8, ember.per_tensor_affine)
    obs(mod(x))
    mod.activation_post_process = obs
    return mod


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


def _close_ints(a, b):
    d = np.abs(a.int_repr().numpy().astype(int) - b.int_repr().numpy().astype(int))
    assert d.max() <= 1


# ---- Linear ----


def test_linear_construction_repr_and_state_dict():
    m = nnq.Linear(4, 3)
    assert repr(m) == (
        "QuantizedLinear(in_features=4, out_features=3, scale=1.0, zero_point=0, "
        "qscheme=torch.per_tensor_affine)"
    )
    assert list(m.state_dict().keys()) == [
        "scale",
        "zero_point",
        "_packed_params.dtype",
        "_packed_params._packed_params",
    ]
    w, b = m._weight_bias()
    assert w.dtype == ember.qint8 and w.shape == (3, 4) and b.tolist() == [0.0, 0.0, 0.0]
    assert nnq.Linear(4, 3, bias_=False).bias() is None
    assert ember.nn.quantized.Linear is nnq.Linear
    assert ember.nn.quantized.dynamic.Linear is nnqd.Linear


def test_linear_set_weight_bias_forward_and_state_dict_roundtrip():
    w = ember.quantize_per_tensor(ember.randn(5, 8), 0.02, 0, ember.qint8)
    b = ember.randn(5)
    m = nnq.Linear(8, 5)
    m.set_weight_bias(w, b)
    m.scale, m.zero_point = 0.05, 70
    x = ember.quantize_per_tensor(ember.randn(3, 8), 0.03, 128, ember.quint8)
    y = m(x)
    assert y.dtype == ember.quint8 and y.q_scale() == 0.05 and y.q_zero_point() == 70
    ref = x.dequantize() @ w.dequantize().t() + b
    d = (
        y.int_repr().numpy().astype(int)
        - ember.quantize_per_tensor(ref, 0.05, 70, ember.quint8).int_repr().numpy()
    )
    assert np.abs(d).max() <= 1
    m2 = nnq.Linear(8, 5)
    m2.load_state_dict(m.state_dict())
    # the state dict keeps scale as a float32 tensor, as torch's does
    assert m2.scale == pytest.approx(0.05) and m2.zero_point == 70
    assert m2(x).int_repr().tolist() == y.int_repr().tolist()
    buf = io.BytesIO()
    # two quantized modules in one file: their packed params' dtype is saved twice
    ember.save({"a": m.state_dict(), "b": m2.state_dict()}, buf)
    buf.seek(0)
    loaded = ember.load(buf, weights_only=False)
    for key in ("a", "b"):
        m3 = nnq.Linear(8, 5)
        m3.load_state_dict(loaded[key])
        assert m3(x).int_repr().tolist() == y.int_repr().tolist()


@torch_int8_exact
def test_linear_matches_torch_and_state_dicts_interchange(tmp_path):
    torch = _torch()
    import torch.ao.nn.quantized as tnnq

    w = ember.quantize_per_channel(
        ember.randn(6, 10),
        ember.rand(6, dtype=ember.float64) * 0.02 + 0.01,
        ember.zeros(6, dtype=ember.int64),
        0,
        ember.qint8,
    )
    b = ember.randn(6)
    m = nnq.Linear(10, 6)
    m.set_weight_bias(w, b)
    m.scale, m.zero_point = 0.04, 60
    path = tmp_path / "lin.pt"
    ember.save(m.state_dict(), path)
    t = tnnq.Linear(10, 6)
    t.load_state_dict(torch.load(path, weights_only=False))
    loaded = nnq.Linear(10, 6)
    loaded.load_state_dict(ember.load(path, weights_only=False))
    assert repr(t) == repr(loaded)
    x = ember.quantize_per_tensor(ember.randn(7, 10), 0.03, 128, ember.quint8)
    _close_ints(m(x), t(_to_torch(torch, x)))
    torch.save(t.state_dict(), path)
    m2 = nnq.Linear(10, 6)
    m2.load_state_dict(ember.load(path, weights_only=False))
    assert m2(x).int_repr().tolist() == m(x).int_repr().tolist()


def test_linear_from_float_and_linear_relu():
    lin = ember.nn.Linear(8, 4)
    x = ember.randn(16, 8)
    _observed(lin, x)
    q = nnq.Linear.from_float(lin)
    assert q.weight().qscheme() is ember.per_channel_affine
    assert q.zero_point == int(lin.activation_post_process.calculate_qparams()[1])
    xq = ember.quantize_per_tensor(x, 0.02, 128, ember.quint8)
    out = q(xq).dequantize()
    # quint8 outputs saturate at the observed range, which x (not xq) set
    lo, hi = -q.zero_point * q.scale, (255 - q.zero_point) * q.scale
    ref = lin(xq.dequantize()).clamp(lo, hi)
    assert (out - ref).abs().max().item() < 3 * q.scale
    relu = nniq.LinearReLU(8, 4)
    relu.set_weight_bias(q.weight(), q.bias())
    relu.scale, relu.zero_point = q.scale, q.zero_point
    r = relu(xq)
    assert r.int_repr().tolist() == np.maximum(q(xq).int_repr().numpy(), q.zero_point).tolist()
    assert repr(relu).startswith("QuantizedLinearReLU(in_features=8, out_features=4")
    with pytest.raises(AssertionError, match="from_float only works for"):
        nnq.Linear.from_float(ember.nn.Conv2d(1, 1, 1))


# ---- Conv ----


@torch_int8_exact
def test_conv2d_repr_state_dict_and_torch():
    torch = _torch()
    import torch.ao.nn.quantized as tnnq

    m = nnq.Conv2d(3, 8, 3, padding=1)
    t = tnnq.Conv2d(3, 8, 3, padding=1)
    assert repr(m) == repr(t)
    assert list(m.state_dict().keys()) == ["weight", "bias", "scale", "zero_point"]
    assert repr(nnq.Conv1d(2, 4, 3)) == repr(tnnq.Conv1d(2, 4, 3))
    assert repr(nnq.Conv2d(4, 4, 3, groups=2, bias=False, dilation=2)) == repr(
        tnnq.Conv2d(4, 4, 3, groups=2, bias=False, dilation=2)
    )
    w = ember.quantize_per_channel(
        ember.randn(8, 3, 3, 3),
        ember.rand(8, dtype=ember.float64) * 0.02 + 0.01,
        ember.zeros(8, dtype=ember.int64),
        0,
        ember.qint8,
    )
    b = ember.randn(8)
    m.set_weight_bias(w, b)
    m.scale, m.zero_point = 0.1, 64
    buf = io.BytesIO()
    ember.save(m.state_dict(), buf)
    buf.seek(0)
    t.load_state_dict(torch.load(buf, weights_only=False))
    x = ember.quantize_per_tensor(ember.randn(2, 3, 9, 9), 0.03, 128, ember.quint8)
    _close_ints(m(x), t(_to_torch(torch, x)))
    relu = nniq.ConvReLU2d(3, 8, 3, padding=1)
    relu.load_state_dict(m.state_dict())
    assert relu(x).int_repr().tolist() == np.maximum(m(x).int_repr().numpy(), 64).tolist()


def test_conv_from_float():
    conv = ember.nn.Conv2d(3, 6, 3, stride=2, padding=1)
    x = ember.randn(4, 3, 10, 10)
    _observed(conv, x)
    q = nnq.Conv2d.from_float(conv)
    assert (q.stride, q.padding, q.groups) == ((2, 2), (1, 1), 1)
    xq = ember.quantize_per_tensor(x, 0.03, 128, ember.quint8)
    out = q(xq).dequantize()
    ref = conv(xq.dequantize())
    assert (out - ref).abs().max().item() < 3 * q.scale
    c1 = ember.nn.Conv1d(2, 3, 3)
    x1 = ember.randn(2, 2, 12)
    _observed(c1, x1)
    q1 = nnq.Conv1d.from_float(c1)
    xq1 = ember.quantize_per_tensor(x1, 0.03, 128, ember.quint8)
    assert (q1(xq1).dequantize() - c1(xq1.dequantize())).abs().max().item() < 3 * q1.scale


def test_from_float_keeps_the_bias_parameter_in_the_state_dict():
    """As torch's packed params: the bias given to set_weight_bias is the object bias() and the
    state dict return (a float module's Parameter stays a Parameter, requires_grad and all), a
    non-contiguous one is copied; load_state_dict packs the loaded object the same way."""
    for f, qcls, shape, key in (
        (ember.nn.Conv2d(2, 3, 1), nnq.Conv2d, (1, 2, 3, 3), "bias"),
        (ember.nn.Conv1d(2, 3, 1), nnq.Conv1d, (1, 2, 3), "bias"),
        (ember.nn.Linear(2, 3), nnq.Linear, (2, 2), None),
    ):
        x = ember.quantize_per_tensor(ember.ones(shape), 0.1, 10, ember.quint8)
        _observed(f, x.dequantize())
        q = qcls.from_float(f)
        assert q.bias() is f.bias and type(q.bias()) is ember.nn.Parameter
        sd = q.state_dict()
        b = sd[key] if key else sd["_packed_params._packed_params"][1]
        assert b is f.bias and b.requires_grad
        q2 = qcls.from_float(f)
        q2.set_weight_bias(q2.weight(), ember.zeros(3))
        assert type(q2.bias()) is ember.Tensor and not q2.bias().requires_grad
        q2.load_state_dict(sd)
        assert q2.bias() is f.bias and ember.equal(q2(x).int_repr(), q(x).int_repr())
    strided = ember.arange(6.0)[::2]
    q2.set_weight_bias(q2.weight(), strided)
    assert q2.bias() is not strided and q2.bias().is_contiguous()
    assert ember.equal(q2.bias(), strided)


# ---- dynamic ----


def test_dynamic_linear_matches_torch():
    torch = _torch()
    import torch.ao.nn.quantized.dynamic as tnnqd

    m = nnqd.Linear(32, 16)
    t = tnnqd.Linear(32, 16)
    assert repr(m) == repr(t)
    w = ember.quantize_per_tensor(ember.randn(16, 32), 0.02, 0, ember.qint8)
    b = ember.randn(16)
    m.set_weight_bias(w, b)
    t.set_weight_bias(_to_torch(torch, w), torch.tensor(b.numpy()))
    for batch in (1, 5, 64):
        x = ember.randn(batch, 32)
        np.testing.assert_allclose(
            m(x).numpy(), t(torch.tensor(x.numpy())).numpy(), rtol=1e-5, atol=1e-5
        )


def test_dynamic_linear_from_float():
    lin = ember.nn.Linear(20, 10)
    lin.qconfig = _qconfig()
    q = nnqd.Linear.from_float(lin)
    x = ember.randn(8, 20)
    assert (q(x) - lin(x)).abs().max().item() < 0.05 * lin(x).abs().max().item()
    assert repr(q).startswith(
        "DynamicQuantizedLinear(in_features=20, out_features=10, dtype=torch.qint8"
    )


def test_dynamic_lstm_matches_torch():
    torch = _torch()
    import torch.ao.nn.quantized.dynamic as tnnqd

    ember.manual_seed(0)
    lstm = ember.nn.LSTM(6, 8, num_layers=2, bidirectional=True)
    lstm.qconfig = _QConfig(
        activation=None, weight=lambda: _MinMax(ember.qint8, ember.per_tensor_symmetric)
    )
    q = nnqd.LSTM.from_float(lstm)
    assert repr(q) == "DynamicQuantizedLSTM(6, 8, num_layers=2, bidirectional=True)"
    tl = torch.nn.LSTM(6, 8, num_layers=2, bidirectional=True)
    tl.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in lstm.state_dict().items()})
    tq = tnnqd.LSTM(6, 8, num_layers=2, bidirectional=True)
    weights = q.get_weight()
    biases = q.get_bias()
    tq.set_weight_bias(
        {
            **{k: _to_torch(torch, v) for k, v in weights.items()},
            **{k: torch.tensor(v.numpy()) for k, v in biases.items()},
        }
    )
    x = ember.randn(5, 3, 6)
    out, (h, c) = q(x)
    tout, (th, tc) = tq(torch.tensor(x.numpy()))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), atol=1e-4)
    np.testing.assert_allclose(h.numpy(), th.numpy(), atol=1e-4)
    np.testing.assert_allclose(c.numpy(), tc.numpy(), atol=1e-4)
    fout, _ = lstm(x)
    assert (out - fout).abs().max().item() < 0.05


# ---- the rest ----


def test_batchnorm2d():
    bn = ember.nn.BatchNorm2d(4)
    bn.eval()
    bn.running_mean.copy_(ember.randn(4) * 0.1)
    bn.running_var.copy_(ember.rand(4) + 0.5)
    x = ember.randn(2, 4, 5, 5)
    obs = _MinMax(ember.quint8, ember.per_tensor_affine)
    obs(bn(x))
    bn.activation_post_process = obs
    q = nnq.BatchNorm2d.from_float(bn)
    assert q._get_name() == "QuantizedBatchNorm2d"
    assert "scale" in q.state_dict() and "zero_point" in q.state_dict()
    xq = ember.quantize_per_tensor(x, 0.03, 128, ember.quint8)
    out = q(xq)
    assert out.q_scale() == pytest.approx(float(q.scale))
    assert (out.dequantize() - bn(xq.dequantize())).abs().max().item() <= float(q.scale) * 1.01


def test_functional_modules():
    f = nnq.FloatFunctional()
    a, b = ember.randn(3), ember.randn(3)
    assert ember.equal(f.add(a, b), a + b)
    assert ember.equal(f.cat([a, b]), ember.cat([a, b]))
    assert ember.equal(f.add_relu(a, b), ember.relu(a + b))
    with pytest.raises(RuntimeError, match="not intended to use the 'forward'"):
        f(a)
    obs = _MinMax(ember.quint8, ember.per_tensor_affine)
    f.activation_post_process = obs
    f.add(a, b)
    q = nnq.QFunctional.from_float(f)
    assert repr(q) == (
        f"QFunctional(\n  scale={q.scale}, zero_point={q.zero_point}\n"
        "  (activation_post_process): Identity()\n)"
    )
    qa = ember.quantize_per_tensor(a, 0.05, 128, ember.quint8)
    qb = ember.quantize_per_tensor(b, 0.05, 128, ember.quint8)
    s = q.add(qa, qb)
    assert s.q_scale() == q.scale
    assert (s.dequantize() - (qa.dequantize() + qb.dequantize())).abs().max().item() <= q.scale
    assert q.cat([qa, qb]).shape == (6,)
    assert list(q.state_dict().keys()) == ["scale", "zero_point"]


def test_quantize_dequantize_and_relu6():
    m = nnq.Quantize(0.1, 2, ember.quint8)
    assert repr(m) == "Quantize(scale=tensor([0.1000]), zero_point=tensor([2]), dtype=torch.quint8)"
    q = m(ember.tensor([0.0, 0.5, 7.0]))
    assert q.int_repr().tolist() == [2, 7, 72]
    assert nnq.DeQuantize()(q).tolist() == pytest.approx([0.0, 0.5, 7.0])
    r = nnq.ReLU6()(
        ember.quantize_per_tensor(ember.tensor([-1.0, 3.0, 7.0]), 0.1, 20, ember.quint8)
    )
    assert r.dequantize().tolist() == pytest.approx([0.0, 3.0, 6.0])
    assert repr(nnq.ReLU6()) == "QuantizedReLU6()"


def test_embedding_from_float_and_repr():
    emb = ember.nn.Embedding(10, 6)
    emb.qconfig = _QConfig(
        activation=None,
        weight=lambda: _MinMax(ember.quint8, ember.per_channel_affine_float_qparams),
    )
    q = nnq.Embedding.from_float(emb)
    assert repr(q) == (
        "QuantizedEmbedding(num_embeddings=10, embedding_dim=6, dtype=torch.quint8, "
        "qscheme=torch.per_channel_affine_float_qparams)"
    )
    idx = ember.tensor([[1, 2], [9, 0]])
    out = q(idx)
    assert out.shape == (2, 2, 6)
    assert (out - emb(idx)).abs().max().item() < 0.02
    assert list(q.state_dict().keys()) == ["_packed_params.dtype", "_packed_params._packed_weight"]
    bag = ember.nn.EmbeddingBag(10, 6, mode="mean")
    bag.qconfig = emb.qconfig
    qb = nnq.EmbeddingBag.from_float(bag)
    i, o = ember.tensor([1, 2, 3, 9]), ember.tensor([0, 2])
    assert (qb(i, o) - bag(i, o)).abs().max().item() < 0.02
