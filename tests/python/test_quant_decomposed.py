"""The quantized_decomposed operators (torch.ops.quantized_decomposed; ember defines them on the
namespace's first use, torch on importing ao.quantization.quantize_fx) and the FX flow's
decomposed reference conversion (quantize_fx._convert_to_reference_decomposed_fx), whose q/dq
graph ember.export captures as torch.export does; compared with torch 2.13 where installed."""

import importlib
import importlib.util

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore")


def _torch():
    torch = pytest.importorskip("torch")
    importlib.import_module("torch.ao.quantization.quantize_fx")  # registers the operators
    return torch


def _fake_quant_and_grad(t, w, s, z):
    w = w.clone().requires_grad_()
    y = t.ops.quantized_decomposed.fake_quant_per_channel(w * 3, s, z, 0, -20, 20)
    (y * t.arange(12.0).reshape(3, 4)).sum().backward()
    return y.detach(), w.grad


def _op_cases(t):
    """Outcomes of the operators on fixed inputs: arrays with their dtype, or the exception."""
    qd = t.ops.quantized_decomposed
    x = t.tensor([-1.0, 0.05, 0.15, 0.25, 2.0, 100.0])
    w = t.arange(12, dtype=t.float32).reshape(3, 4) / 7 - 0.8
    s, z = t.tensor([0.1, 0.2, 0.05]), t.tensor([0, 1, -2])
    q = qd.quantize_per_tensor(x, 0.1, 3, -128, 127, t.int8)
    qc = qd.quantize_per_channel(w.t(), s, z, 1, -128, 127, t.int8)
    rows = t.tensor([[-1.0, 0.3, 2.0], [0.5, 0.25, 0.125]])
    qt_ = t.tensor([[-100, 3, 127], [5, 0, -7]], dtype=t.int8)
    gs, gz = t.arange(1, 7, dtype=t.float32) / 10, t.tensor([0, 1, -1, 2, 0, 0])
    qg = qd.quantize_per_channel_group(w, gs, gz, -8, 7, t.int8, 2)
    calls = [
        lambda: q,
        lambda: qd.quantize_per_tensor(x.bfloat16(), 0.1, 3, 0, 255, t.uint8),
        lambda: qd.dequantize_per_tensor(q, 0.1, 3, -128, 127, t.int8),
        lambda: qd.quantize_per_tensor.tensor(x, t.tensor(0.1), t.tensor(3), -128, 127, t.int8),
        lambda: qd.quantize_per_tensor.tensor2(
            x, t.tensor([0.1]), t.tensor(3), t.tensor(-10), t.tensor(10), t.int16
        ),
        lambda: qd.dequantize_per_tensor.tensor2(
            q, t.tensor([0.1]), t.tensor(3), t.tensor(-128), t.tensor(127), t.int8
        ),
        lambda: qd.dequantize_per_tensor.tensor(
            q, t.tensor(0.1), t.tensor(3), -128, 127, t.int8, out_dtype=t.float16
        ),
        lambda: qd.choose_qparams.tensor(x, 0, 255, 1e-5, t.uint8),
        lambda: qd.choose_qparams_symmetric.tensor(x, -128, 127, 1e-5, t.int8),
        lambda: qd.choose_qparams_symmetric.tensor(x, 0, 255, 1e-5, t.uint8),
        lambda: qc,
        lambda: qd.dequantize_per_channel(qc, s, z, 1, -128, 127, t.int8),
        lambda: qd.dequantize_per_channel(qc, s, None, 1, -128, 127, t.int8),
        lambda: qd.quantize_per_tensor(x.double(), 0.1, 3, -128, 127, t.int8),
        lambda: qd.quantize_per_tensor(x, 0.1, 3, -129, 127, t.int8),
        lambda: qd.quantize_per_tensor(x, 0.1, 3, 0, 256, t.uint8),
        lambda: qd.quantize_per_tensor(x, 0.1, 3, 0, 256, t.float32),
        lambda: qd.dequantize_per_tensor(q, 0.1, 3, -128, 127, t.uint8),
        lambda: qd.dequantize_per_tensor(q.float(), 0.1, 3, -128, 127, t.float32),
        lambda: qd.quantize_per_tensor.tensor(x, t.tensor([0.1, 0.2]), t.tensor(3), 0, 9, t.int8),
        lambda: qd.quantize_per_tensor.tensor(x, t.tensor(0.1), t.tensor([3, 4]), 0, 9, t.int8),
        lambda: qd.quantize_per_channel(w, s, z, 2, -128, 127, t.int8),
        lambda: qd.dequantize_per_channel(qc, s, z, 1, -128, 127, t.uint8),
        lambda: qd.choose_qparams.tensor(x, 1, 255, 1e-5, t.uint8),
        lambda: qd.choose_qparams.tensor(x.int(), 0, 255, 1e-5, t.uint8),
        lambda: qd.choose_qparams_per_token(rows, t.int8),
        lambda: qd.choose_qparams_per_token(rows, t.uint8),
        lambda: qd.choose_qparams_per_token_asymmetric(rows, t.int8),
        lambda: qd.quantize_per_token(
            rows, *qd.choose_qparams_per_token(rows, t.int8), -128, 127, t.int8
        ),
        lambda: qd.quantize_per_token(rows, s[:2], z, -128, 127, t.int8),
        lambda: qd.dequantize_per_token(
            qt_, s[:2, None], z[:2, None], -128, 127, t.int8, t.float32
        ),
        lambda: qd.quantize_per_channel_group(w, gs, gz, -8, 7, t.int8, 2),
        lambda: qd.dequantize_per_channel_group(qg, gs, gz, -8, 7, t.int8, 2, t.float32),
        lambda: qd.dequantize_per_channel_group(qg, gs, None, -8, 7, t.int8, 2, t.float32),
        lambda: qd.quantize_per_channel_group(w, gs, gz, -8, 7, t.int8, 1),
        lambda: qd.quantize_per_channel_group(w, gs, gz, -8, 7, t.int8, 3),
        lambda: _fake_quant_and_grad(t, w, s, z),
        lambda: qd.convert_element_type.no_fuse(x, t.bfloat16),
    ]
    out = []
    for call in calls:
        try:
            res = call()
        except Exception as e:  # noqa: BLE001 - the outcome compared is the exception
            out.append((type(e).__name__, str(e)))
            continue
        res = res if isinstance(res, tuple) else (res,)
        out.append([(str(r.dtype), r.float().numpy()) for r in res])
    return out


