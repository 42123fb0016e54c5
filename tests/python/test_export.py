"""ember.export: capture, ExportedProgram, save/load, dynamic shapes, and running exported programs
with the C++ runtime (ember._C._export_run and the examples/cpp/export_run binary)."""

import glob
import os
import pathlib
import subprocess
import sys

import pytest

import ember
from ember.export import Dim, export, load, save

nn = ember.nn
F = nn.functional

REPO = pathlib.Path(__file__).resolve().parents[2]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.GELU()
        self.ln = nn.LayerNorm(16)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.drop(self.ln(self.act(self.fc1(x)))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(4, 8, 3, stride=2)
        self.avg = nn.AvgPool2d(2, stride=1)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = self.gap(self.avg(ember.sigmoid(self.conv2(x))))
        return F.log_softmax(self.fc(self.flat(x)), dim=1)


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.b = nn.Linear(6, 6)
        self.relu = nn.ReLU(inplace=True)
        self.norm = nn.GroupNorm(2, 6)

    def forward(self, x):
        y = self.relu(self.a(x))
        y = self.b(y)
        y += x
        return self.norm(self.relu(y)), F.silu(y) - 1.5


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / C**0.5)
        y = att.softmax(dim=-1) @ v
        heads = [t.view(B, T, 2, 4).transpose(1, 2) for t in (q, k, v)]
        z = F.scaled_dot_product_attention(*heads, is_causal=True)
        z = z.transpose(1, 2).reshape(B, T, C)
        return self.proj(y + z)


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.conv = nn.Conv1d(6, 4, 3, padding=1)
        self.register_buffer("scale", ember.tensor([2.0]))

    def forward(self, idx):
        h = self.emb(idx).permute(0, 2, 1)
        h = F.max_pool1d(F.leaky_relu(self.conv(h)), 2) * self.scale
        return ember.cat([h.mean(dim=-1), h[:, :, 0]], dim=1).tanh()


