"""Quantization, session 16: relu/sigmoid/tanh of quantized tensors as Tensor methods and
functions, hardtanh/relu6/leaky_relu/hardsigmoid, adaptive average pooling, torch.ops.quantized's
kernels (add_scalar's zero-point shift), QFunctional.add_scalar, quantized BatchNorm3d/BNReLU3d,
dynamic GRU and cells, each against torch's integers, parameters or outputs."""

import numpy as np
import pytest

import ember

F = ember.nn.functional
_DTYPES = [("quint8", 0.05, 3), ("quint8", 0.1, 0), ("quint8", 0.013, 100), ("qint8", 0.1, -5)]


def _x(seed, n=4000, scale=3.0):
    rs = np.random.RandomState(seed)
    x = (rs.randn(n) * scale).astype("float32")
    x[:300] = np.round(x[:300] * 4) / 4  # quarter steps: ties in every rounding below
    return x


def _q(T, x, dt, scale, zp):
    return T.quantize_per_tensor(T.tensor(x), scale, zp, getattr(T, dt))


def _ints(q):
    return q.int_repr().numpy().astype(np.int64)


def _same(a, b):
    """Same quantized dtype, parameters and integers (torch's result a, ember's b)."""
    assert repr(a.dtype) == repr(b.dtype)
    assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    np.testing.assert_array_equal(_ints(a), _ints(b))


def _torch():
    torch = pytest.importorskip("torch")
    import warnings

    warnings.filterwarnings(
        "ignore", message=".*quantize_per_tensor.*deprecated", category=UserWarning
    )
    return torch


# --- relu, sigmoid, tanh (Tensor methods and ember.<op>) -----------------------------------


@pytest.mark.parametrize("dt,scale,zp", _DTYPES)
def test_relu_of_quantized_keeps_parameters(dt, scale, zp):
    q = _q(ember, _x(0), dt, scale, zp)
    want = np.maximum(_ints(q), zp)
    for r in (q.relu(), ember.relu(q), F.relu(q)):
        assert r.dtype == q.dtype and r.q_scale() == scale and r.q_zero_point() == zp
        np.testing.assert_array_equal(_ints(r), want)
    c = q.clone()
    assert c.relu_() is c
    np.testing.assert_array_equal(_ints(c), want)


@pytest.mark.parametrize("dt,scale,zp", _DTYPES)
def test_relu_sigmoid_tanh_of_quantized_against_torch(dt, scale, zp):
    torch = _torch()
    x = _x(1)
    tq, eq = _q(torch, x, dt, scale, zp), _q(ember, x, dt, scale, zp)
    for name in ("relu", "sigmoid", "tanh"):
        _same(getattr(torch, name)(tq), getattr(ember, name)(eq))
        _same(getattr(tq, name)(), getattr(eq, name)())
    _same(torch.relu_(tq.clone()), ember.relu_(eq.clone()))


def test_sigmoid_tanh_output_ranges_are_torchs():
    # fixed output parameters, whatever the input's: [0, 1) and [-1, 1) in 256 steps
    for dt, sig, tanh in (
        ("quint8", (2**-8, 0), (2**-7, 128)),
        ("qint8", (2**-8, -128), (2**-7, 0)),
    ):
        q = _q(ember, _x(2), dt, 0.07, 1)
        for f, (s, z) in ((ember.sigmoid, sig), (ember.tanh, tanh)):
            r = f(q)
            assert (r.q_scale(), r.q_zero_point()) == (s, z)
            want = np.clip(
                np.rint(f(q.dequantize()).numpy().astype(np.float64) / s + z),
                *((0, 255) if dt == "quint8" else (-128, 127)),
            )
            assert np.abs(_ints(r) - want).max() <= 1


def test_quantized_unary_errors_as_torch():
    pc = ember.quantize_per_channel(
        ember.randn(2, 3), ember.tensor([0.1, 0.2]), ember.tensor([3, 4]), 0, ember.quint8
    )
    text = "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false."
    for f in (lambda: pc.relu(), lambda: ember.sigmoid(pc), lambda: pc.clone().relu_()):
        with pytest.raises(RuntimeError, match=text.replace("(", r"\(").replace(")", r"\)")):
            f()
    q = _q(ember, _x(3, 10), "quint8", 0.1, 3)
    with pytest.raises(
        NotImplementedError, match="'aten::sigmoid.out' with arguments from the 'QuantizedCPU'"
    ):
        q.sigmoid_()


