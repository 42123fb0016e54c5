"""Guards and recompilation of ember.compile: each change of what a graph assumed re-captures."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Counter:
    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def test_same_inputs_hit_the_cache():
    rec = Counter()
    cf = ember.compile(lambda x: x * 2 + 1, backend=rec)
    for _ in range(4):
        x = ember.randn(3, 4)
        close(cf(x), x * 2 + 1)
    assert len(rec.graphs) == 1


def test_dtype_change_recompiles():
    rec = Counter()
    cf = ember.compile(lambda x: x * 2 + 1, backend=rec)
    x = ember.randn(3)
    cf(x)
    xd = x.double()
    out = cf(xd)
    assert out.dtype == ember.float64
    close(out, xd * 2 + 1)
    assert len(rec.graphs) == 2


def test_grad_mode_change_recompiles():
    rec = Counter()
    w = ember.randn(3, requires_grad=True)
    cf = ember.compile(lambda x: (x * w).sum(), backend=rec)
    x = ember.randn(3)
    assert cf(x).requires_grad
    with ember.no_grad():
        out = cf(x)
        assert not out.requires_grad
    close(out, (x * w).sum())
    assert len(rec.graphs) == 2
    out = cf(x)
    assert out.requires_grad and len(rec.graphs) == 2


def test_requires_grad_of_input_is_guarded():
    rec = Counter()
    cf = ember.compile(lambda x: x.exp(), backend=rec)
    cf(ember.randn(3))
    y = cf(ember.randn(3, requires_grad=True))
    assert y.requires_grad and len(rec.graphs) == 2


def test_shape_change_then_dynamic():
    rec = Counter()

    def f(x):
        b = x.shape[0]
        return x.reshape(b, -1).sum(dim=1) + x.view(x.size(0) * x.size(1), -1).mean()

    cf = ember.compile(f, backend=rec)
    for n in (4, 6, 8, 10):
        x = ember.randn(n, 3, 2)
        close(cf(x), f(x))
    # the second size makes the next capture symbolic: one more graph serves every size
    assert len(rec.graphs) == 2
    code = rec.graphs[1].code
    assert "size" in code


def test_recompiles_over_many_sizes_as_torchs():
    # automatic dynamic, then further sizes: a dim seen with two sizes is symbolic for sizes >= 2
    # (one graph for 6 after 2 and 4); sizes 1 and 0 are specialized (a graph each, as torch's
    # 0/1 specialization); a second dim changing makes one more graph dynamic in it too
    sizes = ((2, 3), (4, 3), (6, 3), (1, 3), (1, 3), (0, 3), (4, 5), (6, 7), (3, 1))

    def counts(T, counter):
        T._dynamo.reset()
        cnt = counter()
        cf = T.compile(lambda x, y: (x * 2).sum(0) + y, backend=cnt)
        out = []
        for n, k in sizes:
            x, y = T.randn(n, k), T.randn(k)
            close(cf(x, y), (x * 2).sum(0) + y)
            out.append(cnt.frame_count)
        return out

    import ember._dynamo.testing

    got = counts(ember, ember._dynamo.testing.CompileCounter)
    assert got == [1, 2, 2, 3, 3, 4, 5, 5, 6]
    testing = pytest.importorskip("torch._dynamo.testing")
    assert counts(pytest.importorskip("torch"), testing.CompileCounter) == got


def test_recompile_log_names_the_failed_guards_as_torchs():
    # torch's recompile log lists, newest first, the first guard each cached graph fails
    import logging
    import re

    def log(T):
        records = []

        class Keep(logging.Handler):
            def emit(self, record):
                records.append(record.getMessage())

        logger = logging.getLogger(f"{T.__name__}._dynamo")
        handler = Keep()
        logger.addHandler(handler)
        T._dynamo.reset()
        T._logging.set_logs(recompiles=True)
        try:
            cf = T.compile(lambda x: x * 2, backend="eager")
            for x in (T.ones(2), T.ones(4), T.ones(1), T.ones(3, dtype=T.float64)):
                cf(x)
        finally:
            T._logging.set_logs()
            logger.removeHandler(handler)
        lines = [line for r in records for line in r.splitlines()[1:]]
        # the frame number is a process-wide count in torch; torch comments its 0/1 guard
        return [re.sub(r"- \d+/", "- ", line).split("  #")[0] for line in lines]

    got = log(ember)
    assert got[:2] == [
        "    triggered by the following guard failure(s):",
        "    - 0: tensor 'x' size mismatch at index 0. expected 2, actual 4",
    ]
    assert "    - 1: 2 <= x.size()[0]" in got
    torch = pytest.importorskip("torch")
    assert got == log(torch)


def test_dynamic_true_recomputes_view_sizes():
    rec = Counter()

    def f(x):
        n, c = x.shape
        return x.view(n * c).cumsum(0).view(n, c) * (1.0 / c)

    cf = ember.compile(f, backend=rec, dynamic=True)
    for n in (2, 5, 7):
        x = ember.randn(n, 3)
        close(cf(x), f(x))
    assert len(rec.graphs) == 1
    # the column count fed a Python float: that size was specialized, so a new width re-captures
    x = ember.randn(4, 6)
    close(cf(x), f(x))


def test_dynamic_false_stays_static():
    rec = Counter()
    cf = ember.compile(lambda x: x.sum(0), backend=rec, dynamic=False)
    for n in (2, 3, 4):
        cf(ember.randn(n, 2))
    assert len(rec.graphs) == 3


def test_size_used_in_python_control_flow_specializes():
    rec = Counter()

    def f(x):
        if x.shape[0] > 4:
            return x * 2
        return x * 3

    cf = ember.compile(f, backend=rec, dynamic=True)
    for n in (2, 3, 6, 7, 3):
        x = ember.randn(n)
        close(cf(x), f(x))


def test_parameter_swap_recompiles():
    rec = Counter()
    model = nn.Linear(3, 2)
    cm = ember.compile(model, backend=rec)
    x = ember.randn(4, 3)
    cm(x)
    model.weight = nn.Parameter(ember.randn(2, 3))
    close(cm(x), model(x))
    assert len(rec.graphs) == 2
    # an in-place update (what optimizers do) is seen without recompiling
    with ember.no_grad():
        model.weight.mul_(2)
    close(cm(x), model(x))
    assert len(rec.graphs) == 2


def test_training_flag_flip_recompiles():
    rec = Counter()
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cm = ember.compile(model, backend=rec)
    x = ember.randn(8, 4)
    cm(x)
    cm.eval()
    close(cm(x), model[0](x))
    cm.train()
    cm(x)
    assert len(rec.graphs) == 2


def test_module_attribute_change_recompiles():
    rec = Counter()

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.factor = 2.0

        def forward(self, x):
            return x * self.factor

    m = Scale()
    cm = ember.compile(m, backend=rec)
    x = ember.randn(3)
    cm(x)
    m.factor = 5.0
    close(cm(x), x * 5.0)
    assert len(rec.graphs) == 2


def test_scalar_argument_change_recompiles():
    rec = Counter()
    cf = ember.compile(lambda x, k, flag: x * k if flag else x + k, backend=rec)
    x = ember.randn(3)
    close(cf(x, 2, True), x * 2)
    close(cf(x, 3, True), x * 3)
    close(cf(x, 3, False), x + 3)
    close(cf(x, 3.0, False), x + 3.0)
    assert len(rec.graphs) == 4


SCALE = 2.0
BIAS = ember.ones(3)


def _uses_globals(x):
    return x * SCALE + BIAS


def test_global_change_recompiles():
    global SCALE, BIAS
    rec = Counter()
    cf = ember.compile(_uses_globals, backend=rec)
    x = ember.randn(3)
    close(cf(x), x * 2.0 + 1)
    SCALE = 3.0
    try:
        close(cf(x), x * 3.0 + 1)
        BIAS = ember.zeros(3)
        close(cf(x), x * 3.0)
    finally:
        SCALE, BIAS = 2.0, ember.ones(3)
    assert len(rec.graphs) == 3


def test_global_tensor_mutated_in_place_is_read_each_call():
    rec = Counter()
    cf = ember.compile(_uses_globals, backend=rec)
    x = ember.randn(3)
    cf(x)
    BIAS.add_(1)
    try:
        close(cf(x), x * 2.0 + 2)
    finally:
        BIAS.sub_(1)
    assert len(rec.graphs) == 1


def test_closure_change_recompiles():
    rec = Counter()
    k = 2

    def f(x):
        return x * k

    cf = ember.compile(f, backend=rec)
    x = ember.randn(3)
    close(cf(x), x * 2)
    k = 4
    close(cf(x), x * 4)
    assert len(rec.graphs) == 2


def test_aliasing_of_arguments_is_guarded():
    rec = Counter()

    def f(x, y):
        x.add_(1)
        return x + y

    cf = ember.compile(f, backend=rec)
    a = ember.zeros(3)
    cf(a, a)  # x is y: y sees the increment
    a, b = ember.zeros(3), ember.zeros(3)
    close(cf(a, b), ember.ones(3))
    assert len(rec.graphs) == 2


def test_recompile_limit_falls_back_to_eager_with_one_warning():
    rec = Counter()
    # dynamic=False: each int is its own graph (by default the second value makes k symbolic)
    cf = ember.compile(lambda x, k: x + k, backend=rec, dynamic=False)
    x = ember.randn(2)
    with ember._dynamo.config.patch(recompile_limit=2):
        cf(x, 1)
        cf(x, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            close(cf(x, 3), x + 3)
            close(cf(x, 4), x + 4)
        assert sum("recompile_limit" in str(w.message) for w in caught) == 1
        close(cf(x, 1), x + 1)  # cached entries still serve
    assert len(rec.graphs) == 2


def test_cache_size_limit_is_an_alias():
    config = ember._dynamo.config
    assert config.recompile_limit == 8
    old = config.cache_size_limit
    config.cache_size_limit = 3
    try:
        assert config.recompile_limit == 3
    finally:
        config.cache_size_limit = old
    assert config.recompile_limit == 8


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_transposed_input_is_a_new_entry(dtype):
    rec = Counter()
    cf = ember.compile(lambda x: x.contiguous() * 2, backend=rec)
    x = ember.randn(3, 4, dtype=dtype)
    cf(x)
    close(cf(x.t()), x.t() * 2)
    assert len(rec.graphs) == 2
