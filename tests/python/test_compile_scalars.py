"""Numbers read from tensor data inside ember.compile (``.item()``, ``.tolist()``, ``int(t)``,
``bool(t)``), as torch 2.13 treats them: a graph break by default; with
``config.capture_scalar_outputs = True`` or ``fullgraph=True`` ``.item()`` and an integer
tensor's ``.tolist()`` are graph values (unbacked scalars); a Python branch on such a value
raises UserError under fullgraph; a branch on a tensor raises Unsupported."""

import numpy as np
import pytest

import ember
import ember._dynamo as dyn
from ember._dynamo.exc import TorchDynamoException, Unsupported, UserError
from ember._dynamo.testing import CompileCounter


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def scale_by_item(x):
    s = x.sum().item()
    return x * (2.0 * s + 1) / s, s


def index_by_tolist(x):
    n = x.int().tolist()
    return x * n[0] + n[1]


def weighted(x, w):
    s = (x * w).sum().item()
    return (x * w).relu() * s


def branch_on_item(x):
    if x.sum().item() > 0:
        return x + 1
    return x - 1


def branch_on_tensor(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def float_tolist(x):
    return x * len(x.tolist())


def _arg(fn):
    if fn is weighted:
        return (ember.randn(4), ember.randn(4, requires_grad=True))
    x = ember.rand(5) * 4 + 0.5
    return (x if fn is not index_by_tolist else x * 2,)


def _check(got, want):
    if isinstance(want, tuple):
        close(got[0].detach().numpy(), want[0].detach().numpy())
        assert type(got[1]) is float
        close(got[1], want[1], 1e-4)
    else:
        close(got.detach().numpy(), want.detach().numpy())


@pytest.fixture(autouse=True)
def _fresh():
    dyn.reset()
    yield
    dyn.reset()


@pytest.mark.parametrize("fn", [scale_by_item, index_by_tolist, weighted])
def test_default_is_a_graph_break_with_eager_results(fn):
    cnt = CompileCounter()
    cf = ember.compile(fn, backend=cnt)
    for _ in range(3):
        args = _arg(fn)
        _check(cf(*args), fn(*args))
    assert dyn.explain(fn)(*_arg(fn)).graph_break_count >= 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("fn", [scale_by_item, index_by_tolist, weighted])
@pytest.mark.parametrize("how", ["config", "fullgraph"])
def test_captured_as_one_graph(fn, backend, how):
    cnt = ember._dynamo.testing.CompileCounterWithBackend(backend)
    with dyn.config.patch(capture_scalar_outputs=how == "config"):
        cf = ember.compile(fn, backend=cnt, fullgraph=how == "fullgraph")
        for _ in range(3):  # new data each call: the scalar is recomputed, not baked in
            args = _arg(fn)
            _check(cf(*args), fn(*args))
    assert cnt.frame_count == 1
    assert any(n.target == "item" or n.target == "tolist" for n in cnt.graphs[0].graph.nodes)
    assert dyn.explain(fn)(*_arg(fn)).graph_break_count >= 1  # explain keeps the default


def test_gradient_through_a_captured_item():
    cf = ember.compile(weighted, backend="aot_eager", fullgraph=True)
    x, w = _arg(weighted)
    cf(x, w).sum().backward()
    g = w.grad.clone()
    w.grad = None
    weighted(x, w).sum().backward()
    close(g.numpy(), w.grad.numpy())


def test_branch_on_item_under_fullgraph_raises_user_error():
    cf = ember.compile(branch_on_item, backend="eager", fullgraph=True)
    with pytest.raises(UserError, match="data-dependent expression"):
        cf(ember.ones(3))
    assert issubclass(UserError, TorchDynamoException) and not issubclass(UserError, Unsupported)


def test_branch_on_item_without_fullgraph_runs_eagerly():
    with dyn.config.patch(capture_scalar_outputs=True):
        cf = ember.compile(branch_on_item, backend="eager")
        for sign in (1, -1, 1):
            x = ember.ones(3) * sign
            close(cf(x).numpy(), branch_on_item(x).numpy())


def test_branch_on_tensor_and_float_tolist_stay_unsupported():
    for fn in (branch_on_tensor, float_tolist):
        with pytest.raises(Unsupported):
            ember.compile(fn, backend="eager", fullgraph=True)(ember.ones(3))
    with pytest.raises(Unsupported, match="non-integer"):
        ember.compile(float_tolist, backend="eager", fullgraph=True)(ember.ones(3))


def test_matches_torch():
    torch = pytest.importorskip("torch")
    import torch._dynamo.testing as tdt

    def run(lib, testing, fn, fullgraph, capture):
        lib._dynamo.reset()
        cnt = testing.CompileCounter()
        with lib._dynamo.config.patch(capture_scalar_outputs=capture):
            cf = lib.compile(fn, backend=cnt, fullgraph=fullgraph)
            try:
                out = cf(lib.arange(1.0, 4.0))
            except Exception as e:  # noqa: BLE001 (compared by class name)
                return type(e).__name__, cnt.frame_count
        out = out[0] if isinstance(out, tuple) else out
        return out.tolist(), cnt.frame_count

    for fn in (scale_by_item, index_by_tolist, branch_on_item, branch_on_tensor, float_tolist):
        for fullgraph, capture in ((True, False), (False, True)):
            want = run(torch, tdt, fn, fullgraph, capture)
            got = run(ember, ember._dynamo.testing, fn, fullgraph, capture)
            if fullgraph or fn in (scale_by_item, index_by_tolist):
                assert got == want, (fn.__name__, fullgraph, capture)
            else:  # a graph break: the graphs around it are test_compile_partial.py's
                assert got[0] == want[0], (fn.__name__, fullgraph, capture)


def test_break_reasons_use_torchs_words():
    torch = pytest.importorskip("torch")
    want = torch._dynamo.explain(scale_by_item)(torch.arange(1.0, 4.0)).break_reasons[0].reason
    got = dyn.explain(scale_by_item)(ember.arange(1.0, 4.0)).break_reasons[0].reason
    assert want.splitlines()[0] in got
    with pytest.raises(torch._dynamo.exc.Unsupported, match="Data-dependent branching"):
        torch.compile(branch_on_tensor, backend="eager", fullgraph=True)(torch.ones(3))
    with pytest.raises(Unsupported, match="Data-dependent branching"):
        ember.compile(branch_on_tensor, backend="eager", fullgraph=True)(ember.ones(3))


def checked_prefix(lib):
    def f(x, y):
        n = x.sum().item()
        lib._check_is_size(n)
        lib._check(n <= y.shape[0])
        return y[:n] * 2

    return f


def _assert_messages(gm):
    return [n.args[1] for n in gm.graph.nodes if "_assert_scalar" in str(n.target)]


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_checks_on_item_are_runtime_assertions(backend):
    # torch._check / _check_is_size on an unbacked scalar: assertions in the graph, checked on
    # every call (eager's _check raises there too), not a data-dependent error
    cnt = ember._dynamo.testing.CompileCounterWithBackend(backend)
    seen = cnt.graphs
    f = checked_prefix(ember)
    cf = ember.compile(f, backend=cnt, fullgraph=True)
    y = ember.arange(5.0)
    for n in (3, 1, 5):
        close(cf(ember.tensor([n]), y).numpy(), f(ember.tensor([n]), y).numpy())
    assert len(seen) == 1
    assert _assert_messages(seen[0]) == [
        "Runtime assertion failed for expression u0 >= 0 on node 'ge'",
        "Runtime assertion failed for expression u0 <= 5 on node 'le'",
    ]
    for n, expr in ((7, "u0 <= 5"), (-1, "u0 >= 0")):
        with pytest.raises(RuntimeError, match=f"expression {expr} on node"):
            cf(ember.tensor([n]), y)
        with pytest.raises(RuntimeError):
            f(ember.tensor([n]), y)  # eager refuses it too
    assert len(seen) == 1


def test_branch_on_checked_item_reason_is_torchs():
    torch = pytest.importorskip("torch")

    def g(lib):
        def fn(x):
            if (x * 2).item() > 2:
                return x * 2
            return x * 3

        return fn

    def reason(lib, x):
        lib._dynamo.reset()
        with lib._dynamo.config.patch(capture_scalar_outputs=True):
            return lib._dynamo.explain(g(lib))(x).break_reasons[0].reason

    want = reason(torch, torch.tensor(3))
    got = reason(ember, ember.tensor(3))
    assert "Could not guard on data-dependent expression u0 > 2 (unhinted: u0 > 2)" in want
    assert "Could not guard on data-dependent expression u0 > 2 (unhinted: u0 > 2)" in got


def test_data_dependent_shapes_follow_each_call():
    # the inductor's kernels are specialized to the example's shapes: a result whose length
    # depends on the data (nonzero, a mask, a slice by .item()) and what is computed from it run
    # eagerly, so a call with other data (same input shapes, no recapture) is still right
    def mask(x):
        return (x[x > 0] * 2 + 1).exp(), (x.nonzero().float() * 2 + 1).sum(0)

    def prefix(x, y):
        return (y[: x.sum().item()] * 2).exp()

    cnt = ember._dynamo.testing.CompileCounterWithBackend("inductor")
    cm = ember.compile(mask, backend=cnt)
    cp = ember.compile(prefix, backend=cnt, fullgraph=True)
    y = ember.arange(5.0)
    with dyn.config.patch(capture_dynamic_output_shape_ops=True):  # the mask in the graph
        for v in ([1.0, 0.0, 2.0], [1.0, 3.0, 2.0], [0.0, 0.0, 2.0]):
            x = ember.tensor(v)
            for got, want in zip(cm(x), mask(x)):
                close(got.numpy(), want.numpy())
    for n in (3, 1, 5):
        close(cp(ember.tensor([n]), y).numpy(), prefix(ember.tensor([n]), y).numpy())
    assert cnt.frame_count == 2


def test_dynamic_shape_operators_break_unless_captured():
    # torch 2.13: indexing by a mask, masked_select and repeat_interleave with tensor repeats
    # are graph breaks ("Dynamic shape operator") unless capture_dynamic_output_shape_ops is
    # set; nonzero is captured either way
    def cases(lib):
        return {
            "nonzero": lambda x: x.nonzero().float().sum() + 1,
            "masked_select": lambda x: lib.masked_select(x, x > 0).sum() + 1,
        }

    def report(lib, flag):
        out = {}
        with lib._dynamo.config.patch(capture_dynamic_output_shape_ops=flag):
            for name, fn in cases(lib).items():
                lib._dynamo.reset()
                e = lib._dynamo.explain(fn)(lib.tensor([1.0, 0.0, 2.0]))
                reasons = [r.reason.splitlines()[:3] for r in e.break_reasons]
                out[name] = (e.graph_count, e.graph_break_count, reasons)
        return out

    got = {flag: report(ember, flag) for flag in (False, True)}
    assert got[False]["masked_select"][:2] == (2, 1) and got[True]["masked_select"][:2] == (1, 0)
    # indexing by a mask is the same break (test_data_dependent_shapes_follow_each_call)
    ember._dynamo.reset()
    assert dyn.explain(lambda x: x[x > 0].sum())(ember.ones(2)).graph_break_count == 1
    torch = pytest.importorskip("torch")
    assert got == {flag: report(torch, flag) for flag in (False, True)}


def test_comparison_of_item_used_as_a_number():
    # a comparison of an unbacked scalar is a graph value ops can take (x * (n > 0)), not only
    # a condition for _check
    def f(x):
        n = x.sum().item()
        return x * (n > 0) + (n <= 2)

    with dyn.config.patch(capture_scalar_outputs=True):
        cf = ember.compile(f, backend="eager")
        for sign in (1.0, -1.0):
            x = ember.ones(3) * sign
            close(cf(x).numpy(), f(x).numpy())
