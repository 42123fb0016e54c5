"""ember.fx.symbolic_trace on models built from nn layers: the GraphModule computes what the
module computes, and the graph has the structure torch.fx gives the same torch model."""

import operator

import numpy as np
import pytest

import ember
from ember import fx

# ---- models written once against a torch-like namespace (ember or torch) ----------------------


def make_models(t):
    nn, F = t.nn, t.nn.functional

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.avg = nn.AdaptiveAvgPool2d((2, 2))
            self.drop = nn.Dropout(0.5)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = self.avg(t.tanh(self.conv2(x)))
            x = t.flatten(x, 1)
            return F.log_softmax(self.fc(self.drop(x)), dim=1)

    class Residual(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

        def forward(self, x):
            return x + self.ff(self.norm(x))

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Residual(6) for _ in range(3)])
            self.acts = nn.ModuleDict({"a": nn.SiLU(), "b": nn.LeakyReLU(0.1)})
            self.register_buffer("shift", t.arange(6.0))

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            x = self.acts["a"](x) + self.acts["b"](x) - self.shift
            b, n, d = x.shape
            y = x.view(b * n, d).permute(1, 0).contiguous()
            return y.sum(dim=0), x[:, 0], x.transpose(1, 2).reshape(b, -1).mean(-1)

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(5, 7, batch_first=True)
            self.head = nn.Linear(7, 3)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out[:, -1]) + h[0].sum(-1, keepdim=True), c

    class Params(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(t.randn(4, 4))
            self.bias = nn.Parameter(t.zeros(4))
            self.inner = nn.Linear(4, 4)

        def forward(self, x, scale=2.0):
            y = F.linear(x, self.weight, self.bias) * scale
            y = t.matmul(y, self.inner.weight.t())
            z = t.cat([y, x], dim=-1)
            parts = t.chunk(z, 2, dim=-1)
            return {"sum": parts[0] + parts[1], "max": t.max(z, dim=-1).values}

    class Pooling(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Conv1d(3, 6, 3),
                nn.ReLU(),
                nn.AvgPool1d(2),
                nn.Hardtanh(),
                nn.Flatten(),
            )
            self.sig = nn.Sigmoid()

        def forward(self, x):
            y = self.layers(x)
            return self.sig(y), t.softmax(y, dim=-1)

    return {
        "convnet": (ConvNet, lambda: [t.randn(2, 1, 8, 8)]),
        "stack": (Stack, lambda: [t.randn(2, 4, 6)]),
        "recurrent": (Recurrent, lambda: [t.randn(2, 3, 5)]),
        "params": (Params, lambda: [t.randn(3, 4)]),
        "pooling": (Pooling, lambda: [t.randn(2, 3, 10)]),
    }


MODELS = make_models(ember)


def _flat(out):
    if isinstance(out, dict):
        return [v for k in sorted(out) for v in _flat(out[k])]
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _flat(o)]
    return [out]


def _target_name(node):
    t = node.target
    if isinstance(t, str):
        return t
    return getattr(t, "__name__", str(t))


def structure(graph):
    return [(n.op, n.name, _target_name(n)) for n in graph.nodes]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_traced_module_computes_what_the_module_computes(name):
    cls, inputs = MODELS[name]
    ember.manual_seed(0)
    m = cls().eval()
    gm = fx.symbolic_trace(m)
    gm.graph.lint()
    args = inputs()
    for got, want in zip(_flat(gm(*args)), _flat(m(*args))):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    # The code is regenerated identically and keeps working.
    assert gm.recompile().src == gm.code
    assert type(gm).__name__ == type(m).__name__


@pytest.mark.parametrize("name", sorted(MODELS))
def test_graph_structure_matches_torch_fx(name):
    torch = pytest.importorskip("torch")
    theirs = fx_torch = make_models(torch)[name][0]()
    ours = fx.symbolic_trace(MODELS[name][0]())
    fx_torch = torch.fx.symbolic_trace(theirs)
    assert structure(ours.graph) == structure(fx_torch.graph)


