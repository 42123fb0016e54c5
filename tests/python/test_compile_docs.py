"""The capabilities torch.compile's documentation shows (torch.compiler API, fine-grained
controls, custom backends, troubleshooting tools), run under ember and, where torch is
installed, under torch with the same code, the results compared. Graphs are tiny and most
use backend="eager" to stay fast; the inductor cases reuse the on-disk kernel cache."""

import importlib
import logging

import numpy as np
import pytest
from _docs_check import _each as _each_lib
from _docs_check import _libs, _np, _same

import ember


def _each(case):
    """``case(T)`` for ember and torch, each after a reset of the compile caches."""
    return _each_lib(case, before=lambda T: T._dynamo.reset())


def test_compile_function_module_and_method():
    def case(T):
        def f(x):
            return T.sin(x) + T.cos(x) * 2

        x = T.linspace(0, 1, 5)
        # ember's default backend (inductor, kernel cache reused); torch's first inductor
        # compile takes seconds, so torch's side uses its eager backend
        compiled = T.compile(f) if T is ember else T.compile(f, backend="eager")
        m = T.nn.Linear(3, 2)
        cm = T.compile(m, backend="eager")
        m2 = T.nn.Linear(3, 2)
        m2.load_state_dict(m.state_dict())
        m2.compile(backend="eager")
        y = T.ones(1, 3)
        return (
            _np(compiled(x)),
            _np(f(x)),
            type(cm).__name__,
            cm._orig_mod is m,
            sorted(cm.state_dict()),
            float((m2(y) - cm(y)).abs().max()),
        )

    got, want, kind, orig, keys, diff = _each(case)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert kind == "OptimizedModule" and orig and keys == ["_orig_mod.bias", "_orig_mod.weight"]
    assert diff < 1e-6


def test_modes_options_and_their_errors():
    def case(T):
        outs = []
        for mode in ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
            outs.append(_np(T.compile(lambda x: x * 2, mode=mode, backend="eager")(T.ones(2))))
        with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
            T.compile(lambda x: x, mode="fast")
        with pytest.raises(RuntimeError, match="Either mode or options"):
            T.compile(lambda x: x, mode="default", options={"trace.enabled": True})
        opts = {"epilogue_fusion": True, "max_autotune": False}
        if T is ember:  # options go to inductor (torch's first inductor compile takes seconds)
            outs.append(_np(T.compile(lambda x: x * 3, options=opts)(T.ones(2))))
        else:
            outs.append(_np(T.compile(lambda x: x * 3, backend="eager")(T.ones(2))))
        return outs

    outs = _each(case)
    np.testing.assert_allclose(np.stack(outs), [[2.0, 2.0]] * 4 + [[3.0, 3.0]])


_registered = []  # backend names taken in this process (registering one twice is an error)


def _ember_only():
    if ember.__name__ != "ember":
        pytest.skip("ember's own behavior (EMBER_TEST_AGAINST=torch runs torch as ember)")


def test_custom_backend_receives_graph_module_and_example_inputs():
    def case(T):
        seen = []

        def my_compiler(gm, example_inputs):
            ops = [n.op for n in gm.graph.nodes]
            seen.append((type(gm).__name__, [list(e.shape) for e in example_inputs], ops[-1]))
            return gm.forward

        c = T.compile(lambda x, y: x * y + 1, backend=my_compiler)
        out = c(T.ones(2), T.full((2,), 3.0))
        c(T.ones(2), T.ones(2))  # same guards: no second capture

        name = f"doc_backend_{len(_registered)}"
        _registered.append(name)

        @T._dynamo.register_backend(name=name)
        def doc_backend(gm, example_inputs):
            return gm.forward

        out2 = T.compile(lambda x: x - 1, backend=name)(T.ones(2))
        names = T._dynamo.list_backends()
        return _np(out), seen, _np(out2), name in names, "inductor" in names

    out, seen, out2, listed, has_inductor = _each(case)
    np.testing.assert_allclose(out, [4.0, 4.0])
    assert seen == [("GraphModule", [[2], [2]], "output")]
    np.testing.assert_allclose(out2, [0.0, 0.0])
    assert listed and has_inductor


