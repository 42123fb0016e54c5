"""``cond`` in exported programs as torch 2.13's export records it (issue 13):
``higher_order.cond(pred, true_graph_0, false_graph_0, operands)`` whose branches are graph
modules of ATen ops, every tensor a branch reads (parameters, closure constants) lifted into the
operands, the results read by ``getitem``; module() picks the branch at run time, before and
after run_decompositions. Saving and the C++ runtime are covered by test_graphs_s13.py."""

import operator

import pytest

import ember


def _model(lib):
    offset = lib.tensor([1.0, -2.0, 3.0])

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.tensor([0.5, 1.0, 1.5]))

        def forward(self, x):
            def big(t):
                return t.sin() * self.scale, t + offset

            def small(t):
                return t.cos(), t - offset

            a, b = lib.cond(x.sum() > 0, big, small, (x,))
            return a + b

    lib.manual_seed(0)
    return M()


def _export(lib):
    m = _model(lib)
    return m, lib.export.export(m, (lib.ones(2, 3),))


@pytest.fixture(scope="module")
def exported():
    return _export(ember)


def _calls(gm):
    return [
        (n.op, n.name, str(n.target) if n.op == "call_function" else n.target)
        for n in gm.graph.nodes
        if n.op not in ("placeholder", "output")
    ]


def _branch_calls(gm):
    return [(n.name, str(n.target)) for n in gm.graph.nodes if n.op == "call_function"]


def test_cond_node_and_branch_graphs(exported):
    _, ep = exported
    gm = ep.graph_module
    (node,) = [n for n in gm.graph.nodes if n.target is ember.ops.higher_order.cond]
    pred, t, f, operands = node.args
    assert (t.op, t.target, f.op, f.target) == (
        "get_attr", "true_graph_0", "get_attr", "false_graph_0"
    )  # fmt: skip
    assert isinstance(gm.true_graph_0, ember.fx.GraphModule)
    # the closure constant became the program's c_lifted_tensor_0, an operand as the parameter
    assert {o.name for o in operands} == {"x", "p_scale", "c_lifted_tensor_0"}
    assert [str(s.kind).split(".")[-1] for s in ep.graph_signature.input_specs] == [
        "PARAMETER", "CONSTANT_TENSOR", "USER_INPUT"
    ]  # fmt: skip
    assert ep.constants["lifted_tensor_0"].tolist() == [1.0, -2.0, 3.0]
    # each branch takes every operand, named after it, and returns a tuple
    for branch in (gm.true_graph_0, gm.false_graph_0):
        names = [n.name for n in branch.graph.nodes if n.op == "placeholder"]
        assert names == [o.name for o in operands]
    assert [u.target for u in node.users] == [operator.getitem, operator.getitem]
    text = str(ep)
    assert "ember.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (" in text
    assert text.index("class true_graph_0") > text.index("return (add,)")  # after forward


def test_cond_graph_matches_torch(exported):
    torch = pytest.importorskip("torch")
    _, ep = exported
    _, tep = _export(torch)
    norm = {"cond": "cond"}  # str(torch.ops.higher_order.cond) is "cond", as ember's
    assert _calls(ep.graph_module) == [
        (op, name, norm.get(t, t)) for op, name, t in _calls(tep.graph_module)
    ]
    for name in ("true_graph_0", "false_graph_0"):
        assert _branch_calls(getattr(ep.graph_module, name)) == _branch_calls(
            getattr(tep.graph_module, name)
        )
    assert str(ep.graph_signature) == str(tep.graph_signature)


def test_cond_module_picks_branch_at_run_time(exported):
    m, ep = exported
    for program in (ep, ep.run_decompositions()):
        assert hasattr(program.graph_module, "true_graph_0")
        mod = program.module()
        for sign in (1.0, -1.0):
            x = ember.rand(2, 3) * sign + 0.1 * sign
            with ember.no_grad():
                assert ember.allclose(mod(x), m(x))


def test_cond_module_gives_untaken_parameters_zero_grads(exported):
    m, ep = exported
    mod = ep.module()
    mod(-ember.ones(2, 3)).sum().backward()  # the branch not reading scale
    assert mod.scale.grad is not None and mod.scale.grad.abs().sum().item() == 0.0


