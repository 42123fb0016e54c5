"""FX-mode quantization as torch 2.13 converts it (session 14): sums and products of quantized
tensors lowered to quantized add/mul (add_relu/mul_relu when a relu follows, observed after the
relu), a module called twice, a submodule whose qconfig is None, torch's names for the scale
and zero-point attributes, QAT and reference conversion, and quantized Linear models. Each case
checks what is written here under ember and, where torch is installed, torch's graph and values
(within one quantization step)."""

import importlib

import numpy as np
import pytest
from _docs_check import _libs

import ember


def _q(T):
    return (
        importlib.import_module(T.__name__ + ".ao.quantization"),
        importlib.import_module(T.__name__ + ".ao.quantization.quantize_fx"),
    )


def _seed(T, model, seed=0):
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for _, p in model.named_parameters():
            p.copy_(T.from_numpy((rng.standard_normal(tuple(p.shape)) * 0.3).astype(np.float32)))
        for name, b in model.named_buffers():
            if name.endswith("running_var"):
                b.copy_(T.from_numpy(rng.uniform(0.5, 1.5, tuple(b.shape)).astype(np.float32)))
    return model


def _x(T, *shape, seed=1):
    return T.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _graph(gm):
    return [
        (
            n.op,
            getattr(n.target, "__name__", str(n.target))
            if n.op == "call_function"
            else str(n.target),
        )
        for n in gm.graph.nodes
    ]


def _types(model):
    return [(n, type(m).__name__) for n, m in model.named_modules() if n]