def test_custom_backend_sees_methods_and_operators_as_torch_records_them():
    # A backend matching nodes (the docs' pattern-rewriting backends) finds a tensor method as
    # call_method with its name and an operator as operator.*, not the Tensor attribute, and
    # reads a node's value from meta['example_value'].
    import operator

    def case(T):
        kinds, shapes = [], []

        def backend(gm, example_inputs):
            for n in gm.graph.nodes:
                if n.op == "call_method" and n.target == "mean":
                    shapes.append(list(n.meta["example_value"].shape))
                if n.op == "call_method":
                    kinds.append(("call_method", n.target))
                elif n.target in (operator.truediv, operator.lt, operator.mul):
                    kinds.append(("call_function", n.target.__name__))
            return gm.forward

        def f(a, b):
            return (a / (b.sum() + 1)).mean(dim=0) < b.mul(2).max()

        out = T.compile(f, backend=backend)(T.ones(2, 3), T.ones(3))
        return _np(out), sorted(set(kinds)), shapes

    out, kinds, shapes = _each(case)
    assert out.tolist() == [True, True, True] and shapes == [[3]]
    assert ("call_method", "sum") in kinds and ("call_function", "truediv") in kinds


def test_compile_counter_from_testing():
    def case(T):
        counter = importlib.import_module(f"{T.__name__}._dynamo.testing").CompileCounter()
        c = T.compile(lambda x: x.sin() + 1, backend=counter)
        c(T.ones(2))
        c(T.ones(2))
        c(T.ones(3, 3))  # new shape: captured again
        return counter.frame_count

    assert _each(case) == 2


def test_disable_allow_in_graph_is_compiling_assume_constant_result():
    def case(T):
        @T.compiler.disable
        def eager_only(x):
            return x * 10

        def helper(x):
            return x + 5

        T.compiler.allow_in_graph(helper)

        @T.compiler.assume_constant_result
        def get_k():
            return 3

        def f(x):
            if T.compiler.is_compiling():
                x = x + 100
            return eager_only(x) + helper(x) * get_k()

        c = T.compile(f, backend="eager")
        x = T.ones(2)
        return _np(c(x)), _np(f(x)), T.compiler.is_compiling(), T.compiler.is_dynamo_compiling()

    compiled, eager, a, b = _each(case)
    np.testing.assert_allclose(compiled, [101 * 10 + 106 * 3] * 2)
    np.testing.assert_allclose(eager, [10 + 6 * 3] * 2)
    assert a is False and b is False


