"""Partial graphs around graph breaks (Note [Partial graphs] in ember/_dynamo/segments.py): the
calls before a break form one graph, the breaking call runs eagerly, the calls after it form
another; later calls replay the graphs while the Python function runs, and any call that leaves
the captured path runs eagerly. Results always equal eager's; graph and break counts follow
torch 2.13's."""

import operator

import numpy as np
import pytest

import ember
import ember._dynamo as dyn
from ember._dynamo.testing import CompileCounter, CompileCounterWithBackend


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def _fresh():
    dyn.reset()
    # every later call replays the graphs (by default the faster of replay and eager is kept)
    with dyn.config.patch(partial_graphs="always"):
        yield
    dyn.reset()


def item_break(x):
    y = x * 2
    s = y.sum().item()
    return y + s


def branch(x):
    a = x.relu() + 1
    if a.sum() > 4:
        return a * 2
    return a - 2


def two_breaks(x):
    a = (x * 3).sin()
    n = int(a.abs().max() * 10)
    b = a.cos() + n
    m = b.sum().item()
    return (b * m).tanh()


def tuple_across(x):
    vals, idx = x.max(dim=1)
    k = int(idx.sum())
    return vals * k + vals.exp()


FUNCS = [item_break, branch, two_breaks, tuple_across]


def _inputs(fn, n=5):
    gen = ember.Generator().manual_seed(7)
    shape = (3, 4) if fn is tuple_across else (6,)
    return [ember.randn(*shape, generator=gen) * (1 if i % 2 else -1) for i in range(n)]


@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_results_equal_eager_on_every_call(fn, backend):
    cnt = CompileCounterWithBackend(backend)
    cf = ember.compile(fn, backend=cnt)
    for x in _inputs(fn):
        close(cf(x), fn(x))
    assert cnt.frame_count >= 1
    reads = {"item", "__bool__", "__int__"}
    assert not any(n.target in reads for gm in cnt.graphs for n in gm.graph.nodes)


def test_graphs_before_and_after_the_break():
    cnt = CompileCounter()
    cf = ember.compile(item_break, backend=cnt)
    for x in _inputs(item_break):
        close(cf(x), item_break(x))
    assert cnt.frame_count == 2  # one capture: two graphs, no recompiles
    e = dyn.explain(item_break)(ember.ones(3))
    assert (e.graph_count, e.graph_break_count) == (2, 1)
    # torch's explain lists call_function targets only (y.sum() is a method call there)
    assert e.ops_per_graph == [[operator.mul], [operator.add]]
    assert "item" in e.break_reasons[0].reason


def test_number_from_the_break_is_an_input_of_the_next_graph():
    seen = []

    def backend(gm, example):
        seen.append([n.name for n in gm.graph.nodes if n.op == "placeholder"])
        return gm.forward

    cf = ember.compile(item_break, backend=backend)
    for x in _inputs(item_break):  # a new .item() value each call
        close(cf(x), item_break(x))
    assert cf._ember_cache.entries[0].plan.diverged == 0  # the second graph served every call
    assert len(seen) == 2 and any(name.startswith("num_") for name in seen[1])


def test_replay_runs_the_compiled_segments():
    calls = []

    def backend(gm, example):
        def run(*args):
            calls.append(len(example))
            return gm.forward(*args)

        return run

    cf = ember.compile(branch, backend=backend)
    x = ember.ones(4)
    close(cf(x), branch(x))  # the capture
    assert calls == []
    close(cf(x * 3), branch(x * 3))  # the same path: both graphs replayed
    assert len(calls) == 2
    plan = cf._ember_cache.entries[0].plan
    assert plan.diverged == 0
    y = -ember.ones(4) * 3  # the other branch: recorded as a second path, with its own graph
    close(cf(y), branch(y))
    assert plan.diverged == 0 and plan.branches == 1
    close(cf(y * 2), branch(y * 2))  # now replayed too
    assert len(calls) == 5  # 2 (first path) + 1 (before the branch, then recording) + 2
    with dyn.config.patch(recompile_limit=1):  # no room for another path: the rest runs eagerly
        dyn.reset()
        cf(x)
        cf(y)
        assert cf._ember_cache.entries[0].plan.diverged == 1


def test_each_path_compiles_once():
    cnt = CompileCounter()
    cf = ember.compile(branch, backend=cnt)
    for i in range(8):
        x = ember.randn(4) + (5 if i % 2 else -5)  # a.sum() is 4 on the negative side
        close(cf(x), branch(x))
    assert cnt.frame_count == 3  # before the branch, and each side of it (torch: 3 as well)
    plan = cf._ember_cache.entries[0].plan
    assert plan.branches == 1 and plan.diverged == 0