def test_leaf_modules_and_containers():
    m = MODELS["stack"][0]()
    gm = fx.symbolic_trace(m)
    modules = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    # ModuleList entries (user modules) are traced through; their ember.nn layers are leaves.
    assert modules[:5] == ["blocks.0.norm", "blocks.0.ff.0", "blocks.0.ff.1", "blocks.0.ff.2"] + [
        "blocks.1.norm"
    ]
    assert "acts.a" in modules and "acts.b" in modules
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["shift"]
    # The LSTM is a leaf; its tuple output is unpacked with getitem nodes.
    rec = fx.symbolic_trace(MODELS["recurrent"][0]())
    lstm = next(n for n in rec.graph.nodes if n.op == "call_module")
    assert lstm.target == "lstm"
    assert {u.target for u in lstm.users} == {operator.getitem}


def test_parameters_become_get_attr_nodes():
    m = MODELS["params"][0]()
    gm = fx.symbolic_trace(m)
    attrs = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert attrs == ["weight", "bias", "inner.weight"]
    assert gm.weight is m.weight and gm.inner.weight is m.inner.weight
    lin = next(n for n in gm.graph.nodes if n.target is ember.nn.functional.linear)
    assert [a.name for a in lin.args] == ["x", "weight", "bias"]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert [p.target for p in placeholders] == ["x", "scale"] and placeholders[1].args == (2.0,)
    x = ember.randn(2, 4)
    np.testing.assert_allclose(
        gm(x, 3.0)["sum"].detach().numpy(), m(x, 3.0)["sum"].detach().numpy()
    )


def test_gradients_flow_through_the_graph_module():
    m = MODELS["convnet"][0]()
    gm = fx.symbolic_trace(m)
    x = ember.randn(2, 1, 8, 8)
    gm.eval()
    gm(x).sum().backward()
    g1 = m.conv1.weight.grad.clone()
    m.zero_grad()
    m.eval()
    m(x).sum().backward()
    np.testing.assert_allclose(g1.numpy(), m.conv1.weight.grad.numpy(), rtol=1e-5)