def test_allow_in_graph_function_is_one_node_of_the_backends_graph():
    def case(T):
        def helper(x, y, *, k=2):
            return x.sin() + y * k

        T.compiler.allow_in_graph(helper)
        graphs = []

        def backend(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        c = T.compile(lambda x, y: helper(x, y, k=3).relu() + 1, backend=backend)
        x, y = T.linspace(-1, 1, 4), T.ones(4)
        out = [_np(c(x, y)), _np(c(x * 2, y))]  # the second call runs the graph, calling helper
        (call,) = [
            n for n in graphs[0].graph.nodes if n.op == "call_function" and n.target is helper
        ]
        kinds = [n.op for n in graphs[0].graph.nodes]
        return out, len(graphs), kinds, len(call.args), dict(call.kwargs)

    out, n, kinds, nargs, kwargs = _each(case)
    np.testing.assert_allclose(out[1], np.maximum(np.sin(np.linspace(-2, 2, 4)) + 3, 0) + 1)
    assert n == 1 and nargs == 2 and kwargs == {"k": 3}
    assert kinds == ["placeholder"] * 2 + [
        "call_function",
        "call_method",
        "call_function",
        "output",
    ]


def test_custom_backend_gets_module_state_as_graph_inputs():
    # torch 2.13 (inline_inbuilt_nn_modules): parameters and buffers are placeholders named by
    # their source, in the order Dynamo realizes them, and example_inputs holds them
    def case(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = T.nn.Linear(3, 2)
                self.register_buffer("b", T.ones(2))

            def forward(self, x):
                return self.fc(x).relu() + self.b

        seen = []

        def backend(gm, example_inputs):
            seen.append((gm, example_inputs))
            return gm.forward

        m = M()
        with T.no_grad():
            m.fc.weight.copy_(T.linspace(-1, 1, 6).reshape(2, 3))
            m.fc.bias.fill_(0.1)
        c = T.compile(m, backend=backend)
        x = T.linspace(-1, 1, 12).reshape(4, 3)
        out = c(x)
        out.sum().backward()  # the gradient reaches the module's own parameters
        grad = _np(m.fc.weight.grad)
        m.fc.weight.grad = None
        m(x).sum().backward()
        gm, example = seen[0]
        phs = [(n.name, n.target) for n in gm.graph.nodes if n.op == "placeholder"]
        return (
            [_np(out), _np(m(x))],
            [grad, _np(m.fc.weight.grad)],
            phs,
            [tuple(e.shape) for e in example],
            example[0] is m.fc.weight and example[3] is m.b,
            [k for k, _ in gm.named_parameters()] + [k for k, _ in gm.named_buffers()],
        )

    out, grads, phs, shapes, same, state = _each(case)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    assert [name for name, _ in phs] == [
        "l_self_modules_fc_parameters_weight_", "l_self_modules_fc_parameters_bias_", "l_x_",
        "l_self_buffers_b_",
    ]  # fmt: skip
    assert phs[0][1] == "L_self_modules_fc_parameters_weight_"
    assert shapes == [(2, 3), (2,), (4, 3), (2,)] and same and state == []


_NET = _SCALE = None  # the globals _reads_globals reads (set per library by the test below)


def _reads_globals(x):
    return _NET(x) * _SCALE


def test_custom_backend_gets_global_and_closure_tensors_as_graph_inputs():
    # torch 2.13 lifts every tensor the function reaches, named by its source: a global
    # module's state (G_NET_modules_0_parameters_weight_), a global tensor (G_SCALE_), a
    # closure cell's tensor (L_c_), a plain tensor attribute of the compiled module (L_self_c)
    def case(T):
        global _NET, _SCALE
        _NET = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.BatchNorm1d(3)).eval()
        _SCALE = T.full((3,), 2.0)
        c = T.ones(3)

        def g(x):
            return _reads_globals(x) + c

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.c = T.ones(3)
                self.lin = T.nn.Linear(3, 3)

            def forward(self, x):
                return self.lin(x) + self.c

        seen = []

        def backend(gm, example_inputs):
            phs = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
            seen.append(list(zip(phs, [type(e).__name__ for e in example_inputs])))
            return gm.forward

        x = T.linspace(-1, 1, 6).reshape(2, 3)
        outs = []
        for fn in (g, M()):
            T._dynamo.reset()
            outs.append(np.allclose(_np(T.compile(fn, backend=backend)(x)), _np(fn(x))))
        return outs, seen

    outs, seen = _each(case)
    assert outs == [True, True]
    assert seen[0] == [
        ("G_NET_modules_0_parameters_weight_", "Parameter"),
        ("G_NET_modules_0_parameters_bias_", "Parameter"),
        ("L_x_", "Tensor"),
        ("G_NET_modules_1_buffers_running_mean_", "Tensor"),
        ("G_NET_modules_1_buffers_running_var_", "Tensor"),
        ("G_NET_modules_1_parameters_weight_", "Parameter"),
        ("G_NET_modules_1_parameters_bias_", "Parameter"),
        ("G_SCALE_", "Tensor"),
        ("L_c_", "Tensor"),
    ]
    assert seen[1][-1] == ("L_self_c", "Tensor")


def test_dynamic_recompile_hands_the_backend_symint_inputs():
    # torch 2.13: the recompile after a size change (automatic dynamic) makes only the changed
    # dim symbolic and gives it to the backend as a SymInt input before its tensor (torch names
    # it s<hash of the source>, ember s0)
    import re

    def case(T):
        seen = []

        def backend(gm, example_inputs):
            phs = [
                (re.sub(r"^s\d+$", "s", n.name), re.sub(r"^s\d+$", "s", str(n.target)))
                for n in gm.graph.nodes
                if n.op == "placeholder"
            ]
            ex = [int(e) if isinstance(e, T.SymInt) else tuple(e.shape) for e in example_inputs]
            seen.append((phs, ex))
            return gm.forward

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = T.nn.Linear(3, 2)

            def forward(self, x):
                return self.lin(x).relu().sum(0) + x.shape[0]

        m = M()
        c = T.compile(m, backend=backend)
        ok = [np.allclose(_np(c(T.ones(n, 3))), _np(m(T.ones(n, 3)))) for n in (2, 4)]
        return seen, ok

    seen, ok = _each(case)
    assert all(ok) and len(seen) == 2
    assert seen[1][0][-2:] == [("s", "s"), ("l_x_", "L_x_")]
    assert seen[1][1] == [(2, 3), (2,), 4, (4, 3)]


def test_substitute_in_graph_and_nested_compile_region():
    def case(T):
        def original(a, b):
            return a * b

        @T.compiler.substitute_in_graph(original)
        def polyfill(a, b):
            return a * b

        @T.compiler.nested_compile_region
        def region(x):
            return x.relu() * 2

        def f(x):
            return region(x) + polyfill(x, x)

        x = T.tensor([-1.0, 2.0])
        with pytest.raises(TypeError):

            @T.compiler.substitute_in_graph(original)
            def wrong(a):
                return a

        return _np(T.compile(f, backend="eager")(x)), polyfill(2, 3)

    out, six = _each(case)
    np.testing.assert_allclose(out, [1.0, 8.0])
    assert six == 6


def test_set_stance():
    def case(T):
        counter = importlib.import_module(f"{T.__name__}._dynamo.testing").CompileCounter()
        c = T.compile(lambda x: x + 1, backend=counter)
        with T.compiler.set_stance("force_eager"):
            a = c(T.ones(2))
        before = counter.frame_count
        with T.compiler.set_stance("fail_on_recompile"):
            with pytest.raises(RuntimeError, match="fail_on_recompile"):
                c(T.ones(2))
        c(T.ones(2))
        with T.compiler.set_stance("fail_on_recompile"):
            b = c(T.ones(2))  # guards hold: no recompile needed
            with pytest.raises(RuntimeError, match="Detected recompile"):
                c(T.ones(2, 2))
        with T.compiler.set_stance("eager_on_recompile"):
            d = c(T.ones(4))
        after = counter.frame_count

        @T.compiler.set_stance("force_eager")
        def run_eagerly(x):
            return c(x)

        e = run_eagerly(T.ones(5))
        return _np(a), before, _np(b), _np(d), after, counter.frame_count, _np(e)

    a, before, b, d, after, final, e = _each(case)
    assert before == 0 and after == 1 and final == 1
    for out, n in ((a, 2), (b, 2), (d, 4), (e, 5)):
        np.testing.assert_allclose(out, [2.0] * n)


def test_fullgraph_errors_and_graph_breaks():
    def case(T):
        Unsupported = T._dynamo.exc.Unsupported

        def branch(x):
            if x.sum() > 0:
                return x + 1
            return x - 1

        def prints(x):
            print("side effect")
            return x + 1

        for fn in (branch, prints):
            with pytest.raises(Unsupported):
                T.compile(fn, fullgraph=True, backend="eager")(T.ones(2))
        # without fullgraph the same functions run, with eager results
        outs = [_np(T.compile(fn, backend="eager")(T.ones(2))) for fn in (branch, prints)]

        def explicit(x):
            x = x + 1
            T._dynamo.graph_break()
            return x * 2

        with pytest.raises(Unsupported):
            T.compile(explicit, fullgraph=True, backend="eager")(T.ones(2))
        outs.append(_np(T.compile(explicit, backend="eager")(T.ones(2))))
        e = T._dynamo.explain(explicit)(T.ones(2))
        return outs, e.graph_break_count

    outs, breaks = _each(case)
    np.testing.assert_allclose(np.stack(outs), [[2.0, 2.0], [2.0, 2.0], [4.0, 4.0]])
    assert breaks == 1


def test_explain_fields():
    def case(T):
        def f(x):
            x = x * 2
            if x.sum() > 0:
                x = x + 1
            return x.relu()

        e = T._dynamo.explain(f)(T.ones(3))
        fields = [hasattr(e, k) for k in ("graphs", "break_reasons", "ops_per_graph", "out_guards")]
        reason = e.break_reasons[0]
        return (
            e.graph_count,
            e.graph_break_count,
            len(e.graphs),
            len(e.ops_per_graph),
            fields,
            type(reason).__name__,
            isinstance(reason.reason, str),
            str(e).startswith("Graph Count: 2\nGraph Break Count: 1"),
        )

    assert _each(case) == (2, 1, 2, 2, [True] * 4, "GraphCompileReason", True, True)


def test_config_knobs():
    def case(T):
        cfg = T._dynamo.config
        with cfg.patch(cache_size_limit=2):
            alias = cfg.recompile_limit
        with cfg.patch(recompile_limit=1):
            counter = importlib.import_module(f"{T.__name__}._dynamo.testing").CompileCounter()
            c = T.compile(lambda x: x * 2, backend=counter, dynamic=False)
            outs = [_np(c(T.ones(n))) for n in (2, 3, 4)]
        return alias, counter.frame_count, [o.tolist() for o in outs], cfg.suppress_errors

    alias, frames, outs, suppress = _each(case)
    assert alias == 2 and frames == 1 and suppress is False
    assert outs == [[2.0] * 2, [2.0] * 3, [2.0] * 4]  # past the limit: eager, same results


def test_backend_errors_and_suppress_errors():
    _ember_only()

    def case(T):
        def bad(gm, example_inputs):
            raise RuntimeError("boom")

        with pytest.raises(T._dynamo.exc.BackendCompilerFailed, match="boom"):
            T.compile(lambda x: x + 2, backend=bad)(T.ones(2))
        T._dynamo.reset()
        with T._dynamo.config.patch(suppress_errors=True), pytest.warns(UserWarning):
            return _np(T.compile(lambda x: x + 1, backend=bad)(T.ones(2)))

    if len(_libs()) > 1:
        # torch logs the failure instead of warning: compare the results only
        T = _libs()[1]
        with T._dynamo.config.patch(suppress_errors=True):
            _same(
                _np(T.compile(lambda x: x + 1, backend=lambda g, e: 1 / 0)(T.ones(2))),
                np.full(2, 2.0),
            )
    ember._dynamo.reset()
    np.testing.assert_allclose(case(ember), [2.0, 2.0])


def test_set_logs_graph_breaks_and_recompiles():
    _ember_only()
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Keep()
    logger = logging.getLogger("ember._dynamo")
    logger.addHandler(handler)
    try:
        ember._logging.set_logs(graph_breaks=True, recompiles=True)
        ember._dynamo.reset()

        def f(x):
            if x.sum() > 0:
                return x + 1
            return x - 1

        c = ember.compile(f, backend="eager")
        c(ember.ones(2))
        c(ember.ones(3, 3))
    finally:
        ember._logging.set_logs()
        logger.removeHandler(handler)
    assert any("Graph break in user code" in r and "Data-dependent" in r for r in records)
    assert any(r.startswith("Recompiling function f") for r in records)
    n = len(records)
    ember._dynamo.reset()
    ember.compile(f, backend="eager")(ember.ones(2))
    assert len(records) == n  # turned off again


def test_counters():
    _ember_only()
    from ember._dynamo.utils import counters

    counters.clear()
    ember._dynamo.reset()
    c = ember.compile(lambda x: x + 1, backend="eager")
    c(ember.ones(2))
    c(ember.ones(2))
    assert counters["frames"]["total"] == 1 and counters["frames"]["ok"] == 1
    assert counters["stats"]["unique_graphs"] == 1


def test_cond_under_compile_fullgraph_and_backward():
    def case(T):
        def true_fn(x):
            return x.sin()

        def false_fn(x):
            return x.cos()

        def f(x):
            return T.cond(x.sum() > 0, true_fn, false_fn, (x,))

        x = T.tensor([0.5, 1.0])
        outs = [_np(f(x)), _np(f(-x))]
        for backend in ("eager", "aot_eager"):
            T._dynamo.reset()
            c = T.compile(f, fullgraph=True, backend=backend)
            outs += [_np(c(x)), _np(c(-x))]
        xr = x.clone().requires_grad_()
        c(xr).sum().backward()
        outs.append(_np(xr.grad))
        with pytest.raises(RuntimeError):
            T.cond(T.ones(2) > 0, true_fn, false_fn, (x,))  # predicate of two elements
        return outs

    outs = _each(case)
    s, c = np.sin([0.5, 1.0]), np.cos([0.5, 1.0])
    np.testing.assert_allclose(np.stack(outs), np.stack([s, c, s, c, s, c, c]), rtol=1e-6)


def test_cond_under_inductor():
    ember._dynamo.reset()

    def f(x, y):
        return ember.cond(x.max() > y.max(), lambda a, b: a * 2 + b, lambda a, b: a - b, (x, y))

    c = ember.compile(f, fullgraph=True)
    x, y = ember.tensor([1.0, 4.0]), ember.tensor([2.0, 3.0])
    np.testing.assert_allclose(_np(c(x, y)), [4.0, 11.0])
    np.testing.assert_allclose(_np(c(y, x)), [1.0, -1.0])


def test_int_and_float_of_a_tensor_under_fullgraph():
    def case(T):
        def scale(x, n):
            return x * int(n)

        def fscale(x, n):
            return x * float(n)

        def pick(x, n):
            if int(n) > 2:
                return x + 1
            return x - 1

        def head(x, n):
            return x[: int(n)]

        backend = "inductor" if T is ember else "eager"  # torch's inductor: seconds per graph
        cs, cf, cp, ch = (
            T.compile(fn, fullgraph=True, backend=backend) for fn in (scale, fscale, pick, head)
        )
        x = T.ones(5)
        return [
            _np(cs(x, T.tensor(3))),
            _np(cs(x, T.tensor(5))),  # another value: correct result (a new graph or a graph value)
            _np(cs(x, T.tensor(3))),
            _np(cf(x, T.tensor(2.5))),
            _np(cf(x, T.tensor(-1.5))),
            _np(cp(x, T.tensor(3))),
            _np(cp(x, T.tensor(1))),
            _np(ch(x, T.tensor(2))),
            _np(ch(x, T.tensor(4))),
        ]

    outs = _each(case)
    want = [[3.0] * 5, [5.0] * 5, [3.0] * 5, [2.5] * 5, [-1.5] * 5, [2.0] * 5, [0.0] * 5]
    for got, w in zip(outs, want + [[1.0] * 2, [1.0] * 4]):
        np.testing.assert_allclose(got, w)


def test_other_dynamo_and_inductor_names():
    def case(T):
        t = T.ones(2)
        T._dynamo.mark_static_address(t)

        def helper(x):
            return x * 3

        assert callable(T._dynamo.nonstrict_trace(helper))

        def never(x):
            return x - 1

        never = T._dynamo.forbid_in_graph(never)
        with pytest.raises(AssertionError, match="forbidden callable"):
            T.compile(lambda x: never(x) * 2, backend="eager")(t)
        assert float(never(t)[0]) == 0.0
        cfg = T._inductor.config
        knobs = (cfg.max_autotune, cfg.epilogue_fusion, cfg.triton.cudagraphs)
        out = T.compile(lambda x: helper(x) + 1, backend="eager")(t)
        return knobs, _np(out), T.compiler.is_exporting()

    knobs, out, exporting = _each(case)
    assert knobs == (False, True, False) and exporting is False
    np.testing.assert_allclose(out, [4.0, 4.0])


def test_error_on_graph_break():
    def case(T):
        def noisy(x):
            print("side effect")
            return x + 1

        def branchy(x):
            if x.sum() > 0:
                return x * 2
            return x

        @T.compile(backend="eager")
        def f(x):
            with T._dynamo.error_on_graph_break(True):
                return noisy(x)

        @T.compile(backend="eager")
        @T._dynamo.error_on_graph_break(True)
        def g(x):
            return branchy(x)

        @T.compile(backend="eager")
        def h(x):  # outside the block a break is a break: eager results
            with T._dynamo.error_on_graph_break(False):
                return branchy(x)

        for fn in (f, g):
            with pytest.raises(T._dynamo.exc.Unsupported):
                fn(T.ones(2))
        return _np(h(T.ones(2)))

    np.testing.assert_allclose(_each(case), [2.0, 2.0])


def test_custom_op_under_fullgraph():
    def case(T):
        name = f"docs_{T.__name__}::numpy_sin"

        @T.library.custom_op(name, mutates_args=())
        def numpy_sin(x: T.Tensor) -> T.Tensor:
            return T.from_numpy(np.sin(x.numpy()))

        @numpy_sin.register_fake
        def _(x):
            return T.empty_like(x)

        @T.compile(backend="eager", fullgraph=True)
        def f(x):
            return numpy_sin(x) * 2

        return _np(f(T.tensor([0.5, 1.0])))

    np.testing.assert_allclose(_each(case), 2 * np.sin([0.5, 1.0]), rtol=1e-6)


def test_torch_logs_environment_variable(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "prog.py"
    script.write_text(
        "import ember as torch\n"
        "@torch.compile(backend='eager')\n"
        "def f(x):\n"
        "    if x.sum() > 0:\n"
        "        return x + 1\n"
        "    return x\n"
        "f(torch.ones(2))\n"
    )
    env = dict(__import__("os").environ, TORCH_LOGS="graph_breaks")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "Graph break in user code" in run.stderr and "prog.py:4" in run.stderr


def test_errors_of_incorrect_code_are_eager_errors():
    def case(T):
        @T.compile(backend="eager")
        def fn(x):
            return T.sin(x, x)

        for stance in ("default", "force_eager"):
            with T.compiler.set_stance(stance), pytest.raises(TypeError):
                fn(T.ones(3, 3))
        return True

    assert _each(case)


def test_custom_backend_with_aot_autograd_and_boxed_functions():
    def case(T):
        common = importlib.import_module(f"{T.__name__}._dynamo.backends.common")
        aot = importlib.import_module(f"{T.__name__}._functorch.aot_autograd")
        seen = []

        def my_compiler(gm, example_inputs):
            seen.append(type(gm).__name__)
            return aot.make_boxed_func(gm.forward)

        backend = common.aot_autograd(fw_compiler=my_compiler)
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1))
        cm = T.compile(m, backend=backend)
        x = T.linspace(-1, 1, 6).reshape(2, 3)
        cm(x)
        cm(x).sum().backward()
        grads = [p.grad.clone() for p in m.parameters()]
        for p in m.parameters():
            p.grad = None
        m(x).sum().backward()
        same = all(bool((g - p.grad).abs().max() < 1e-6) for g, p in zip(grads, m.parameters()))
        boxed = aot.make_boxed_func(lambda a, b: a + b)
        return same, len(seen) >= 2, set(seen), _np(boxed([T.ones(1), T.ones(1)]))

    same, compiled_both, kinds, boxed = _each(case)
    assert same and compiled_both and kinds == {"GraphModule"}
    np.testing.assert_allclose(boxed, [2.0])


