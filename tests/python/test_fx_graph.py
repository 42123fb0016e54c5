"""ember.fx Graph and Node built by hand: structure, editing, dead-code elimination, lint,
printing and the generated code."""

import operator

import pytest

import ember
from ember import fx


def _add_relu_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = g.call_function(operator.add, (x, y))
    r = g.call_function(ember.relu, (a,))
    g.output(r)
    return g, x, y, a, r


def test_nodes_in_order_with_ops_names_and_users():
    g, x, y, a, r = _add_relu_graph()
    nodes = list(g.nodes)
    assert [n.op for n in nodes] == ["placeholder"] * 2 + ["call_function"] * 2 + ["output"]
    assert [n.name for n in nodes] == ["x", "y", "add", "relu", "output"]
    assert a.args == (x, y) and a.kwargs == {}
    assert list(x.users) == [a] and list(a.users) == [r]
    assert a.all_input_nodes == [x, y]
    assert len(g.nodes) == 5
    assert [n.name for n in reversed(g.nodes)] == ["output", "relu", "add", "y", "x"]
    assert x.next is y and y.prev is x


def test_duplicate_names_get_suffixes_and_builtins_are_avoided():
    g = fx.Graph()
    x = g.placeholder("x")
    r1 = g.call_function(ember.relu, (x,))
    r2 = g.call_function(ember.relu, (r1,))
    r3 = g.call_function(ember.relu, (r2,))
    ga = g.call_function(getattr, (r3, "shape"))
    m = g.call_module("layer1.conv", (r3,))
    g.output((ga, m))
    assert [r1.name, r2.name, r3.name] == ["relu", "relu_1", "relu_2"]
    assert ga.name == "getattr_1"
    assert m.name == "layer1_conv"


def test_args_setter_updates_users_and_args_are_immutable():
    g, x, y, a, r = _add_relu_graph()
    a.args = (x, x)
    assert a not in y.users and a in x.users
    assert a.all_input_nodes == [x]
    l = g.call_function(ember.cat, ([x, y],))
    with pytest.raises(NotImplementedError):
        l.args[0].append(x)
    assert l in y.users
    l.update_arg(0, [x])
    assert l not in y.users
    l.update_kwarg("dim", 0)
    assert l.kwargs == {"dim": 0}


def test_replace_all_uses_with_and_replace_input_with():
    g, x, y, a, r = _add_relu_graph()
    with g.inserting_after(a):
        m = g.call_function(operator.mul, (a, 2))
    changed = a.replace_all_uses_with(m, delete_user_cb=lambda u: u is not m)
    assert changed == [r]
    assert r.args == (m,) and m.args == (a, 2)
    assert list(a.users) == [m]
    r.replace_input_with(m, y)
    assert r.args == (y,) and not m.users


def test_inserting_before_after_prepend_append():
    g, x, y, a, r = _add_relu_graph()
    with g.inserting_before(r):
        n1 = g.call_function(operator.neg, (a,))
        n2 = g.call_function(operator.neg, (n1,))
    assert [n.name for n in g.nodes] == ["x", "y", "add", "neg", "neg_1", "relu", "output"]
    with g.inserting_after(x):
        n3 = g.call_function(operator.pos, (x,))
        n4 = g.call_function(operator.pos, (n3,))
    # As in torch, each node goes right after `x`, so the later one comes first.
    assert [n.name for n in g.nodes][:4] == ["x", "pos_1", "pos", "y"]
    assert n4.next is n3
    r.append(n2)  # moves n2 after r
    assert r.next is n2
    a.prepend(n2)
    assert n2.next is a
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_erase_node_and_its_errors():
    g, x, y, a, r = _add_relu_graph()
    with pytest.raises(RuntimeError, match="Tried to erase Node add but it still had 1 users"):
        g.erase_node(a)
    out = next(n for n in g.nodes if n.op == "output")
    out.args = (a,)
    g.erase_node(r)
    assert [n.name for n in g.nodes] == ["x", "y", "add", "output"]
    assert list(a.users) == [out]
    # The erased name stays taken, as torch.fx's: a later node gets a fresh suffix.
    with g.inserting_before(out):
        again = g.call_function(ember.relu, (a,))
    assert again.name == "relu_1"


