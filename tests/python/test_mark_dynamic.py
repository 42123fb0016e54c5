"""ember._dynamo.mark_dynamic / maybe_mark_dynamic / mark_static: marked dims are captured as
symbolic sizes (no re-capture when they change, a guard on min/max), marked-static dims stay
exact even under dynamic=True; results equal eager ones."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember._dynamo import mark_dynamic, mark_static, maybe_mark_dynamic
from ember._dynamo.backends import lookup_backend


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Counter:
    """A backend that counts the graphs it is given (one per capture)."""

    def __init__(self, inner=None):
        self.graphs = []
        self.inner = inner

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        if self.inner is not None:
            return lookup_backend(self.inner)(gm, example_inputs)
        return gm.forward


@pytest.fixture(autouse=True)
def _fresh():
    ember._dynamo.reset()
    yield
    ember._dynamo.reset()


def f(x):
    return (x * 2).sum(0) + x.shape[0]


def test_marked_dim_does_not_recompile():
    rec = Counter()
    cf = ember.compile(f, backend=rec)
    for n in (4, 5, 9, 2):
        x = ember.randn(n, 3)
        mark_dynamic(x, 0)
        close(cf(x), f(x))
    assert len(rec.graphs) == 1
    # the size is read at run time, not baked in: as torch's, a custom backend gets it as a
    # SymInt input of its own before the tensor (torch names it s<hash>, ember s0)
    phs = [n.name for n in rec.graphs[0].graph.nodes if n.op == "placeholder"]
    assert phs == ["s0", "l_x_"]
    assert "sum_1 + s0" in rec.graphs[0].code


def test_unmarked_dim_still_guarded():
    rec = Counter()
    cf = ember.compile(f, backend=rec)
    x = ember.randn(4, 3)
    mark_dynamic(x, 0)
    cf(x)
    y = ember.randn(4, 5)
    mark_dynamic(y, 0)
    close(cf(y), f(y))
    assert len(rec.graphs) == 2, [
        (e.breaks, getattr(e, 'dynamic', None)) for e in cf._ember_cache.entries
    ]


def test_unmarked_inputs_specialize_as_before():
    rec = Counter()
    cf = ember.compile(f, backend=rec)
    cf(ember.randn(4, 3))
    cf(ember.randn(4, 3))
    assert len(rec.graphs) == 1
    assert "size" not in rec.graphs[0].code


def test_min_max_guard():
    rec = Counter()
    cf = ember.compile(f, backend=rec)
    for n in (4, 3, 8):
        x = ember.randn(n, 3)
        mark_dynamic(x, 0, min=3, max=8)
        close(cf(x), f(x))
    assert len(rec.graphs) == 1
    x = ember.randn(9, 3)
    mark_dynamic(x, 0, min=3, max=8)
    close(cf(x), f(x))
    assert len(rec.graphs) == 2  # 9 is past max: a new capture


def test_range_in_guard_description():
    x = ember.randn(4, 3)
    mark_dynamic(x, 0, min=2, max=16)
    report = str(ember._dynamo.explain(f)(x))
    assert "s0 in [2, 16]" in report


def test_maybe_mark_dynamic():
    rec = Counter()
    cf = ember.compile(f, backend=rec)
    for n in (4, 6):
        x = ember.randn(n, 3)
        maybe_mark_dynamic(x, 0)
        close(cf(x), f(x))
    assert len(rec.graphs) == 1


def g_specializes(x):
    out = x
    for _ in range(x.shape[0]):  # needs the concrete size
        out = out * 1.5
    return out


def test_maybe_mark_dynamic_specialized_quietly():
    rec = Counter()
    cf = ember.compile(g_specializes, backend=rec)
    x = ember.randn(3, 2)
    maybe_mark_dynamic(x, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(cf(x), g_specializes(x))
    y = ember.randn(4, 2)
    maybe_mark_dynamic(y, 0)
    close(cf(y), g_specializes(y))
    assert len(rec.graphs) == 2


def test_mark_dynamic_specialized_warns_and_stays_correct():
    rec = Counter()
    cf = ember.compile(g_specializes, backend=rec)
    x = ember.randn(3, 2)
    mark_dynamic(x, 0)
    with pytest.warns(UserWarning, match="marked dynamic"):
        close(cf(x), g_specializes(x))
    y = ember.randn(5, 2)
    mark_dynamic(y, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(cf(y), g_specializes(y))
    assert len(rec.graphs) == 2


def test_mark_static_under_dynamic_true():
    rec = Counter()
    cf = ember.compile(f, backend=rec, dynamic=True)
    x = ember.randn(4, 3)
    mark_static(x, 1)
    cf(x)
    y = ember.randn(7, 3)
    mark_static(y, 1)
    close(cf(y), f(y))
    assert len(rec.graphs) == 1  # dim 0 is dynamic
    z = ember.randn(7, 5)
    mark_static(z, 1)
    close(cf(z), f(z))
    assert len(rec.graphs) == 2  # dim 1 is static


def test_dynamic_false_ignores_marks():
    rec = Counter()
    cf = ember.compile(f, backend=rec, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (4, 5):
            x = ember.randn(n, 3)
            mark_dynamic(x, 0)
            close(cf(x), f(x))
    assert len(rec.graphs) == 2


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_training_module_with_dynamic_batch(backend):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    rec = Counter(backend)
    cm = ember.compile(model, backend=rec)
    for n in (3, 5, 6):
        x = ember.randn(n, 4)
        mark_dynamic(x, 0)
        model.zero_grad()
        out = cm(x)
        out.pow(2).sum().backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        ref = model(x)
        ref.pow(2).sum().backward()
        close(out, ref)
        for a, p in zip(got, model.parameters()):
            close(a, p.grad)
    assert len(rec.graphs) == 1


def test_marks_compare_with_torch_api():
    torch = pytest.importorskip("torch")
    import inspect

    for name in ("mark_dynamic", "maybe_mark_dynamic", "mark_static"):
        ours = inspect.signature(getattr(ember._dynamo, name))
        theirs = inspect.signature(getattr(torch._dynamo, name))
        assert list(ours.parameters) == list(theirs.parameters)


def test_bad_arguments():
    x = ember.randn(2, 3)
    with pytest.raises(IndexError, match="mark_dynamic"):
        mark_dynamic(x, 2)
    with pytest.raises(TypeError, match="mark_dynamic"):
        mark_dynamic([1, 2], 0)
    with pytest.raises(ValueError, match="min <= max"):
        mark_dynamic(x, 0, min=5, max=3)
    mark_dynamic(x, -1)
    assert x._dynamo_dynamic_indices == {1}
