"""Quantization workflows (ember.ao.quantization): eager fusion, prepare (observers at torch's
places with torch's qparams), QAT training step for step with torch, FX prepare and fusion."""

import numpy as np
import pytest

import ember
from ember.ao import quantization as eq
from ember.ao.nn import intrinsic as nni
from ember.ao.nn import qat as nnqat
from ember.ao.nn.intrinsic import qat as nniqat
from ember.ao.quantization import quantize_fx

pytestmark = pytest.mark.filterwarnings("ignore")


def _build(lib):
    nn = lib.nn
    aq = lib.ao.quantization

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = aq.QuantStub()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.fc = nn.Linear(8 * 6 * 6, 10)
            self.relu2 = nn.ReLU()
            self.dequant = aq.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.relu(self.bn(self.conv(x)))
            x = self.relu2(self.fc(x.flatten(1)))
            return self.dequant(x)

    return M()


def _weights(seed=0):
    rs = np.random.RandomState(seed)
    m = _build(ember)
    out = {}
    for k, v in m.state_dict().items():
        if k.endswith("num_batches_tracked"):
            out[k] = np.array(0, np.int64)
        elif k.endswith("running_var"):
            out[k] = (rs.rand(*v.shape) + 0.5).astype(np.float32)
        else:
            out[k] = (rs.randn(*v.shape) * 0.3).astype(np.float32)
    return out


def _load(lib, m, sd):
    m.load_state_dict({k: lib.tensor(v) for k, v in sd.items()})
    return m


_FUSE = [["conv", "bn", "relu"], ["fc", "relu2"]]


