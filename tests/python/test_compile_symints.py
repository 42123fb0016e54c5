"""Python number arguments under ember.compile, as torch 2.13's automatic dynamic treats them:
the first capture specializes an int/float argument (guarded by value); a second value makes it
a graph input (one recompile, then every value reuses the graph); ``dynamic=True`` makes it a
graph input at once; ``dynamic=False`` specializes every value. A comparison on a symbolic
argument (``if n > 3``) becomes a guard on its outcome, as torch's symbolic guards."""

import numpy as np
import pytest

import ember
import ember._dynamo as dyn
from ember._dynamo.testing import CompileCounter, CompileCounterWithBackend


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def affine(x, n):
    return x * n + n


def scaled(x, s):
    return (x * s).relu() / s


def branchy(x, n):
    if n > 3:
        return x + n
    return x - n


def sized(x, n):
    return x.reshape(n, -1).sum(0) + x.new_ones(n).sum()


def looped(x, n):
    for _ in range(n):  # range needs the number: the argument is specialized
        x = x * 2
    return x


CASES = {
    affine: [2, 3, 4, 5, 2],
    scaled: [0.5, 1.5, 2.5, 0.5],
    branchy: [1, 2, 5, 6, 7, 1],
    sized: [2, 3, 4, 6, 2],
    looped: [1, 2, 3, 2],
}
# (graphs by default, with dynamic=True, with dynamic=False): torch 2.13's counts
COUNTS = {
    affine: (2, 1, 4),
    scaled: (2, 1, 3),
    branchy: (3, 2, 5),
    sized: (2, 1, 4),
    looped: (3, 3, 3),
}


@pytest.fixture(autouse=True)
def _fresh():
    dyn.reset()
    yield
    dyn.reset()


def _run(lib, cnt, fn, dynamic):
    cf = lib.compile(fn, backend=cnt, dynamic=dynamic)
    outs = []
    for v in CASES[fn]:
        x = lib.arange(12.0) - 5
        outs.append(cf(x, v).tolist())
    return outs


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
@pytest.mark.parametrize("dynamic", [None, True, False])
def test_recompile_counts_and_results(fn, dynamic):
    cnt = CompileCounter()
    got = _run(ember, cnt, fn, dynamic)
    for v, out in zip(CASES[fn], got):
        want = fn(ember.arange(12.0) - 5, v)
        close(ember.tensor(out), want)
    assert cnt.frame_count == COUNTS[fn][(None, True, False).index(dynamic)]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_symbolic_number_through_backends_and_autograd(backend):
    cnt = CompileCounterWithBackend(backend)
    cf = ember.compile(scaled, backend=cnt)
    for s in (0.5, 1.5, 2.5, 3.0):
        x = ember.randn(6, requires_grad=True)
        out = cf(x, s)
        out.sum().backward()
        g = x.grad
        x.grad = None
        scaled(x, s).sum().backward()
        close(out, scaled(x, s))
        close(g, x.grad)
    assert cnt.frame_count == 2
    assert any(
        n.op == "placeholder" and n.name.startswith("l_s") for n in cnt.graphs[1].graph.nodes
    )


def test_bool_and_string_arguments_stay_specialized():
    cnt = CompileCounter()
    cf = ember.compile(lambda x, flag: x + 1 if flag else x - 1, backend=cnt)
    for flag in (True, False, True, False):
        close(cf(ember.ones(2), flag), ember.ones(2) + (1 if flag else -1))
    assert cnt.frame_count == 2


def test_matches_torch_counts():
    torch = pytest.importorskip("torch")
    import torch._dynamo.testing as tdt

    for fn in CASES:
        for dynamic in (None, True, False):
            torch._dynamo.reset()
            want_cnt = tdt.CompileCounter()
            want = _run(torch, want_cnt, fn, dynamic)
            dyn.reset()
            got_cnt = CompileCounter()
            got = _run(ember, got_cnt, fn, dynamic)
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-5, atol=1e-5)
            assert got_cnt.frame_count == want_cnt.frame_count, (fn.__name__, dynamic)