def test_float_relu_sigmoid_tanh_unchanged():
    x = ember.tensor(_x(4, 50))
    np.testing.assert_array_equal(ember.relu(x).numpy(), np.maximum(x.numpy(), 0))
    np.testing.assert_allclose(x.sigmoid().numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)
    y = x.clone()
    y.relu_()
    np.testing.assert_array_equal(y.numpy(), np.maximum(x.numpy(), 0))


# --- activations of nn.functional ---------------------------------------------------------


@pytest.mark.parametrize("dt,scale,zp", _DTYPES)
def test_hardtanh_relu6_hardsigmoid_of_quantized_against_torch(dt, scale, zp):
    torch = _torch()
    x = _x(5)
    tq, eq = _q(torch, x, dt, scale, zp), _q(ember, x, dt, scale, zp)
    TF = torch.nn.functional
    _same(TF.hardtanh(tq, -1.05, 0.75), F.hardtanh(eq, -1.05, 0.75))
    _same(TF.hardtanh(tq), F.hardtanh(eq))
    _same(TF.relu6(tq), F.relu6(eq))
    _same(TF.hardsigmoid(tq), F.hardsigmoid(eq))
    t, e = tq.clone(), eq.clone()
    assert F.hardtanh(e, -0.5, 0.5, inplace=True) is e
    TF.hardtanh(t, -0.5, 0.5, inplace=True)
    _same(t, e)


@pytest.mark.parametrize("dt,scale,zp", _DTYPES)
def test_leaky_relu_of_quantized_against_torch(dt, scale, zp):
    # torch's scalar tail (the last elements past its vector width, which depends on the CPU
    # tier) adds the zero point before rounding: a tie there may round one step apart
    torch = _torch()
    x = _x(6)
    tq, eq = _q(torch, x, dt, scale, zp), _q(ember, x, dt, scale, zp)
    for slope in (0.1, 0.3):
        a, b = torch.nn.functional.leaky_relu(tq, slope), F.leaky_relu(eq, slope)
        assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
        diff = np.abs(_ints(a) - _ints(b))
        assert diff.max() <= 1 and (diff[:-64] == 0).all()
    e = eq.clone()
    assert F.leaky_relu(e, 0.2, inplace=True) is e
    np.testing.assert_array_equal(_ints(e), _ints(F.leaky_relu(eq, 0.2)))


def test_hardtanh_of_quantized_clamps_integers():
    q = _q(ember, _x(7, 100), "quint8", 0.1, 10)
    r = F.hardtanh(q, -1.0, 1.0)
    np.testing.assert_array_equal(_ints(r), np.clip(_ints(q), 0, 20))
    assert (r.q_scale(), r.q_zero_point()) == (0.1, 10)


# --- pooling ------------------------------------------------------------------------------

_POOLS = [
    ((2, 3, 7, 7), 1),
    ((2, 3, 7, 7), (3, 2)),
    ((1, 4, 6, 9), (4, 5)),
    ((3, 5, 5), (2, 3)),
    ((2, 4, 8, 8), (4, 4)),
    ((1, 2, 6, 6), (1, 1)),
]


@pytest.mark.parametrize("shape,out", _POOLS)
def test_adaptive_avg_pool2d_of_quantized_rounds_the_integer_mean(shape, out):
    x = np.random.RandomState(8).randn(*shape).astype("float32") * 2
    q = ember.quantize_per_tensor(ember.tensor(x), 0.05, 7, ember.quint8)
    r = F.adaptive_avg_pool2d(q, out)
    assert (r.q_scale(), r.q_zero_point()) == (0.05, 7)
    ref = ember.nn.functional.adaptive_avg_pool2d(ember.tensor(_ints(q).astype("float64")), out)
    np.testing.assert_array_equal(_ints(r), np.rint(ref.numpy()))