def test_fuse_modules_eval_folds_batch_norm():
    m = _load(ember, _build(ember), _weights()).eval()
    x = ember.tensor(np.random.RandomState(1).randn(4, 3, 6, 6).astype(np.float32))
    fused = eq.fuse_modules(m, _FUSE)
    assert type(fused.conv) is nni.ConvReLU2d and type(fused.fc) is nni.LinearReLU
    assert type(fused.bn) is ember.nn.Identity and type(fused.relu) is ember.nn.Identity
    np.testing.assert_allclose(
        fused(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    assert type(m.conv) is ember.nn.Conv2d  # not in place by default


def test_fuse_modules_qat_keeps_batch_norm():
    m = _load(ember, _build(ember), _weights()).train()
    fused = eq.fuse_modules_qat(m, _FUSE)
    assert type(fused.conv) is nni.ConvBnReLU2d
    with pytest.raises(AssertionError, match="did not find fuser method"):
        eq.fuse_modules(m, [["bn", "fc"]])


def test_prepare_inserts_observers():
    m = _load(ember, _build(ember), _weights()).eval()
    m.qconfig = eq.default_qconfig
    fused = eq.fuse_modules(m, _FUSE)
    prepared = eq.prepare(fused)
    names = {n for n, _ in prepared.named_modules() if n.endswith("activation_post_process")}
    assert names == {
        "quant.activation_post_process",
        "conv.activation_post_process",
        "fc.activation_post_process",
    }
    x = np.random.RandomState(2).randn(4, 3, 6, 6).astype(np.float32)
    out = prepared(ember.tensor(x))
    np.testing.assert_allclose(
        out.detach().numpy(), fused(ember.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6
    )
    obs = prepared.quant.activation_post_process
    assert float(obs.min_val) == x.min() and float(obs.max_val) == x.max()


def test_prepare_qat_swaps_modules_and_trains():
    m = _load(ember, _build(ember), _weights()).train()
    m.qconfig = eq.get_default_qat_qconfig("x86")
    qat = eq.prepare_qat(eq.fuse_modules_qat(m, _FUSE))
    assert type(qat.conv) is nniqat.ConvBnReLU2d and type(qat.fc) is nniqat.LinearReLU
    assert isinstance(qat.conv.weight_fake_quant, eq.FusedMovingAvgObsFakeQuantize)
    opt = ember.optim.SGD(qat.parameters(), lr=0.1)
    x = ember.tensor(np.random.RandomState(3).randn(8, 3, 6, 6).astype(np.float32))
    before = qat.conv.weight.detach().numpy().copy()
    loss = qat(x).pow(2).mean()
    loss.backward()
    opt.step()
    assert not np.array_equal(before, qat.conv.weight.detach().numpy())
    qat.apply(nniqat.freeze_bn_stats)
    assert not qat.conv.bn.training
    float_conv = qat.conv.to_float()
    assert type(float_conv) is nni.ConvReLU2d
    lin = nnqat.Linear.from_float(_with_qconfig(ember.nn.Linear(3, 2), eq.default_qat_qconfig))
    assert type(lin) is nnqat.Linear


def _with_qconfig(m, qconfig):
    m.qconfig = qconfig
    return m


def test_prepare_matches_torch():
    torch = pytest.importorskip("torch")
    sd = _weights()
    mods = []
    for lib in (ember, torch):
        m = _load(lib, _build(lib), sd).eval()
        m.qconfig = lib.ao.quantization.get_default_qconfig("x86")
        mods.append(lib.ao.quantization.prepare(lib.ao.quantization.fuse_modules(m, _FUSE)))
    ours, theirs = mods
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    rs = np.random.RandomState(4)
    for _ in range(3):
        x = rs.randn(8, 3, 6, 6).astype(np.float32)
        ours(ember.tensor(x))
        theirs(torch.tensor(x))
    for name in ("quant", "conv", "fc"):
        a = getattr(ours, name).activation_post_process.calculate_qparams()
        b = getattr(theirs, name).activation_post_process.calculate_qparams()
        np.testing.assert_allclose(a[0].numpy(), b[0].numpy(), rtol=1e-6)
        assert np.array_equal(a[1].numpy(), b[1].numpy())


def test_qat_training_matches_torch():
    torch = pytest.importorskip("torch")
    sd = _weights()
    mods = []
    for lib in (ember, torch):
        m = _load(lib, _build(lib), sd).train()
        m.qconfig = lib.ao.quantization.get_default_qat_qconfig("x86")
        aq = lib.ao.quantization
        mods.append(aq.prepare_qat(aq.fuse_modules_qat(m, _FUSE)))
    ours, theirs = mods
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    opt_a = ember.optim.SGD(ours.parameters(), lr=0.1)
    opt_b = torch.optim.SGD(theirs.parameters(), lr=0.1)
    rs = np.random.RandomState(5)
    for _ in range(3):
        x = rs.randn(16, 3, 6, 6).astype(np.float32)
        la = ours(ember.tensor(x)).pow(2).mean()
        lb = theirs(torch.tensor(x)).pow(2).mean()
        assert la.item() == pytest.approx(lb.item(), rel=1e-4)
        opt_a.zero_grad()
        la.backward()
        opt_a.step()
        opt_b.zero_grad()
        lb.backward()
        opt_b.step()
    np.testing.assert_allclose(
        ours.conv.scale.numpy()
        if hasattr(ours.conv, "scale")
        else ours.conv.weight_fake_quant.scale.numpy(),
        theirs.conv.weight_fake_quant.scale.numpy(),
        rtol=1e-4,
    )


def _fx_model(lib):
    nn = lib.nn
    F = nn.functional

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 4, 1)
            self.fc = nn.Linear(4 * 3 * 3, 6)
            self.fc2 = nn.Linear(6, 6)
            self.w = nn.Parameter(lib.zeros(5, 6))

        def forward(self, x):
            x = F.relu(self.bn(self.conv(x)))
            x = x + self.conv2(x)
            x = F.max_pool2d(x, 2).flatten(1)
            x = F.relu(self.fc(x))
            return F.linear(self.fc2(x), self.w)

    return M()


def _fx_weights(seed=0):
    rs = np.random.RandomState(seed)
    out = {}
    for k, v in _fx_model(ember).state_dict().items():
        if k.endswith("num_batches_tracked"):
            out[k] = np.array(0, np.int64)
        elif k.endswith("running_var"):
            out[k] = (rs.rand(*v.shape) + 0.5).astype(np.float32)
        else:
            out[k] = (rs.randn(*v.shape) * 0.5).astype(np.float32)
    return out


def test_fuse_fx_by_pattern():
    m = _load(ember, _fx_model(ember), _fx_weights()).eval()
    gm = quantize_fx.fuse_fx(m)
    assert type(gm.conv) is nni.ConvReLU2d and type(gm.fc) is nni.LinearReLU
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert "bn" not in targets
    x = ember.tensor(np.random.RandomState(1).randn(2, 2, 6, 6).astype(np.float32))
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_prepare_fx_observes_graph_edges():
    m = _load(ember, _fx_model(ember), _fx_weights()).eval()
    x = ember.tensor(np.random.RandomState(1).randn(2, 2, 6, 6).astype(np.float32))
    mapping = eq.QConfigMapping().set_global(eq.default_qconfig).set_module_name("fc2", None)
    gm = quantize_fx.prepare_fx(m, mapping, (x,))
    observed = [
        n.args[0].name
        for n in gm.graph.nodes
        if n.op == "call_module" and n.target.startswith("activation_post_process")
    ]
    # input, conv (fused), conv2, add, max_pool2d (sharing add's observer), flatten (not a
    # shared-qparams op), fc (fused); fc2 is left float, so F.linear observes its own input and
    # weight, then its output.
    assert observed == [
        "x",
        "conv",
        "conv2",
        "add",
        "max_pool2d",
        "flatten",
        "fc",
        "fc2",
        "w",
        "linear",
    ]
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(AssertionError, match="eval mode"):
        quantize_fx.prepare_fx(m.train(), mapping, (x,))


@pytest.mark.parametrize("qat", [False, True])
def test_prepare_fx_matches_torch(qat):
    torch = pytest.importorskip("torch")
    from torch.ao.quantization import quantize_fx as tfx

    sd = _fx_weights()
    rs = np.random.RandomState(2)
    x = rs.randn(8, 2, 6, 6).astype(np.float32)
    prepared = []
    for lib, fx in ((ember, quantize_fx), (torch, tfx)):
        m = _load(lib, _fx_model(lib), sd)
        aq = lib.ao.quantization
        if qat:
            m.train()
            mapping = aq.QConfigMapping().set_global(aq.get_default_qat_qconfig("x86"))
            prepared.append(fx.prepare_qat_fx(m, mapping, (lib.tensor(x),)))
        else:
            m.eval()
            mapping = aq.QConfigMapping().set_global(
                aq.QConfig(
                    aq.MinMaxObserver.with_args(reduce_range=True),
                    aq.default_per_channel_weight_observer,
                )
            )
            prepared.append(fx.prepare_fx(m, mapping, (lib.tensor(x),)))
    ours, theirs = prepared
    for _ in range(3):
        batch = rs.randn(8, 2, 6, 6).astype(np.float32)
        a, b = ours(ember.tensor(batch)), theirs(torch.tensor(batch))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-4)

    def qparams(gm):
        mods = dict(gm.named_modules())
        out = []
        for n in gm.graph.nodes:
            if n.op == "call_module" and n.target.startswith("activation_post_process"):
                obs = mods.get(n.target)
                if obs is None:  # torch's node of a shared observer
                    continue
                if id(obs) not in [id(o) for o, _ in out]:
                    out.append((obs, n.args[0].name))
        return [(o.calculate_qparams(), name) for o, name in out]

    qa = qparams(ours)
    qb = qparams(theirs)
    assert len(qa) == len(qb)
    for ((sa, za), _), ((sb, zb), _) in zip(qa, qb):
        np.testing.assert_allclose(sa.numpy(), sb.numpy(), rtol=1e-5)
        assert np.array_equal(za.numpy(), zb.numpy())


# ------------------------------------------------------------------ convert (quantized core)

needs_core = pytest.mark.skipif(
    not hasattr(ember, "quantize_per_tensor"), reason="needs the quantized-tensor core"
)


def _static_pair(torch, fx=False):
    """(ours, theirs, x): the eager test model quantized statically by both libraries."""
    sd = _weights()
    rs = np.random.RandomState(6)
    calib = [rs.randn(8, 3, 6, 6).astype(np.float32) for _ in range(3)]
    out = []
    for lib in (ember, torch):
        aq = lib.ao.quantization
        m = _load(lib, _build(lib), sd).eval()
        m.qconfig = aq.get_default_qconfig("x86")
        prepared = aq.prepare(aq.fuse_modules(m, _FUSE))
        for c in calib:
            prepared(lib.tensor(c))
        out.append(aq.convert(prepared))
    return out[0], out[1], rs.randn(8, 3, 6, 6).astype(np.float32)


@needs_core
def test_eager_static_convert_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs, x = _static_pair(torch)
    assert [type(m).__name__ for m in ours.modules()] == [
        type(m).__name__ for m in theirs.modules()
    ]
    assert float(ours.quant.scale) == float(theirs.quant.scale)
    assert int(ours.quant.zero_point) == int(theirs.quant.zero_point)
    # fc's scale comes from observed float outputs of the convolution and Linear kernels, which
    # round like torch's only where both take the same path (oneDNN on AVX-512): a few ulps apart
    assert float(ours.fc.scale) == pytest.approx(float(theirs.fc.scale), rel=1e-6)
    a = ours(ember.tensor(x)).numpy()
    b = theirs(torch.tensor(x)).numpy()
    step = float(theirs.fc.scale)
    assert np.abs(a - b).max() <= step * 1.0001


@needs_core
def test_quantize_dynamic_matches_torch():
    torch = pytest.importorskip("torch")
    rs = np.random.RandomState(7)
    w1, b1 = rs.randn(16, 8).astype(np.float32), rs.randn(16).astype(np.float32)
    w2, b2 = rs.randn(4, 16).astype(np.float32), rs.randn(4).astype(np.float32)
    x = rs.randn(5, 8).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4))
        m.load_state_dict(
            {
                "0.weight": lib.tensor(w1),
                "0.bias": lib.tensor(b1),
                "2.weight": lib.tensor(w2),
                "2.bias": lib.tensor(b2),
            }
        )
        q = lib.ao.quantization.quantize_dynamic(m, {lib.nn.Linear}, dtype=lib.qint8)
        assert type(q[0]).__name__ == "Linear" and "dynamic" in type(q[0]).__module__
        outs.append(q(lib.tensor(x)).numpy())
    ref = x @ w1.T + b1
    tol = np.abs(ref).max() / 127 * 4  # a few steps of the dynamic input/weight quantization
    np.testing.assert_allclose(outs[0], outs[1], atol=tol)