def test_decomposed_operators_match_torch():
    torch = _torch()
    mine, theirs = _op_cases(ember), _op_cases(torch)
    for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if isinstance(b, tuple):
            assert a == b, i
            continue
        assert [d for d, _ in a] == [d for d, _ in b], i
        for (_, va), (_, vb) in zip(a, b, strict=True):
            np.testing.assert_array_equal(va, vb, err_msg=str(i))


def test_decomposed_round_trip_within_half_a_step():
    qd = ember.ops.quantized_decomposed
    x = ember.linspace(-2.0, 3.0, 41)
    scale, zp = 5.0 / 255, 102
    q = qd.quantize_per_tensor(x, scale, zp, 0, 255, ember.uint8)
    assert q.dtype == ember.uint8
    back = qd.dequantize_per_tensor(q, scale, zp, 0, 255, ember.uint8)
    assert back.dtype == ember.float32
    assert float((back - x).abs().max()) <= scale / 2 + 1e-6
    w = ember.linspace(-1.0, 1.0, 24).reshape(4, 6)
    scales = w.abs().amax(1) / 127
    zps = ember.zeros(4, dtype=ember.int64)
    qc = qd.quantize_per_channel(w, scales, zps, 0, -127, 127, ember.int8)
    wd = qd.dequantize_per_channel(qc, scales, zps, 0, -127, 127, ember.int8).numpy()
    assert np.all(np.abs(wd - w.numpy()) <= scales.numpy()[:, None] / 2 + 1e-7)
    s, z = qd.choose_qparams.tensor(x, 0, 255, 1e-5, ember.uint8)
    assert s.dtype == ember.float64 and z.dtype == ember.int64
    np.testing.assert_allclose(s.numpy(), [5.0 / 255], rtol=1e-6)
    assert z.tolist() == [102]


