"""Observers, fake quantization and qconfigs (ember.ao.quantization) against torch's numbers for
the same data, and against hand-computed qparams where torch is not installed."""

import math

import numpy as np
import pytest

import ember
from ember.ao import quantization as eq
from ember.ao.quantization import _qtypes as qt


def _data(seed=0, shape=(4, 6, 5)):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32) * 3 + 0.5


def test_minmax_qparams_by_hand():
    obs = eq.MinMaxObserver()
    obs(ember.tensor([-1.0, 0.5, 3.0]))
    scale, zp = obs.calculate_qparams()
    want = np.float32(4.0) / np.float32(255)
    assert scale.tolist() == [pytest.approx(float(want), rel=1e-7)]
    assert zp.tolist() == [round(1.0 / float(want))]  # 0 - round(-1 / scale)
    sym = eq.MinMaxObserver(dtype=qt.qint8, qscheme=qt.per_tensor_symmetric)
    sym(ember.tensor([-1.0, 0.5, 3.0]))
    scale, zp = sym.calculate_qparams()
    assert scale.tolist() == [pytest.approx(3.0 / 127.5, rel=1e-6)]
    assert zp.tolist() == [0]
    assert (
        eq.MinMaxObserver(reduce_range=True).quant_min,
        eq.MinMaxObserver(reduce_range=True).quant_max,
    ) == (0, 127)
    assert (
        eq.MinMaxObserver(dtype=qt.qint8).quant_min,
        eq.MinMaxObserver(dtype=qt.qint8).quant_max,
    ) == (-128, 127)


def test_unobserved_defaults_and_errors():
    with pytest.warns(UserWarning, match="must run observer"):
        scale, zp = eq.MinMaxObserver().calculate_qparams()
    assert scale.tolist() == [1.0] and zp.tolist() == [0]
    with pytest.raises(NotImplementedError):
        eq.MinMaxObserver(qscheme=qt.per_channel_affine)
    with pytest.raises(AssertionError, match="include 0"):
        eq.MinMaxObserver(quant_min=1, quant_max=10)
    with pytest.raises(ValueError, match="observer instance"):
        eq.QConfig(activation=eq.MinMaxObserver(), weight=eq.default_weight_observer)


def test_per_channel_by_hand():
    obs = eq.PerChannelMinMaxObserver(ch_axis=1, dtype=qt.qint8, qscheme=qt.per_channel_symmetric)
    x = ember.tensor([[1.0, -2.0, 0.0], [-4.0, 1.0, 0.0]])
    obs(x)
    scale, zp = obs.calculate_qparams()
    np.testing.assert_allclose(
        scale.numpy(), [4 / 127.5, 2 / 127.5, np.finfo(np.float32).eps], rtol=1e-6
    )
    assert zp.tolist() == [0, 0, 0]


def test_with_args_and_partial_wrapper():
    ctor = eq.MinMaxObserver.with_args(quant_min=0, quant_max=15)
    obs = ctor()
    assert (obs.quant_min, obs.quant_max) == (0, 15)
    again = ctor.with_args(dtype=qt.quint8)()
    assert again.quant_max == 15
    counter = iter(range(10))
    lazy = eq.MovingAverageMinMaxObserver.with_callable_args(
        averaging_constant=lambda: 0.5 + next(counter)
    )
    assert lazy().averaging_constant == 0.5 and lazy().averaging_constant == 1.5


def test_fake_quantize_by_hand_and_gradient():
    x = ember.tensor([-1.0, 0.26, 0.74, 10.0], requires_grad=True)
    y = ember.fake_quantize_per_tensor_affine(x, 0.5, 2, 0, 10)
    assert y.tolist() == [-1.0, 0.5, 0.5, 4.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 0.0]  # zero where clamped
    with pytest.raises(RuntimeError, match="quant_min"):
        ember.fake_quantize_per_tensor_affine(x, 0.5, 0, 10, 0)


def test_fake_quantize_module_switches():
    fq = eq.default_fake_quant()
    x = ember.tensor(_data())
    out = fq(x)
    assert not np.array_equal(out.numpy(), x.numpy())
    fq.disable_fake_quant()
    assert np.array_equal(fq(x).numpy(), x.numpy())
    scale = fq.scale.clone()
    fq.disable_observer()
    fq.enable_fake_quant()
    fq(x * 10)
    assert np.array_equal(fq.scale.numpy(), scale.numpy())
    m = ember.nn.Sequential(eq.default_fake_quant())
    m.apply(eq.disable_observer)
    assert int(m[0].observer_enabled[0]) == 0
    assert set(fq.state_dict()) >= {"scale", "zero_point", "fake_quant_enabled", "observer_enabled"}


