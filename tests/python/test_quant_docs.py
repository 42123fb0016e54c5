"""The capabilities torch's quantization documentation and recipes show, run under ember (and,
where torch is installed, under torch with the same code, the results compared): quantized
tensors and their ops, observers and their qparams and reprs, qconfigs, eager static
post-training quantization with fusion, dynamic quantization of Linear and LSTM, QAT, FX graph
mode (prepare_fx / convert_fx, static and dynamic), ao.nn.quantized.functional and
FloatFunctional / QFunctional."""

import importlib
import io

import numpy as np
from _docs_check import _each


def _q(T):
    return importlib.import_module(f"{T.__name__}.ao.quantization")


def _s(text):
    """A repr with the library's name neutral."""
    return text.replace("ember", "torch")


def _qt(q):
    """A quantized tensor as comparable data: dtype, integers and parameters."""
    if "per_tensor" in str(q.qscheme()):
        params = (round(q.q_scale(), 8), q.q_zero_point())
    else:
        params = (
            q.q_per_channel_scales().numpy(),
            q.q_per_channel_zero_points().numpy(),
            q.q_per_channel_axis(),
        )
    return _s(str(q.dtype)), q.int_repr().numpy().astype(np.int64), params


def _fill(T, module):
    with T.no_grad():
        for p in module.parameters():
            p.copy_(T.linspace(-1, 1, p.numel()).reshape(p.shape))
    return module


def test_quantized_tensors_print_and_round_trip():
    def case(T):
        x = T.tensor([-1.0, 0.0, 0.5, 2.0])
        q = T.quantize_per_tensor(x, 0.1, 10, T.quint8)
        c = T.quantize_per_channel(
            T.tensor([[-1.0, 0.0, 1.0], [2.0, 3.0, -4.0]]),
            T.tensor([0.1, 0.05]),
            T.tensor([0, 2]),
            0,
            T.qint8,
        )
        buf = io.BytesIO()
        T.save(q, buf)
        buf.seek(0)
        return (
            _s(repr(q)),
            _s(repr(c)),
            _qt(q),
            _qt(c),
            _s(str(q.qscheme())),
            q.dequantize().numpy(),
            _qt(T.load(buf)),
            T.equal(q, q.clone()),
        )

    _each(case)


def test_quantized_tensor_ops():
    def case(T):
        F = T.nn.functional
        q = T.quantize_per_tensor(T.arange(-8.0, 8.0).reshape(1, 1, 4, 4), 0.5, 128, T.quint8)
        return [
            _qt(t)
            for t in (
                F.relu(q),
                F.max_pool2d(q, 2),
                F.avg_pool2d(q, 2),
                q.reshape(2, 8),
                q[0, 0, 1],
                q.transpose(2, 3).contiguous(),
            )
        ]

    _each(case)


def test_quantize_per_tensor_dynamic():
    def case(T):
        x = T.tensor([-1.0, 0.5, 3.0])
        return [
            _qt(T.quantize_per_tensor_dynamic(x, d, r))
            for d in (T.quint8, T.qint8)
            for r in (False, True)
        ]

    out = _each(case)
    assert out[0][2][1] == 64


def test_observers_qparams_and_reprs():
    def case(T):
        q = _q(T)
        out = []
        o = q.MinMaxObserver()
        o(T.tensor([-1.0, 0.5, 3.0]))
        o(T.tensor([4.0]))
        out.append((_s(repr(o)), [t.numpy() for t in o.calculate_qparams()]))
        o = q.MinMaxObserver(dtype=T.qint8, qscheme=T.per_tensor_symmetric)
        o(T.tensor([-1.0, 0.5, 3.0]))
        out.append((_s(repr(o)), [t.numpy() for t in o.calculate_qparams()]))
        o = q.MovingAverageMinMaxObserver(averaging_constant=0.5)
        o(T.tensor([-1.0, 3.0]))
        o(T.tensor([0.0, 1.0]))
        out.append((_s(repr(o)), [t.numpy() for t in o.calculate_qparams()]))
        o = q.PerChannelMinMaxObserver(ch_axis=0, dtype=T.qint8, qscheme=T.per_channel_symmetric)
        o(T.tensor([[-1.0, 2.0], [0.5, 0.25]]))
        out.append((_s(repr(o)), [t.numpy() for t in o.calculate_qparams()]))
        o = q.HistogramObserver(bins=64)
        o(T.linspace(-2, 3, 500))
        out.append([t.numpy() for t in o.calculate_qparams()])
        o = q.MinMaxObserver.with_args(dtype=T.qint8, quant_min=-64, quant_max=63)()
        o(T.tensor([-1.0, 2.0]))
        out.append((_s(repr(o)), [t.numpy() for t in o.calculate_qparams()]))
        out.append(_s(repr(q.PlaceholderObserver(dtype=T.float16))))
        return out

    _each(case)