_Q_PER_TENSOR = "quantized_decomposed.quantize_per_tensor.default"


def _flow(t, state):
    """A conv(+relu)+linear model through prepare_fx, calibration and the decomposed reference
    conversion, then torch.export: (activation qparams, weight qparams, exported node targets,
    output, the output's scale, the exported program, the input)."""
    nn = t.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3)
            self.relu = nn.ReLU()
            self.fc = nn.Linear(12, 4)

        def forward(self, x):
            return self.fc(t.flatten(self.relu(self.conv(x)), 1))

    m = M().eval()
    m.load_state_dict({k: t.tensor(v) for k, v in state.items()})
    qfx = t.ao.quantization.quantize_fx
    x = t.tensor(np.linspace(-2.5, 2.5, 64, dtype=np.float32).reshape(2, 2, 4, 4))
    mapping = t.ao.quantization.get_default_qconfig_mapping("x86")
    prepared = qfx.prepare_fx(m, mapping, (x,))
    prepared(x)
    converted = qfx._convert_to_reference_decomposed_fx(prepared)
    out = converted(x)
    ep = t.export.export(converted, (x,))
    acts = [
        n.args[1:]
        for n in ep.graph.nodes
        if n.op == "call_function" and str(n.target) == _Q_PER_TENSOR
    ]
    weights = []
    for path in ("conv.0", "fc"):
        ref = converted.get_submodule(path)
        weights.append((ref.weight_scale.numpy(), ref.weight_zero_point.tolist()))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    return acts, weights, targets, out.numpy(), acts[-1][0], ep, x


def _flow_state():
    rng = np.random.default_rng(0)
    shapes = {"conv.weight": (3, 2, 3, 3), "conv.bias": (3,), "fc.weight": (4, 12), "fc.bias": (4,)}
    return {k: rng.uniform(-0.5, 0.5, v).astype(np.float32) for k, v in shapes.items()}


@pytest.fixture(scope="module")
def ember_flow():
    return _flow(ember, _flow_state())


def test_decomposed_reference_flow_matches_torch(ember_flow):
    torch = _torch()
    acts, weights, targets, out, out_scale, _, _ = ember_flow
    t_acts, t_weights, t_targets, t_out, *_ = _flow(torch, _flow_state())
    assert targets == t_targets
    assert targets.count("quantized_decomposed.quantize_per_channel.default") == 2
    assert len(acts) == len(t_acts) == 4
    for (s, z, *rest), (ts, tz, *t_rest) in zip(acts, t_acts, strict=True):
        assert s == pytest.approx(ts, rel=1e-6)
        assert (z, [str(r) for r in rest]) == (tz, [str(r) for r in t_rest])
    for (s, z), (ts, tz) in zip(weights, t_weights, strict=True):
        np.testing.assert_allclose(s, ts, rtol=1e-6)
        assert z == tz
    # int8 numerics: the outputs agree to within one step of the output's quantization
    assert np.abs(out - t_out).max() <= out_scale * 1.001


