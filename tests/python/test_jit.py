"""ember.jit: trace and script capture graphs, save/load go through the export format, and the
TorchScript decorators and queries behave."""

import io

import pytest

import ember

nn = ember.nn
F = nn.functional


class Net(nn.Module):
    def __init__(self, record=None):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3 * 4 * 4, 5)
        self.record = record

    def forward(self, x):
        if self.record is not None:
            self.record.append((ember.jit.is_tracing(), ember.jit.is_scripting()))
        x = F.relu(self.bn(self.conv(x)))
        return F.softmax(self.fc(x.flatten(1)), dim=-1)

    @ember.jit.ignore
    def debug(self):
        return "ignored"

    @ember.jit.unused
    def unused_method(self):
        return "unused"

    @ember.jit.export
    def exported_method(self):
        return "exported"


class Branchy(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            return x * 2
        return x


def _close(a, b):
    assert a.shape == b.shape and ember.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_trace_returns_a_module_backed_by_the_graph():
    record = []
    m = Net(record).eval()
    x = ember.randn(2, 1, 6, 6)
    traced = ember.jit.trace(m, x)
    assert isinstance(traced, ember.nn.Module) and isinstance(traced, ember.jit.ScriptModule)
    assert any(n.op == "call_function" for n in traced.graph.nodes)
    assert "aten.conv2d.default(" in traced.code  # the graph names ATen overloads, as export
    _close(traced(x), m(x))
    # forward ran under the trace (is_tracing true) and then eagerly for the check.
    assert record[0] == (True, False)
    assert not ember.jit.is_tracing()
    # Parameters are shared with the original module.
    with ember.no_grad():
        m.fc.bias.add_(1.0)
    _close(traced(x), m(x))


def test_trace_a_function_and_trace_module():
    def fn(a, b):
        return ember.tanh(a) * b + 1

    a, b = ember.randn(3, 4), ember.randn(3, 4)
    traced = ember.jit.trace(fn, (a, b))
    _close(traced(a, b), fn(a, b))
    m = Net().eval()
    x = ember.randn(1, 1, 6, 6)
    _close(ember.jit.trace_module(m, {"forward": x})(x), m(x))


def test_script_module_and_functions():
    record = []
    m = Net(record).eval()
    scripted = ember.jit.script(m)
    assert isinstance(scripted, ember.jit.ScriptModule)
    assert record == [(False, True)]
    assert "def forward" in scripted.code
    assert len(list(scripted.graph.nodes)) > 3
    x = ember.randn(2, 1, 6, 6)
    _close(scripted(x), m(x))
    assert m.debug() == "ignored" and m.exported_method() == "exported"

    @ember.jit.script
    def add_one(t):
        return t + 1

    _close(add_one(ember.ones(3)), ember.full((3,), 2.0))
    assert ember.jit.script(add_one) is add_one


def test_script_raises_on_a_graph_break():
    with pytest.raises(RuntimeError, match="graph break"):
        ember.jit.script(Branchy())


def test_save_load_round_trip(tmp_path):
    m = Net().eval()
    x = ember.randn(2, 1, 6, 6)
    traced = ember.jit.trace(m, x)
    path = tmp_path / "net.pt"
    ember.jit.save(traced, path)
    loaded = ember.jit.load(path)
    _close(loaded(x), m(x))
    assert "conv2d" in loaded.code
    # The same file runs in C++.
    _close(ember._C._export_run(str(path), [x])[0], m(x))
    # A scripted module once called is saved in the export format, with the sizes of that call.
    scripted = ember.jit.script(m)
    scripted(x)
    scripted.save(tmp_path / "s.pt")
    _close(ember.jit.load(tmp_path / "s.pt")(x), m(x))


def test_load_keeps_the_saved_training_flag(tmp_path):
    # torch's loaded ScriptModule is in the mode it was saved in (an eval-mode deployment model
    # loads with training False), not in nn.Module's default training mode.
    import io

    x = ember.randn(2, 1, 6, 6)
    for training in (False, True):
        buf = io.BytesIO()
        ember.jit.save(ember.jit.trace(Net().train(training), x, check_trace=False), buf)
        buf.seek(0)
        loaded = ember.jit.load(buf)
        assert loaded.training is training
        assert all(sub.training is training for sub in loaded.modules())


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Net()
        self.out = nn.Sequential(nn.Linear(5, 2), nn.GELU())

    def forward(self, x):
        return self.out(self.net(x))


def test_save_load_a_scripted_module_never_called(tmp_path):
    # torch saves a scripted module without running it; the loaded one takes any batch size.
    m = Head().eval()
    scripted = ember.jit.script(m)
    ember.jit.save(scripted, tmp_path / "s.pt")
    loaded = ember.jit.load(tmp_path / "s.pt")
    assert isinstance(loaded, ember.jit.ScriptModule) and not loaded.training
    assert type(loaded).__name__ == "RecursiveScriptModule"
    for n in (1, 3):
        x = ember.randn(n, 1, 6, 6)
        _close(loaded(x), m(x))
    assert "def forward" in loaded.code and len(list(loaded.graph.nodes)) > 3
    assert all(p.requires_grad for p in loaded.parameters())
    assert sorted(loaded.state_dict()) == sorted(m.state_dict())
    # through a buffer, and saved again once loaded
    buf = io.BytesIO()
    loaded.save(buf)
    buf.seek(0)
    x = ember.randn(2, 1, 6, 6)
    _close(ember.jit.load(buf)(x), m(x))


def test_freeze_and_optimize_for_inference():
    m = Net()
    x = ember.randn(2, 1, 6, 6)
    scripted = ember.jit.script(m)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        ember.jit.freeze(scripted)
    for fn in (ember.jit.freeze, ember.jit.optimize_for_inference):
        with pytest.raises(RuntimeError, match="expects a ScriptModule as input"):
            fn(m)
    opt = ember.jit.optimize_for_inference(scripted)
    assert not scripted.training and not opt.training  # as torch, the argument is put in eval
    m.eval()
    _close(opt(x), m(x))
    frozen = ember.jit.freeze(ember.jit.trace(m, x))
    want = m(x)
    with ember.no_grad():
        m.fc.weight.mul_(2.0)  # a frozen module keeps the values it was frozen with
    _close(frozen(x), want)
    assert not ember.allclose(frozen(x), m(x))


def test_load_rejects_bad_files(tmp_path):
    path = tmp_path / "junk.pt"
    path.write_bytes(b"not a program at all")
    with pytest.raises(RuntimeError, match="ember.export.load"):
        ember.jit.load(path)
    with pytest.raises(TypeError):
        ember.jit.save(Net(), tmp_path / "plain.pt")
    # a scripted-graph file naming anything outside ember is refused, nothing is imported
    root = {"format": "ember.jit.script", "version": 1, "training": False, "state": {}}
    root.update(parameters={}, modules={"a": {"class": "os.Foo", "training": 0, "attrs": {}}})
    root["nodes"] = [["call_function", "f", {"fn": "os.system"}, ("ls",), {}]]
    ember.save(root, path)
    with pytest.raises(RuntimeError, match="outside ember.nn"):
        ember.jit.load(path)
    root["modules"] = {}
    ember.save(root, path)
    with pytest.raises(RuntimeError, match="function outside ember"):
        ember.jit.load(path)


def test_queries_outside_capture_and_annotate():
    assert ember.jit.is_tracing() is False
    assert ember.jit.is_scripting() is False
    assert ember.jit.annotate(list, [1]) == [1]
    assert ember.jit.Final[int] is int
