"""FX graph mode quantization of the standard CNN (conv-bn-relu-pool-flatten-linear) as torch
2.13 lays it out (session 16): a float value entering a shape op (flatten after torch.relu, a
view of the input) is observed and the op runs on the quantized tensor; the converted graph
keeps the node names of torch's reference graph (`dequantize_4`, `quantize_per_tensor_2`) and
its scale/zero-point numbering; a pool after a quantized conv shares its observer (it crashed
the conversion). Names and layout are written here; where torch is installed its code, node
names and values (within one quantization step) are compared too."""

import importlib
import re

import numpy as np
from _docs_check import _libs


def _models(T):
    nn = T.nn

    class Tutorial(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu1 = nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.pool(self.relu1(self.bn1(self.conv1(x))))
            return self.fc(T.flatten(x, 1))

    class FloatRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = T.relu(self.bn(self.conv(x)))
            return self.fc(T.flatten(x, 1))

    class View(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(36, 10)

        def forward(self, x):
            return self.fc(x.view(x.size(0), -1))

    class Branches(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(36, 8)
            self.fc2 = nn.Linear(8, 4)

        def forward(self, x):
            a = self.fc(T.flatten(x, 1))
            b = T.flatten(a.unsqueeze(1), 1)
            return self.fc2(T.nn.functional.relu(b)) + a.sum()

    class Sigmoid(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            # (a Linear fed from sigmoid's full 0..255 range would meet fbgemm's saturating
            # int16 pair sums in torch: ember's VNNI sums do not saturate)
            x = self.pool(self.conv(x))
            x = x.reshape(x.shape[0], -1)
            return T.flatten(T.sigmoid(self.fc(x)), 0).abs(), x.tanh()

    return {
        "tutorial": Tutorial,
        "float_relu": FloatRelu,
        "view": View,
        "branches": Branches,
        "sigmoid": Sigmoid,
    }


def _seed(T, model):
    rng = np.random.default_rng(0)
    with T.no_grad():
        for _, p in model.named_parameters():
            p.copy_(T.from_numpy((rng.standard_normal(tuple(p.shape)) * 0.3).astype(np.float32)))
    return model


def _run(T, name, reference=False):
    Q = importlib.import_module(T.__name__ + ".ao.quantization")
    FX = importlib.import_module(T.__name__ + ".ao.quantization.quantize_fx")
    model = _seed(T, _models(T)[name]()).eval()
    rng = np.random.default_rng(1)
    x = T.from_numpy(rng.standard_normal((4, 1, 6, 6)).astype(np.float32))
    prepared = FX.prepare_fx(model, Q.get_default_qconfig_mapping("x86"), (x,))
    with T.no_grad():
        prepared(x)
    observed = (
        prepared.code,
        [str(n.target) for n in prepared.graph.nodes if n.op == "call_module"],
    )
    convert = FX.convert_to_reference_fx if reference else FX.convert_fx
    q = convert(prepared)
    with T.no_grad():
        y = q(x)
    if isinstance(y, tuple):
        y = T.cat([y[0], y[1].flatten()])
    # ember's tracer records F.relu without its default inplace=False (not this test's subject)
    code = re.sub(r"\b(ember|torch)\.(ops\.quantized\.|nn\.functional\.)?", "", q.code)
    code = code.replace(", inplace = False", "")
    names = [n.name for n in q.graph.nodes]
    buffers = sorted(k for k, _ in q.named_buffers() if "." not in k)
    return code, names, buffers, y.numpy(), (prepared, *observed)


def _agree(name, reference=False):
    """ember's (code, node names, qparam buffers, output); torch's must equal them."""
    results = [_run(T, name, reference) for T in _libs()]
    code, names, buffers, y, _ = results[0]
    for other in results[1:]:
        assert other[:3] == (code, names, buffers)
        np.testing.assert_allclose(y, other[3], atol=0.05, rtol=0)
    return code, names, buffers


def test_tutorial_cnn_runs_pool_and_flatten_on_quantized_tensors():
    code, names, buffers = _agree("tutorial")
    assert names == [
        "x",
        "conv1_input_scale_0",
        "conv1_input_zero_point_0",
        "quantize_per_tensor",
        "conv1",
        "pool",
        "flatten",
        "fc",
        "dequantize_4",
        "output",
    ]
    assert "flatten = flatten(pool, 1)" in code
    assert buffers == ["conv1_input_scale_0", "conv1_input_zero_point_0"]


def test_flatten_after_a_float_relu_is_observed_before_it():
    code, names, buffers = _agree("float_relu")
    assert names == [
        "x",
        "conv_input_scale_0",
        "conv_input_zero_point_0",
        "quantize_per_tensor",
        "conv",
        "dequantize_1",
        "relu",
        "_scale_0",
        "_zero_point_0",
        "quantize_per_tensor_2",
        "flatten",
        "fc",
        "dequantize_4",
        "output",
    ]
    assert "flatten = flatten(quantize_per_tensor_2, 1)" in code
    assert "relu = relu(dequantize_1)" in code


def test_prepared_graph_observes_flatten_input_and_output():
    _, _, _, _, (prepared, code, calls) = _run(_libs()[0], "float_relu")
    assert calls == [
        "activation_post_process_0",
        "conv",
        "activation_post_process_1",
        "activation_post_process_2",
        "activation_post_process_3",
        "fc",
        "activation_post_process_4",
    ]
    assert "flatten(activation_post_process_2, 1)" in code
    assert "activation_post_process_3 = self.activation_post_process_3(flatten)" in code
    # the flatten's output observer is its input's instance (torch's shared qparams)
    assert prepared.activation_post_process_3 is prepared.activation_post_process_2


def test_reference_graph_quantizes_around_flatten():
    code, names, buffers = _agree("float_relu", reference=True)
    assert "flatten = flatten(dequantize_2, 1)" in code
    assert "quantize_per_tensor_3 = quantize_per_tensor(flatten, _scale_1, _zero_point_1" in code
    assert "fc = self.fc(dequantize_3)" in code
    assert names[-2:] == ["dequantize_4", "output"]


def test_view_of_the_input_and_numbering_past_lowered_observers():
    code, names, _ = _agree("view")
    assert "view = quantize_per_tensor.view(size, -1)" in code
    assert names[-2:] == ["dequantize_2", "output"]
    code, names, buffers = _agree("branches")
    assert "dequantize_2 = fc.dequantize()" in code
    assert "quantize_per_tensor_7 = quantize_per_tensor(sum_1, _scale_4, _zero_point_4" in code
    assert "add_1 = add(fc2, quantize_per_tensor_7, _scale_5, _zero_point_5)" in code
    assert buffers == [
        "_input_scale_0",
        "_input_zero_point_0",
        "_scale_4",
        "_scale_5",
        "_zero_point_4",
        "_zero_point_5",
    ]


def _quantized_cases(T):
    """(name, int_repr, scale, zero point) of the quantized ops torch computes."""
    F = T.nn.functional
    rng = np.random.default_rng(3)
    out = []
    for dtype, scale, zp in (("quint8", 0.1, 10), ("quint8", 0.037, 131), ("qint8", 0.05, -3)):
        # multiples of half the scale: ties everywhere
        vals = rng.integers(-40, 80, size=(2, 3, 5, 7)).astype(np.float32) * (scale / 2)
        x = T.quantize_per_tensor(T.from_numpy(vals), scale, zp, getattr(T, dtype))
        seq = x.reshape(2, 3, 35)
        results = {
            "gelu": F.gelu(x),
            "gelu_tanh": F.gelu(x, approximate="tanh"),
            "threshold": F.threshold(x, 0.5, -0.25),
            "pad": F.pad(x, (1, 2, 0, 1)),
            "pad_value": F.pad(x, (2, -1), value=0.73),
            "avg_pool1d": F.avg_pool1d(seq, 3),
            "avg_pool1d_args": F.avg_pool1d(seq, 4, 2, 1, ceil_mode=True, count_include_pad=False),
            "bilinear": F.interpolate(x, scale_factor=2, mode="bilinear"),
            "bilinear_corners": F.interpolate(x, size=(7, 4), mode="bilinear", align_corners=True),
        }
        for name, q in results.items():
            out.append((name, q.int_repr().numpy().astype(np.int64), q.q_scale(), q.q_zero_point()))
    return out


def test_quantized_ops_torch_computes():
    ember = _libs()[0]
    cases = _quantized_cases(ember)
    by_name = {}
    for name, r, scale, zp in cases:
        by_name.setdefault(name, []).append((r, scale, zp))
    # what is written here: the zero point kept, gelu's scale rounded to float32
    for r, scale, zp in by_name["pad"]:
        assert (r[..., 0] == zp).all() and (r[..., -2:] == zp).all() and (r[:, :, -1] == zp).all()
    assert by_name["gelu"][0][1] == float(np.float32(0.1)) and by_name["pad"][0][1] == 0.1
    assert by_name["avg_pool1d"][0][0].shape == (2, 3, 11)
    assert by_name["bilinear"][0][0].shape == (2, 3, 10, 14)
    for r, scale, zp in by_name["threshold"]:
        # values at or below 0.5 become -0.25, quantized in float32 with the zero point after
        # the rounding (-2.5 steps rounds to -2); the others stay above it
        low = zp + np.rint(np.float32(-0.25) * (np.float32(1) / np.float32(scale)))
        assert r.min() == low and (r == low).sum() > r.size // 3
    torch = importlib.import_module("torch") if len(_libs()) > 1 else None
    if torch is None:
        return
    for (name, r, scale, zp), (tname, tr, tscale, tzp) in zip(cases, _quantized_cases(torch)):
        assert name == tname and (scale, zp) == (tscale, tzp), name
        assert r.shape == tr.shape, name
        assert np.abs(r - tr).max() <= 1, name  # int8 ties may round one step apart
        assert (r != tr).mean() < 0.05, name


def _conv3d_cases(T):
    """int_repr of quantized Conv3d / ConvReLU3d outputs for fixed integer weights and inputs."""
    nnq = importlib.import_module(T.__name__ + ".ao.nn.quantized")
    nniq = importlib.import_module(T.__name__ + ".ao.nn.intrinsic.quantized")
    rng = np.random.default_rng(5)
    out = []
    configs = [
        (nnq.Conv3d, dict(kernel_size=3, padding=1), True, False),
        (nniq.ConvReLU3d, dict(kernel_size=(2, 3, 1), stride=(1, 2, 1), groups=2), True, True),
        (nnq.Conv3d, dict(kernel_size=2, dilation=(1, 2, 2), bias=False), False, True),
    ]
    for cls, kw, per_channel, with_bias in configs:
        mod = cls(4, 6, **kw)
        groups = kw.get("groups", 1)
        ks = mod.kernel_size
        w = T.from_numpy(rng.normal(0, 0.2, (6, 4 // groups, *ks)).astype(np.float32))
        if per_channel:
            scales = T.from_numpy(rng.uniform(0.002, 0.004, 6))
            qw = T.quantize_per_channel(w, scales, T.zeros(6, dtype=T.int64), 0, T.qint8)
        else:
            qw = T.quantize_per_tensor(w, 0.003, 0, T.qint8)
        b = T.from_numpy(rng.normal(0, 0.5, 6).astype(np.float32)) if with_bias else None
        mod.set_weight_bias(qw, b if kw.get("bias", True) else None)
        mod.scale, mod.zero_point = 0.05, 60
        x = T.from_numpy(rng.normal(0.5, 1.0, (2, 4, 4, 6, 5)).astype(np.float32))
        y = mod(T.quantize_per_tensor(x, 0.03, 40, T.quint8))
        out.append((repr(mod), y.int_repr().numpy().astype(np.int64), y.q_scale()))
    return out


def test_quantized_conv3d_against_float_and_torch():
    e = _libs()[0]
    cases = _conv3d_cases(e)
    assert cases[0][0].startswith("QuantizedConv3d(4, 6, kernel_size=(3, 3, 3)")
    assert cases[1][0].startswith("QuantizedConvReLU3d(4, 6, kernel_size=(2, 3, 1)")
    assert cases[1][1].min() >= 60  # relu clamps at the output zero point
    assert cases[0][1].shape == (2, 6, 4, 6, 5) and cases[2][1].shape == (2, 6, 3, 4, 3)
    # the float reference: conv3d of the dequantized input and weight, quantized
    nnq = importlib.import_module("ember.ao.nn.quantized")
    mod = nnq.Conv3d(2, 3, 2)
    w = e.quantize_per_tensor(e.linspace(-0.3, 0.3, 48).reshape(3, 2, 2, 2, 2), 0.01, 0, e.qint8)
    mod.set_weight_bias(w, e.tensor([0.1, -0.2, 0.05]))
    mod.scale, mod.zero_point = 0.02, 100
    xq = e.quantize_per_tensor(
        e.linspace(-1, 2, 2 * 2 * 27).reshape(2, 2, 3, 3, 3), 0.02, 50, e.quint8
    )
    ref = e.nn.functional.conv3d(xq.dequantize(), w.dequantize(), e.tensor([0.1, -0.2, 0.05]))
    expect = e.quantize_per_tensor(ref, 0.02, 100, e.quint8).int_repr().numpy().astype(int)
    assert np.abs(mod(xq).int_repr().numpy().astype(int) - expect).max() <= 1
    if len(_libs()) == 1:
        return
    for (r, q, s), (tr, tq, ts) in zip(cases, _conv3d_cases(_libs()[1])):
        assert r == tr and s == ts
        assert np.abs(q - tq).max() <= 1 and (q != tq).mean() < 0.01


def _cnn3d(T, qat):
    Q = importlib.import_module(T.__name__ + ".ao.quantization")
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = Q.QuantStub()
            self.conv1 = nn.Conv3d(2, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm3d(4)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv3d(4, 6, (2, 3, 3), stride=(1, 2, 2), groups=2)
            self.relu2 = nn.ReLU()
            self.conv3 = nn.Conv3d(6, 3, 1, bias=False)
            self.dequant = Q.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.relu1(self.bn1(self.conv1(x)))
            x = self.relu2(self.conv2(x))
            return self.dequant(self.conv3(x))

    rng = np.random.default_rng(1)
    x = T.from_numpy(rng.standard_normal((2, 2, 4, 7, 7)).astype(np.float32))
    m = _seed(T, Net())
    groups = [["conv1", "bn1", "relu1"], ["conv2", "relu2"]]
    if qat:
        m.train()
        m.qconfig = Q.get_default_qat_qconfig("x86")
        p = Q.prepare_qat(Q.fuse_modules_qat(m, groups))
        p(x)
        p.eval()
    else:
        m.eval()
        m.qconfig = Q.get_default_qconfig("x86")
        p = Q.prepare(Q.fuse_modules(m, groups))
        with T.no_grad():
            p(x)
    c = Q.convert(p)
    with T.no_grad():
        y = c(x)
    return [type(mod).__name__ for mod in c.modules()], y.numpy(), c.conv3.scale


def test_eager_static_and_qat_3d_cnn():
    for qat in (False, True):
        results = [_cnn3d(T, qat) for T in _libs()]
        types, y, scale = results[0]
        assert types == [
            "Net",
            "Quantize",
            "ConvReLU3d",
            "Identity",
            "Identity",
            "ConvReLU3d",
            "Identity",
            "Conv3d",
            "DeQuantize",
        ]
        assert y.shape == (2, 3, 3, 3, 3)
        for t_types, t_y, t_scale in results[1:]:
            assert t_types == types
            np.testing.assert_allclose(y, t_y, atol=1.01 * max(scale, t_scale), rtol=0)


def _fx3d(T, qat):
    Q = importlib.import_module(T.__name__ + ".ao.quantization")
    FX = importlib.import_module(T.__name__ + ".ao.quantization.quantize_fx")
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv3d(2, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm3d(4)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv3d(4, 3, 1)

        def forward(self, x):
            return T.flatten(self.conv2(self.relu1(self.bn1(self.conv1(x)))), 1)

    x = T.from_numpy(np.random.default_rng(1).standard_normal((2, 2, 4, 5, 5)).astype(np.float32))
    m = _seed(T, Net()).train(qat)
    if qat:
        p = FX.prepare_qat_fx(m, Q.get_default_qat_qconfig_mapping("x86"), (x,))
    else:
        p = FX.prepare_fx(m, Q.get_default_qconfig_mapping("x86"), (x,))
    prepared = [type(mod).__name__ for mod in p.modules()]
    p(x)
    c = FX.convert_fx(p.eval())
    code = re.sub(r"\b(ember|torch)\.", "", c.code)
    with T.no_grad():
        y = c(x)
    return prepared, [type(mod).__name__ for mod in c.modules()], code, y.numpy()


def test_fx_3d_conv_bn_relu():
    for qat in (False, True):
        results = [_fx3d(T, qat) for T in _libs()]
        prepared, converted, code, y = results[0]
        assert converted == ["GraphModule", "ConvReLU3d", "Conv3d"]
        assert ("ConvBnReLU3d" if qat else "ConvReLU3d") in prepared
        assert "flatten = flatten(conv2, 1)" in code
        for other in results[1:]:
            assert other[:3] == (prepared, converted, code)
            np.testing.assert_allclose(y, other[3], atol=0.1, rtol=0)


def test_lowered_add_prints_as_the_ops_namespace_call():
    _, _, _, _, (prepared, _, _) = _run(_libs()[0], "branches")
    # convert_fx rewrote the prepared model's graph (torch's in-place conversion)
    targets = [n.target for n in prepared.graph.nodes if n.op == "call_function"]
    add = next(t for t in targets if getattr(t, "__name__", "") == "add")
    assert add is importlib.import_module("ember").ops.quantized.add
    assert add.name() == "quantized::add"


def test_fixed_range_ops_run_on_quantized_tensors():
    # sigmoid and tanh have fixed output qparams (torch's FixedQParamsObserver): a quantized
    # input runs through the quantized op; reading x.shape needs no dequantize
    code, names, buffers = _agree("sigmoid")
    assert "sigmoid = sigmoid(fc)" in code
    assert "getattr_1 = pool.shape" in code
    assert "tanh = reshape.tanh()" in code
    assert "abs_1 = dequantize_6.abs()" in code
    code, _, _ = _agree("sigmoid", reference=True)
    assert "sigmoid = sigmoid(dequantize_4)" in code
    assert "getattr_1 = dequantize_2.shape" in code


def _conv3d_exact(cin, xs, ws, shift):
    """A quantized Conv3d requantizing by a power of two (so / (sa * sw) = shift) and its numpy
    reference from the int64 sums: the sums must be exact whichever float they ran in."""
    e = _libs()[0]
    nnq = importlib.import_module("ember.ao.nn.quantized")
    mod = nnq.Conv3d(cin, 2, 3, bias=False)
    w = e.from_numpy(ws.astype(np.int8))
    mod.set_weight_bias(e._make_per_tensor_quantized_tensor(w, 2.0**-7, 0), None)
    mod.scale, mod.zero_point = 2.0**-7 * 2.0**-6 * shift, 128
    x = e._make_per_tensor_quantized_tensor(e.from_numpy(xs.astype(np.uint8)), 2.0**-6, 10)
    xi, wi = xs.astype(np.int64) - 10, ws.astype(np.int64)
    acc = np.einsum("ncdhw,ocdhw->no", xi, wi)  # one output voxel (3^3 input, 3^3 kernel)
    want = np.clip(np.rint(acc.astype(np.float32) * np.float32(1.0 / shift)) + 128, 0, 255)
    bound = np.abs(xi).max() * np.abs(wi).sum((1, 2, 3, 4)).max()  # _ops.conv3d's choice
    return mod(x).int_repr().numpy().reshape(want.shape), want, bound


def test_quantized_conv3d_sums_exact_in_float32_and_float64():
    rng = np.random.default_rng(3)
    # small integers, requantized by 1 (each sum is the output): the float32 convolution
    small = _conv3d_exact(
        8, rng.integers(7, 14, (4, 8, 3, 3, 3)), rng.integers(-3, 4, (2, 8, 3, 3, 3)), 1.0
    )
    # 64 channels at full range: the bound passes 2^24, the float64 convolution
    big = _conv3d_exact(
        64,
        rng.integers(0, 256, (1, 64, 3, 3, 3)),
        rng.integers(-127, 128, (2, 64, 3, 3, 3)),
        2.0**12,
    )
    for got, want, _ in (small, big):
        np.testing.assert_array_equal(got, want)
    assert 0 < small[1].min() and small[1].max() < 255  # no sum clamped
    assert small[2] < 2**24 < big[2]
