"""Exported graphs name torch's ATen overloads (issue 13): op targets, argument order, node
names, getitem nodes of list-returning ops and the printed signature as torch 2.13's export
shows them for the same program; and the renamed graphs still run, save, load, run in C++ and
export to ONNX through the one name table (python/ember/export/_aten_names.py)."""

import math
import operator

import pytest

import ember

nn = ember.nn


def _cases(lib):
    """The programs compared, built from ``lib`` (ember or torch): name -> (module, inputs)."""
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 8)
            self.l2 = nn.Linear(8, 2, bias=False)

        def forward(self, x):
            h = self.l2(F.gelu(self.l1(x), approximate="tanh")).sigmoid()
            return h * 2 - x.mean(-1, keepdim=True) + 1

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.c2 = nn.Conv2d(4, 4, 3, stride=2)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y = F.max_pool2d(lib.relu(self.bn(self.c(x))), 2)
            y = F.adaptive_avg_pool2d(self.c2(y), 1)
            return F.log_softmax(self.fc(lib.flatten(y, 1)), dim=1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)
            self.o = nn.Linear(8, 8)
            self.ln = nn.LayerNorm(8)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
            q = q.view(b, t, 2, 4).transpose(1, 2)
            k = k.view(b, t, 2, 4).transpose(1, 2)
            v = v.view(b, t, 2, 4).transpose(1, 2)
            a = ((q @ k.transpose(-2, -1)) / math.sqrt(4)).softmax(dim=-1)
            y = (a @ v).transpose(1, 2).reshape(b, t, c)
            z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return x + self.o(y) + z.transpose(1, 2).reshape(b, t, c)

    class Methods(nn.Module):
        def forward(self, x):
            a, b = x.view(2, 8).permute(1, 0).chunk(2, dim=1)
            c = lib.cat([a, b], 1).unsqueeze(0).squeeze(0).t().contiguous()
            return (
                a * b,
                x.transpose(0, 1).softmax(-1),
                c.sum(),
                lib.stack([a, b]).amax(0),
                c.expand(2, 2, 8),
            )

    class Lists(nn.Module):
        def forward(self, x):
            a, b = x.split(2, dim=1)
            c = lib.unbind(x, 0)
            d = x.split([1, 3], 1)
            return a + b, c[0] * c[1], d[0], lib.chunk(x, 2)

    class Index(nn.Module):
        def forward(self, x):
            return (
                x[2:], x[:3], x[::2], x[:, 1], x[-1], x[:, 1:3], x[1:, :2], x[0, 1], x[..., 1],
                x[None],
            )  # fmt: skip

    class Math(nn.Module):
        def forward(self, x):
            y = x.clamp(-0.5, 0.5) + lib.clamp(x, min=x * 0) + lib.minimum(x, x * 2)
            y = y + lib.atan2(x, x + 2) + x.max() - lib.min(x) + x.argmax(1, keepdim=True)
            y = y + x.argmin() + x.amin(0) + x.cumsum(1) + x.tril() + lib.triu(x, 1)
            return y + x.round() + x.round(decimals=2) + x.clamp(max=1)

    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = nn.Embedding(10, 4)
            self.d = nn.Dropout(0.1)

        def forward(self, input):  # a builtin's name: torch's export keeps it
            h = self.d(self.e(input))
            return F.leaky_relu(h, 0.2) + F.elu(h) + F.hardtanh(h) + lib.pow(h, 2) + h / 3

    class TrainNorms(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)
            self.gn = nn.GroupNorm(1, 3)

        def forward(self, x):
            return self.gn(self.bn(x).unsqueeze(-1)).float() // 2

    ints = lib.tensor([[1, 2], [3, 4]])
    return {
        "mlp": (MLP(), (lib.randn(3, 4),)),
        "convnet": (ConvNet().eval(), (lib.randn(2, 3, 8, 8),)),
        "attention": (Attention(), (lib.randn(2, 5, 8),)),
        "methods": (Methods(), (lib.randn(4, 4),)),
        "lists": (Lists(), (lib.randn(4, 4),)),
        "index": (Index(), (lib.randn(4, 4),)),
        "math": (Math(), (lib.randn(4, 4),)),
        "embed": (Embed().eval(), (ints,)),
        "train_norms": (TrainNorms().train(), (lib.randn(4, 3),)),
    }


def _calls(ep):
    """(name, target, args, kwargs) of each call, nodes by name; torch's metadata asserts left
    out (ember's graphs carry no device/layout checks)."""

    def show(a):
        if hasattr(a, "op") and hasattr(a, "name"):
            return a.name
        if isinstance(a, (list, tuple)):
            return type(a)(show(v) for v in a)
        return str(a).split(".")[-1] if "dtype" in type(a).__name__ else a  # float32

    return [
        (n.name, str(n.target), show(n.args), {k: show(v) for k, v in n.kwargs.items()})
        for n in ep.graph.nodes
        if n.op == "call_function" and "_assert_tensor_metadata" not in str(n.target)
    ]