def _docs_model(T):
    class Submodule(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = T.nn.Linear(5, 5)

        def forward(self, x):
            return self.linear(x)

    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = T.nn.Linear(5, 5)
            self.sub = Submodule()

        def forward(self, x):
            x = self.linear(x)
            return self.sub(x) + x

    return M()


def _run(build, calibrate=3, shape=(8, 5), qmap=None, reference=False):
    """(graph, module types, output, output scale) per library, ember first."""
    out = []
    for T in _libs():
        Q, FX = _q(T)
        model = _seed(T, build(T)).eval()
        mapping = qmap(Q) if qmap is not None else Q.get_default_qconfig_mapping("x86")
        prepared = FX.prepare_fx(model, mapping, (_x(T, 2, shape[1]),))
        with T.no_grad():
            for s in range(calibrate):
                prepared(_x(T, *shape, seed=10 + s))
        convert = FX.convert_to_reference_fx if reference else FX.convert_fx
        q = convert(prepared)
        y = q(_x(T, 4, shape[1], seed=99))
        out.append((_graph(q), _types(q), y.detach().numpy()))
    return out


def _agree(results, step):
    graph, types, y = results[0]
    for g, t, other in results[1:]:
        assert g == graph and t == types
        np.testing.assert_allclose(y, other, atol=step * 1.01, rtol=0)
    return graph, types, y


def test_fx_docs_model_lowers_the_sum_of_quantized_tensors():
    graph, types, y = _agree(_run(_docs_model), step=0.05)
    assert graph == [
        ("placeholder", "x"),
        ("get_attr", "linear_input_scale_0"),
        ("get_attr", "linear_input_zero_point_0"),
        ("call_function", "quantize_per_tensor"),
        ("call_module", "linear"),
        ("call_module", "sub.linear"),
        ("get_attr", "_scale_0"),
        ("get_attr", "_zero_point_0"),
        ("call_function", "add"),
        ("call_method", "dequantize"),
        ("output", "output"),
    ]
    assert ("sub.linear", "Linear") in types and (
        "linear._packed_params",
        "LinearPackedParams",
    ) in types
    assert y.shape == (4, 5)


def _add_relu_model(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = T.nn.Linear(4, 4)
            self.b = T.nn.Linear(4, 4)

        def forward(self, x):
            y = T.relu(self.a(x) + self.b(x))
            return y * self.a(x)  # `a` called a second time

    return M()


def test_fx_add_relu_fused_and_module_called_twice():
    graph, _, y = _agree(_run(_add_relu_model, shape=(8, 4)), step=0.05)
    targets = [t for op, t in graph if op in ("call_function", "call_module")]
    assert targets == ["quantize_per_tensor", "a", "b", "add_relu", "a", "mul"]
    assert (y >= -1.0).all()


def test_fx_add_relu_is_observed_after_the_relu():
    Q, FX = _q(ember)
    model = _seed(ember, _add_relu_model(ember)).eval()
    prepared = FX.prepare_fx(model, Q.get_default_qconfig_mapping("x86"), (_x(ember, 2, 4),))
    observed = [
        n.args[0].name
        for n in prepared.graph.nodes
        if n.op == "call_module" and n.target.startswith("activation_post_process")
    ]
    assert "add" not in observed and "relu" in observed


def test_fx_submodule_with_qconfig_none_stays_float():
    results = _run(
        _docs_model,
        qmap=lambda Q: Q.get_default_qconfig_mapping("x86").set_module_name("sub", None),
    )
    graph, types, _ = _agree(results, step=0.05)
    assert ("sub.linear", "Linear") in types and (
        "sub.linear._packed_params",
        "LinearPackedParams",
    ) not in types
    names = [t for op, t in graph if op == "get_attr"]
    assert names == [
        "linear_input_scale_0",
        "linear_input_zero_point_0",
        "_input_scale_0",
        "_input_zero_point_0",
        "_scale_0",
        "_zero_point_0",
    ]


def _sigmoid_between(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.sig, self.fc2 = T.nn.Linear(5, 6), T.nn.Sigmoid(), T.nn.Linear(6, 3)

        def forward(self, x):
            return T.sigmoid(self.fc2(self.sig(self.fc1(x)))).mean(1)

    return M()


def test_fx_fixed_qparams_op_with_qconfig_none_runs_on_the_quantized_tensor():
    """A sigmoid whose qconfig is None between quantized neighbours: its input and output are
    still observed (for them), and torch's lowering turns dequantize -> sigmoid -> quantize into
    the sigmoid of the quantized tensor, so it is not dequantized (module and function alike)."""

    def qmap(Q):
        T = importlib.import_module(Q.__name__.split(".")[0])
        mapping = Q.get_default_qconfig_mapping("x86").set_object_type(T.nn.Sigmoid, None)
        return mapping.set_object_type(T.sigmoid, None)

    results = _run(_sigmoid_between, qmap=qmap)
    graph, _, _ = _agree(results, step=0.05)
    calls = [t for op, t in graph if op != "get_attr"]
    assert calls == ["x", "quantize_per_tensor", "fc1", "sig", "fc2", "sigmoid", "mean"] + [
        "dequantize",
        "output",
    ]


def _scalar_ops(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(5, 6)

        def forward(self, x):
            x = self.fc1(x)
            x = x + 1.0
            x = x * 2.0
            x = T.add(x, 0.5)
            x = 3.0 * T.mul(x, -1.5)
            x = T.relu(x + 12) + 0.25
            return T.nn.functional.relu(T.mul(x, 0.5)) * 2

    return M()


def test_fx_add_mul_of_a_quantized_tensor_and_a_number_lowered_to_the_scalar_overload():
    """x + 1.0, x * 2.0, torch.add/mul(x, number) and 3.0 * x on a quantized path become
    quantized.add/mul(x, number) (either order kept), their output qparams derived from x's, as
    torch's convert_fx lowers them: no dequantize/quantize around them (each shares its
    input's observer in prepare_fx); followed by torch.relu / F.relu, add_relu / mul_relu."""
    results = _run(_scalar_ops)
    graph, _, y = _agree(results, step=0)  # same integers and derived qparams
    calls = [t for op, t in graph if op not in ("get_attr", "placeholder", "output")]
    assert calls == ["quantize_per_tensor", "fc1", "add", "mul", "add", "mul", "mul"] + [
        "add_relu",
        "add",
        "mul_relu",
        "mul",
        "dequantize",
    ]
    assert np.abs(y).max() > 0


def _lin_relu(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(5, 6)
            self.relu = T.nn.ReLU()
            self.fc2 = T.nn.Linear(6, 3)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    return M()


def test_fx_reference_conversion_names_attributes_after_modules():
    graph, types, _ = _agree(_run(_lin_relu, reference=True), step=0.05)
    assert [t for op, t in graph if op == "get_attr"] == [
        "fc1_input_scale_0",
        "fc1_input_zero_point_0",
        "fc1_scale_0",
        "fc1_zero_point_0",
        "fc2_scale_0",
        "fc2_zero_point_0",
    ]
    assert types[0] == ("fc1", "LinearReLU")


def _cnn(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = T.nn.Conv2d(1, 4, 3)
            self.bn = T.nn.BatchNorm2d(4)
            self.relu = T.nn.ReLU()
            self.fc = T.nn.Linear(64, 3)

        def forward(self, x):
            return self.fc(self.relu(self.bn(self.conv(x))).flatten(1))

    return M()


def test_fx_qat_cnn_against_torch():
    results = []
    for T in _libs():
        Q, FX = _q(T)
        model = _seed(T, _cnn(T)).train()
        prepared = FX.prepare_qat_fx(
            model, Q.get_default_qat_qconfig_mapping("x86"), (_x(T, 2, 1, 6, 6),)
        )
        opt = T.optim.SGD(prepared.parameters(), lr=0.01)
        for s in range(3):
            loss = prepared(_x(T, 8, 1, 6, 6, seed=20 + s)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        prepared.eval()
        q = FX.convert_fx(prepared)
        results.append((_graph(q), _types(q), q(_x(T, 4, 1, 6, 6, seed=98)).numpy()))
    graph, types, _ = _agree(results, step=0.05)
    assert types[0] == ("conv", "ConvReLU2d")
    assert ("get_attr", "_scale_0") in graph  # the flatten output, quantized for fc


def test_quantized_linear_module_against_torch():
    results = []
    for T in _libs():
        nnq = importlib.import_module(T.__name__ + ".ao.nn.quantized")
        lin = nnq.Linear(4, 2)
        w = T.quantize_per_tensor(_x(T, 2, 4, seed=5), 0.02, 0, T.qint8)
        lin.set_weight_bias(w, _x(T, 2, seed=6))
        lin.scale, lin.zero_point = 0.05, 64
        x = T.quantize_per_tensor(_x(T, 3, 4, seed=7), 0.03, 60, T.quint8)
        y = lin(x)
        results.append((y.int_repr().numpy(), y.q_scale(), y.q_zero_point(), repr(lin)))
    mine = results[0]
    for other in results[1:]:
        np.testing.assert_array_equal(mine[0], other[0])
        assert mine[1:] == other[1:]
    assert mine[3] == (
        "QuantizedLinear(in_features=4, out_features=2, scale=0.05, zero_point=64, "
        "qscheme=torch.per_tensor_affine)"
    )


def test_fx_converted_output_within_steps_of_float():
    Q, FX = _q(ember)
    model = _seed(ember, _docs_model(ember)).eval()
    prepared = FX.prepare_fx(model, Q.get_default_qconfig_mapping("x86"), (_x(ember, 2, 5),))
    with ember.no_grad():
        for s in range(3):
            prepared(_x(ember, 8, 5, seed=10 + s))
    q = FX.convert_fx(prepared)
    x = _x(ember, 4, 5, seed=10)
    with ember.no_grad():
        ref = model(x).numpy()
    out = q(x).numpy()
    scale = float(q._scale_0)
    np.testing.assert_allclose(out, ref, atol=4 * scale, rtol=0)


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
