"""Session 12 differences of the graph stack from torch 2.13, each checked by running the same
program under ember and (where installed) torch: cond's gradients of the branch not taken,
graph_break() counts, int()/float() of graph values under capture_scalar_outputs / fullgraph,
compile's argument checks, export and make_fx details."""

import numpy as np
import pytest
from _docs_check import _libs

import ember


def _reset(T):
    T._dynamo.reset()
    T._dynamo.config.capture_scalar_outputs = False


@pytest.fixture(autouse=True)
def _clean():
    for T in _libs():
        _reset(T)
    yield
    for T in _libs():
        _reset(T)


# ---- 1. cond: the branch not taken gets zero gradients ---------------------------------------


def _cond_grads(T, how, positive):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = T.nn.Linear(3, 3)
            self.b = T.nn.Linear(3, 3)

        def forward(self, x):
            return T.cond(x.sum() > 0, lambda x: self.a(x), lambda x: self.b(x), (x,))

    T.manual_seed(0)
    m = M()
    x = T.ones(2, 3) * (1.0 if positive else -1.0)
    if how == "eager":
        y = m(x)
    elif how == "compile":
        y = T.compile(m, backend="eager")(x)
    else:
        y = T.export.export(m, (x,)).module()(x)
    y.sum().backward()
    return {
        n: None if p.grad is None else p.grad.abs().sum().item() for n, p in m.named_parameters()
    }


@pytest.mark.parametrize("how", ["eager", "compile", "export"])
@pytest.mark.parametrize("positive", [True, False])
def test_cond_untaken_branch_grads_are_zero(how, positive):
    got = _cond_grads(ember, how, positive)
    taken, other = ("a", "b") if positive else ("b", "a")
    assert got[f"{other}.weight"] == 0.0 and got[f"{other}.bias"] == 0.0
    assert got[f"{taken}.bias"] == 6.0  # two rows, three outputs: d(sum)/d(bias) = 2 each
    torch = pytest.importorskip("torch")
    assert _cond_grads(torch, how, positive) == got


def test_cond_without_grad_and_tuple_outputs():
    w = ember.ones(2, requires_grad=True)
    v = ember.ones(2, requires_grad=True)
    x = ember.tensor([1.0, 2.0])
    out = ember.cond(x.sum() > 0, lambda t: (t * w, t + 1), lambda t: (t * v, t - 1), (x,))
    np.testing.assert_allclose(out[0].detach().numpy(), [1.0, 2.0])
    # every float output requires grad (torch's cond autograd reads all operands and lifted
    # tensors), the one reading no parameter too
    assert out[1].requires_grad
    np.testing.assert_allclose(out[1].detach().numpy(), [2.0, 3.0])
    out[0].sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(v.grad.numpy(), [0.0, 0.0])
    with ember.no_grad():
        r = ember.cond(x.sum() > 0, lambda t: t * w, lambda t: t * v, (x,))
    assert r.grad_fn is None


# ---- 2. graph_break(): two graphs, two backend calls ------------------------------------------


def _user_break(T):
    def f(x):
        y = x.sin()
        T._dynamo.graph_break()
        return y.cos() + 1

    return f


def _graph_break_report(T):
    f = _user_break(T)
    x = T.ones(3)
    e = T._dynamo.explain(f)(x)
    T._dynamo.reset()
    calls = []

    def backend(gm, example):
        calls.append(len(list(gm.graph.nodes)))
        return gm.forward

    g = T.compile(f, backend=backend)
    out = [g(x).numpy(), g(x + 1).numpy()]
    reason = "\n".join(e.break_reasons[0].reason.splitlines()[:3])  # explanation and hint too
    return e.graph_count, e.graph_break_count, reason, calls, out