def test_qconfigs_and_mappings():
    def case(T):
        q = _q(T)
        mapping = (
            q.QConfigMapping()
            .set_global(q.default_qconfig)
            .set_object_type(T.nn.Linear, None)
            .set_module_name("fc", q.default_dynamic_qconfig)
        )
        return (
            _s(repr(q.get_default_qconfig("x86"))),
            _s(repr(q.get_default_qconfig("qnnpack"))),
            _s(repr(q.get_default_qat_qconfig("x86"))),
            sorted(mapping.to_dict()),
            _s(repr(q.get_default_qconfig_mapping("x86").global_qconfig)),
        )

    _each(case)


def _ptq_model(T):
    q = _q(T)

    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = q.QuantStub()
            self.conv = T.nn.Conv2d(1, 1, 1)
            self.bn = T.nn.BatchNorm2d(1)
            self.relu = T.nn.ReLU()
            self.dequant = q.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.relu(self.bn(self.conv(self.quant(x)))))

    m = M()
    with T.no_grad():
        m.conv.weight.fill_(0.7)
        m.conv.bias.fill_(0.1)
    return m


def test_eager_static_post_training_quantization():
    def case(T):
        q = _q(T)
        m = _ptq_model(T).eval()
        m.qconfig = q.get_default_qconfig("x86")
        fused = q.fuse_modules(m, [["conv", "bn", "relu"]])
        prepared = q.prepare(fused)
        x = T.linspace(-1, 2, 16).reshape(1, 1, 4, 4)
        prepared(x)
        converted = q.convert(prepared)
        return _s(repr(fused)), _s(repr(prepared)), _s(repr(converted)), converted(x).numpy()

    out = _each(case)
    assert "QuantizedConvReLU2d" in out[2]


def test_quantization_aware_training():
    def case(T):
        q = _q(T)
        m = _ptq_model(T).train()
        m.qconfig = q.get_default_qat_qconfig("x86")
        prepared = q.prepare_qat(q.fuse_modules_qat(m, [["conv", "bn", "relu"]]))
        opt = T.optim.SGD(prepared.parameters(), lr=0.01)
        x = T.linspace(-1, 2, 16).reshape(1, 1, 4, 4)
        for _ in range(2):
            opt.zero_grad()
            prepared(x).sum().backward()
            opt.step()
        converted = q.convert(prepared.eval())
        return _s(repr(prepared)), _s(repr(converted)), converted(x).numpy()

    _each(case)


def test_dynamic_quantization_lstm_and_repr():
    def case(T):
        q = _q(T)
        lstm = _fill(T, T.nn.LSTM(3, 2))
        d = q.quantize_dynamic(lstm, {T.nn.LSTM, T.nn.Linear}, dtype=T.qint8)
        out, (h, _) = d(T.linspace(-1, 1, 12).reshape(2, 2, 3))
        lin = q.quantize_dynamic(_fill(T, T.nn.Sequential(T.nn.Linear(4, 3), T.nn.ReLU())))
        return (
            _s(repr(d)),
            out.detach().numpy(),
            h.detach().numpy(),
            _s(repr(lin)),
            _qt(lin[0].weight()),
        )

    _each(case)


