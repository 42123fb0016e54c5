"""ember.fx Interpreter, Transformer, ShapeProp, subgraph_rewriter, and the TraceError raised on
data-dependent control flow."""

import operator

import numpy as np
import pytest

import ember
from ember import fx, nn
from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata
from ember.fx.proxy import TraceError


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2)
        self.fc = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        y = ember.relu(self.conv(x))
        z = y.permute(0, 2, 3, 1)
        flat = ember.flatten(y, 1)
        return self.fc(flat), z, y.max(dim=1)


def test_interpreter_matches_the_module_and_dispatches_per_op():
    m = _Net()
    gm = fx.symbolic_trace(m)
    x = ember.randn(2, 3, 7, 7)
    got = fx.Interpreter(gm).run(x)
    want = m(x)
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), rtol=1e-6)

    seen = []

    class Counting(fx.Interpreter):
        def run_node(self, n):
            seen.append(n.op)
            return super().run_node(n)

        def call_function(self, target, args, kwargs):
            if target is ember.relu:
                return ember.nn.functional.leaky_relu(args[0], 0.5)
            return super().call_function(target, args, kwargs)

    out = Counting(gm).run(x)
    ref = m.fc(ember.flatten(ember.nn.functional.leaky_relu(m.conv(x), 0.5), 1))
    np.testing.assert_allclose(out[0].detach().numpy(), ref.detach().numpy(), rtol=1e-5)
    assert seen.count("placeholder") == 1 and seen.count("call_module") == 2
    assert seen[-1] == "output"


def test_interpreter_errors_name_the_node():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ember.matmul, (x, x)))
    gm = fx.GraphModule(nn.Module(), g)
    with pytest.raises(RuntimeError, match="While executing %matmul"):
        fx.Interpreter(gm).run(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        fx.Interpreter(gm).run()
    # initial_env skips nodes whose values are given.
    env = {x: ember.eye(2)}
    assert fx.Interpreter(gm).run(initial_env=env).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_transformer_rewrites_into_a_new_graph_module():
    m = _Net()
    gm = fx.symbolic_trace(m)

    class ReluToSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is ember.relu:
                return ember.sigmoid(*args)  # an ember call on a Proxy records a node
            return super().call_function(target, args, kwargs)

    new = ReluToSigmoid(gm).transform()
    assert isinstance(new, fx.GraphModule)
    targets = [n.target for n in new.graph.nodes]
    assert ember.sigmoid in targets and ember.relu not in targets
    assert ember.relu in [n.target for n in gm.graph.nodes]  # the original is untouched
    x = ember.randn(2, 3, 7, 7)
    ref = m.fc(ember.flatten(ember.sigmoid(m.conv(x)), 1))
    np.testing.assert_allclose(new(x)[0].detach().numpy(), ref.detach().numpy(), rtol=1e-5)
    # An identity Transformer reproduces the code.
    assert fx.Transformer(gm).transform().code == gm.code


def test_shape_prop_records_real_shapes():
    m = _Net()
    gm = fx.symbolic_trace(m)
    x = ember.randn(2, 3, 7, 7)
    ShapeProp(gm).propagate(x)
    by_name = {n.name: n for n in gm.graph.nodes}
    conv_meta = by_name["conv"].meta["tensor_meta"]
    assert isinstance(conv_meta, TensorMetadata)
    real = m.conv(x)
    assert conv_meta.shape == real.shape and conv_meta.stride == real.stride()
    assert conv_meta.dtype == ember.float32 and conv_meta.requires_grad is True
    assert conv_meta.memory_format == ember.contiguous_format and conv_meta.is_quantized is False
    perm = by_name["permute"].meta["tensor_meta"]
    assert tuple(perm.shape) == (2, 3, 3, 4) and perm.stride == real.permute(0, 2, 3, 1).stride()
    assert by_name["x"].meta["tensor_meta"].requires_grad is False
    # torch's ShapeProp records no example values
    assert "val" not in by_name["fc"].meta
    mx = by_name["max_1"].meta["tensor_meta"]
    assert type(mx) is tuple  # torch's return_types structseqs come back as plain tuples
    assert tuple(mx[0].shape) == (2, 3, 3) and mx[1].dtype == ember.int64
    assert by_name["output"].meta["type"] is tuple


def test_shape_prop_matches_torch_meta():
    torch = pytest.importorskip("torch")
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)

        def forward(self, x):
            return torch.relu(self.conv(x)).transpose(1, 3)

    class ENet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, stride=2)

        def forward(self, x):
            return ember.relu(self.conv(x)).transpose(1, 3)

    tgm, egm = torch.fx.symbolic_trace(TNet()), fx.symbolic_trace(ENet())
    TorchShapeProp(tgm).propagate(torch.randn(2, 3, 9, 9))
    ShapeProp(egm).propagate(ember.randn(2, 3, 9, 9))
    for tn, en in zip(tgm.graph.nodes, egm.graph.nodes):
        a, b = tn.meta["tensor_meta"], en.meta["tensor_meta"]
        assert tuple(a.shape) == tuple(b.shape) and a.stride == b.stride, tn.name
        assert a.requires_grad == b.requires_grad and str(a.dtype) == str(b.dtype)
        assert str(a.memory_format) == str(b.memory_format)