def test_higher_order_cond_runs_eagerly():
    x = ember.tensor([1.0, 2.0])
    cond = ember.ops.higher_order.cond
    assert str(cond) == "cond" and cond.name() == "cond"
    (out,) = cond(x.sum() > 0, lambda t: (t * 2,), lambda t: (t - 1,), (x,))
    assert out.tolist() == [2.0, 4.0]
    (out,) = cond(ember.tensor(False), lambda t: (t * 2,), lambda t: (t - 1,), (x,))
    assert out.tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value"):
        cond(ember.ones(2) > 0, lambda t: (t,), lambda t: (t,), (x,))  # torch's bool() text
    with pytest.raises(RuntimeError, match=r"Expected pred to be bool or single-element tensor"):
        ember.cond(ember.ones(2) > 0, lambda t: t, lambda t: t, (x,))


def _two_conds(lib):
    class M(lib.nn.Module):
        def forward(self, x):
            hop = lib._higher_order_ops.cond  # the raw function, not the tracing mode's entry
            a = hop(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))
            return a + lib.cond(x.sum() > 1, lambda t: t * 2, lambda t: t - 1, (x,))

    return M(), lib.export.export(M(), (lib.ones(2),))


def test_two_conds_numbered_as_torch():
    m, ep = _two_conds(ember)
    mod = ep.module()
    for x in (ember.tensor([0.2, 0.3]), ember.tensor([-1.0, 0.5]), ember.tensor([2.0, 1.0])):
        assert ember.allclose(mod(x), m(x))
    torch = pytest.importorskip("torch")
    _, tep = _two_conds(torch)
    assert _calls(ep.graph_module) == _calls(tep.graph_module)


def _lifting_model(lib):
    offset = lib.tensor([1.0, -2.0, 3.0])

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 3)
            self.register_buffer("buf", lib.ones(3))

        def forward(self, x, y, z):
            def t(x, y, z):
                return self.lin(x).sum(0) + y + self.buf

            def f(x, y, z):
                return y * 2 + self.lin.bias - offset

            return lib.cond(x.sum() > 0, t, f, (x, y, z))

    lib.manual_seed(0)
    return M()


def test_cond_operands_in_torchs_order(tmp_path):
    # torch: the inputs both branches read, then the true branch's own, then the false
    # branch's, each sorted by Dynamo's source names; an operand no branch reads (z) dropped
    m = _lifting_model(ember)
    args = (ember.rand(2, 3), ember.rand(3), ember.rand(3))
    ep = ember.export.export(m, args)
    (node,) = [n for n in ep.graph.nodes if n.target is ember.ops.higher_order.cond]
    names = [o.name for o in node.args[3]]
    assert names == ["p_lin_bias", "y", "b_buf", "p_lin_weight", "x", "c_lifted_tensor_0"]
    for branch in (ep.graph_module.true_graph_0, ep.graph_module.false_graph_0):
        assert [n.name for n in branch.graph.nodes if n.op == "placeholder"] == names
    path = str(tmp_path / "p.ember")
    ember.export.save(ep, path)
    for sign in (1.0, -1.0):
        x = args[0] * sign
        with ember.no_grad():
            want = m(x, args[1], args[2])
            assert ember.allclose(ep.module()(x, args[1], args[2]), want)
            assert ember.allclose(ember.export.load(path).module()(x, args[1], args[2]), want)
    torch = pytest.importorskip("torch")
    targs = tuple(torch.tensor(a.numpy()) for a in args)
    tep = torch.export.export(_lifting_model(torch), targs)
    (tnode,) = [n for n in tep.graph.nodes if n.target is torch.ops.higher_order.cond]
    assert [o.name for o in tnode.args[3]] == names


def _mismatched(mod, other):
    class M(mod.nn.Module):
        def forward(self, x):
            return mod.cond(x.sum() > 0, lambda x: x + 1, other, (x,))

    return M()