@needs_core
def test_qat_convert_matches_torch():
    torch = pytest.importorskip("torch")
    sd = _weights()
    rs = np.random.RandomState(8)
    batches = [rs.randn(8, 3, 6, 6).astype(np.float32) for _ in range(2)]
    x = rs.randn(8, 3, 6, 6).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        aq = lib.ao.quantization
        m = _load(lib, _build(lib), sd).train()
        m.qconfig = aq.get_default_qat_qconfig("x86")
        qat = aq.prepare_qat(aq.fuse_modules_qat(m, _FUSE))
        for b in batches:
            qat(lib.tensor(b))
        qat.eval()
        q = aq.convert(qat)
        assert type(q.conv).__name__ == "ConvReLU2d" and "quantized" in type(q.conv).__module__
        outs.append((q(lib.tensor(x)).numpy(), float(q.fc.scale)))
    (a, sa), (b, sb) = outs
    assert sa == pytest.approx(sb, rel=1e-5)
    assert np.abs(a - b).max() <= sb * 1.0001


@needs_core
def test_convert_fx_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.ao.quantization import quantize_fx as tfx

    sd = _fx_weights()
    rs = np.random.RandomState(9)
    calib = [rs.randn(8, 2, 6, 6).astype(np.float32) for _ in range(3)]
    x = rs.randn(8, 2, 6, 6).astype(np.float32)
    outs = []
    for lib, fx in ((ember, quantize_fx), (torch, tfx)):
        aq = lib.ao.quantization
        m = _load(lib, _fx_model(lib), sd).eval()
        prepared = fx.prepare_fx(m, aq.get_default_qconfig_mapping("x86"), (lib.tensor(calib[0]),))
        for c in calib:
            prepared(lib.tensor(c))
        q = fx.convert_fx(prepared)
        outs.append(q(lib.tensor(x)).detach().numpy())
        ref = m(lib.tensor(x)).detach().numpy()
    a, b = outs
    # The last op's output step: both quantize the same observed range.
    step = (ref.max() - min(ref.min(), 0)) / 255
    assert np.abs(a - b).max() <= 2 * step