@pytest.mark.parametrize("zp", [0, 3, 7])
@pytest.mark.parametrize("shape,out", _POOLS)
def test_adaptive_avg_pool_of_quantized_against_torch(shape, out, zp):
    torch = _torch()
    x = np.random.RandomState(9).randn(*shape).astype("float32") * 2
    tq, eq = _q(torch, x, "quint8", 0.05, zp), _q(ember, x, "quint8", 0.05, zp)
    _same(torch.nn.functional.adaptive_avg_pool2d(tq, out), F.adaptive_avg_pool2d(eq, out))
    _same(torch.nn.AdaptiveAvgPool2d(out)(tq), ember.nn.AdaptiveAvgPool2d(out)(eq))
    x1 = x.reshape(shape[0], -1, shape[-1])
    _same(
        torch.nn.functional.adaptive_avg_pool1d(_q(torch, x1, "quint8", 0.05, zp), 3),
        F.adaptive_avg_pool1d(_q(ember, x1, "quint8", 0.05, zp), 3),
    )


# --- torch.ops.quantized and QFunctional --------------------------------------------------


def test_ops_quantized_names_torchs_kernels():
    ns = ember.ops.quantized
    assert repr(ns.add) == "quantized.add" and ns.add.default is ns.add
    assert ns.add.name() == "quantized::add"
    with pytest.raises(AttributeError, match="has no attribute 'not_an_op'"):
        ns.not_an_op
    a = _q(ember, _x(10, 40), "quint8", 0.1, 10)
    r = ns.add(a, a, 0.2, 5)
    np.testing.assert_allclose(
        r.dequantize().numpy(), np.clip(2 * a.dequantize().numpy(), -1, 50), atol=0.1 + 1e-6
    )


def test_add_scalar_shifts_the_zero_point():
    a = _q(ember, _x(11, 40), "quint8", 0.1, 100)
    r = ember.ops.quantized.add_scalar(a, 2.0)  # 20 steps: zero point 100 -> 80, integers kept
    assert (r.q_scale(), r.q_zero_point()) == (0.1, 80)
    np.testing.assert_array_equal(_ints(r), _ints(a))
    r = ember.ops.quantized.add_scalar(a, -20.0)  # past the range: zero point 255, scale widened
    assert r.q_zero_point() == 255 and r.q_scale() == pytest.approx((300 - 0) / 255 * 0.1)
    np.testing.assert_allclose(
        r.dequantize().numpy(), a.dequantize().numpy() - 20, atol=r.q_scale()
    )


def test_ops_quantized_against_torch():
    torch = _torch()
    for dt, zp in (("quint8", 0), ("quint8", 10), ("quint8", 120), ("qint8", -5), ("qint8", 10)):
        x = np.array([-3 + 0.15 * i for i in range(41)], dtype="float32")
        tq, eq = _q(torch, x, dt, 0.1, zp), _q(ember, x, dt, 0.1, zp)
        for b in (0.0, 0.3, 2.0, -2.0, 20.0, -20.0, 0.05, 0.15):
            _same(torch.ops.quantized.add_scalar(tq, b), ember.ops.quantized.add_scalar(eq, b))
        t2, e2 = _q(torch, x[::-1].copy(), dt, 0.07, 3), _q(ember, x[::-1].copy(), dt, 0.07, 3)
        for name in ("add", "add_relu", "mul", "mul_relu"):
            # ember's requantizing kernel may round a tie one step from torch's (not this
            # session's code: the namespace only names it)
            a = getattr(torch.ops.quantized, name)(tq, t2, 0.2, 5)
            b = getattr(ember.ops.quantized, name)(eq, e2, 0.2, 5)
            assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
            assert np.abs(_ints(a) - _ints(b)).max() <= 1
        _same(
            torch.ops.quantized.cat([tq, t2], dim=0, scale=0.2, zero_point=5),
            ember.ops.quantized.cat([eq, e2], dim=0, scale=0.2, zero_point=5),
        )