def test_dynamic_linear_activation_rounding_at_the_top_of_the_range():
    # reduce_range picks qparams for 0..127, but the activations are clamped to 0..255 as
    # fbgemm's are: the maximum 1.0 rounds to 128 here, and the result shows it
    def case(T):
        q = _q(T)
        m = _fill(T, T.nn.Sequential(T.nn.Linear(4, 3)))
        d = q.quantize_dynamic(m, {T.nn.Linear}, dtype=T.qint8)
        return d(T.linspace(-1, 1, 8).reshape(2, 4)).numpy()

    _each(case)


def test_dynamic_linear_single_row_matches():
    def case(T):
        q = _q(T)
        m = _fill(T, T.nn.Sequential(T.nn.Linear(4, 3)))
        d = q.quantize_dynamic(m, {T.nn.Linear}, dtype=T.qint8)
        return d(T.tensor([[0.2, 0.5, 0.7, 1.0]])).numpy(), d(
            T.linspace(0, 1, 8).reshape(2, 4)
        ).numpy()

    _each(case)


def test_fx_graph_mode_static():
    def case(T):
        q = _q(T)
        qfx = importlib.import_module(f"{T.__name__}.ao.quantization.quantize_fx")

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(1, 2, 1)
                self.relu = T.nn.ReLU()
                self.fc = T.nn.Linear(8, 3)

            def forward(self, x):
                return self.fc(self.relu(self.conv(x)).flatten(1))

        m = _fill(T, M()).eval()
        x = T.linspace(-1, 2, 4).reshape(1, 1, 2, 2)
        prepared = qfx.prepare_fx(m, q.get_default_qconfig_mapping("x86"), (x,))
        tree = [(n, type(mod).__name__) for n, mod in prepared.named_modules()]
        prepared(x)
        converted = qfx.convert_fx(prepared)
        return (
            tree,
            [n for n, _ in converted.named_buffers()],
            type(prepared).__name__,
            [n.op for n in converted.graph.nodes],
            converted(x).numpy(),
            sorted(type(mod).__name__ for mod in converted.modules()),
        )

    tree, buffers, kind, ops, _, mods = _each(case)
    assert kind == "GraphModule" and ops.count("get_attr") == 4 and "ConvReLU2d" in mods
    assert ("relu", "ReLU") not in tree  # fused into conv: not kept, as torch's prepare
    assert buffers[:2] == ["conv_input_scale_0", "conv_input_zero_point_0"]


def test_fx_graph_mode_dynamic_swaps_the_module():
    def case(T):
        q = _q(T)
        qfx = importlib.import_module(f"{T.__name__}.ao.quantization.quantize_fx")
        m = _fill(T, T.nn.Sequential(T.nn.Linear(4, 3))).eval()
        mapping = q.QConfigMapping().set_global(q.default_dynamic_qconfig)
        x = T.tensor([[0.2, 0.5, 0.7, 1.0]])
        converted = qfx.convert_fx(qfx.prepare_fx(m, mapping, (x,)))
        return converted(x).numpy(), sorted(type(mod).__name__ for mod in converted.modules())

    _, mods = _each(case)
    assert mods == ["GraphModule", "Linear", "LinearPackedParams"]


def test_quantized_functional_and_float_functional():
    def case(T):
        nnq = importlib.import_module(f"{T.__name__}.ao.nn.quantized")
        qF = importlib.import_module(f"{T.__name__}.ao.nn.quantized.functional")
        x = T.quantize_per_tensor(T.linspace(-1, 1, 16).reshape(1, 1, 4, 4), 0.02, 64, T.quint8)
        w = T.quantize_per_tensor(T.full((2, 1, 3, 3), 0.1), 0.01, 0, T.qint8)
        lw = T.quantize_per_tensor(T.linspace(-1, 1, 48).reshape(3, 16), 0.01, 0, T.qint8)
        qs = [
            qF.conv2d(x, w, T.zeros(2), scale=0.05, zero_point=10),
            qF.linear(x.reshape(1, 16), lw, None, 0.05, 100),
            qF.max_pool2d(x, 2),
            qF.avg_pool2d(x, 2),
            qF.interpolate(x, scale_factor=2, mode="nearest"),
            qF.adaptive_avg_pool2d(x, 1),
        ]
        ff = nnq.FloatFunctional()
        a, b = T.ones(2), T.full((2,), 2.0)
        floats = [ff.add(a, b), ff.mul(a, b), ff.cat([a, b]), ff.add_relu(a, -b)]
        qf = nnq.QFunctional()
        qf.scale, qf.zero_point = 0.1, 5
        qa = T.quantize_per_tensor(T.ones(2), 0.1, 0, T.quint8)
        qs += [qf.add(qa, qa), qf.mul(qa, qa), qf.cat([qa, qa])]
        return [_qt(t) for t in qs], [t.numpy() for t in floats], _s(repr(qf))

    _each(case)