def test_gradients_through_partial_graphs():
    w = ember.randn(6, requires_grad=True)

    def f(x):
        h = (x * w).tanh()
        scale = h.detach().abs().max().item()
        return (h * scale + w).sum()

    for backend in ("aot_eager", "inductor"):
        cf = ember.compile(f, backend=backend)
        for x in _inputs(item_break, 3):
            cf(x).backward()
            g = w.grad.clone()
            w.grad = None
            f(x).backward()
            close(g, w.grad)
            w.grad = None
        dyn.reset()


def test_disable_and_no_grad_regions_run_eagerly():
    @dyn.disable
    def helper(t):
        return t.flip(0) * 2

    def f(x):
        a = x.exp()
        b = helper(a)
        with ember.no_grad():
            c = b * 3
        return a + b + c

    cnt = CompileCounter()
    cf = ember.compile(f, backend=cnt)
    for x in _inputs(item_break, 3):
        close(cf(x), f(x))
    e = dyn.explain(f)(ember.ones(3))
    assert e.graph_count == 2 and e.graph_break_count == 2
    names = [getattr(n.target, "__name__", n.target) for gm in e.graphs for n in gm.graph.nodes]
    assert "flip" not in names


def test_unseen_tensor_and_inplace_ops():
    from ember import _C

    def f(x):
        y = x.clone()
        y.add_(1)
        z = _C.exp(y)  # a binding the mode cannot see: its result comes from outside
        y.mul_(z)  # z is unknown to the graph: this call runs eagerly, and so does y + z
        w = y + z
        return w.sin() * y  # y was changed by an eager call: read as an input here

    cnt = CompileCounter()
    cf = ember.compile(f, backend=cnt)
    for x in _inputs(item_break, 4):
        close(cf(x), f(x))
    assert cnt.frame_count == 2


def test_compiled_module_with_a_break_trains_like_eager():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ember.nn.Linear(4, 8)
            self.b = ember.nn.Linear(8, 2)

        def forward(self, x):
            h = self.a(x).relu()
            if h.mean() > 10:  # a data-dependent branch: a break between the layers
                h = h / 2
            return self.b(h)

    ember.manual_seed(0)
    net = Net()
    ref = Net()
    ref.load_state_dict(net.state_dict())
    cnet = ember.compile(net, backend="aot_eager")
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    ropt = ember.optim.SGD(ref.parameters(), lr=0.1)
    x, y = ember.randn(16, 4), ember.randn(16, 2)
    for _ in range(5):
        for model, o in ((cnet, opt), (ref, ropt)):
            o.zero_grad()
            ember.nn.functional.mse_loss(model(x), y).backward()
            o.step()
    for p, q in zip(net.parameters(), ref.parameters()):
        close(p, q)


def test_default_keeps_the_faster_of_replay_and_eager():
    with dyn.config.patch(partial_graphs=True):
        cf = ember.compile(item_break, backend="eager")
        for x in _inputs(item_break, 9):
            close(cf(x), item_break(x))
    plan = cf._ember_cache.entries[0].plan
    assert len(plan.times[0]) == 3 and len(plan.times[1]) == 3
    assert plan.use_replay == (min(plan.times[1]) < min(plan.times[0]))


def test_partial_graphs_off_runs_eagerly():
    cnt = CompileCounter()
    with dyn.config.patch(partial_graphs=False):
        cf = ember.compile(item_break, backend=cnt)
        for x in _inputs(item_break, 3):
            close(cf(x), item_break(x))
    assert cnt.frame_count == 0


@pytest.mark.parametrize("fn", [item_break, branch, two_breaks], ids=lambda f: f.__name__)
def test_counts_match_torch(fn):
    torch = pytest.importorskip("torch")
    x = np.linspace(-1, 1, 6).astype(np.float32)
    want = torch._dynamo.explain(fn)(torch.tensor(x))
    got = dyn.explain(fn)(ember.tensor(x))
    assert (got.graph_count, got.graph_break_count) == (want.graph_count, want.graph_break_count)


def test_a_backend_failing_on_a_segment_leaves_the_function_eager():
    def broken(gm, example):
        raise RuntimeError("no")

    cf = ember.compile(item_break, backend=broken)
    for x in _inputs(item_break, 3):
        close(cf(x), item_break(x))
    assert cf._ember_cache.entries[0].plan is None