def test_ops_quantized_add_mul_scalar_overload_against_torch():
    """quantized.add/mul(_relu) with a Python number on either side run torch's Scalar
    overload (add_scalar / mul_scalar): output qparams derived from the input's."""
    torch = _torch()
    x = np.array([-3 + 0.15 * i for i in range(41)], dtype="float32")
    for dt, zp in (("quint8", 60), ("qint8", -5)):
        tq, eq = _q(torch, x, dt, 0.1, zp), _q(ember, x, dt, 0.1, zp)
        for name in ("add", "add_relu", "mul", "mul_relu"):
            for b in (1.0, 2, -1.5, 0.05):
                t_op, e_op = getattr(torch.ops.quantized, name), getattr(ember.ops.quantized, name)
                _same(t_op(tq, b), e_op(eq, b))
                _same(t_op(b, tq), e_op(b, eq))


def test_qfunctional_add_scalar_against_torch():
    torch = _torch()
    x = np.linspace(-2, 2, 9).astype("float32")
    out = []
    for T in (torch, ember):
        qf = T.ao.nn.quantized.QFunctional()
        qf.scale, qf.zero_point = 0.2, 5
        xq = _q(T, x, "quint8", 0.1, 10)
        out.append(
            (qf.add_scalar(xq, 2.0), qf.mul_scalar(xq, 2.0), qf.add(xq, xq), qf.cat([xq, xq]))
        )
    for a, b in zip(*out):
        _same(a, b)


# --- clamp, mean, and the ops that move integers ------------------------------------------


@pytest.mark.parametrize("dt,scale,zp", _DTYPES)
def test_clamp_and_mean_of_quantized_against_torch(dt, scale, zp):
    torch = _torch()
    x = _x(12, 4 * 6 * 5 * 8).reshape(4, 6, 5, 8)
    tq, eq = _q(torch, x, dt, scale, zp), _q(ember, x, dt, scale, zp)
    _same(torch.clamp(tq, -1.05, 0.75), ember.clamp(eq, -1.05, 0.75))
    _same(tq.clamp(min=-0.5), eq.clamp(min=-0.5))
    _same(tq.clamp(max=0.5), eq.clamp(max=0.5))
    for dims, keep in ((None, False), ((2, 3), False), ((2, 3), True), (3, False)):
        a = tq.mean() if dims is None else tq.mean(dims, keepdim=keep)
        b = eq.mean() if dims is None else eq.mean(dims, keepdim=keep)
        _same(a, b)
    # over other dims both dequantize, average in float32 and quantize: the float sums' order
    # may move a tie by one step
    for dims, keep in (((1,), True), ((0, 2), False)):
        a, b = tq.mean(dims, keepdim=keep), eq.mean(dims, keepdim=keep)
        assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
        assert a.shape == b.shape and np.abs(_ints(a) - _ints(b)).max() <= 1


def test_mean_of_quantized_rounds_the_integer_mean():
    q = _q(ember, _x(13, 6 * 10), "quint8", 0.05, 7).reshape(6, 10)
    r = q.mean(1)
    assert (r.q_scale(), r.q_zero_point()) == (0.05, 7)
    np.testing.assert_array_equal(_ints(r), np.rint(_ints(q).mean(1)))


def test_sort_topk_max_min_of_quantized_against_torch():
    torch = _torch()
    x = _x(14, 60).reshape(6, 10)
    for dt, zp in (("quint8", 10), ("qint8", -3)):
        tq, eq = _q(torch, x, dt, 0.1, zp), _q(ember, x, dt, 0.1, zp)
        _same(tq.max(), eq.max())
        _same(tq.min(), eq.min())
        for a, b in (
            (tq.max(1), eq.max(1)),
            (torch.min(tq, 0), ember.min(eq, 0)),
            (torch.topk(tq, 3), ember.topk(eq, 3)),
            (torch.topk(tq, 2, dim=0, largest=False), ember.topk(eq, 2, dim=0, largest=False)),
            (torch.sort(tq, 1, descending=True), ember.sort(eq, 1, descending=True)),
        ):
            _same(a[0], b[0])
            np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())
        np.testing.assert_array_equal(tq.argsort(1).numpy(), eq.argsort(1).numpy())


