"""Every op of the op table (op_db) through ember.compile(backend="aot_eager") against eager.

As torch's OpInfo-driven inductor tests: one test per op, on the op's float32 samples (or its
first dtype); the second call replays the captured graph, which must give eager's results."""

import math

import numpy as np
import pytest
from op_db import OP_DB, Dt, T

import ember


def _realise(obj):
    if isinstance(obj, T):
        x = ember.tensor(np.array(obj.values, order="C"))
        return x.to(ember.bfloat16) if obj.dtype == "bfloat16" else x
    if isinstance(obj, Dt):
        return getattr(ember, obj.name)
    if isinstance(obj, list):
        return [_realise(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_realise(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _realise(v) for k, v in obj.items()}
    return obj


def _flat(out):
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _assert_same(got, want, what):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        if not isinstance(w, ember.Tensor):
            assert g == w or (isinstance(w, float) and math.isnan(w) and math.isnan(g)), what
            continue
        assert isinstance(g, ember.Tensor) and g.dtype == w.dtype and g.shape == w.shape, what
        a, b = g.detach(), w.detach()
        if a.dtype == ember.bfloat16 or a.dtype == ember.float16:
            a, b = a.float(), b.float()
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6, err_msg=what)


def _dtype(op):
    return "float32" if "float32" in op.dtypes else op.dtypes[0]


@pytest.mark.parametrize("op", OP_DB, ids=lambda op: op.name)
def test_op_through_compile(op):
    samples = op.samples(_dtype(op))[:4]
    assert samples
    captured = 0
    for sample in samples:
        args, kwargs = _realise(sample.args), _realise(sample.kwargs)

        def fn(*a, _op=op, **k):
            return _op.op(ember, *a, **k)

        compiled = ember.compile(fn, backend="aot_eager")
        try:
            want = fn(*_realise(sample.args), **_realise(sample.kwargs))
        except Exception as e:  # the sample is an error case for eager too: compile agrees
            with pytest.raises(type(e)):
                compiled(*args, **kwargs)
            continue
        first = compiled(*args, **kwargs)
        _assert_same(first, want, f"{op.name} {sample} (capture run)")
        second = compiled(*_realise(sample.args), **_realise(sample.kwargs))
        _assert_same(second, want, f"{op.name} {sample} (replay)")
        entries = compiled._ember_cache.entries
        assert len(entries) == 1
        captured += entries[0].graph_module is not None
    assert captured, f"{op.name}: no sample was captured into a graph"