def test_cond_in_a_module_trains_under_every_backend():
    def case(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = T.nn.Linear(3, 3), T.nn.Linear(3, 3)
                with T.no_grad():
                    self.a.weight.copy_(T.linspace(-1, 1, 9).reshape(3, 3))
                    self.b.weight.copy_(T.linspace(1, -1, 9).reshape(3, 3))
                    self.a.bias.zero_()
                    self.b.bias.fill_(0.5)

            def forward(self, x):
                # the branches read parameters through closures: the graph never sees them
                return (
                    T.cond(
                        x.sum() > 0, lambda t: self.a(t).relu(), lambda t: self.b(t).tanh(), (x,)
                    )
                    * 2
                )

        results = []
        for backend in ("eager", "aot_eager", "inductor"):
            T._dynamo.reset()
            m = M()
            cm = T.compile(m, backend=backend if T is ember else "eager")
            for sign in (1.0, -1.0, 1.0, 1.0):
                x = T.linspace(-1, 2, 6).reshape(2, 3) * sign
                for p in m.parameters():
                    p.grad = None
                out = cm(x)
                out.sum().backward()
                # torch's cond gives the other branch's parameters zero gradients, ember's none
                grads = [
                    _np(p.grad) if p.grad is not None else np.zeros(tuple(p.shape))
                    for p in m.parameters()
                ]
                results.append((_np(out), grads))
        return results

    results = _each(case)
    # every backend and call gives eager's values (each backend's runs line up with eager's)
    for i in range(4, len(results)):
        _same(results[i], results[i % 4])


def test_default_backend_per_function_recompile_limit_and_run():
    def case(T):
        testing = importlib.import_module(f"{T.__name__}._dynamo.testing")
        counter = testing.CompileCounter()
        T.compiler.set_default_backend(counter)
        try:
            c = T.compile(lambda x: x + 1, name="plus_one")
            first = _np(c(T.ones(2)))
        finally:
            T.compiler.set_default_backend(None)
        default = T.compiler.get_default_backend()
        limited = testing.CompileCounter()
        lc = T.compile(lambda x: x * 2, backend=limited, recompile_limit=1, dynamic=False)
        outs = [_np(lc(T.ones(n))).tolist() for n in (1, 2, 3)]
        unused = testing.CompileCounter()
        rc = T.compile(lambda x: x * 3, backend=unused)

        @T._dynamo.run
        def go(x):
            return rc(x)

        return first, counter.frame_count, default, limited.frame_count, outs, _np(go(T.ones(2)))

    first, frames, default, limited, outs, ran = _each(case)
    np.testing.assert_allclose(first, [2.0, 2.0])
    assert frames == 1 and default == "inductor" and limited == 1
    assert outs == [[2.0], [2.0, 2.0], [2.0, 2.0, 2.0]]
    np.testing.assert_allclose(ran, [3.0, 3.0])


def test_guard_filter_functions():
    import types

    entries = [
        types.SimpleNamespace(is_global=True, guard_type="GLOBAL_STATE"),
        types.SimpleNamespace(is_global=False, guard_type="TENSOR_MATCH"),
    ]

    def case(T):
        c = T.compile(
            lambda x: x + 1,
            backend="eager",
            options=None,
        )
        return (
            T.compiler.skip_guard_on_globals_unsafe(entries),
            T.compiler.skip_all_guards_unsafe(entries),
            _np(c(T.ones(1))),
        )

    by_global, none, out = _each(case)
    assert by_global == [False, True] and none == [False, False]
    np.testing.assert_allclose(out, [2.0])
    # ember accepts the filter as an inductor option and keeps every guard (still correct)
    c = ember.compile(
        lambda x: x * 2, options={"guard_filter_fn": ember.compiler.skip_all_guards_unsafe}
    )
    np.testing.assert_allclose(_np(c(ember.ones(2))), [2.0, 2.0])
    np.testing.assert_allclose(_np(c(ember.ones(3))), [2.0, 2.0, 2.0])