def test_sort_and_max_of_quantized_keep_parameters():
    q = _q(ember, _x(15, 30), "quint8", 0.1, 10)
    v, i = ember.sort(q)
    assert (v.q_scale(), v.q_zero_point()) == (0.1, 10) and i.dtype == ember.int64
    np.testing.assert_array_equal(_ints(v), np.sort(_ints(q), kind="stable"))
    assert int(_ints(q.max())) == _ints(q).max()


def test_quantized_refusal_names_the_aten_op():
    q = _q(ember, _x(3, 10), "quint8", 0.1, 3)
    # ember's own overload name is not part of torch's text
    with pytest.raises(NotImplementedError, match=r"Could not run 'aten::hardswish' with"):
        F.hardswish(q)


# --- BatchNorm3d / BNReLU3d ---------------------------------------------------------------


def _bn3d_flow(T, relu):
    import importlib

    Q = importlib.import_module(T.__name__ + ".ao.quantization")
    rs = np.random.RandomState(16)

    class N(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = Q.QuantStub(), Q.DeQuantStub()
            self.bn, self.relu = T.nn.BatchNorm3d(3), T.nn.ReLU()

        def forward(self, x):
            y = self.bn(self.q(x))
            return self.dq(self.relu(y) if relu else y)

    m = N().eval()
    with T.no_grad():
        m.bn.weight.copy_(T.tensor(rs.rand(3).astype("float32") + 0.5))
        m.bn.bias.copy_(T.tensor(rs.randn(3).astype("float32")))
        m.bn.running_mean.copy_(T.tensor(rs.randn(3).astype("float32") * 0.1))
        m.bn.running_var.copy_(T.tensor(rs.rand(3).astype("float32") + 0.5))
    m.qconfig = Q.get_default_qconfig("x86")
    if relu:
        m = Q.fuse_modules(m, [["bn", "relu"]])
    p = Q.prepare(m)
    x = T.tensor(rs.randn(2, 3, 3, 4, 5).astype("float32"))
    p(x)
    c = Q.convert(p)
    return c, c(x), c.bn(c.q(x))


@pytest.mark.parametrize("relu", [False, True])
def test_quantized_batch_norm3d_is_the_2d_kernel_over_folded_depth(relu):
    c, _, y = _bn3d_flow(ember, relu)
    assert type(c.bn).__name__ == ("BNReLU3d" if relu else "BatchNorm3d")
    assert repr(c.bn).startswith("QuantizedBNReLU3d(3" if relu else "QuantizedBatchNorm3d(3")
    x = c.q(ember.tensor(np.random.RandomState(17).randn(2, 3, 3, 4, 5).astype("float32")))
    bn2 = ember.ao.nn.quantized.BatchNorm2d(3)
    bn2.load_state_dict(c.bn.state_dict())
    bn2._RELU = relu
    want = bn2(x.reshape(2, 3, 12, 5)).reshape(2, 3, 3, 4, 5)
    _same(want, c.bn(x))
    with pytest.raises(RuntimeError, match="Expecting the input tensor of rank 5."):
        c.bn(x.reshape(2, 3, 12, 5))


@pytest.mark.parametrize("relu", [False, True])
def test_quantized_batch_norm3d_flow_against_torch(relu):
    torch = _torch()
    tc, ty, tb = _bn3d_flow(torch, relu)
    ec, ey, eb = _bn3d_flow(ember, relu)
    assert repr(tc.bn) == repr(ec.bn)
    # The scale comes from the observed float32 min/max, whose last bit depends on the
    # vector width the batch norm ran with (FMA or not), in torch as in ember.
    assert eb.q_scale() == pytest.approx(tb.q_scale(), rel=1e-6)
    assert tb.q_zero_point() == eb.q_zero_point()
    assert np.abs(_ints(tb) - _ints(eb)).max() <= 1
    np.testing.assert_allclose(ty.numpy(), ey.numpy(), atol=tb.q_scale() + 1e-6)


# --- dynamic GRU --------------------------------------------------------------------------


def _gru_pair(T, kw, dtype):
    import importlib

    Q = importlib.import_module(T.__name__ + ".ao.quantization")
    rs = np.random.RandomState(18)
    m = T.nn.Sequential(T.nn.GRU(4, 5, **kw))
    with T.no_grad():
        for _, p in m.named_parameters():
            p.copy_(T.tensor(rs.randn(*p.shape).astype("float32") * 0.5))
    x = T.tensor(rs.randn(6, 3, 4).astype("float32"))
    return m, Q.quantize_dynamic(m, {T.nn.GRU}, dtype=getattr(T, dtype)), x


_GRU_KW = [{}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True}]