def test_erasing_while_iterating():
    g = fx.Graph()
    x = g.placeholder("x")
    prev = x
    for _ in range(5):
        prev = g.call_function(ember.relu, (prev,))
    g.output(x)
    for n in reversed(g.nodes):
        if n.op == "call_function":
            g.erase_node(n)
    assert [n.op for n in g.nodes] == ["placeholder", "output"]


def test_eliminate_dead_code_keeps_impure_nodes():
    g = fx.Graph()
    x = g.placeholder("x")
    g.placeholder("unused")
    dead = g.call_function(ember.relu, (x,))
    g.call_function(ember.sin, (dead,))  # dead chain
    g.call_method("add_", (x, 1))  # in-place: kept
    g.call_function(ember.nn.functional.dropout, (x,))  # random: kept
    g.call_function(ember.rand, (3,))  # random: kept
    live = g.call_function(ember.cos, (x,))
    g.output(live)
    assert g.eliminate_dead_code() is True
    assert [n.name for n in g.nodes] == ["x", "unused", "add_", "dropout", "rand", "cos", "output"]
    assert g.eliminate_dead_code() is False
    # A custom impurity rule.
    assert g.eliminate_dead_code(is_impure_node=lambda n: n.op in ("placeholder", "output"))
    assert [n.name for n in g.nodes] == ["x", "unused", "cos", "output"]


def test_has_side_effect_keeps_the_call():
    calls = []

    @fx.has_side_effect
    def record(t):
        calls.append(t)

    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(record, (x,))
    g.output(x)
    g.eliminate_dead_code()
    gm = fx.GraphModule(ember.nn.Module(), g)
    gm(ember.ones(1))
    assert len(calls) == 1


def test_lint_finds_faults():
    g, x, y, a, r = _add_relu_graph()
    g.lint()
    other = fx.Graph()
    ox = other.placeholder("x")
    a.args = (ox, y)  # accepted, as torch's Node accepts it: lint() reports it
    with pytest.raises(RuntimeError, match="does not belong to this Graph"):
        g.lint()
    a.args = (x, y)
    gm_root = ember.nn.Module()
    g2 = fx.Graph()
    p = g2.placeholder("x")
    m = g2.call_module("missing", (p,))
    g2.output(m)
    g2.owning_module = gm_root
    with pytest.raises(RuntimeError, match="references nonexistent attribute"):
        g2.lint()


def test_node_copy_and_graph_copy():
    g, x, y, a, r = _add_relu_graph()
    r.meta["note"] = 1
    g2 = fx.Graph()
    val_map = {}
    out = g2.graph_copy(g, val_map)
    assert out is val_map[r]
    g2.output(out)
    assert [n.name for n in g2.nodes] == ["x", "y", "add", "relu", "output"]
    assert val_map[r].meta == {"note": 1} and val_map[r].meta is not r.meta
    gm = fx.GraphModule(ember.nn.Module(), g2)
    t = ember.tensor([-1.0, 2.0])
    assert gm(t, t).tolist() == [0.0, 4.0]


def test_str_format_node_and_print_tabular(capsys):
    g, x, y, a, r = _add_relu_graph()
    text = str(g)
    assert text.startswith("graph():")
    assert "%x : [num_users=1] = placeholder[target=x]" in text
    assert "%add : [num_users=1] = call_function[target=operator.add](args = (%x, %y)" in text
    assert "%relu : [num_users=1] = call_function[target=ember.relu](args = (%add,)" in text
    assert text.endswith("return relu")
    g.print_tabular()
    printed = capsys.readouterr().out
    assert "opcode" in printed and "ember.relu" in printed and "placeholder" in printed


def test_torch_graph_printout_has_the_same_shape():
    torch = pytest.importorskip("torch")
    tg = torch.fx.Graph()
    tx, ty = tg.placeholder("x"), tg.placeholder("y")
    ta = tg.call_function(operator.add, (tx, ty))
    tg.output(tg.call_function(torch.relu, (ta,)))
    g = _add_relu_graph()[0]
    ours = str(g).replace("ember.", "torch.").splitlines()
    theirs = str(tg).splitlines()
    assert ours == theirs


def test_node_validation():
    g = fx.Graph()
    with pytest.raises(ValueError):
        g.create_node("call_banana", "x")
    with pytest.raises(ValueError):
        g.create_node("call_method", ember.relu)
    with pytest.raises(AssertionError):
        g.create_node("call_function", ember.relu, args=[1])