def test_trace_a_function():
    def f(x, y):
        z = ember.relu(x) * 2 + y
        return ember.sigmoid(z).sum(dim=1), z[0]

    gm = fx.symbolic_trace(f)
    assert type(gm).__name__ == "f"
    x, y = ember.randn(3, 4), ember.randn(3, 4)
    for a, b in zip(gm(x, y), f(x, y)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert [n.op for n in gm.graph.nodes] == ["placeholder"] * 2 + ["call_function"] * 4 + [
        "call_method",
        "call_function",
        "output",
    ]


def test_tensor_operators_with_a_real_tensor_on_the_left():
    c = ember.tensor([1.0, 2.0, 3.0])

    def f(x):
        return c * x, c - x, c[0] + x, 2**x

    gm = fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert operator.mul in targets and operator.sub in targets and operator.pow in targets
    x = ember.tensor([0.5, 1.0, 2.0])
    for a, b in zip(gm(x), f(x)):
        np.testing.assert_allclose(a.numpy(), b.numpy())
    # The constant tensor is kept as an attribute of the GraphModule.
    assert any(
        n.op == "get_attr" and n.target.startswith("_tensor_constant") for n in gm.graph.nodes
    )


def test_concrete_args_specialize_control_flow():
    def f(x, flag):
        if flag:
            return x + 1
        return x - 1

    gm = fx.symbolic_trace(f, concrete_args={"flag": True})
    x = ember.zeros(2)
    assert gm(x).tolist() == [1.0, 1.0]
    assert not any(n.target is operator.sub for n in gm.graph.nodes)


def test_wrap_records_a_free_function():
    gm = fx.symbolic_trace(_uses_wrapped)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[0].target is _my_wrapped
    assert gm(ember.ones(2)).tolist() == [4.0, 4.0]


def _my_wrapped(x):
    # Tracing into this would fail: it needs len() of its input.
    return x * len(x)


fx.wrap("_my_wrapped")


def _uses_wrapped(x):
    return _my_wrapped(x) + 2


def test_wrapped_functions_are_restored_after_tracing():
    fx.symbolic_trace(_uses_wrapped)
    assert _my_wrapped(ember.ones(3)).tolist() == [3.0, 3.0, 3.0]
    assert globals()["_my_wrapped"].__name__ == "_my_wrapped"
    assert not hasattr(globals()["_my_wrapped"], "__fx_original__")


def test_module_classes_are_restored_and_eager_unchanged():
    m = MODELS["stack"][0]()
    classes = [type(mod) for mod in m.modules()]
    fx.symbolic_trace(m)
    assert [type(mod) for mod in m.modules()] == classes
    # Also after a failed trace.

    class Bad(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(2, 2)

        def forward(self, x):
            if self.lin(x).sum() > 0:
                return x
            return -x

    bad = Bad()
    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(bad)
    assert type(bad.lin) is ember.nn.Linear and type(bad) is Bad
    assert bad(ember.ones(1, 2)).shape == (1, 2)


def test_nn_module_stack_meta():
    gm = fx.symbolic_trace(MODELS["stack"][0]())
    norm = next(n for n in gm.graph.nodes if n.target == "blocks.1.norm")
    assert "blocks.1" in norm.meta["nn_module_stack"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_retrace_pickle_and_deepcopy_of_traced_modules(name):
    import copy
    import pickle

    cls, inputs = MODELS[name]
    gm = fx.symbolic_trace(cls().eval())
    again = fx.symbolic_trace(gm)
    assert [(n.op, n.name) for n in again.graph.nodes] == [(n.op, n.name) for n in gm.graph.nodes]
    args = inputs()
    want = _flat(gm(*args))
    for other in (again, pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)):
        for got, ref in zip(_flat(other(*args)), want):
            np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-6)


def test_tracing_an_nn_layer_as_root_and_moving_it():
    lin = ember.nn.Linear(3, 2)
    gm = fx.symbolic_trace(lin)
    assert [n.op for n in gm.graph.nodes] == ["placeholder"] + ["get_attr"] * 2 + [
        "call_function",
        "output",
    ]
    gm.to(ember.float64)
    x = ember.randn(4, 3, dtype=ember.float64)
    np.testing.assert_allclose(gm(x).detach().numpy(), lin(x).detach().numpy())


def test_training_mode_updates_running_stats_through_the_graph_module():
    m = ember.nn.Sequential(ember.nn.BatchNorm1d(3), ember.nn.Dropout(0.5))
    gm = fx.symbolic_trace(m)
    assert gm.training
    before = m[0].running_mean.clone()
    gm(ember.randn(8, 3) + 5)
    assert not ember.equal(before, m[0].running_mean)  # shared buffers were updated


# torch's Python nn.functional functions hand the tracer their required arguments by position and
# the defaulted ones by keyword, defaults filled in; the graph's code prints that form, under
# nn.functional's name (ember.max_pool2d is the same function; torch's is another op).
def _handed_model(t):
    F = t.nn.functional

    class M(t.nn.Module):
        def forward(self, x):
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = F.max_pool2d(x, kernel_size=1, stride=1, padding=0)
            x = F.relu(x, inplace=True)
            x = F.softmax(x, 1)
            return F.dropout(x, 0.1) + F.gelu(x)

    return M()


def test_trace_prints_functional_defaults_as_torch():
    code = fx.symbolic_trace(_handed_model(ember)).code
    assert (
        "relu = ember.nn.functional.relu(x, inplace = False);  x = None\n"
        "    max_pool2d = ember.nn.functional.max_pool2d(relu, 2, stride = None, padding = 0, "
        "dilation = 1, ceil_mode = False, return_indices = False);  relu = None\n"
        "    max_pool2d_1 = ember.nn.functional.max_pool2d(max_pool2d, 1, stride = 1, padding = 0, "
        "dilation = 1, ceil_mode = False, return_indices = False);  max_pool2d = None\n"
        "    relu_1 = ember.nn.functional.relu(max_pool2d_1, inplace = True);  "
        "max_pool2d_1 = None\n"
        "    softmax = ember.nn.functional.softmax(relu_1, dim = 1, _stacklevel = 3, dtype = None);"
    ) in code
    x = ember.rand(1, 1, 4, 4)
    gm = fx.symbolic_trace(_handed_model(ember))
    ember.manual_seed(0)
    out = gm(x)
    ember.manual_seed(0)
    assert ember.equal(out, _handed_model(ember)(x))
    torch = pytest.importorskip("torch")
    torch_fx = pytest.importorskip("torch.fx")
    want = torch_fx.symbolic_trace(_handed_model(torch)).code
    # gelu is a binding in torch (torch._C._nn.gelu), a Python function in ember
    want = want.replace("torch._C._nn.gelu", "torch.nn.functional.gelu")
    assert code.replace("ember.", "torch.") == want