@pytest.mark.parametrize(
    "other, text",
    [
        (lambda x: x.sum(0), "expected same dim but got 2 and 1."),
        (
            lambda x: (x * 2).double(),
            "expected same dtype but got torch.float32 and torch.float64.",
        ),
        (lambda x: (x, x * 2), "true branch returns 1 item(s)\n  false branch returns 2 item(s)"),
    ],
)
def test_cond_branches_with_different_outputs_are_refused(other, text):
    # torch refuses results that differ in rank, dtype or count (sizes alone may differ)
    with pytest.raises(RuntimeError) as e:
        ember.export.export(_mismatched(ember, other), (ember.ones(2, 3),))
    assert text in str(e.value)
    ep = ember.export.export(_mismatched(ember, lambda x: x[:1] * 2), (ember.ones(2, 3),))
    assert ep.module()(-ember.ones(2, 3)).shape == (1, 3)


def test_cond_rank_mismatch_message_is_torchs():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as e:
        torch.export.export(_mismatched(torch, lambda x: x.sum(0)), (torch.ones(2, 3),))
    assert "torch.cond,  expected same dim but got 2 and 1." in str(e.value)


def _closing_model(lib):
    class M(lib.nn.Module):
        def forward(self, x, y, z):
            def t(x):
                return x.sin() + z * y

            def f(x):
                return x.cos() - y

            return lib.cond(x.sum() > 0, t, f, (x,))

    return M()


def test_cond_branch_closing_over_forward_arguments_lifts_them(tmp_path):
    # torch lifts the forward's y and z, read through the branches' closures, as operands
    m = _closing_model(ember)
    args = (ember.rand(3), ember.rand(3), ember.rand(3))
    ep = ember.export.export(m, args)
    (node,) = [n for n in ep.graph.nodes if n.target is ember.ops.higher_order.cond]
    names = [o.name for o in node.args[3]]
    assert names == ["y", "x", "z"]
    assert [n.name for n in ep.graph_module.false_graph_0.graph.nodes if n.op == "placeholder"] == [
        "y",
        "x",
        "z",
    ]
    path = str(tmp_path / "c.ember")
    ember.export.save(ep, path)
    loaded = ember.export.load(path).module()
    for sign in (1.0, -1.0):
        a = (args[0] * sign, args[1], args[2])
        assert ember.allclose(ep.module()(*a), m(*a))
        assert ember.allclose(loaded(*a), m(*a))
    torch = pytest.importorskip("torch")
    tep = torch.export.export(_closing_model(torch), tuple(torch.ones(3) for _ in range(3)))
    (tnode,) = [n for n in tep.graph.nodes if n.target is torch.ops.higher_order.cond]
    assert [o.name for o in tnode.args[3]] == names


def _indexing_model(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 3)

        def forward(self, x):
            def t(x):
                return x * self.lin.weight[0]

            def f(x):
                return x - 1

            return lib.cond(x.sum() > 0, t, f, (x,))

    return M()


def test_cond_branch_indexing_a_parameter_stays_tied_to_it(tmp_path):
    # torch: weight[0] in a branch is a select of the lifted parameter, not a constant
    m = _indexing_model(ember)
    ep = ember.export.export(m, (ember.ones(3),))
    assert [s.arg.name for s in ep.graph_signature.input_specs] == [
        "p_lin_weight",
        "p_lin_bias",
        "x",
    ]
    assert not ep.constants
    true_calls = _branch_calls(ep.graph_module.true_graph_0)
    assert true_calls == [("select", "aten.select.int"), ("mul", "aten.mul.Tensor")]
    path = str(tmp_path / "w.ember")
    ember.export.save(ep, path)
    loaded = ember.export.load(path).module()
    for x in (ember.ones(3), -ember.ones(3)):
        assert ember.allclose(loaded(x), m(x))
    mod = ep.module()
    with ember.no_grad():  # the branch reads the module's parameter, so a new value reaches it
        mod.lin.weight.add_(1.0)
        m.lin.weight.add_(1.0)
    assert ember.allclose(mod(ember.ones(3)), m(ember.ones(3)))
    torch = pytest.importorskip("torch")
    tep = torch.export.export(_indexing_model(torch), (torch.ones(3),))
    assert _branch_calls(tep.graph_module.true_graph_0) == true_calls
