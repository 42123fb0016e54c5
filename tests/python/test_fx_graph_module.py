"""ember.fx GraphModule: attributes copied from the root, generated code, recompile,
print_readable, state_dict / to / pickling / deepcopy, submodule management."""

import copy
import operator
import pickle

import numpy as np
import pytest

import ember
from ember import fx, nn


class _Root(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        self.register_buffer("scale", ember.tensor([2.0, 2.0, 2.0]))
        self.register_buffer("tmp", ember.zeros(3), persistent=False)


def _graph_for_root():
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_module("lin", (x,))
    s = g.call_module("seq.0", (h,))
    s = g.call_module("seq.1", (s,))
    sc = g.get_attr("scale")
    tmp = g.get_attr("tmp")
    w = g.get_attr("lin.weight")
    m = g.call_function(operator.mul, (s, sc))
    m = g.call_function(operator.add, (m, tmp))
    t = g.call_method("sum", (w,))
    g.output({"out": m, "wsum": t})
    return g


def _reference(root, x):
    h = root.seq(root.lin(x)) * root.scale + root.tmp
    return h, root.lin.weight.sum()


def _check(gm, root, x):
    out = gm(x)
    ref, wsum = _reference(root, x)
    np.testing.assert_allclose(out["out"].detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(out["wsum"].item(), wsum.item(), rtol=1e-6)


def test_graph_module_copies_what_the_graph_needs():
    root = _Root()
    gm = fx.GraphModule(root, _graph_for_root())
    assert gm.lin is root.lin
    assert gm.seq.get_submodule("0") is root.seq[0]
    assert gm.scale is root.scale
    assert "tmp" in gm._non_persistent_buffers_set
    assert set(gm.state_dict()) == {
        "lin.weight",
        "lin.bias",
        "seq.0.weight",
        "seq.0.bias",
        "scale",
    }
    _check(gm, root, ember.randn(5, 4))


def test_generated_code_reads_like_python():
    gm = fx.GraphModule(_Root(), _graph_for_root())
    code = gm.code
    assert "def forward(self, x):" in code
    assert "lin = self.lin(x);  x = None" in code
    assert 'getattr(self.seq, "0")(lin)' in code or "getattr(self.seq, '0')(lin)" in code
    assert "scale = self.scale" in code
    assert "lin_weight = self.lin.weight" in code
    assert "mul = seq_1 * scale" in code
    assert "sum_1 = lin_weight.sum()" in code
    assert "return {'out': add, 'wsum': sum_1}" in code
    compile(code, "<test>", "exec")


def test_dict_root():
    root = _Root()
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("f", (x,)))
    gm = fx.GraphModule({"f": root.lin}, g)
    assert gm.f is root.lin
    with pytest.raises(RuntimeError, match="not provided in ``root``"):
        fx.GraphModule({}, g)


def test_recompile_after_editing_the_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    r = g.call_function(ember.relu, (x,))
    g.output(r)
    gm = fx.GraphModule(nn.Module(), g)
    t = ember.tensor([-1.0, 2.0])
    assert gm(t).tolist() == [0.0, 2.0]
    r.target = ember.neg
    gm.recompile()
    assert "ember.neg(x)" in gm.code
    assert gm(t).tolist() == [1.0, -2.0]
    # A new graph assigned regenerates the code too.
    g2 = fx.Graph()
    y = g2.placeholder("y")
    g2.output(g2.call_function(operator.mul, (y, 3)))
    gm.graph = g2
    assert gm(t).tolist() == [-3.0, 6.0]


def test_each_graph_module_has_its_own_forward():
    g1, g2 = fx.Graph(), fx.Graph()
    for g, f in ((g1, ember.neg), (g2, ember.abs)):
        x = g.placeholder("x")
        g.output(g.call_function(f, (x,)))
    a, b = fx.GraphModule(nn.Module(), g1), fx.GraphModule(nn.Module(), g2)
    t = ember.tensor([-1.0])
    assert a(t).item() == 1.0 and b(t).item() == 1.0 and a(-t).item() == -1.0
    assert isinstance(a, fx.GraphModule) and type(a) is not type(b)
    assert type(a).__name__ == "GraphModule"


def test_print_readable_and_class_name(capsys):
    gm = fx.GraphModule(_Root(), _graph_for_root(), class_name="MyModel")
    text = gm.print_readable(print_output=False)
    assert text.startswith("class MyModel(ember.nn.Module):")
    assert "    def forward(self, x):" in text
    gm.print_readable()
    assert "class MyModel" in capsys.readouterr().out
    assert "MyModel" in repr(gm) and gm.code in str(gm)


def test_print_readable_annotates_known_shapes():
    g = fx.Graph()
    x = g.placeholder("x")
    r = g.call_function(ember.relu, (x,))
    r.meta["val"] = ember.zeros(2, 3)
    g.output(r)
    text = fx.GraphModule(nn.Module(), g).print_readable(print_output=False)
    assert 'relu: "f32[2, 3]" = ember.relu(x)' in text


def test_constants_in_code():
    g = fx.Graph()
    x = g.placeholder("x")
    c = g.call_function(ember.full, ((2,), float("inf")), {"dtype": ember.float64})
    s = g.call_function(operator.getitem, (x, (slice(None, 1), Ellipsis)))
    t = g.call_method("to", (s, ember.float64))
    g.output((g.call_function(operator.add, (t, c)), -1, None))
    gm = fx.GraphModule(nn.Module(), g)
    assert "dtype = ember.float64" in gm.code
    out, m1, none = gm(ember.ones(3, 2))
    assert out.dtype == ember.float64 and out.shape == (1, 2) and m1 == -1 and none is None
    assert out.tolist() == [[float("inf"), float("inf")]]


def test_to_state_dict_and_load_state_dict():
    root = _Root()
    gm = fx.GraphModule(root, _graph_for_root())
    other = fx.GraphModule(_Root(), _graph_for_root())
    other.load_state_dict(gm.state_dict())
    x = ember.randn(2, 4)
    np.testing.assert_allclose(other(x)["out"].detach().numpy(), gm(x)["out"].detach().numpy())
    gm64 = gm.to(ember.float64)
    assert gm64 is gm and gm.lin.weight.dtype == ember.float64
    assert gm(x.double())["out"].dtype == ember.float64


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_pickle_and_deepcopy_rebuild_from_the_graph(how):
    root = _Root()
    gm = fx.GraphModule(root, _graph_for_root(), class_name="Saved")
    gm.extra = "kept"
    gm.graph.find_nodes(op="call_module")[0].meta["note"] = "m"
    clone = pickle.loads(pickle.dumps(gm)) if how == "pickle" else copy.deepcopy(gm)
    assert clone.code == gm.code
    # torch names every copy GraphModule, whatever the original's class_name
    assert type(clone).__name__ == "GraphModule" and clone.extra == "kept"
    assert clone.lin is not gm.lin
    assert clone.graph.find_nodes(op="call_module")[0].meta == {"note": "m"}
    x = ember.randn(3, 4)
    np.testing.assert_allclose(clone(x)["out"].detach().numpy(), gm(x)["out"].detach().numpy())
    # The copies are independent.
    with ember.no_grad():
        clone.scale.mul_(0)
    assert gm.scale.tolist() == [2.0, 2.0, 2.0]
    assert set(clone.state_dict()) == set(gm.state_dict())


def test_pickle_stores_no_source_and_checks_names():
    gm = fx.GraphModule(_Root(), _graph_for_root())
    data = pickle.dumps(gm)
    assert b"def forward" not in data
    state = gm.graph.__reduce__()[1][0]
    bad = dict(state)
    op, name, target, args, kwargs, meta = bad["nodes"][0]
    bad["nodes"] = [(op, "x; import os", target, args, kwargs, meta)] + bad["nodes"][1:]
    with pytest.raises(pickle.UnpicklingError):
        gm.graph.__reduce__()[0](bad)


def test_copy_copy_shares_modules():
    gm = fx.GraphModule(_Root(), _graph_for_root())
    c = copy.copy(gm)
    assert c.lin is gm.lin and c.code == gm.code


def test_submodule_management():
    root = _Root()
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("lin", (x,)))
    gm = fx.GraphModule(root, g)
    assert gm.add_submodule("extra.deep", nn.ReLU())
    assert isinstance(gm.extra.deep, nn.ReLU)
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra") and hasattr(gm, "lin")
    assert gm.delete_submodule("lin") is True
    assert gm.delete_submodule("lin") is False


def test_graph_module_matches_torch_code():
    torch = pytest.importorskip("torch")
    tg = torch.fx.Graph()
    tx = tg.placeholder("x")
    tr = tg.call_function(torch.relu, (tx,))
    tv = tg.call_method("view", (tr, -1))
    tg.output(tg.call_function(operator.add, (tv, 1)))
    tgm = torch.fx.GraphModule(torch.nn.Module(), tg)
    g = fx.Graph()
    x = g.placeholder("x")
    r = g.call_function(ember.relu, (x,))
    v = g.call_method("view", (r, -1))
    g.output(g.call_function(operator.add, (v, 1)))
    gm = fx.GraphModule(nn.Module(), g)
    body = lambda code: [ln.strip() for ln in code.strip().splitlines() if ln.strip()][:5]
    assert [ln.replace("ember.", "torch.") for ln in body(gm.code)] == body(tgm.code)