def test_dce_after_rewrite_and_delete_unused_submodules():
    m = _Net()
    gm = fx.symbolic_trace(m)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    z = out.args[0][1]
    out.args = (z,)
    assert gm.graph.eliminate_dead_code()
    gm.recompile()
    assert [n.name for n in gm.graph.nodes] == ["x", "conv", "relu", "permute", "output"]
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "fc") and hasattr(gm, "conv")
    x = ember.randn(1, 3, 7, 7)
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x)[1].detach().numpy())


def _pattern(a, b):
    return ember.relu(a + b)


def _replacement(a, b):
    return ember.sigmoid(a * b)


def test_replace_pattern_rewrites_every_match():
    def f(x, y, z):
        u = ember.relu(x + y)
        v = ember.relu(u + z)
        w = x + z  # not followed by relu: no match
        return u * v + w

    gm = fx.symbolic_trace(f)
    matches = fx.replace_pattern(gm, _pattern, _replacement)
    # The second add+relu overlaps nothing but uses the first one's output: both match.
    assert len(matches) == 2
    assert all(isinstance(m, fx.subgraph_rewriter.Match) for m in matches)
    assert all(m.anchor.op == "call_function" for m in matches)
    gm.graph.lint()
    targets = [n.target for n in gm.graph.nodes]
    assert ember.relu not in targets and targets.count(ember.sigmoid) == 2
    x, y, z = ember.randn(4), ember.randn(4), ember.randn(4)
    u = ember.sigmoid(x * y)
    v = ember.sigmoid(u * z)
    np.testing.assert_allclose(gm(x, y, z).numpy(), (u * v + (x + z)).numpy(), rtol=1e-6)


def test_replace_pattern_skips_matches_whose_inner_values_escape():
    def f(x, y):
        s = x + y
        return ember.relu(s), s  # the add is used outside the pattern

    gm = fx.symbolic_trace(f)
    assert fx.replace_pattern(gm, _pattern, _replacement) == []


def test_replace_pattern_with_constants_and_methods():
    def pattern(x):
        return x.view(-1).sum() * 2

    def replacement(x):
        return x.sum() * 2

    def f(a):
        return a.view(-1).sum() * 2 + a.view(-1).sum() * 3

    gm = fx.symbolic_trace(f)
    assert len(fx.replace_pattern(gm, pattern, replacement)) == 1  # `* 3` differs
    assert [n.target for n in gm.graph.nodes].count("view") == 1
    a = ember.randn(2, 3)
    np.testing.assert_allclose(gm(a).item(), f(a).item(), rtol=1e-5)


def test_replace_pattern_matches_torch():
    torch = pytest.importorskip("torch")

    def f(t, x, y):
        return t.relu(x + y) + t.relu(y + x)

    tgm = torch.fx.symbolic_trace(lambda x, y: f(torch, x, y))
    egm = fx.symbolic_trace(lambda x, y: f(ember, x, y))
    n_t = len(torch.fx.replace_pattern(tgm, lambda a, b: torch.relu(a + b), lambda a, b: a - b))
    n_e = len(fx.replace_pattern(egm, _pattern, lambda a, b: a - b))
    assert n_t == n_e == 2
    assert [n.op for n in tgm.graph.nodes] == [n.op for n in egm.graph.nodes]


# ---- data-dependent control flow -----------------------------------------------------------


class _Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # the line the error must name
            return x
        return -x


def test_bool_of_a_proxy_raises_trace_error_naming_the_line():
    with pytest.raises(TraceError) as info:
        fx.symbolic_trace(_Branchy())
    msg = str(info.value)
    assert msg.startswith("symbolically traced variables cannot be used as inputs to control flow")
    assert "test_fx_passes.py" in msg and "if x.sum() > 0:" in msg
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda x: [t for t in x], "cannot be iterated"),
        (lambda x: x.sum().item() + 1, "item()"),
        (lambda x: x.tolist(), "tolist()"),
        (lambda x: x + 1 if bool(x.max()) else x, "control flow"),
        (lambda x: x * 2 if x.shape[0] else x, "control flow"),
        (lambda x: ember.zeros(int(x.sum())), "int()"),
    ],
)
def test_data_dependent_code_raises_trace_error(fn, words):
    with pytest.raises(TraceError, match=words.replace("(", r"\(").replace(")", r"\)")) as info:
        fx.symbolic_trace(fn)
    assert "test_fx_passes.py" in str(info.value)


def test_len_of_a_proxy_says_how_to_wrap():
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing"):
        fx.symbolic_trace(lambda x: x * len(x))


def test_unpacking_a_known_length_is_traced():
    def f(x):
        a, b = x.chunk(2)
        return a - b

    gm = fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes].count(operator.getitem) == 2
    assert gm(ember.tensor([3.0, 1.0])).tolist() == [2.0]
