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


def graph_for(op, sample):
    """GraphModule calling the op with every tensor of the sample as a placeholder."""
    g = fx.Graph()
    inputs = []

    def place(x):
        if isinstance(x, T):
            inputs.append(x)
            return g.placeholder(f"x{len(inputs)}")
        if isinstance(x, Dt):
            return getattr(ember, x.name)
        return x

    args = map_structure(sample.args, place)
    kwargs = map_structure(sample.kwargs, place)
    if op.op.__name__.startswith("Tensor."):
        node = g.call_method(op.name, tuple(args), kwargs)
    else:
        node = g.call_function(getattr(ember, op.name), tuple(args), kwargs)
    g.output(node)
    return fx.GraphModule(ember.nn.Module(), g), inputs


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
    kernels = 0
    for dtype in [d for d in op.dtypes if d in DTYPES + ("int64", "bool")]:
        for sample in op.samples(dtype):
            gm, ts = graph_for(op, sample)
            xs = [make_tensor(ember, t) for t in ts]
            try:
                want = as_tuple(gm(*xs))
            except Exception:
                continue  # eager rejects it: nothing to compare
            before = metrics.kernels_generated
            fn = compile_fx(gm, xs)
            got = as_tuple(fn(*xs))
            kernels += metrics.kernels_generated - before
            assert len(got) == len(want)
            for g_, w in zip(got, want):
                _close(g_, w, str(w.dtype).rsplit(".", 1)[-1], op)
    if op.name in LOWERED:
        assert kernels > 0, f"{op.name} was never lowered to a generated kernel"