def test_decomposed_program_saves_loads_and_runs(ember_flow, tmp_path):
    # torch.export.save keeps the q/dq calls by name; ember's file holds runtime ops only, so
    # run_decompositions writes each q/dq as the arithmetic of its definition (export/_qdq.py)
    *_, ep, x = ember_flow
    want = ep.module()(x)
    lowered = [str(n.target) for n in ep.run_decompositions().graph.nodes if n.op != "placeholder"]
    assert not [t for t in lowered if "quantized_decomposed" in t]
    path = tmp_path / "qdq.ember"
    ember.export.save(ep, path)
    loaded = ember.export.load(path)
    assert ember.equal(loaded.module()(x), want)  # bit for bit: the same ops
    assert ember.equal(ember._C._export_run(str(path), [x])[0], want)  # the C++ runtime
    # the q/dq arithmetic itself: values on the rounding ties and past the clamp
    qd = ember.ops.quantized_decomposed
    v = ember.tensor([-300.0, -0.25, -0.15, 0.05, 0.15, 0.25, 1.0, 300.0]).reshape(2, 4)
    s, z = ember.tensor([0.1, 0.05]), ember.tensor([3, -2])

    def qdq(v, s, z):
        q = qd.quantize_per_tensor(v, 0.1, 3, -128, 127, ember.int8)
        c = qd.quantize_per_channel(v, s, z, 0, -128, 127, ember.int8)
        return (
            qd.dequantize_per_tensor(q, 0.1, 3, -128, 127, ember.int8),
            qd.dequantize_per_channel(c, s, z, 0, -128, 127, ember.int8),
            q,
        )

    small = ember.export.export(_Fn(qdq), (v, s, z))
    ember.export.save(small, tmp_path / "small.ember")
    got = ember._C._export_run(str(tmp_path / "small.ember"), [v, s, z])
    for a, b in zip(got, qdq(v, s, z), strict=True):
        assert a.dtype == b.dtype and ember.equal(a, b)


def _dynamic_qdq(t, x, w):
    """Dynamic quantization as torch's decomposed graphs write it: choose_qparams.tensor on the
    activation, the .tensor q/dq overloads with its (1,)-shaped scale and zero point, and a
    per-tensor weight whose qparams are tensors too (.tensor2 bounds included)."""
    qd = t.ops.quantized_decomposed
    s, z = qd.choose_qparams.tensor(x, 0, 255, 2.0**-12, t.uint8)
    q = qd.quantize_per_tensor.tensor(x, s, z, 0, 255, t.uint8)
    xd = qd.dequantize_per_tensor.tensor(q, s, z, 0, 255, t.uint8)
    ss, sz = qd.choose_qparams_symmetric.tensor(w, -128, 127, 2.0**-12, t.int8)
    lo, hi = t.tensor(-128), t.tensor(127)
    wq = qd.quantize_per_tensor.tensor2(w, ss, sz, lo, hi, t.int8)
    wd = qd.dequantize_per_tensor.tensor2(wq, ss, sz, lo, hi, t.int8, out_dtype=t.float32)
    return t.nn.functional.linear(xd, wd), q, s, z, sz


class _Dynamic(ember.nn.Module):
    def forward(self, x, w):
        return _dynamic_qdq(ember, x, w)


def _dynamic_inputs():
    rng = np.random.default_rng(5)
    x = np.concatenate([[-1.0, 2.75, 0.5], rng.normal(0, 1, 21)]).reshape(3, 8)
    return x.astype(np.float32), rng.normal(0, 0.3, (4, 8)).astype(np.float32)


def test_tensor_overloads_match_torch():
    torch = _torch()
    x, w = _dynamic_inputs()
    ours = _dynamic_qdq(ember, ember.tensor(x), ember.tensor(w))
    theirs = _dynamic_qdq(torch, torch.tensor(x), torch.tensor(w))
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        if i == 0:  # the float linear: summation order is the GEMM's
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
        else:  # integers and qparams: exact
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_tensor_overloads_save_load_and_run(tmp_path):
    x, w = (ember.tensor(v) for v in _dynamic_inputs())
    ep = ember.export.export(_Dynamic(), (x, w))
    want = _dynamic_qdq(ember, x, w)
    lowered = [str(n.target) for n in ep.run_decompositions().graph.nodes]
    assert not [t for t in lowered if "quantized_decomposed" in t]
    path = tmp_path / "dyn.ember"
    ember.export.save(ep, path)
    for got in (ember.export.load(path).module()(x, w), ember._C._export_run(str(path), [x, w])):
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape and ember.equal(a, b)