MODELS = [
    (MLP, lambda: ember.randn(3, 8)),
    (CNN, lambda: ember.randn(2, 1, 12, 12)),
    (Residual, lambda: ember.randn(4, 6)),
    (Attention, lambda: ember.randn(2, 5, 8)),
    (Embed, lambda: ember.randint(0, 20, (3, 7))),
]


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _close(a, b, tol=1e-5):
    a, b = _as_list(a), _as_list(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape
        assert ember.allclose(x, y, rtol=tol, atol=tol), (x, y)


def _model(cls):
    ember.manual_seed(0)
    m = cls().eval()
    for name, buf in m.named_buffers():
        if name.endswith("running_var"):
            buf.uniform_(0.5, 1.5)
        elif name.endswith("running_mean"):
            buf.normal_()
    return m


@pytest.mark.parametrize("cls,make", MODELS, ids=[c.__name__ for c, _ in MODELS])
def test_module_equals_eager(cls, make):
    m = _model(cls)
    x = make()
    ep = export(m, (x,))
    with ember.no_grad():
        _close(ep.module()(x), m(x))
    # Parameters and buffers are graph inputs; no module calls or get_attr remain.
    ops = {n.op for n in ep.graph.nodes}
    assert ops <= {"placeholder", "call_function", "output"}


@pytest.mark.parametrize("cls,make", MODELS, ids=[c.__name__ for c, _ in MODELS])
def test_save_load_and_cpp_runtime(cls, make, tmp_path):
    m = _model(cls)
    x = make()
    ep = export(m, (x,))
    path = tmp_path / "model.ember"
    save(ep, path)
    loaded = load(path)
    with ember.no_grad():
        want = m(x)
    _close(loaded.module()(x), want)
    _close(ember._C._export_run(str(path), [x]), want)
    assert set(loaded.state_dict) == set(ep.state_dict)
    for k, v in ep.state_dict.items():
        assert ember.equal(loaded.state_dict[k], v.detach())


def test_multihead_attention_is_traced_through_to_runtime_ops(tmp_path):
    ember.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    q, kv = ember.randn(2, 5, 8), ember.randn(2, 6, 8)
    ep = export(m, (q, kv, kv))
    with ember.no_grad():
        want = m(q, kv, kv)
    _close(ep.module()(q, kv, kv), want)
    save(ep, tmp_path / "mha.ember")
    _close(ember._C._export_run(str(tmp_path / "mha.ember"), [q, kv, kv]), want)


RNNS = [
    lambda: nn.LSTM(4, 6, num_layers=2, batch_first=True),
    lambda: nn.GRU(4, 6, bidirectional=True),
    lambda: nn.RNN(4, 5, nonlinearity="relu"),
]


@pytest.mark.parametrize("make", RNNS, ids=["lstm", "gru", "rnn"])
def test_recurrent_layers_run_in_python_and_cpp(make, tmp_path):
    ember.manual_seed(0)
    m = make().eval()
    x = ember.randn(2, 3, 4)
    ep = export(m, (x,))
    with ember.no_grad():
        want = m(x)
    got = ep.module()(x)
    assert type(got[1]) is type(want[1])  # LSTM's (h, c) stays a nested tuple
    flat = ember.export.exported_program.tree_flatten
    _close(flat(got)[0], flat(want)[0])
    save(ep, tmp_path / "rnn.ember")
    loaded = load(tmp_path / "rnn.ember").module()(x)
    assert type(loaded[1]) is type(want[1])
    _close(flat(loaded)[0], flat(want)[0])
    _close(ember._C._export_run(str(tmp_path / "rnn.ember"), [x]), flat(want)[0])


def test_graph_signature_lists_parameters_buffers_inputs_outputs():
    m = _model(CNN)
    ep = export(m, (ember.randn(2, 1, 12, 12),))
    sig = ep.graph_signature
    assert sig.parameters == tuple(name for name, _ in m.named_parameters())
    assert sig.buffers == tuple(name for name, _ in m.named_buffers())
    assert sig.user_inputs == ("x",)
    assert len(sig.user_outputs) == 1
    assert sig.inputs_to_parameters["p_conv_weight"] == "conv.weight"
    assert sig.inputs_to_buffers["b_bn_running_mean"] == "bn.running_mean"
    placeholders = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert placeholders == [s.arg.name for s in sig.input_specs]
    assert set(ep.state_dict) == set(m.state_dict())
    text = str(ep)
    assert text.startswith("ExportedProgram:")
    assert "Graph signature" in text and "p_conv_weight: PARAMETER target='conv.weight'" in text


def test_graph_signature_matches_torch_export():
    torch = pytest.importorskip("torch")

    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = lib.nn.Conv2d(1, 2, 3)
                self.bn = lib.nn.BatchNorm2d(2)
                self.fc = lib.nn.Linear(2 * 4 * 4, 3)

            def forward(self, x):
                return self.fc(lib.relu(self.bn(self.conv(x))).flatten(1))

        return Net().eval()

    ours = export(build(ember), (ember.randn(2, 1, 6, 6),)).graph_signature
    theirs = torch.export.export(build(torch), (torch.randn(2, 1, 6, 6),)).graph_signature

    def describe(sig):
        return [(s.kind.name, s.target, s.arg.name) for s in sig.input_specs]

    assert describe(ours) == describe(theirs)
    assert ours.parameters == theirs.parameters
    assert ours.buffers == theirs.buffers
    assert ours.user_inputs == theirs.user_inputs
    assert [s.kind.name for s in ours.output_specs] == [s.kind.name for s in theirs.output_specs]


class TwoOutputs(nn.Module):
    def forward(self, x, y):
        return ember.relu(x @ y) + 1.0, (x * 2).sum(dim=0, keepdim=True)


def test_module_without_state_export_and_constants(tmp_path):
    # (exported a plain function until torch 2.13's refusal of one was matched: ValueError)
    fn = TwoOutputs()
    x, y = ember.randn(3, 4), ember.randn(4, 2)
    ep = export(fn, (x, y))
    _close(ep.module()(x, y), fn(x, y))
    save(ep, tmp_path / "f.ember")
    _close(ember._C._export_run(str(tmp_path / "f.ember"), [x, y]), fn(x, y))


def test_dynamic_dim_runs_at_another_size(tmp_path):
    m = _model(Attention)
    batch, seq = Dim("batch", max=64), Dim("seq", min=2, max=32)
    ep = export(m, (ember.randn(2, 5, 8),), dynamic_shapes={"x": {0: batch, 1: seq}})
    # keyed by torch's symbols (s77 for x's dim 0, s27 for its dim 1), no longer the Dims' names
    assert ep.range_constraints == {"s77": (0, 64), "s27": (2, 32)}
    x = ember.randn(3, 9, 8)
    with ember.no_grad():
        want = m(x)
    _close(ep.module()(x), want)
    path = tmp_path / "attn.ember"
    save(ep, path)
    _close(ember._C._export_run(str(path), [x]), want)
    _close(load(path).module()(x), want)
    # The static dim is still checked, in Python and in C++.
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[2\] == 8$"):
        ep.module()(ember.randn(3, 9, 6))
    with pytest.raises(RuntimeError, match="static dim"):
        ember._C._export_run(str(path), [ember.randn(3, 9, 6)])
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[1\] <= 32$"):
        ep.module()(ember.randn(3, 40, 8))


def test_view_from_sizes_uses_the_runtime_size(tmp_path):
    class Flat(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(12, 2)

        def forward(self, x):
            return self.fc(x.view(x.size(0), -1)), x.reshape(x.shape[0] * 3, 4)

    m = Flat()
    ep = export(m, (ember.randn(2, 3, 4),), dynamic_shapes=({0: Dim("n")},))
    x = ember.randn(5, 3, 4)
    _close(ep.module()(x), m(x))
    save(ep, tmp_path / "flat.ember")
    _close(ember._C._export_run(str(tmp_path / "flat.ember"), [x]), m(x))
    # Without dynamic shapes the sizes are specialized, as torch.export does.
    static = export(m, (ember.randn(2, 3, 4),))
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[0\] == 2$"):
        static.module()(x)


def test_bad_dynamic_shapes_are_rejected():
    m = MLP()
    with pytest.raises(ValueError, match="outside the range"):
        export(m, (ember.randn(3, 8),), dynamic_shapes={"x": {0: Dim("b", min=4)}})
    # torch's UserError and words for a key that names no input
    with pytest.raises(ember._dynamo.exc.UserError, match=r"keys must be the arg names \['x'\]"):
        export(m, (ember.randn(3, 8),), dynamic_shapes={"y": {0: Dim("b")}})
    with pytest.raises(AssertionError, match="Cannot create Dim with inconsistent min=3, max=3"):
        Dim("c", min=3, max=3)


def test_data_dependent_control_flow_names_the_line():
    class Branchy(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # the line the error names
                return x
            return -x

    with pytest.raises(RuntimeError, match="data-dependent control flow") as info:
        export(Branchy(), (ember.randn(3),))
    assert "if x.sum() > 0" in str(info.value)


class Flipped(nn.Module):
    def forward(self, x):
        return ember.flip(x, [0]) + 1


def test_unsupported_op_is_refused_by_name(tmp_path):
    # (cumsum was the example until the runtime gained it)
    fn = Flipped()
    ep = export(fn, (ember.randn(4),))
    _close(ep.module()(ember.ones(4)), fn(ember.ones(4)))  # Python still runs it
    path = tmp_path / "p.ember"
    path.write_bytes(b"previous contents")
    with pytest.raises(RuntimeError, match="flip.*C\\+\\+ runtime"):
        save(ep, path)
    assert path.read_bytes() == b"previous contents"  # nothing written


def test_runtime_op_list_is_shared_with_python():
    names = ember.export.runtime_ops()
    assert {"linear", "conv2d", "batch_norm", "layer_norm", "softmax", "getitem"} <= set(names)
    for name in names:
        assert getattr(ember.export.ops, name).__name__ == name


def test_run_decompositions_maps_to_runtime_ops():
    # each call runs a runtime op; it is printed by its ATen overload (torch's names)
    ep = export(_model(CNN), (ember.randn(2, 1, 12, 12),))
    decomposed = ep.run_decompositions()
    runtime = set(ember.export.runtime_ops())
    for node in decomposed.graph.nodes:
        if node.op == "call_function":
            assert _runtime_op(node) in runtime
    x = ember.randn(2, 1, 12, 12)
    _close(decomposed.module()(x), ep.module()(x))


class AddsToInput(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


def test_inplace_update_of_an_input_is_exported():
    # torch 2.13 exports it (ember refused it before session 21): the captured program updates
    # the input in place, run_decompositions lists a USER_INPUT_MUTATION (compared with torch in
    # test_export_parity_s21.py)
    ep = export(AddsToInput(), (ember.randn(3),))
    x = ember.zeros(3)
    _close(ep.module()(x), ember.full((3,), 2.0))
    _close(x, ember.ones(3))
    kinds = [s.kind.name for s in ep.run_decompositions().graph_signature.output_specs]
    assert kinds == ["USER_INPUT_MUTATION", "USER_OUTPUT"]


def test_training_batch_norm_is_exported_with_buffer_mutations(tmp_path):
    # torch 2.13 exports a training batch norm (its running statistics as buffer mutations);
    # ember did refuse it. Values against eager and torch: tests/python/test_graphs_s12.py.
    # Since session 13 a saved program keeps the updates (test_graphs_s13.py runs them in C++).
    # As torch 2.13's, the captured program updates the buffers in place and lists no mutation;
    # run_decompositions (and so save) lists them (this test read them before decomposing).
    ep = export(CNN().train(), (ember.randn(2, 1, 12, 12),))
    assert ep.graph_signature.buffers_to_mutate == {}
    decomposed = ep.run_decompositions().graph_signature.buffers_to_mutate.values()
    assert any(t.endswith("running_mean") for t in decomposed)
    ember.export.save(ep, str(tmp_path / "bn.pt2"))
    loaded = ember.export.load(str(tmp_path / "bn.pt2"))
    got = loaded.graph_signature.buffers_to_mutate.values()
    assert sorted(got) == sorted(decomposed)


def test_exported_program_is_not_callable_and_module_shares_state():
    m = _model(MLP)
    ep = export(m, (ember.randn(3, 8),))
    with pytest.raises(RuntimeError, match="module()"):
        ep(ember.randn(3, 8))
    mod = ep.module()
    assert set(dict(mod.named_parameters())) == set(dict(m.named_parameters()))
    x = ember.randn(3, 8)
    with ember.no_grad():
        m.fc2.bias.add_(1.0)
    _close(mod(x), m(x))


def _corrupt(tmp_path, data, name):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_corrupt_truncated_and_foreign_files_raise(tmp_path):
    ep = export(_model(MLP), (ember.randn(3, 8),))
    good = tmp_path / "good.ember"
    save(ep, good)
    data = good.read_bytes()
    cases = {
        "truncated": (data[: len(data) // 2], "truncated"),
        "header_only": (data[:20], "truncated"),
        "foreign": (b"PK\x03\x04" + b"\0" * 100, "ember.export.load"),
        "empty": (b"", "ember.export.load"),
        "bad_op": (data.replace(b'"op","linear"', b'"op","lineaX"', 1), "lineaX"),
        "bad_version": (data.replace(b'["version",1]', b'["version",7]', 1), "version 7"),
        "bad_ref": (data.replace(b'["ref","x"]', b'["ref","q"]', 1), "'q'"),
        "bad_kind": (data.replace(b'"user_input"', b'"user_inpux"', 1), "unknown kind"),
    }
    for name, (blob, pattern) in cases.items():
        assert blob != data or name == "empty", name
        path = _corrupt(tmp_path, blob, name)
        with pytest.raises(RuntimeError, match=pattern):
            load(path)
        with pytest.raises(RuntimeError):
            ember._C._export_run(str(path), [ember.randn(3, 8)])
    # a checkpoint in ember's own container is not a program; one in PyTorch's zip is refused too
    ember.serialization._save_ember_format({"w": ember.ones(2)}, tmp_path / "ckpt.ember")
    with pytest.raises(RuntimeError, match="not an exported program"):
        load(tmp_path / "ckpt.ember")
    ember.save({"w": ember.ones(2)}, tmp_path / "ckpt.pt")
    with pytest.raises(RuntimeError, match="ember.export.load: .*zip archive"):
        load(tmp_path / "ckpt.pt")


class Softmax1(nn.Module):
    def forward(self, x):
        return ember.softmax(x, 1)


def test_a_bad_argument_kind_is_rejected_on_load(tmp_path):
    ep = export(Softmax1(), (ember.randn(2, 3),))
    path = tmp_path / "s.ember"
    save(ep, path)
    data = path.read_bytes()
    # Rewrite the header (the program holds no tensors, so only the header and its length move):
    # softmax's dim becomes a string.
    size = int.from_bytes(data[16:24], "little")
    header = data[24 : 24 + size]
    bad = header.replace(b'[["ref","x"]]},1]', b'[["ref","x"]]},"1"]')
    assert bad != header
    blob = data[:16] + len(bad).to_bytes(8, "little") + bad
    path.write_bytes(blob + b"\0" * (-len(blob) % 64))
    with pytest.raises(RuntimeError, match="argument 1 is a str literal"):
        load(path)


def _example_binary():
    env = os.environ.get("EMBER_EXPORT_RUN")
    if env and os.path.exists(env):
        return env
    found = sorted(glob.glob(str(REPO / "build" / "*" / "export_run_cpp")))
    return found[0] if found else None


def test_example_binary_runs_an_exported_model(tmp_path):
    binary = _example_binary()
    if binary is None:
        pytest.skip("the export_run_cpp example is not built")
    script = REPO / "examples" / "cpp" / "export_model.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True)
    out = subprocess.run(
        [binary, str(tmp_path / "model.ember"), str(tmp_path / "io.ckpt")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "outputs match the expected values" in out.stdout
    bad = tmp_path / "bad.ember"
    bad.write_bytes((tmp_path / "model.ember").read_bytes()[:100])
    out = subprocess.run([binary, str(bad)], capture_output=True, text=True)
    assert out.returncode == 1 and "truncated" in out.stderr


def _runtime_op(node):
    """The runtime op a decomposed call runs: its own, or its ATen overload's (the printed name)."""
    op = getattr(node.target, "_export_op", None)
    if op is None:
        mapped = ember.export._aten_names.to_runtime(node.target, node.args, dict(node.kwargs))
        op = mapped[0] if mapped else None
    return op