def test_unsupported_quantized_op_is_not_implemented():
    def case(T):
        q = T.quantize_per_tensor(T.ones(2), 0.5, 0, T.quint8)
        try:
            q.sum()
        except NotImplementedError as e:
            return "QuantizedCPU" in str(e)
        return None

    assert _each(case) is True


def _ns_model(T):
    q = _q(T)

    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = q.QuantStub()
            self.conv = T.nn.Conv2d(1, 2, 1)
            self.fc = T.nn.Linear(8, 2)
            self.dequant = q.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.fc(self.conv(self.quant(x)).flatten(1)))

    m = _fill(T, M()).eval()
    m.qconfig = q.default_qconfig
    return m


def test_numeric_suite_eager():
    # torch.ao.ns._numeric_suite's documented flow: compare_weights on the state dicts,
    # compare_model_outputs through OutputLoggers, compare_model_stub through Shadow modules
    def case(T):
        import copy

        q = _q(T)
        ns = importlib.import_module(f"{T.__name__}.ao.ns._numeric_suite")
        utils = importlib.import_module(f"{T.__name__}.ao.ns.fx.utils")
        x = T.linspace(-1, 1, 12).reshape(3, 1, 2, 2)
        float_model = _ns_model(T)
        qmodel = q.quantize(copy.deepcopy(float_model), q.default_eval_fn, [[(x, None)]])
        weights = ns.compare_weights(float_model.state_dict(), qmodel.state_dict())
        w = [(k, v["float"].numpy(), _qt(v["quantized"])) for k, v in sorted(weights.items())]
        sqnr = {
            k: utils.compute_sqnr(v["float"], v["quantized"]).item() for k, v in weights.items()
        }
        acts = ns.compare_model_outputs(copy.deepcopy(float_model), copy.deepcopy(qmodel), x)
        a = [
            (k, [t.detach().numpy() for t in v["float"]], [_qt(t) for t in v["quantized"]])
            for k, v in sorted(acts.items())
        ]
        stub = ns.compare_model_stub(float_model, qmodel, {T.nn.Linear}, x)
        s = [(k, sorted(v), [t.numpy() for t in v["float"]]) for k, v in sorted(stub.items())]
        return (
            sorted(weights),
            w,
            [round(v, 3) for _, v in sorted(sqnr.items())],
            sorted(acts),
            a,
            s,
            _s(repr(qmodel.fc)),
            utils.compute_normalized_l2_error(T.ones(3), T.tensor([1.0, 2.0, 1.0])).item(),
            utils.compute_cosine_similarity(T.ones(3), T.tensor([1.0, 2.0, 1.0])).numpy(),
        )

    keys, _, _, acts, _, stub, shadow, _, _ = _each(case)
    assert keys == ["conv.weight", "fc._packed_params._packed_params"]
    assert acts == ["conv.stats", "fc.stats", "quant.stats"]
    assert dict((k, v) for k, v, _ in stub)["fc.stats"] == ["float", "quantized"]
    assert shadow.startswith("Shadow(")