def test_float_clamp_with_number_bounds_as_torch():
    """clamp of float32/float64 with Python-number bounds runs in one pass (the q/dq graphs'
    quantize clamps this way); its values, NaN included, are min(max(x, lo), hi)'s."""
    torch = _torch()
    x = np.array([-3.0, -1.0, -0.0, 0.0, 0.4, 1.0, 2.5, np.nan, np.inf, -np.inf], np.float32)
    bounds = [(-1.0, 1.0), (0, None), (None, 0.5), (2.0, -2.0), (1, 1), (-1e30, 1e30), (0.1, 0.3)]
    for dtype in ("float32", "float64"):
        ours, theirs = (
            ember.tensor(x).to(getattr(ember, dtype)),
            torch.tensor(x).to(getattr(torch, dtype)),
        )
        for lo, hi in bounds:
            a, b = ours.clamp(lo, hi), theirs.clamp(lo, hi)
            assert str(a.dtype) == str(b.dtype)
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f"{lo}, {hi}")
            assert np.array_equal(np.signbit(a.numpy()), np.signbit(b.numpy()))
    strided = ember.tensor(x.reshape(2, 5)).t()
    np.testing.assert_array_equal(
        strided.clamp(-1, 1).numpy(), torch.tensor(x.reshape(2, 5)).t().clamp(-1, 1).numpy()
    )


def test_integer_clamp_with_number_bounds_as_torch():
    """clamp of an integer tensor by integer Python numbers runs in one pass (the quantized
    clamp/hardtanh/relu6 clamp the integers this way): values, dtype and layout as torch's,
    for one-sided, crossed (lo > hi) and full-range bounds, strided and in place; a float
    bound still promotes, and a bound the dtype cannot hold still raises."""
    torch = _torch()
    rng = np.random.default_rng(4)
    for dtype in ("int8", "uint8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -200), min(info.max, 200), (3, 37)).astype(dtype)
        for lo, hi in ((3, 90), (None, 7), (3, None), (9, 2), (0, 0), (info.min, info.max)):
            for view in (lambda t: t, lambda t: t[:, ::2], lambda t: t.t()):
                a, b = view(ember.tensor(x)).clamp(lo, hi), view(torch.tensor(x)).clamp(lo, hi)
                assert str(a.dtype) == str(b.dtype) and a.stride() == b.stride()
                np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f"{lo}, {hi}")
            a, b = ember.tensor(x), torch.tensor(x)
            a.clamp_(lo, hi), b.clamp_(lo, hi)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = np.arange(-4, 4, dtype=np.int8)
    promoted = ember.tensor(x).clamp(-2.5, 2)
    assert promoted.dtype == ember.float32
    np.testing.assert_array_equal(promoted.numpy(), torch.tensor(x).clamp(-2.5, 2).numpy())
    with pytest.raises(RuntimeError, match="cannot be converted to type int8_t without overflow"):
        ember.tensor(x).clamp(-300, 2)


def _dynamic_flow(t):
    """Linear -> relu -> Linear -> F.linear with torch's default dynamic qconfig through
    prepare_fx and the three conversions: {form: (code, output)} and the decomposed model."""
    import copy

    nn = t.nn
    rng = np.random.default_rng(3)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l, self.l2 = nn.Linear(8, 8), nn.Linear(8, 4)
            self.w = nn.Parameter(t.tensor(rng.normal(0, 0.5, (4, 4)).astype(np.float32)))

        def forward(self, x):
            return nn.functional.linear(self.l2(t.relu(self.l(x))), self.w)

    m = M().eval()
    for p in (m.l.weight, m.l.bias, m.l2.weight, m.l2.bias):
        p.data = t.tensor(rng.normal(0, 0.5, tuple(p.shape)).astype(np.float32))
    x = t.tensor(rng.normal(0, 1, (3, 8)).astype(np.float32))
    qfx = t.ao.quantization.quantize_fx
    mapping = t.ao.quantization.QConfigMapping().set_global(
        t.ao.quantization.default_dynamic_qconfig
    )
    prepared = qfx.prepare_fx(m, mapping, (x,))
    prepared(x)
    forms = {"prepared": prepared}
    for name, fn in (
        ("reference", qfx.convert_to_reference_fx),
        ("decomposed", qfx._convert_to_reference_decomposed_fx),
        ("quantized", qfx.convert_fx),
    ):
        forms[name] = fn(copy.deepcopy(prepared))
    # F.linear prints under the name torch's function has in its module (torch._C._nn)
    code = {
        k: v.code.replace(t.__name__, "torch").replace("torch.nn.functional.", "torch._C._nn.")
        for k, v in forms.items()
    }
    return {k: (code[k], forms[k](x).detach().numpy()) for k in forms}, forms["decomposed"], x


