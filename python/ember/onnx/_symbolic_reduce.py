"""Mappings of reductions and normalizing functions: sum/mean/max/min/prod, argmax/argmin,
var/std, softmax/log_softmax, logsumexp, cumsum."""

from .. import _C
from ._graph import Value, onnx_type
from ._helpers import dims_list, norm_dim, out_dtype
from ._registry import function, module


def _reduce(op_type):
    def sym(g, input, dim=None, keepdim=False, *, dtype=None, out=None):
        x = g.cast(input, out_dtype(g))
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
            return (
                g.reduce(op_type, x, None, False)
                if dim is None
                else g.reduce(op_type, x, None, keepdim)
            )
        return g.reduce(op_type, x, dims_list(dim, input.rank), keepdim)

    return sym


function("sum")(_reduce("ReduceSum"))
function("mean")(_reduce("ReduceMean"))
function("amax")(_reduce("ReduceMax"))
function("amin")(_reduce("ReduceMin"))


@function("prod")
def _prod(g, input, dim=None, keepdim=False, *, dtype=None):
    x = g.cast(input, out_dtype(g))
    return g.reduce("ReduceProd", x, None if dim is None else [norm_dim(dim, input.rank)], keepdim)


def _max_min(op_type, arg_type, binary):
    def sym(g, input, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, Value):  # max(a, b): the elementwise form
            return g.op(binary, input, g.cast(dim, input.dtype))
        if dim is None:
            return g.reduce(op_type, input, None, False)
        d = norm_dim(dim, input.rank)
        values = g.reduce(op_type, input, [d], keepdim)
        indices = g.op(arg_type, input, axis=d, keepdims=int(keepdim))
        return values, indices

    return sym


function("max")(_max_min("ReduceMax", "ArgMax", "Max"))
function("min")(_max_min("ReduceMin", "ArgMin", "Min"))


def _arg(op_type):
    def sym(g, input, dim=None, keepdim=False):
        if dim is None:
            flat = g.op("Reshape", input, g.ints([-1]))
            return g.op(op_type, flat, axis=0, keepdims=0)
        return g.op(op_type, input, axis=norm_dim(dim, input.rank), keepdims=int(keepdim))

    return sym


function("argmax")(_arg("ArgMax"))
function("argmin")(_arg("ArgMin"))


def _var_core(g, input, dim, correction, keepdim):
    """(variance, mean): both over `dim` (None: all), the variance with `correction`."""
    rank = input.rank
    dims = dims_list(dim, rank)
    mean = g.reduce("ReduceMean", input, dims, True)
    d = g.op("Sub", input, mean)
    sq = g.reduce("ReduceMean", g.op("Mul", d, d), dims, keepdim)
    if correction:
        # n / (n - correction), n the number of elements reduced (from the shape when dynamic)
        sizes = [input.shape[d] for d in dims]
        if all(isinstance(s, int) for s in sizes):
            n = 1
            for s in sizes:
                n *= s
            factor = g.const(n / (n - correction) if n > correction else float("inf"), input.dtype)
        else:
            n = g.reduce(
                "ReduceProd", g.op("Gather", g.shape_of(input), g.ints(dims), axis=0), [0], False
            )
            n = g.op("Cast", n, to=onnx_type(input.dtype))
            factor = g.op("Div", n, g.op("Sub", n, g.const(float(correction), input.dtype)))
        sq = g.op("Mul", sq, factor)
    if not keepdim:
        mean = g.squeeze(mean, dims)
    return sq, mean


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@function("var")
def _var(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    return _var_core(g, input, dim, _correction(unbiased, correction), keepdim)[0]


@function("std")
def _std(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return g.op("Sqrt", _var(g, input, dim, unbiased, keepdim, correction=correction))


@function("var_mean")
def _var_mean(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_core(g, input, dim, _correction(unbiased, correction), keepdim)


@function("logsumexp")
def _logsumexp(g, input, dim, keepdim=False):
    return g.reduce("ReduceLogSumExp", input, dims_list(dim, input.rank), keepdim)


@function("cumsum")
def _cumsum(g, input, dim, *, dtype=None):
    x = g.cast(input, out_dtype(g))
    return g.op("CumSum", x, g.const(norm_dim(dim, input.rank), _C.int64))


def _softmax(op_type):
    def sym(g, input, dim=None, _stacklevel=3, dtype=None):
        x = g.cast(input, out_dtype(g))
        if dim is None:  # torch's legacy choice of dim
            dim = 0 if input.rank in (0, 1, 3) else 1
        return g.op(op_type, x, axis=norm_dim(dim, max(input.rank, 1)))

    return sym


function("softmax")(_softmax("Softmax"))
function("log_softmax")(_softmax("LogSoftmax"))
module("Softmax")(lambda g, m, x: _softmax("Softmax")(g, x, m.dim))
module("LogSoftmax")(lambda g, m, x: _softmax("LogSoftmax")(g, x, m.dim))
module("Softmax2d")(lambda g, m, x: _softmax("Softmax")(g, x, -3))


@function("norm")
def _norm(g, input, p="fro", dim=None, keepdim=False, dtype=None):
    dims = None if dim is None else dims_list(dim, input.rank)
    if p in ("fro", 2, 2.0):
        return g.reduce("ReduceL2", input, dims, keepdim)
    if p in (1, 1.0):
        return g.reduce("ReduceL1", input, dims, keepdim)
    from .errors import SymbolicValueError

    raise SymbolicValueError(f"norm: expected p in 1, 2 or 'fro'; got {p!r}")