def test_fx_convert_rewrites_the_prepared_graph_keeping_names():
    # convert_fx rewrites the prepared model's graph in place: the node names stay torch's
    # even though an erased node's name is never handed out again
    def case(T):
        q = _q(T)
        qfx = importlib.import_module(f"{T.__name__}.ao.quantization.quantize_fx")
        m = _fill(T, T.nn.Sequential(T.nn.Conv2d(1, 1, 1))).eval()
        x = T.linspace(-1, 1, 4).reshape(1, 1, 2, 2)
        prepared = qfx.prepare_fx(m, q.get_default_qconfig_mapping("x86"), (x,))
        prepared(x)
        converted = qfx.convert_fx(prepared)
        return [n.name for n in prepared.graph.nodes], [n.name for n in converted.graph.nodes]

    mine, theirs = _each(case)
    assert mine == theirs and "output" in mine


def test_fuse_fx_keeps_only_the_modules_its_graph_calls():
    def case(T):
        qfx = importlib.import_module(f"{T.__name__}.ao.quantization.quantize_fx")

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(1, 2, 1)
                self.bn = T.nn.BatchNorm2d(2)
                self.relu = T.nn.ReLU()
                self.fc = T.nn.Linear(2, 2)

            def forward(self, x):
                return self.fc(self.relu(self.bn(self.conv(x))).mean((2, 3)))

        fused = qfx.fuse_fx(_fill(T, M()).eval())
        x = T.linspace(-1, 1, 8).reshape(2, 1, 2, 2)
        names = [n for n, _ in fused.named_modules(remove_duplicate=False)]
        return names, _s(repr(fused)), fused(x).detach().numpy()

    names, _, _ = _each(case)
    assert "relu" not in names and "bn" not in names


def test_fx_qat_sigmoid_gets_the_fixed_qparams_fake_quant():
    # the default QAT mapping names torch.sigmoid; the graph calls the same function
    def case(T):
        q = _q(T)
        qfx = importlib.import_module(f"{T.__name__}.ao.quantization.quantize_fx")

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = T.nn.Linear(4, 2)

            def forward(self, x):
                return T.tanh(T.sigmoid(self.fc(x)))

        x = T.linspace(-1, 1, 8).reshape(2, 4)
        m = _fill(T, M()).train()
        prepared = qfx.prepare_qat_fx(m, q.get_default_qat_qconfig_mapping("qnnpack"), (x,))
        kinds = [type(mod).__name__ for _, mod in prepared.named_modules()]
        prepared(x)
        converted = qfx.convert_fx(prepared.eval())
        return kinds, converted(x).numpy()

    kinds, _ = _each(case)
    assert kinds.count("FixedQParamsFakeQuantize") == 2


def test_fx_custom_configs():
    # fx.custom_config: non-traceable submodules stay leaves (not observed inside), preserved
    # attributes reach the prepared, converted and fused GraphModules
    def case(T):
        q = _q(T)
        qfx = importlib.import_module(f"{T.__name__}.ao.quantization.quantize_fx")
        cc = importlib.import_module(f"{T.__name__}.ao.quantization.fx.custom_config")

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(1, 2, 1)
                self.head = T.nn.Sequential(T.nn.Flatten(), T.nn.Linear(8, 2))
                self.note = "kept"

            def forward(self, x):
                return self.head(self.conv(x))

        x = T.linspace(-1, 1, 4).reshape(1, 1, 2, 2)
        prep = (
            cc.PrepareCustomConfig()
            .set_non_traceable_module_names(["head"])
            .set_preserved_attributes(["note"])
        )
        conv_cfg = cc.ConvertCustomConfig().set_preserved_attributes(["note"])
        m = _fill(T, M()).eval()
        prepared = qfx.prepare_fx(m, q.get_default_qconfig_mapping("x86"), (x,), prep)
        prepared(x)
        converted = qfx.convert_fx(prepared, conv_cfg)
        fused = qfx.fuse_fx(m, cc.FuseCustomConfig.from_dict({"preserved_attributes": ["note"]}))
        return (
            _s(repr(prep)),
            prep.to_dict(),
            _s(repr(conv_cfg)),
            [n for n, _ in prepared.named_modules()],
            prepared.note,
            converted.note,
            fused.note,
            converted(x).detach().numpy(),
        )

    out = _each(case)
    assert ("head.1" in out[3]) and out[4:7] == ("kept", "kept", "kept")