def test_qconfig_mapping_and_defaults():
    mapping = eq.get_default_qconfig_mapping("x86")
    assert mapping.global_qconfig is not None
    assert isinstance(mapping.global_qconfig.activation(), eq.HistogramObserver)
    assert mapping.global_qconfig.activation().reduce_range
    assert isinstance(mapping.global_qconfig.weight(), eq.PerChannelMinMaxObserver)
    qnn = eq.get_default_qconfig("qnnpack")
    assert isinstance(qnn.weight(), eq.MinMaxObserver)
    qat = eq.get_default_qat_qconfig("x86")
    assert isinstance(qat.activation(), eq.FusedMovingAvgObsFakeQuantize)
    assert isinstance(eq.get_default_qat_qconfig("x86", 0).activation(), eq.FakeQuantize)
    with pytest.raises(AssertionError, match="not supported"):
        eq.get_default_qconfig("tpu")
    m = eq.QConfigMapping().set_global(eq.default_qconfig).set_module_name("fc", None)
    assert eq.QConfigMapping.from_dict(m.to_dict()).module_name_qconfigs == {"fc": None}
    assert eq.qconfig_equals(
        eq.default_qconfig, eq.QConfig(eq.default_observer, eq.default_weight_observer)
    )
    assert ember.quantization.QuantStub is eq.QuantStub  # the legacy name


# ----------------------------------------------------------------------------- against torch

_CASES = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"reduce_range": True}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 15}),
    ("MovingAverageMinMaxObserver", {}),
    ("MovingAverageMinMaxObserver", {"averaging_constant": 0.5, "dtype": "qint8"}),
    ("PerChannelMinMaxObserver", {"ch_axis": 1}),
    (
        "PerChannelMinMaxObserver",
        {"ch_axis": 1, "dtype": "qint8", "qscheme": "per_channel_symmetric"},
    ),
    ("PerChannelMinMaxObserver", {"qscheme": "per_channel_affine_float_qparams"}),
    ("MovingAveragePerChannelMinMaxObserver", {"ch_axis": 2}),
    ("HistogramObserver", {}),
    ("HistogramObserver", {"reduce_range": True}),
    ("HistogramObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric", "bins": 512}),
]


def _kwargs(lib, kw):
    out = {}
    for k, v in kw.items():
        out[k] = getattr(qt if lib is ember else lib, v) if isinstance(v, str) else v
    return out


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name, kw", _CASES)
def test_observer_qparams_match_torch(name, kw):
    torch = pytest.importorskip("torch")
    ours = getattr(eq, name)(**_kwargs(ember, kw))
    theirs = getattr(torch.ao.quantization, name)(**_kwargs(torch, kw))
    x = _data()
    for k in range(3):
        batch = x * (k + 1) - k
        ours(ember.tensor(batch))
        theirs(torch.tensor(batch))
    s1, z1 = ours.calculate_qparams()
    s2, z2 = theirs.calculate_qparams()
    assert np.array_equal(s1.numpy(), s2.numpy())
    assert np.array_equal(z1.numpy(), z2.numpy())
    assert str(z1.dtype) == str(z2.dtype)


def test_fake_quantize_functions_match_torch():
    torch = pytest.importorskip("torch")
    rs = np.random.RandomState(1)
    x = (rs.randn(8, 4, 3, 3) * 2).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye = ember.fake_quantize_per_tensor_affine(xe, 0.05, 10, 0, 127)
    yt = torch.fake_quantize_per_tensor_affine(xt, 0.05, 10, 0, 127)
    assert np.array_equal(ye.detach().numpy(), yt.detach().numpy())
    (ye * ye).sum().backward()
    (yt * yt).sum().backward()
    assert np.array_equal(xe.grad.numpy(), xt.grad.numpy())
    s = rs.rand(4).astype(np.float32) * 0.05 + 0.01
    z = rs.randint(-5, 5, 4).astype(np.int32)
    ye = ember.fake_quantize_per_channel_affine(xe, ember.tensor(s), ember.tensor(z), 1, -128, 127)
    yt = torch.fake_quantize_per_channel_affine(xt, torch.tensor(s), torch.tensor(z), 1, -128, 127)
    assert np.array_equal(ye.detach().numpy(), yt.detach().numpy())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "name",
    [
        "default_fake_quant",
        "default_weight_fake_quant",
        "default_per_channel_weight_fake_quant",
        "default_histogram_fake_quant",
        "default_fused_act_fake_quant",
        "default_fused_wt_fake_quant",
        "default_fused_per_channel_wt_fake_quant",
    ],
)
def test_fake_quantize_modules_match_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(eq, name)(), getattr(torch.ao.quantization, name)()
    x = _data(2, (8, 4, 3, 3))
    for k in range(4):
        batch = np.abs(x) if k == 2 else x * (k + 1) - 0.3 * k
        a = ours(ember.tensor(batch))
        b = theirs(torch.tensor(batch))
        assert np.array_equal(a.numpy(), b.numpy())
        assert np.array_equal(ours.scale.numpy(), theirs.scale.numpy())
        assert np.array_equal(ours.zero_point.numpy(), theirs.zero_point.numpy())


def test_fused_fake_quant_tiny_range_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = (
        eq.default_fused_act_fake_quant(),
        torch.ao.quantization.default_fused_act_fake_quant(),
    )
    batch = np.full((3, 3), 1e-6, np.float32)
    ours(ember.tensor(batch))
    theirs(torch.tensor(batch))
    assert math.isclose(float(ours.scale), float(theirs.scale), rel_tol=1e-7)
    assert int(ours.zero_point) == int(theirs.zero_point)