@pytest.mark.parametrize(
    "case",
    ["mlp", "convnet", "attention", "methods", "lists", "index", "math", "embed", "train_norms"],
)
def test_graphs_name_what_torch_names(case):
    torch = pytest.importorskip("torch")
    tmod, targs = _cases(torch)[case]
    emod, _ = _cases(ember)[case]
    emod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmod.state_dict().items()})
    eargs = tuple(ember.tensor(a.numpy()) for a in targs)
    tep, eep = torch.export.export(tmod, targs), ember.export.export(emod, eargs)
    got, want = str(_calls(eep)).replace("ember.", ""), str(_calls(tep)).replace("torch.", "")
    assert got == want
    assert str(eep.graph_signature) == str(tep.graph_signature)
    out = list(eep.graph.nodes)[-1]
    tout = list(tep.graph.nodes)[-1]
    assert [n.name for n in out.args[0]] == [n.name for n in tout.args[0]]  # a flat tuple


def test_targets_are_the_overload_objects():
    m, (x,) = _cases(ember)["mlp"]
    ep = ember.export.export(m, (x,))
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    aten = ember.ops.aten
    assert targets.count(aten.linear.default) == 2
    assert aten.sigmoid.default in targets and aten.add.Tensor in targets
    assert aten.mean.dim in targets and aten.gelu.default in targets
    assert "ember.ops.aten.linear.default(x, p_l1_weight, p_l1_bias)" in ep.graph_module.code
    # torch's schema for the overloads ember's registry lacked
    assert str(aten.linear.default._schema).startswith("aten::linear(Tensor input, Tensor weight")
    assert aten.batch_norm.default._schema.arguments[3].name == "running_mean"


@pytest.mark.parametrize(
    "case", ["mlp", "convnet", "attention", "methods", "lists", "index", "math", "embed"]
)
def test_renamed_graphs_compute_what_eager_does(case, tmp_path):
    m, args = _cases(ember)[case]
    want = m(*args)
    ep = ember.export.export(m, args)
    got = ep.module()(*args)
    assert str(type(got)) == str(type(want))
    _close(got, want)
    _close(ep.run_decompositions().module()(*args), want)
    path = str(tmp_path / "p.ember")
    ember.export.save(ep, path)
    _close(ember.export.load(path).module()(*args), want)
    flat = [want] if isinstance(want, ember.Tensor) else _flatten(want)
    _close(list(ember._C._export_run(path, list(args))), flat)


def test_overloads_accept_torchs_arguments():
    aten = ember.ops.aten
    x, w = ember.randn(3, 4), ember.randn(5, 4)
    _close(aten.linear.default(x, w), x @ w.t())
    rm, rv = ember.zeros(4), ember.ones(4)
    y = aten.batch_norm.default(x, None, None, rm, rv, False, 0.1, 1e-5, False)
    _close(y, x / math.sqrt(1 + 1e-5))
    _close(aten.embedding.default(w, ember.tensor([4, 0])), w[[4, 0]])
    parts = aten.split_with_sizes.default(x, [1, 3], 1)
    assert [p.shape[1] for p in parts] == [1, 3]
    _close(aten.softmax.int(x, -1), x.softmax(-1))


def test_train_mode_updates_stay_in_place_then_become_mutations():
    m, (x,) = _cases(ember)["train_norms"]
    ep = ember.export.export(m, (x,))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets[:2] == ["aten.add_.Tensor", "aten.batch_norm.default"]
    dep = ep.run_decompositions()
    kinds = [s.kind.name for s in dep.graph_signature.output_specs]
    assert kinds == ["BUFFER_MUTATION"] * 3 + ["USER_OUTPUT"]
    twin = _cases(ember)["train_norms"][0]
    twin.load_state_dict(m.state_dict())
    run = dep.module()
    for _ in range(2):
        _close(run(x), twin(x))
    _close(run.bn.running_mean, twin.bn.running_mean)
    assert int(run.bn.num_batches_tracked) == 2


def test_exported_lists_read_every_item():
    m, (x,) = _cases(ember)["lists"]
    ep = ember.export.export(m, (x,))
    nodes = list(ep.graph.nodes)
    unbind = next(n for n in nodes if n.name == "unbind")
    after = nodes[nodes.index(unbind) + 1 : nodes.index(unbind) + 5]
    assert [(n.target, n.args[1]) for n in after] == [(operator.getitem, k) for k in range(4)]
    assert [n.name for n in after] == ["getitem_2", "getitem_3", "getitem_4", "getitem_5"]


def test_onnx_export_of_a_renamed_program():
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    m, (x,) = _cases(ember)["convnet"]
    ep = ember.export.export(m, (x,))
    program = ember.onnx.export(ep, (x,))
    onnx.checker.check_model(program.model_proto)
    (got,) = program(x)
    _close(got, m(x))


def _flatten(v):
    if isinstance(v, (list, tuple)):
        return [t for item in v for t in _flatten(item)]
    return [v]


def _close(a, b, tol=1e-5):
    a, b = _flatten(a), _flatten(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and ember.allclose(x, y, rtol=tol, atol=tol), (x, y)