def test_dynamic_fx_flow_as_torch(tmp_path):
    """torch's dynamic FX flow: the input observers of prepare_fx, quantize_per_tensor_dynamic
    in the reference form, choose_qparams.tensor and the .tensor q/dq overloads in the
    decomposed one, quantized::linear_dynamic for F.linear; the decomposed program exports,
    saves and runs."""
    ours, decomposed, x = _dynamic_flow(ember)
    ep = ember.export.export(decomposed, (x,))
    path = tmp_path / "dynamic.ember"
    ember.export.save(ep, path)
    want = decomposed(x)
    assert ember.equal(ember.export.load(path).module()(x), want)
    assert ember.equal(ember._C._export_run(str(path), [x])[0], want)
    torch = importlib.util.find_spec("torch") and _torch()
    if not torch:
        return
    theirs, _, _ = _dynamic_flow(torch)
    for form, (code, out) in ours.items():
        assert code == theirs[form][0], form
        np.testing.assert_allclose(out, theirs[form][1], rtol=1e-5, atol=1e-5, err_msg=form)


def _reference_rnn_cell(t, weights=None):
    """convert_to_reference_fx of an RNNCell under a dynamic qconfig, and the cell."""
    model = t.nn.Sequential(t.nn.RNNCell(4, 3)).eval()
    cell = model[0]
    if weights is not None:
        with t.no_grad():
            for name, w in weights.items():
                getattr(cell, name).copy_(t.tensor(w))
    qfx = t.ao.quantization.quantize_fx
    mapping = t.ao.quantization.QConfigMapping().set_global(
        t.ao.quantization.default_dynamic_qconfig
    )
    prepared = qfx.prepare_fx(model, mapping, (t.randn(2, 4),))
    return prepared, qfx.convert_to_reference_fx(prepared), cell


def _symmetric_qdq(w):
    """torch's per-tensor symmetric qint8 weight: scale max|w| / 127.5 in float32, and
    quantize_per_tensor multiplies by the float32 inverse of the scale (fbgemm's Quantize), so
    a weight whose w / scale rounds to a tie in float32 division may not be at one."""
    scale = np.float32(np.abs(w).max() / np.float32(127.5))
    return np.clip(np.round(w * (np.float32(1) / scale)), -128, 127) * scale


def test_dynamic_reference_recurrent_module():
    """A recurrent module under a dynamic qconfig: its input observed and quantized per call,
    each weight quantize-dequantized with an observer of its own (torch's reference RNNs:
    per-tensor symmetric qint8, scale max|w| / 127.5), its state float."""
    ember.manual_seed(0)
    prepared, ref, cell = _reference_rnn_cell(ember)
    assert "_0 = self.activation_post_process_0(input_1)" in prepared.code
    code = ref.code.replace("ember", "torch")
    assert "quantize_per_tensor_dynamic(input_1, torch.quint8, True)" in code
    for name in ("weight_ih", "weight_hh"):
        w = getattr(cell, name).detach().numpy()
        np.testing.assert_allclose(
            getattr(ref.get_submodule("0"), name).detach().numpy(), _symmetric_qdq(w), rtol=1e-6
        )
    np.testing.assert_array_equal(
        ref.get_submodule("0").bias_ih.detach().numpy(), cell.bias_ih.detach().numpy()
    )


