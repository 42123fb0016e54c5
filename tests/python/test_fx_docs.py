"""The capabilities torch.fx's documentation shows, run under ember (and, where torch is
installed, under torch with the same code, the results compared): symbolic tracing and custom
Tracers, graphs built by hand, Node editing, the docs' worked examples (replace add with mul,
invert a graph, conv/bn fusion, profiling with an Interpreter, Transformer), subgraph
rewriting with filters, ShapeProp, split_module, make_fx, to_folder."""

import importlib
import operator
import sys

import numpy as np
import pytest
from _docs_check import _each, _np

import ember


def _sub(T, name):
    """``T.<name>`` imported (torch.fx.passes.split_module, ember.fx.passes.split_module)."""
    return importlib.import_module(f"{T.__name__}.{name}")


def _model(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = T.nn.Parameter(T.arange(12.0).reshape(3, 4) / 10)
            self.linear = T.nn.Linear(4, 5)
            with T.no_grad():
                self.linear.weight.copy_(T.linspace(-1, 1, 20).reshape(5, 4))
                self.linear.bias.fill_(0.25)

        def forward(self, x):
            return self.linear(x + self.param).clamp(min=0.0, max=1.0)

    return M()


def test_symbolic_trace_nodes_and_code():
    def case(T):
        gm = T.fx.symbolic_trace(_model(T))
        nodes = [
            (n.op, n.name, n.target if isinstance(n.target, str) else None) for n in gm.graph.nodes
        ]
        x = T.ones(3, 4)
        return nodes, _np(gm(x)), "clamp = linear.clamp(min = 0.0, max = 1.0)" in gm.code

    nodes, out, has_line = _each(case)
    assert nodes[0] == ("placeholder", "x", "x")
    assert ("call_module", "linear", "linear") in nodes and has_line
    m = _model(ember)
    np.testing.assert_allclose(out, _np(m(ember.ones(3, 4))))


def test_custom_tracer_leaf_call_module_and_create_proxy():
    def case(T):
        seen = []

        class Flat(T.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return False

            def call_module(self, m, forward, args, kwargs):
                seen.append(type(m).__name__)
                return super().call_module(m, forward, args, kwargs)

            def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *a, **k):
                p = super().create_proxy(kind, target, args, kwargs, name, type_expr, *a, **k)
                p.node.meta["kind"] = kind
                return p

        g = Flat().trace(_model(T))
        ops = [n.op for n in g.nodes]
        kinds = [n.meta.get("kind") for n in g.nodes]
        linear = [n for n in g.nodes if n.op == "call_function" and n.name == "linear"]
        return ops, kinds, seen, len(linear) == 1 and linear[0].target is T.nn.functional.linear

    ops, kinds, seen, traced_into = _each(case)
    assert "call_module" not in ops and traced_into
    assert ops.count("get_attr") == 3  # param, linear.weight, linear.bias
    assert kinds[0] == "placeholder" and "call_function" in kinds
    assert seen == ["Linear"]


def test_concrete_args_and_wrap():
    def case(T):
        def f(x, flag):
            if flag:
                return x + 1
            return x - 1

        gm = T.fx.symbolic_trace(f, concrete_args={"flag": False})
        return _np(gm(T.ones(2), False))

    np.testing.assert_allclose(_each(case), [0.0, 0.0])
    gm = ember.fx.symbolic_trace(_wrapped_user)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert _my_len in targets
    np.testing.assert_allclose(_np(gm(ember.ones(3))), [4.0, 4.0, 4.0])


def _my_len(x):
    return len(x)


ember.fx.wrap("_my_len")


def _wrapped_user(x):
    return x + _my_len(x)


def _hand_graph(T):
    g = T.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(T.add, (x, 1.0))
    z = g.call_method("relu", (y,))
    w = g.get_attr("weight")
    lin = g.call_module("lin", (z,))
    out = g.call_function(operator.mul, (lin, w))
    g.output(out)
    g.lint()
    root = T.nn.Module()
    root.weight = T.nn.Parameter(T.tensor([1.0, 2.0, 3.0]))
    root.lin = T.nn.Linear(3, 3)
    with T.no_grad():
        root.lin.weight.fill_(0.5)
        root.lin.bias.fill_(0.1)
    return T.fx.GraphModule(root, g), g


def test_graph_built_by_hand():
    def case(T):
        gm, g = _hand_graph(T)
        ops = [n.op for n in g.nodes]
        return ops, _np(gm(T.tensor([1.0, -3.0, 2.0])))

    ops, out = _each(case)
    assert ops == ["placeholder", "call_function", "call_method", "get_attr", "call_module"] + [
        "call_function",
        "output",
    ]
    relu = np.maximum(np.array([2.0, -2.0, 3.0]), 0)
    np.testing.assert_allclose(out, (relu.sum() * 0.5 + 0.1) * np.array([1.0, 2.0, 3.0]), rtol=1e-6)


def test_node_apis_edit_a_graph():
    def case(T):
        def f(x):
            a = T.relu(x)
            b = a + 1
            return a * b

        gm = T.fx.symbolic_trace(f)
        x_node, relu, add, mul, out = list(gm.graph.nodes)
        users = {n.name: sorted(u.name for u in n.users) for n in gm.graph.nodes}
        mul.replace_input_with(relu, x_node)  # mul = x * (relu(x) + 1)
        with gm.graph.inserting_after(add):
            neg = gm.graph.call_function(T.neg, (add,))
        add.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)
        neg.meta["note"] = "inserted"
        gm.graph.lint()
        gm.recompile()
        x = T.tensor([-1.0, 2.0])
        first = _np(gm(x))
        # prepend / append move nodes; erase_node and eliminate_dead_code remove them
        with gm.graph.inserting_before(out):
            dead = gm.graph.call_function(T.sigmoid, (x_node,))
        removed = gm.graph.eliminate_dead_code()
        names = [n.name for n in gm.graph.nodes]
        with gm.graph.inserting_before(out):
            spare = gm.graph.call_function(T.exp, (x_node,))
        relu.prepend(spare)
        order = [n.name for n in gm.graph.nodes]
        gm.graph.erase_node(spare)
        gm.recompile()
        return (
            users,
            first,
            removed,
            dead.name in names,
            order,
            _np(gm(x)),
            list(neg.args)[0] is add,
        )

    users, first, removed, dead_kept, order, second, neg_of_add = _each(case)
    want = {"x": ["relu"], "relu": ["add", "mul"], "add": ["mul"], "mul": ["output"], "output": []}
    assert users == want
    np.testing.assert_allclose(first, [-1.0 * -1.0, 2.0 * -3.0])
    assert removed is True and not dead_kept and neg_of_add
    assert order[:3] == ["x", "exp", "relu"]
    np.testing.assert_allclose(second, first)


