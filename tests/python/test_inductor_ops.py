"""The op table (op_db.py) through ember._inductor.compile_fx, one generated test per op: for
every pointwise and reduction op, a hand-built graph placeholder -> call -> output is compiled
and its result compared with eager ember's on every float sample (integer and bool samples run
too: whatever is not lowered runs eagerly and must still be right)."""

import numpy as np
import pytest
from op_db import BINARY_OPS as _B
from op_db import REDUCTION_OPS, Dt, T
from op_db import UNARY_OPS as _U
from test_ops import as_tuple, make_tensor, map_structure, to_numpy

import ember
from ember import fx
from ember._inductor import compile_fx, metrics

OPS = [op for op in _U + _B + REDUCTION_OPS if op.op.__name__ in (op.name, "Tensor." + op.name)]
DTYPES = ("float32", "float64")
# ops whose lowering must produce a kernel for at least one float sample (not all run eagerly)
LOWERED = {
    "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg", "relu",
    "floor", "ceil", "trunc", "reciprocal", "square", "sign", "frac", "erf", "expm1", "add", "sub",
    "mul", "div", "maximum", "minimum", "pow", "atan2", "eq", "ne", "lt", "le", "gt", "ge",
    "where", "clamp", "lerp", "addcmul", "addcdiv", "sum", "mean", "amax", "amin", "var", "std",
    "logsumexp", "isnan", "hypot", "copysign", "fmod",
}  # fmt: skip


def graph_for(op, samples):
    """GraphModule calling the op once per sample, every tensor of a sample a placeholder."""
    g = fx.Graph()
    inputs, outs = [], []

    def place(x):
        if isinstance(x, T):
            inputs.append(x)
            return g.placeholder(f"x{len(inputs)}")
        if isinstance(x, Dt):
            return getattr(ember, x.name)
        return x

    for sample in samples:
        args = map_structure(sample.args, place)
        kwargs = map_structure(sample.kwargs, place)
        if op.op.__name__.startswith("Tensor."):
            outs.append(g.call_method(op.name, tuple(args), kwargs))
        else:
            outs.append(g.call_function(getattr(ember, op.name), tuple(args), kwargs))
    g.output(tuple(outs))
    return fx.GraphModule(ember.nn.Module(), g), inputs


def _runs_eagerly(op, sample):
    gm, ts = graph_for(op, [sample])
    try:
        gm(*[make_tensor(ember, t) for t in ts])
        return True
    except Exception:
        return False


def _close(got, want, dtype, op):
    rtol, atol = op.tolerance(dtype)
    rtol, atol = (
        max(rtol, 1e-5 if dtype == "float32" else 1e-9),
        max(atol, 1e-5 if dtype == "float32" else 1e-9),
    )
    a, b = to_numpy(got), to_numpy(want)
    assert a.shape == b.shape and a.dtype == b.dtype
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_op_compiled_matches_eager(op):
    # one graph per dtype holding every sample, so one C++ compile per (op, dtype)
    kernels = 0
    for dtype in [d for d in op.dtypes if d in DTYPES + ("int64", "bool")]:
        samples = [s for s in op.samples(dtype) if _runs_eagerly(op, s)]
        if not samples:
            continue
        gm, ts = graph_for(op, samples)
        xs = [make_tensor(ember, t) for t in ts]
        want = gm(*xs)
        before = metrics.kernels_generated
        got = compile_fx(gm, xs)(*xs)
        kernels += metrics.kernels_generated - before
        for g_, w in zip(got, want):
            g_, w = as_tuple(g_), as_tuple(w)
            assert len(g_) == len(w)
            for a, b in zip(g_, w):
                _close(a, b, str(b.dtype).rsplit(".", 1)[-1], op)
    if op.name in LOWERED:
        assert kernels > 0, f"{op.name} was never lowered to a generated kernel"