def test_dynamic_reference_weight_at_a_float32_tie_as_torch():
    """The largest-magnitude weight negative: -max / (max / 127.5) is -127.5 in float32 division
    but -127.49999 through the inverse scale, so torch quantizes it to -127, not -128."""
    weights = {
        "weight_ih": np.linspace(-0.3, 0.2, 12, dtype=np.float32).reshape(3, 4),
        "weight_hh": np.linspace(-0.45, 0.3, 9, dtype=np.float32).reshape(3, 3),
    }
    w = weights["weight_ih"]
    assert w.min() / np.float32(np.abs(w).max() / np.float32(127.5)) == np.float32(-127.5)
    _, ref, _ = _reference_rnn_cell(ember, weights)
    mine = {n: getattr(ref.get_submodule("0"), n).detach().numpy() for n in weights}
    scale = np.float32(0.3) / np.float32(127.5)
    assert mine["weight_ih"][0, 0] == np.float32(-127) * scale
    for n, w in weights.items():
        np.testing.assert_allclose(mine[n], _symmetric_qdq(w), rtol=1e-6)
    torch = _torch()
    _, tref, _ = _reference_rnn_cell(torch, weights)
    cell = tref.get_submodule("0")
    for n, got in (("weight_ih", cell.get_weight_ih()), ("weight_hh", cell.get_weight_hh())):
        np.testing.assert_array_equal(mine[n], got.detach().numpy())


class _Fn(ember.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _fused_reference_weight(t, weight, bias):
    """convert_to_reference_fx of a Conv+ReLU (fused to ConvReLU2d by prepare_fx): the weight
    its conv computes with, and the float weight."""
    nn = t.nn
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU()).eval()
    m.load_state_dict({"0.weight": t.tensor(weight), "0.bias": t.tensor(bias)})
    x = t.tensor(np.linspace(-2.5, 2.5, 64, dtype=np.float32).reshape(2, 2, 4, 4))
    qfx = t.ao.quantization.quantize_fx
    prepared = qfx.prepare_fx(m, t.ao.quantization.get_default_qconfig_mapping("x86"), (x,))
    prepared(x)
    conv = qfx.convert_to_reference_fx(prepared).get_submodule("0.0")
    used = conv.get_weight() if hasattr(conv, "get_weight") else conv.weight
    return used.detach().numpy()


def test_reference_fused_conv_weight_is_quantized_as_torch():
    rng = np.random.default_rng(1)
    weight = rng.uniform(-0.5, 0.5, (3, 2, 3, 3)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    mine = _fused_reference_weight(ember, weight, bias)
    # per channel int8: every weight moved onto its channel's grid, so it is not the float one
    assert not np.array_equal(mine, weight)
    assert np.abs(mine - weight).max() <= np.abs(weight).max() / 127
    torch = _torch()
    np.testing.assert_array_equal(mine, _fused_reference_weight(torch, weight, bias))


def test_float_to_int8_conversion_as_torch():
    # the conversion behind quantize's .to(int8): through int32 toward zero, keeping the low
    # byte (NaN and values past int32 give 0), on the vector path (contiguous, 32 at a time)
    # and its scalar tail alike; a strided source takes the generic loop
    rng = np.random.default_rng(5)
    special = [300.0, -300.0, 255.5, -128.9, 127.9, 2.7, -2.7, 1e10, -1e10, np.nan, np.inf]
    values = np.concatenate([rng.uniform(-700, 700, 90), special]).astype(np.float32)
    wide = np.where(np.isfinite(values) & (np.abs(values) < 2**31), values, 0).astype(np.int64)
    wants = {}
    for name, np_dtype in (("int8", np.int8), ("uint8", np.uint8)):
        wants[name] = want = (wide & 0xFF).astype(np.uint8).view(np_dtype)
        x = ember.tensor(values)
        np.testing.assert_array_equal(x.to(getattr(ember, name)).numpy(), want)
        np.testing.assert_array_equal(x[::2].to(getattr(ember, name)).numpy(), want[::2])
    torch = pytest.importorskip("torch")
    for name, want in wants.items():
        np.testing.assert_array_equal(torch.tensor(values).to(getattr(torch, name)), want)