def test_lint_reports_a_node_of_another_graph():
    def case(T):
        g = T.fx.Graph()
        x = g.placeholder("x")
        other = T.fx.Graph().placeholder("y")
        g.call_function(T.add, (x, other))  # accepted here; lint finds it
        g.output(x)
        with pytest.raises(RuntimeError, match="does not belong to this Graph"):
            g.lint()
        return True

    assert _each(case)


def test_docs_replace_add_with_mul():
    def case(T):
        class M(T.nn.Module):
            def forward(self, x, y):
                return x + y, T.add(x, y), x.add(y)

        gm = T.fx.symbolic_trace(M())
        for n in list(gm.graph.nodes):
            if n.op == "call_function" and n.target in (operator.add, T.add):
                n.target = T.mul
            elif n.op == "call_method" and n.target == "add":
                with gm.graph.inserting_after(n):
                    new = gm.graph.call_function(T.mul, n.args, n.kwargs)
                    n.replace_all_uses_with(new)
                gm.graph.erase_node(n)
        gm.graph.lint()
        gm.recompile()
        return [_np(t) for t in gm(T.tensor([2.0, 3.0]), T.tensor([4.0, 5.0]))]

    for out in _each(case):
        np.testing.assert_allclose(out, [8.0, 15.0])


def test_docs_transformer_and_profiling_interpreter():
    def case(T):
        class NegSigmSwap(T.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target == T.sigmoid:
                    return T.neg(*args, **kwargs)
                return super().call_function(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                if target == "neg":
                    call_self, *rest = args
                    return call_self.sigmoid(*rest, **kwargs)
                return super().call_method(target, args, kwargs)

        def fn(x):
            return T.sigmoid(x).neg()

        swapped = NegSigmSwap(T.fx.symbolic_trace(fn)).transform()
        x = T.tensor([0.5, -1.0])

        class Profile(T.fx.Interpreter):
            def __init__(self, mod):
                super().__init__(mod)
                self.ran = []

            def run_node(self, n):
                result = super().run_node(n)
                self.ran.append((n.op, n.name))
                return result

        prof = Profile(T.fx.symbolic_trace(_model(T)))
        out = prof.run(T.ones(3, 4))
        return _np(swapped(x)), isinstance(swapped, T.fx.GraphModule), prof.ran, list(out.shape)

    swapped, is_gm, ran, shape = _each(case)
    np.testing.assert_allclose(swapped, 1 / (1 + np.exp(-np.array([-0.5, 1.0]))), rtol=1e-6)
    assert is_gm and shape == [3, 5]
    assert [op for op, _ in ran] == ["placeholder", "get_attr", "call_function", "call_module"] + [
        "call_method",
        "output",
    ]


def test_docs_invert_a_graph():
    def case(T):
        inverse = {T.exp: T.log, T.log: T.exp, T.neg: T.neg}

        def f(x):
            return T.exp(T.neg(x))

        traced = T.fx.symbolic_trace(f)
        g, env = T.fx.Graph(), {}
        for node in reversed(traced.graph.nodes):
            if node.op == "call_function":
                new = g.call_function(inverse[node.target], (env[node.name],))
                env[node.args[0].name] = new
            elif node.op == "output":
                env[node.args[0].name] = g.placeholder(node.name)
            elif node.op == "placeholder":
                g.output(env[node.name])
        inv = T.fx.GraphModule(traced, g)
        x = T.tensor([0.3, 1.2])
        return _np(inv(f(x)))

    np.testing.assert_allclose(_each(case), [0.3, 1.2], rtol=1e-6)


def test_subgraph_rewriter_replace_pattern_and_filters():
    def case(T):
        def f(x, w1, w2):
            m1 = T.cat([w1, w2]).sum()
            m2 = T.cat([w1, w2]).sum()
            return x + T.max(m1) + T.max(m2)

        def pattern(w1, w2):
            return T.cat([w1, w2]).sum()

        def replacement(w1, w2):
            return T.stack([w1, w2]).sum() * 2

        gm = T.fx.symbolic_trace(f)
        matches = T.fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
        x, w = T.ones(2), T.tensor([1.0, 2.0])
        first = (len(matches), type(matches[0]).__name__, _np(gm(x, w, w)))

        def g(x):
            return T.relu(x + 1) + T.relu(x + 2)

        def pat(x, y):
            return T.relu(x + y)

        def rep(x, y):
            return T.sigmoid(x - y)

        def adds_one(match, original_graph, pattern_graph):
            return any(
                n.args[1] == 1
                for n in match.nodes_map.values()
                if isinstance(n, T.fx.Node) and n.op == "call_function" and n.target is operator.add
            )

        gm2 = T.fx.symbolic_trace(g)
        rewrite = _sub(T, "fx.subgraph_rewriter").replace_pattern_with_filters
        done = rewrite(gm2, pat, rep, [adds_one])
        kinds = sorted(str(getattr(n.target, "__name__", n.target)) for n in done[0].replacements)
        return first, len(done), type(done[0]).__name__, kinds, _np(gm2(T.tensor([0.5])))

    (count, kind, out), n_done, done_kind, kinds, out2 = _each(case)
    assert (count, kind, n_done, done_kind) == (2, "Match", 1, "ReplacedPatterns")
    np.testing.assert_allclose(out, [1 + 12.0 + 12.0] * 2)  # stack([w, w]).sum() * 2 == 12
    assert kinds == ["sigmoid", "sub"]
    np.testing.assert_allclose(out2, [1 / (1 + np.exp(0.5)) + 2.5], rtol=1e-6)


def test_shape_prop_records_tensor_meta():
    def case(T):
        gm = T.fx.symbolic_trace(_model(T))
        _sub(T, "fx.passes.shape_prop").ShapeProp(gm).propagate(T.ones(3, 4))
        return [
            (
                n.name,
                list(n.meta["tensor_meta"].shape),
                str(n.meta["tensor_meta"].dtype).split(".")[1],
            )
            for n in gm.graph.nodes
            if "tensor_meta" in n.meta
        ]

    assert _each(case) == [
        ("x", [3, 4], "float32"),
        ("param", [3, 4], "float32"),
        ("add", [3, 4], "float32"),
        ("linear", [3, 5], "float32"),
        ("clamp", [3, 5], "float32"),
        ("output", [3, 5], "float32"),
    ]


def test_split_module_partitions():
    def case(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.l1 = T.nn.Linear(4, 4)
                self.l2 = T.nn.Linear(4, 4)
                self.scale = T.nn.Parameter(T.tensor(2.0))

            def forward(self, x, y):
                h = T.relu(self.l1(x)) * self.scale
                return self.l2(h) + y, h

        T.manual_seed(0)
        m = M()
        gm = T.fx.symbolic_trace(m)
        parts = {"l1": 0, "relu": 0, "mul": 0, "l2": 1, "add": 1}
        qualnames = {}
        split = _sub(T, "fx.passes.split_module").split_module(
            gm, m, lambda n: parts[n.name], qualnames
        )
        x, y = T.randn(2, 4), T.randn(2, 4)
        same = all(bool((a - b).abs().max() < 1e-6) for a, b in zip(split(x, y), m(x, y)))
        top = [(n.op, str(n.target)) for n in split.graph.nodes if n.op == "call_module"]
        return top, same, sorted(qualnames), hasattr(split, "submod_0")

    top, same, qualnames, has_sub = _each(case)
    assert top == [("call_module", "submod_0"), ("call_module", "submod_1")]
    assert same and has_sub
    assert qualnames == ["submod_0.l1", "submod_1.l2"]


def test_fuse_conv_bn_for_inference():
    def case(T):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Conv2d(2, 3, 3), T.nn.BatchNorm2d(3), T.nn.ReLU()).eval()
        with T.no_grad():
            m[1].running_mean.copy_(T.tensor([0.1, 0.2, 0.3]))
            m[1].running_var.copy_(T.tensor([1.1, 0.9, 2.0]))
            m[1].weight.copy_(T.tensor([0.5, 1.5, -1.0]))
        fused = _sub(T, "fx.experimental.optimization").fuse(m)
        x = T.randn(1, 2, 5, 5)
        diff = float((fused(x) - m(x)).abs().max())
        return [n.op + ":" + str(n.target) for n in fused.graph.nodes], diff < 1e-5

    nodes, close = _each(case)
    assert nodes == ["placeholder:input", "call_module:0", "call_module:2", "output:output"]
    assert close


def test_make_fx_graph_computes_the_function():
    def case(T):
        make_fx = _sub(T, "fx.experimental.proxy_tensor").make_fx
        c = T.tensor([1.0, 2.0, 3.0])

        def f(x, y):
            return T.sin(x) * 2 + y.cos() * c, x.sum()

        gm = make_fx(f)(T.ones(3), T.zeros(3))
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        x, y = T.tensor([0.1, 0.2, 0.3]), T.tensor([1.0, -1.0, 0.5])
        return names, [_np(t) for t in gm(x, y)]

    names, (a, b) = _each(case)
    assert names == ["x_1", "y_1"]
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(a, np.sin(x) * 2 + np.cos(y) * [1, 2, 3], rtol=1e-5)
    np.testing.assert_allclose(b, 0.6, rtol=1e-6)


def test_to_folder_writes_an_importable_module(tmp_path, monkeypatch):
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = ember.nn.Parameter(ember.randn(3, 4))
            self.linear = ember.nn.Linear(4, 5)
            self.seq = ember.nn.Sequential(ember.nn.ReLU())

        def forward(self, x):
            return self.seq(self.linear(x + self.param))

    m = M()
    gm = ember.fx.symbolic_trace(m)
    gm.to_folder(tmp_path / "fxpkg", "MyMod")
    assert {"__init__.py", "module.py", "state_dict.pt"} <= {
        p.name for p in (tmp_path / "fxpkg").iterdir()
    }
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("fxpkg")
    try:
        rebuilt = mod.MyMod()
        x = ember.randn(3, 4)
        np.testing.assert_allclose(_np(rebuilt(x)), _np(m(x)), rtol=1e-6)
        assert "class MyMod(" in (tmp_path / "fxpkg" / "module.py").read_text()
    finally:
        sys.modules.pop("fxpkg", None)
        sys.modules.pop("fxpkg.module", None)


def test_cond_traces_as_one_node():
    if ember.__name__ != "ember":
        pytest.skip("ember's own behavior (EMBER_TEST_AGAINST=torch runs torch as ember)")

    # ember's symbolic_trace records ember.cond as one node (torch's rejects a Proxy predicate;
    # under torch.compile both capture it, see test_compile_docs.py)
    def f(x):
        return ember.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    gm = ember.fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][-1] is ember.cond
    x = ember.tensor([0.5, 1.0])
    np.testing.assert_allclose(_np(gm(x)), np.sin([0.5, 1.0]), rtol=1e-6)
    np.testing.assert_allclose(_np(gm(-x)), np.cos([0.5, 1.0]), rtol=1e-6)


def test_cond_branches_closing_over_traced_values():
    if ember.__name__ != "ember":
        pytest.skip("ember's own behavior (EMBER_TEST_AGAINST=torch runs torch as ember)")

    # a branch reading a forward argument (and the module) through its closure: the argument
    # becomes an operand of the cond node, so the graph runs on new values (before, the recorded
    # branch held this trace's Proxy and failed when the graph ran)
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(3, 3)

        def forward(self, x, y):
            def t(x):
                return self.lin(x) + y

            def f(x):
                return x * 2 - y

            return ember.cond(x.sum() > 0, t, f, (x,))

    m = M()
    gm = ember.fx.symbolic_trace(m)
    node = next(n for n in gm.graph.nodes if n.target is ember.cond)
    assert [a.name for a in node.args[3]] == ["x", "y"]
    x, y = ember.randn(2, 3).abs(), ember.randn(2, 3)
    for sign in (1, -1):
        np.testing.assert_allclose(_np(gm(sign * x, y)), _np(m(sign * x, y)), rtol=1e-6)


def test_print_readable_matches_torch_text():
    def case(T):
        class M(T.nn.Module):
            def forward(self, x):
                return (x + 1).relu()

        gm = T.fx.symbolic_trace(M())
        _sub(T, "fx.passes.shape_prop").ShapeProp(gm).propagate(T.ones(2))
        return gm.print_readable(print_output=False).replace(f"{T.__name__}.", "<lib>.")

    text = _each(case)
    assert '    def forward(self, x: "f32[2]"):\n        # No stacktrace found' in text


def test_docs_decomposition_with_proxies():
    def case(T):
        def relu_decomposition(x):
            return (x > 0) * x

        rules = {T.nn.functional.relu: relu_decomposition}

        class M(T.nn.Module):
            def forward(self, x):
                return T.nn.functional.relu(x) + 1

        model = M()
        graph = T.fx.Tracer().trace(model)
        new_graph, env = T.fx.Graph(), {}
        tracer = T.fx.proxy.GraphAppendingTracer(new_graph)
        for node in graph.nodes:
            if node.op == "call_function" and node.target in rules:
                args = [
                    T.fx.Proxy(env[a.name], tracer) if isinstance(a, T.fx.Node) else a
                    for a in node.args
                ]
                env[node.name] = rules[node.target](*args).node
            else:
                env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
        gm = T.fx.GraphModule(model, new_graph)
        return _np(gm(T.tensor([-1.0, 2.0]))), [n.op for n in gm.graph.nodes]

    out, ops = _each(case)
    np.testing.assert_allclose(out, [1.0, 3.0])
    assert ops == ["placeholder", "call_function", "call_function", "call_function", "output"]


def test_on_generate_code_and_is_fx_tracing():
    def case(T):
        gm = T.fx.symbolic_trace(lambda x: x + 1)

        def insert(body):
            return ["y0 = 41\n", *body]

        with gm.graph.on_generate_code(lambda prev: insert):
            gm.recompile()
            inside = gm.code
        out = _np(gm(T.ones(1)))
        gm.recompile()
        seen = []

        def f(x):
            seen.append(T.fx._symbolic_trace.is_fx_tracing())
            return x * 2

        T.fx.symbolic_trace(f)
        f(T.ones(1))
        return inside, out, gm.code, seen

    inside, out, after, seen = _each(case)
    want = (
        "\n\n\ndef forward(self, x):\n    y0 = 41\n    add = x + 1;  x = None\n    return add\n    "
    )
    assert inside == want
    assert "y0" not in after and seen == [True, False]
    np.testing.assert_allclose(out, [2.0])


def test_concrete_args_with_placeholders_in_a_structure():
    def case(T):
        def f(x):
            out = 0
            for v in x.values():
                out += v
            return out

        g = T.fx.symbolic_trace(f, concrete_args={"x": {"a": T.fx.PH, "b": T.fx.PH, "c": T.fx.PH}})

        def h(d):
            return d["a"] * d["w"][0] + d["w"][1]

        g2 = T.fx.symbolic_trace(h, concrete_args={"d": {"a": T.fx.PH, "w": [T.fx.PH, T.fx.PH]}})
        d = {"a": T.ones(2), "w": [T.full((2,), 3.0), T.tensor([1.0, -1.0])]}
        return g({"a": 1, "b": 2, "c": 4}), _np(g2(d))

    total, out = _each(case)
    assert total == 7
    np.testing.assert_allclose(out, [4.0, 2.0])


def test_split_module_docs_example_code_and_order():
    # The docs' round-robin partitioning: torch's node names inside each submodule (fresh from
    # the targets), attributes read in the top graph and passed in, submodules named
    # GraphModule, partitions without dependencies emitted last-ready first.
    def case(T):
        class MyModule(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.param = T.nn.Parameter(T.rand(4, 4))
                self.linear = T.nn.Linear(4, 4)

            def forward(self, x, y):
                z = self.linear(x + self.param).clamp(min=0.0, max=1.0)
                w = self.linear(y).clamp(min=0.0, max=1.0)
                return z + w

        T.manual_seed(0)
        m = MyModule()
        traced = T.fx.symbolic_trace(m)
        counter = [0]

        def round_robin(node):
            counter[0] += 1
            return (counter[0] - 1) % 3

        split_module = _sub(T, "fx.passes.split_module").split_module
        split = split_module(traced, m, round_robin)
        x, y = T.rand(4, 4), T.rand(4, 4)
        same = bool((split(x, y) - m(x, y)).abs().max() < 1e-6)
        codes = [split.code] + [c.code for _, c in split.named_children()]
        names = [type(c).__name__ for _, c in split.named_children()]
        independent = split_module(traced, m, lambda n: 0 if n.name in ("add", "linear") else 1)
        order = [n.target for n in independent.graph.nodes if n.op == "call_module"]
        return same, codes, names, order, sorted(split.meta["partition_names"])

    same, codes, names, order, parts = _each(case)
    assert same and names == ["GraphModule"] * 3
    assert "submod_0 = self.submod_0(x, param, y)" in codes[0]
    assert "def forward(self, add, linear_1):\n    linear = self.linear(add)" in codes[2]
    assert parts == ["submod_0", "submod_1", "submod_2"]
    assert order == ["submod_0", "submod_1"]


def test_small_semantics_of_transformer_copies_rewriter_and_shape_prop():
    import copy
    import pickle

    def case(T):
        def f(x, w):
            return T.relu(x) * w + T.relu(w)

        gm = T.fx.symbolic_trace(f)
        # Transformer's result and copies are plain GraphModules
        named = T.fx.GraphModule(gm, gm.graph, class_name="Named")
        copies = [named, copy.copy(named), copy.deepcopy(named), pickle.loads(pickle.dumps(named))]
        names = [type(c).__name__ for c in copies + [T.fx.Transformer(named).transform()]]
        # a Match's anchor is the pattern's node; the nodes_map gives the graph's
        matches = T.fx.subgraph_rewriter.replace_pattern(
            gm, lambda a: T.relu(a), lambda a: T.sigmoid(a)
        )
        anchors = [(m.anchor.name, m.nodes_map[m.anchor].name) for m in matches]
        # ShapeProp: tensor_meta and type only; return_types come back as plain tuples
        g2 = T.fx.symbolic_trace(lambda x: T.max(x, dim=0))
        shape_prop = _sub(T, "fx.passes.shape_prop")
        shape_prop.ShapeProp(g2).propagate(T.ones(2, 3))
        mx = [n for n in g2.graph.nodes if n.op == "call_function"][0]
        meta = (sorted(mx.meta), type(mx.meta["tensor_meta"]).__name__)
        meta += (list(mx.meta["tensor_meta"][1].shape), str(mx.meta["tensor_meta"][1].dtype))

        # an unused node's own name is cleared last, as torch's code does
        def checked(x):
            T._assert(x.shape[0] == 2, "bad batch")
            return x + 1

        g3 = T.fx.symbolic_trace(checked)
        line = next(ln for ln in g3.code.splitlines() if "_assert" in ln)
        try:
            g3(T.ones(3))
            raised = None
        except AssertionError as e:
            raised = str(e)
        return names, anchors, meta, line.split(";")[-1], raised, _np(g3(T.ones(2)))

    names, anchors, meta, dead, raised, out = _each(case)
    assert names == ["Named"] + ["GraphModule"] * 4
    assert anchors == [("relu", "relu"), ("relu", "relu_1")]
    assert meta[:3] == (["tensor_meta", "type"], "tuple", [3]) and meta[3].endswith("int64")
    assert dead == "  eq = _assert = None" and raised == "bad batch"
    np.testing.assert_allclose(out, [2.0, 2.0])