@pytest.mark.parametrize("kw", _GRU_KW)
def test_dynamic_gru_is_close_to_the_float_gru(kw):
    m, q, x = _gru_pair(ember, kw, "qint8")
    assert type(q[0]).__name__ == "GRU" and repr(q[0]).startswith("DynamicQuantizedGRU(4, 5")
    (out, h), (ref, ref_h) = q(x), m(x)
    assert out.shape == ref.shape and h.shape == ref_h.shape
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), atol=0.05)
    assert sorted(q[0].get_weight()) == sorted(
        n for n, _ in m[0].named_parameters() if "weight" in n
    )
    with pytest.raises(RuntimeError, match="input must have 3 dimensions, got 2"):
        q[0](x[:, 0])


@pytest.mark.parametrize("dtype", ["qint8", "float16"])
@pytest.mark.parametrize("kw", _GRU_KW)
def test_dynamic_gru_against_torch(kw, dtype):
    torch = _torch()
    _, tq, tx = _gru_pair(torch, kw, dtype)
    _, eq, ex = _gru_pair(ember, kw, dtype)
    assert repr(tq) == repr(eq)
    (a, ah), (b, bh) = tq(tx), eq(ex)
    np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ah.detach().numpy(), bh.numpy(), rtol=1e-5, atol=1e-5)


# --- dynamic LSTMCell / GRUCell / RNNCell ---------------------------------------------------


def _cells(T, dtype):
    import importlib

    Q = importlib.import_module(T.__name__ + ".ao.quantization")
    rs = np.random.RandomState(19)
    m = T.nn.Sequential(
        T.nn.LSTMCell(4, 5), T.nn.GRUCell(4, 5), T.nn.RNNCell(4, 5, nonlinearity="relu")
    )
    with T.no_grad():
        for _, p in m.named_parameters():
            p.copy_(T.tensor(rs.randn(*p.shape).astype("float32") * 0.5))
    x = T.tensor(rs.randn(3, 4).astype("float32"))
    h = T.tensor(rs.randn(3, 5).astype("float32"))
    q = Q.quantize_dynamic(m, dtype=getattr(T, dtype))
    outs = [q[0](x, (h, h))[0], q[0](x)[1], q[1](x, h), q[1](x), q[2](x, h), q[2](x)]
    return m, q, x, h, outs


def test_dynamic_cells_are_close_to_the_float_cells():
    m, q, x, h, outs = _cells(ember, "qint8")
    assert [repr(c) for c in q] == [
        "DynamicQuantizedLSTMCell(4, 5)",
        "DynamicQuantizedGRUCell(4, 5)",
        "DynamicQuantizedRNNCell(4, 5, nonlinearity=relu)",
    ]
    assert "0._packed_weight_ih" in q.state_dict()
    refs = [m[0](x, (h, h))[0], m[1](x, h), m[2](x, h)]
    for got, ref in zip(outs[0::2], refs):
        np.testing.assert_allclose(got.numpy(), ref.detach().numpy(), atol=0.08)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3, expected 4"):
        q[2](ember.randn(3, 3))
    with pytest.raises(RuntimeError, match=r"hidden\[1\] has inconsistent hidden_size"):
        q[0](x, (h, ember.randn(3, 4)))


@pytest.mark.parametrize("dtype", ["qint8", "float16"])
def test_dynamic_cells_against_torch(dtype):
    torch = _torch()
    *_, a = _cells(torch, dtype)
    *_, b = _cells(ember, dtype)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.detach().numpy(), y.numpy(), rtol=1e-5, atol=1e-5)
