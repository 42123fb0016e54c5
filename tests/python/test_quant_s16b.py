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

    return {"tutorial": Tutorial, "float_relu": FloatRelu, "view": View, "branches": Branches}


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