def test_graph_break_makes_two_graphs():
    got = _graph_break_report(ember)
    assert got[:2] == (2, 1) and got[3] == [3, 4]
    assert got[2].startswith("Call to `torch._dynamo.graph_break()`\n")
    np.testing.assert_allclose(got[4][0], np.cos(np.sin(np.ones(3))) + 1, rtol=1e-6)
    np.testing.assert_allclose(got[4][1], np.cos(np.sin(np.full(3, 2.0))) + 1, rtol=1e-6)
    torch = pytest.importorskip("torch")
    ref = _graph_break_report(torch)
    assert ref[:4] == got[:4]
    for a, b in zip(ref[4], got[4]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_graph_break_under_fullgraph_raises():
    for T in _libs():
        with pytest.raises(T._dynamo.exc.Unsupported, match="graph_break"):
            T.compile(_user_break(T), fullgraph=True, backend="eager")(T.ones(2))


# ---- 3. int() / float() of graph values ------------------------------------------------------

_VALUE_FNS = {
    "int": lambda x: x * int(x.sum()),
    "float": lambda x: x * float(x.sum()),
    "int_long": lambda x: x + int(x.long().sum()),
    "item": lambda x: x * x.sum().item(),
}


def _value_read(T, name, capture, fullgraph):
    T._dynamo.reset()
    T._dynamo.config.capture_scalar_outputs = capture
    f = _VALUE_FNS[name]
    outs = []
    g = T.compile(f, fullgraph=fullgraph, backend="eager")
    for v in ([0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.5, 2.0, 4.0]):
        outs.append(g(T.tensor(v)).numpy())
    counts = None
    if not fullgraph:
        e = T._dynamo.explain(f)(T.tensor([0.0, 1.0, 2.0]))
        counts = (e.graph_count, e.graph_break_count)
    T._dynamo.config.capture_scalar_outputs = False
    return outs, counts


@pytest.mark.parametrize("name", list(_VALUE_FNS))
@pytest.mark.parametrize("capture", [False, True])
@pytest.mark.parametrize("fullgraph", [False, True])
def test_value_reads_match_torch(name, capture, fullgraph):
    outs, counts = _value_read(ember, name, capture, fullgraph)
    f = _VALUE_FNS[name]
    for v, out in zip(([0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.5, 2.0, 4.0]), outs):
        np.testing.assert_allclose(out, f(ember.tensor(v)).numpy(), rtol=1e-6)
    if not fullgraph:
        assert counts == ((1, 0) if capture else (2, 1))
    torch = pytest.importorskip("torch")
    ref_outs, ref_counts = _value_read(torch, name, capture, fullgraph)
    assert ref_counts == counts
    for a, b in zip(ref_outs, outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_value_read_one_graph_and_checked_value():
    ember._dynamo.config.capture_scalar_outputs = True
    graphs = []

    def backend(gm, example):
        graphs.append(gm)
        return gm.forward

    g = ember.compile(lambda x: x * int(x.max()) + float(x.min()), fullgraph=True, backend=backend)
    for v in ([1.0, 2.5], [1.0, 2.5], [3.0, 7.5]):  # the last one changes both values
        x = ember.tensor(v)
        np.testing.assert_allclose(
            g(x).numpy(), (x * int(x.max()) + float(x.min())).numpy(), rtol=1e-6
        )
    assert len(graphs) == 1


def test_value_read_with_inplace_op_stays_correct():
    g = ember.compile(lambda x: x.add_(1) * int(x.sum()), fullgraph=True, backend="eager")
    for start in (1.0, 2.0):
        x = ember.full((2,), start)
        out = g(x)
        np.testing.assert_allclose(x.numpy(), [start + 1] * 2)
        np.testing.assert_allclose(out.numpy(), [(start + 1) * int(2 * (start + 1))] * 2)


# ---- 4. compile's argument checks -------------------------------------------------------------


def _outcome(T, **kwargs):
    T._dynamo.reset()
    try:
        g = T.compile(lambda x: x + 1, **kwargs)
        g(T.ones(2))
        return "ran"
    except Exception as e:  # noqa: BLE001 (the outcome is what is compared)
        inner = getattr(e, "inner_exception", None)
        return type(e).__name__, type(inner).__name__ if inner is not None else None


_RAN = "ran"
_COMPILE_ARGS = [  # (kwargs, torch 2.13's outcome)
    ({"options": {"bogus_key": 1}}, ("RuntimeError", None)),
    ({"options": {"triton.cudagraphs": False}}, _RAN),
    ({"options": {"max_autotune": True}}, _RAN),
    ({"options": {"trace.enabled": False}}, _RAN),
    ({"options": {"epilogue_fusion": True, "shape_padding": True}}, _RAN),
    ({"options": {"bogus_key": 1}, "backend": "eager"}, _RAN),
    ({"options": [1]}, ("AttributeError", None)),
    ({"mode": "bogus"}, ("RuntimeError", None)),
    ({"mode": "max-autotune"}, _RAN),
    ({"mode": "reduce-overhead"}, _RAN),
    ({"mode": "default", "options": {"max_autotune": True}}, ("RuntimeError", None)),
    ({"backend": "bogus"}, ("InvalidBackend", None)),
    ({"backend": ""}, ("InvalidBackend", None)),
    ({"backend": "cudagraphs"}, _RAN),
    ({"backend": "tvm"}, ("BackendCompilerFailed", "ImportError")),
    ({"backend": "openxla"}, ("BackendCompilerFailed", "ImportError")),
    ({"backend": 3}, ("BackendCompilerFailed", "TypeError")),
    ({"dynamic": "x"}, ("AssertionError", None)),
]


@pytest.mark.parametrize("kwargs,expected", _COMPILE_ARGS, ids=str)
def test_compile_arguments_match_torch(kwargs, expected):
    assert _outcome(ember, **kwargs) == expected
    torch = pytest.importorskip("torch")
    assert _outcome(torch, **kwargs) == expected


def test_unknown_option_message():
    with pytest.raises(RuntimeError, match="Unexpected optimization option bogus_key, known"):
        ember.compile(lambda x: x, options={"bogus_key": 1})
    known = ember._inductor.config.known_options()
    assert "max_autotune" in known and "triton.cudagraphs" in known
    ember.compile(options={"bogus_key": 1})  # the decorator form checks when applied
    listed = set(ember._dynamo.list_backends())  # (other tests register more)
    assert {"cudagraphs", "inductor", "openxla", "tvm"} <= listed and "eager" not in listed
    assert {"eager", "aot_eager"} <= set(ember._dynamo.list_backends(exclude_tags=()))


# ---- 5. export: training batch norm, nested inputs through save/load, call_spec --------------


def _bn_program(T):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Conv2d(2, 3, 3), T.nn.BatchNorm2d(3)).train()
    x = T.randn(4, 2, 6, 6)
    ep = T.export.export(m, (x,))
    decomposed = ep.run_decompositions()
    mutated = sorted(decomposed.graph_signature.buffers_to_mutate.values())
    kinds = [s.kind.name for s in decomposed.graph_signature.output_specs]
    tracked_after_export = int(m[1].num_batches_tracked)
    return m, x, ep, mutated, kinds, tracked_after_export


def test_export_training_batch_norm_updates_buffers(tmp_path):
    m, x, ep, mutated, kinds, tracked = _bn_program(ember)
    assert mutated == ["1.num_batches_tracked", "1.running_mean", "1.running_var"]
    assert kinds == ["BUFFER_MUTATION"] * 3 + ["USER_OUTPUT"]
    assert tracked == 0  # exporting does not run the model's update
    import copy

    ref = copy.deepcopy(m)
    y = ep.module()(x)
    y_ref = ref(x)
    np.testing.assert_allclose(y.detach().numpy(), y_ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            getattr(m[1], name).numpy(), getattr(ref[1], name).numpy(), rtol=1e-5, atol=1e-7
        )
    assert int(m[1].num_batches_tracked) == 1
    # session 13: saved programs keep the updates (the C++ runtime writes them back)
    before = copy.deepcopy(ref)
    ember.export.save(ep, str(tmp_path / "bn.pt2"))
    ((out,),), state = ember._C._export_run_steps(str(tmp_path / "bn.pt2"), [[x]])
    np.testing.assert_allclose(out.numpy(), before(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(
            state[f"1.{name}"].numpy(), getattr(before[1], name).numpy(), rtol=1e-5, atol=1e-7
        )
    torch = pytest.importorskip("torch")
    _, _, _, t_mutated, t_kinds, t_tracked = _bn_program(torch)
    assert (t_mutated, t_kinds, t_tracked) == (mutated, kinds, tracked)


class _NestedModel(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(3, 3)

    def forward(self, x, d):
        return self.lin(x) + d["a"] * d["b"][0] - d["b"][1]


def test_export_nested_inputs_survive_save_and_load(tmp_path):
    m = _NestedModel()
    x = ember.randn(2, 3)
    d = {"a": ember.randn(2, 3), "b": (ember.ones(3), ember.zeros(3))}
    ep = ember.export.export(m, (x, d))
    path = tmp_path / "nested.pt2"
    ember.export.save(ep, path)
    loaded = ember.export.load(path)
    want = m(x, d).detach().numpy()
    np.testing.assert_allclose(loaded.module()(x, d).detach().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(loaded.module()(x, d=d).detach().numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="tree spec"):
        loaded.module()(x, {"a": x})
    assert loaded.graph_signature.user_inputs == ep.graph_signature.user_inputs


def _call_spec(T):
    class M(T.nn.Module):
        def forward(self, x, y=None):
            return x + 1, [x * 2]

    ep = T.export.export(M(), (T.ones(2),), {"y": T.ones(2)})
    lin = T.export.export(T.nn.Linear(2, 2), (T.ones(2),))
    return [" ".join(str(s).split()) for s in (ep.call_spec, lin.call_spec)]


def test_export_call_spec():
    got = _call_spec(ember)
    assert got[1] == (
        "CallSpec(in_spec=TreeSpec(tuple, None, [TreeSpec(tuple, None, [*]), "
        "TreeSpec(dict, [], [])]), out_spec=*)"
    )
    torch = pytest.importorskip("torch")
    assert _call_spec(torch) == got


# ---- 6. make_fx: aten overload targets -------------------------------------------------------


def _make_fx_report(T):
    import importlib

    make_fx = importlib.import_module(T.__name__ + ".fx.experimental.proxy_tensor").make_fx

    def f(x, y, w):
        a = (x + y).relu() * 2
        return a.sum(0), T.mm(x, w).sin(), T.neg(y) - x.exp()

    gm = make_fx(f)(T.ones(2, 3), T.ones(2, 3), T.ones(3, 4))
    nodes = [(n.op, n.name, str(n.target)) for n in gm.graph.nodes]
    text = gm.print_readable(print_output=False).replace(T.__name__ + ".", "T.")
    x, y, w = T.tensor([[0.5, -1.0, 2.0]]), T.tensor([[1.0, 0.25, -3.0]]), T.ones(3, 2)
    outs = [t.numpy() for t in gm(x, y, w)]
    return nodes, text, outs


def test_make_fx_names_aten_overloads():
    nodes, text, outs = _make_fx_report(ember)
    targets = [t for op, _, t in nodes if op == "call_function"]
    assert targets[:4] == [
        "aten.add.Tensor",
        "aten.relu.default",
        "aten.mul.Tensor",
        "aten.sum.dim_IntList",
    ]
    assert "class f(T.nn.Module):" in text
    assert "sum_1: \"f32[3]\" = T.ops.aten.sum.dim_IntList(mul, [0])" in text
    x, y = np.array([[0.5, -1.0, 2.0]]), np.array([[1.0, 0.25, -3.0]])
    np.testing.assert_allclose(outs[0], (np.maximum(x + y, 0) * 2).sum(0), rtol=1e-6)
    np.testing.assert_allclose(outs[1], np.sin(x @ np.ones((3, 2))), rtol=1e-6)
    np.testing.assert_allclose(outs[2], -y - np.exp(x), rtol=1e-6)
    torch = pytest.importorskip("torch")
    ref_nodes, ref_text, ref_outs = _make_fx_report(torch)
    assert (ref_nodes, ref_text) == (nodes, text)
    for a, b in zip(ref_outs, outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ---- documentation examples: ExportedProgram's state, AdditionalInputs, passes, Dim repr -----


def _doc_examples(T):
    import importlib

    class Mod(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(4, 3)
            self.register_buffer("b", T.ones(3))

        def forward(self, x):
            return self.lin(x).relu() + self.b

    T.manual_seed(0)
    m = Mod()
    ep = T.export.export(m, (T.ones(2, 4),))
    state = (
        [n for n, _ in ep.named_parameters()],
        [n for n, _ in ep.named_buffers()],
        len(list(ep.parameters())),
        len(list(ep.buffers())),
        dict(ep.tensor_constants),
    )
    ai = T.export.AdditionalInputs()
    ai.add((T.ones(2, 4),))
    ai.add((T.ones(5, 4),))
    shapes = ai.dynamic_shapes(m, (T.ones(3, 4),))
    dyn = T.export.export(m, (T.ones(3, 4),), dynamic_shapes=shapes)
    ai.verify(dyn)
    x = T.linspace(-1, 1, 28).reshape(7, 4)
    out = dyn.module()(x).detach().numpy()
    moved = importlib.import_module(T.__name__ + ".export.passes").move_to_device_pass(ep, "cpu")
    moved_out = moved.module()(x[:2]).detach().numpy()
    reprs = [repr(T.export.Dim("b", **kw)) for kw in ({}, {"min": 2}, {"min": 3, "max": 9})]
    return state, repr(shapes), out, moved_out, reprs, m(x).detach().numpy()


def test_export_doc_examples_match_torch():
    state, shapes, out, moved_out, reprs, eager = _doc_examples(ember)
    assert state == (["lin.weight", "lin.bias"], ["b"], 2, 1, {})
    assert shapes == "{'x': (DimHint(DYNAMIC), None)}"
    assert reprs == ["Dim('b', min=0)", "Dim('b')", "Dim('b', min=3, max=9)"]
    np.testing.assert_allclose(out, eager, rtol=1e-6)
    np.testing.assert_allclose(moved_out, eager[:2], rtol=1e-6)
    torch = pytest.importorskip("torch")
    ref = _doc_examples(torch)
    assert (ref[0], ref[1], ref[4]) == (state, shapes, reprs)


def _compiler_doc_examples(T):
    def orig(a, b=1, *, c=2):
        return a + b + c

    outcomes = []
    for fn in (lambda a, b=1, *, c=2: 0, lambda a, b=2, *, c=2: 0, lambda x, b=1, *, c=2: 0):
        try:
            T.compiler.substitute_in_graph(orig)(fn)
            outcomes.append("ok")
        except TypeError:
            outcomes.append("TypeError")

    def positional(x, /):  # as a builtin's signature, abs(x, /)
        return abs(x)

    T.compiler.substitute_in_graph(positional)(lambda x: x if x >= 0 else -x)
    wrapped = T.compiler.wrap_numpy(lambda a, d: (a * 2, {"s": np.sum(a) + d["k"]}))
    t, d = wrapped(T.ones(3), {"k": T.tensor(1.0)})
    return outcomes, t.numpy().tolist(), type(t).__name__, float(d["s"]), type(d["s"]).__name__


def test_compiler_doc_examples_match_torch():
    got = _compiler_doc_examples(ember)
    assert got == (["ok", "TypeError", "TypeError"], [2.0, 2.0, 2.0], "Tensor", 4.0, "float32")
    torch = pytest.importorskip("torch")
    assert _compiler_doc_examples(torch) == got


def _unflatten_report(T):
    T.manual_seed(0)
    m = T.nn.Sequential(
        T.nn.Linear(3, 4), T.nn.Sequential(T.nn.ReLU(), T.nn.Linear(4, 2)), T.nn.Tanh()
    )
    ep = T.export.export(m, (T.ones(2, 3),))
    u = T.export.unflatten(ep)
    children = [n for n, _ in u.named_modules() if n and "_graph_module" not in n]
    x = T.linspace(-1, 1, 6).reshape(2, 3)
    first = getattr(u, "0")(x)
    inner = getattr(getattr(u, "1"), "1")(first)
    whole = u(x)
    diffs = [
        float((first - m[0](x)).abs().max()),
        float((inner - m[1][1](first)).abs().max()),
        float((whole - m(x)).abs().max()),
    ]
    return children, tuple(inner.shape), diffs


def test_unflatten_submodules_callable_alone():
    children, shape, diffs = _unflatten_report(ember)
    assert children == ["0", "1", "1.0", "1.1", "2"] and shape == (2, 2)
    assert max(diffs) < 1e-6
    torch = pytest.importorskip("torch")
    t_children, t_shape, t_diffs = _unflatten_report(torch)
    assert (t_children, t_shape) == (children, shape) and max(t_diffs) < 1e-6


def _normalized(T):
    F = T.nn.functional

    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(4, 4)

        def forward(self, x, y):
            return F.softmax(self.lin(x), 1) + F.dropout(y, 0.3, False) + F.leaky_relu(x) + y.sum()

    gm = T.fx.symbolic_trace(M())
    out = []
    for n in gm.graph.nodes:
        for only_kwargs in (False, True):
            r = n.normalized_arguments(gm, normalize_to_only_use_kwargs=only_kwargs)
            out.append(None if r is None else (n.name, str(r.args), str(r.kwargs)))
    return out


def test_node_normalized_arguments_match_torch():
    got = _normalized(ember)
    assert ("softmax", "(lin,)", "{'dim': 1, '_stacklevel': 3, 'dtype': None}") in got
    assert ("lin", "()", "{'input': x}") in got
    assert got[0] is None  # a placeholder
    torch = pytest.importorskip("torch")
    assert _normalized(torch) == got


def test_compiler_config_aliases_dynamo_config():
    for T in _libs():
        c = T.compiler.config
        assert c.job_id is None and c.cache_key_tag == "" and c.force_disable_caches is False
        c.capture_scalar_outputs = True
        assert T._dynamo.config.capture_scalar_outputs is True
        c.capture_scalar_outputs = False
        assert T._dynamo.config.capture_scalar_outputs is False
        assert c.recompile_limit == T._dynamo.config.recompile_limit
    with ember.compiler.config.patch(recompile_limit=3, job_id="j"):
        assert ember._dynamo.config.recompile_limit == 3 and ember.compiler.config.job_id == "j"
    assert ember._dynamo.config.recompile_limit == 8 and ember.compiler.config.job_id is None


def test_graph_break_reason_stack_ends_in_user_code():
    e = ember._dynamo.explain(_user_break(ember))(ember.ones(2))
    frames = e.break_reasons[0].user_stack
    assert frames and frames[-1].name == "f" and frames[-1].filename == __file__