def test_convert_fx_code_prints_functional_calls_as_torch():
    # F.max_pool2d's call keeps torch's handed form (defaults by keyword, nn.functional's name)
    # through prepare_fx and convert_fx; the graph's code up to fc2 is torch's line for line.
    def code(lib):
        qfx = pytest.importorskip(lib.__name__ + ".ao.quantization.quantize_fx")
        qz = pytest.importorskip(lib.__name__ + ".ao.quantization")
        m = _load(lib, _fx_model(lib), _fx_weights()).eval()
        x = lib.tensor(np.random.RandomState(1).randn(2, 2, 6, 6).astype(np.float32))
        mapping = qz.QConfigMapping().set_global(qz.default_qconfig).set_module_name("fc2", None)
        gm = qfx.prepare_fx(m, mapping, (x,))
        gm(x)
        text = qfx.convert_fx(gm).code.replace("torch.", "ember.")
        return text[: text.index("    fc2 = ")]

    got = code(ember)
    assert (
        "max_pool2d = ember.nn.functional.max_pool2d(add_1, 2, stride = None, padding = 0, "
        "dilation = 1, ceil_mode = False, return_indices = False);  add_1 = None\n"
    ) in got
    torch = pytest.importorskip("torch")
    assert got == code(torch)


def _functional_linear(lib, weight_input):
    """F.linear -> F.relu -> F.linear on parameters (or on a weight given as input), prepared
    with the x86 mapping, calibrated and converted: (converted, its output, its code, x[, w])."""
    F = lib.nn.functional
    qfx = pytest.importorskip(lib.__name__ + ".ao.quantization.quantize_fx")
    qz = pytest.importorskip(lib.__name__ + ".ao.quantization")
    rs = np.random.RandomState(3)
    w1, b1 = rs.randn(8, 16).astype(np.float32), rs.randn(8).astype(np.float32)
    w2 = rs.randn(4, 8).astype(np.float32)

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = lib.nn.Parameter(lib.tensor(w1))
            self.b1 = lib.nn.Parameter(lib.tensor(b1))
            self.w2 = lib.nn.Parameter(lib.tensor(w2))

        def forward(self, x):
            return F.linear(F.relu(F.linear(x, self.w1, self.b1)), self.w2)

    class WeightIn(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.b1 = lib.nn.Parameter(lib.tensor(b1))

        def forward(self, x, w):
            return F.linear(x, w, bias=self.b1)

    args = (lib.tensor(rs.randn(5, 16).astype(np.float32)),)
    if weight_input:
        args += (lib.tensor(w1),)
    m = (WeightIn() if weight_input else M()).eval()
    prepared = qfx.prepare_fx(m, qz.get_default_qconfig_mapping("x86"), args)
    prepared(*args)
    q = qfx.convert_fx(prepared)
    return q, q(*args).numpy(), q.code.replace("torch.", "ember."), m(*args).detach().numpy()


@pytest.mark.parametrize("weight_input", [False, True])
def test_convert_fx_lowers_functional_linear_as_torch(weight_input):
    # torch lowers dequantize -> F.linear (-> F.relu) -> quantize to quantized::linear(_relu)
    # on a prepacked weight, folded into _packed_weight_N when it comes from attributes only
    q, out, code, ref = _functional_linear(ember, weight_input)
    if weight_input:
        prepack = "ember.ops.quantized.linear_prepack(quantize_per_channel, B = b1)"
        assert f"linear_prepack = {prepack}" in code
        assert "ember.ops.quantized.linear(quantize_per_tensor, linear_prepack," in code
    else:
        lowered = "ember.ops.quantized.linear_relu(quantize_per_tensor, _packed_weight_0,"
        assert f"linear = {lowered}" in code
        assert sorted(k for k in q.state_dict() if "packed" in k) == [
            "_packed_weight_0",
            "_packed_weight_1",
        ]
        assert not [n for n, _ in q.named_parameters()]  # the float weights were packed
        again = _functional_linear(ember, False)[0]
        again.load_state_dict(q.state_dict())
        assert again._packed_weight_1 is q._packed_weight_1
    step = (ref.max() - min(ref.min(), 0)) / 255
    assert np.abs(out - ref).max() <= 8 * step
    torch = pytest.importorskip("torch")
    tq, tout, tcode, _ = _functional_linear(torch, weight_input)
    assert code == tcode
    assert sorted(q.state_dict()) == sorted(tq.state_dict())
    # the same integers here (AVX2); an int8 kernel of another CPU tier may round one step apart
    assert np.abs(out - tout).max() <= 1.01 * step
