"""Mappings of pointwise operations: arithmetic, comparisons, unary math and activations."""

import math
import operator

from .. import _C
from ._graph import Value
from ._helpers import common_dtype, operand, out_dtype
from ._registry import function, method, module, operators
from .errors import SymbolicValueError


def _binary(op_type, compare=False):
    def sym(g, input, other, *, out=None):
        dtype = common_dtype(input, other) if compare else out_dtype(g)
        return g.op(op_type, operand(g, input, dtype), operand(g, other, dtype))

    return sym


def _reflected(sym):
    return lambda g, a, b: sym(g, b, a)


for _names, _op, _ops in (
    (("mul", "multiply"), "Mul", (operator.mul, operator.imul)),
    (("maximum", "fmax"), "Max", ()),
    (("minimum", "fmin"), "Min", ()),
    (("matmul", "mm", "bmm"), "MatMul", (operator.matmul,)),
):
    function(*_names)(_binary(_op))
    operators(*_ops)(_binary(_op))
for _names, _op, _ops in (
    (("eq",), "Equal", (operator.eq,)),
    (("lt", "less"), "Less", (operator.lt,)),
    (("gt", "greater"), "Greater", (operator.gt,)),
    (("le", "less_equal"), "LessOrEqual", (operator.le,)),
    (("ge", "greater_equal"), "GreaterOrEqual", (operator.ge,)),
):
    function(*_names)(_binary(_op, compare=True))
    operators(*_ops)(_binary(_op, compare=True))


@function("ne", "not_equal")
@operators(operator.ne)
def _ne(g, input, other):
    return g.op("Not", _binary("Equal", compare=True)(g, input, other))


def _add_sub(op_type):
    def sym(g, input, other, *, alpha=1, out=None):
        dtype = out_dtype(g)
        b = operand(g, other, dtype)
        if alpha != 1:
            b = g.op("Mul", b, g.const(alpha, dtype))
        return g.op(op_type, operand(g, input, dtype), b)

    return sym


function("add")(_add_sub("Add"))
function("sub", "subtract")(_add_sub("Sub"))
operators(operator.add, operator.iadd)(_add_sub("Add"))
operators(operator.sub, operator.isub)(_add_sub("Sub"))


@function("rsub")
def _rsub(g, input, other, alpha=1):
    return _add_sub("Sub")(g, other, input, alpha=alpha)


@function("div", "divide", "true_divide")
@operators(operator.truediv, operator.itruediv)
def _div(g, input, other, *, rounding_mode=None, out=None):
    dtype = out_dtype(g)
    if rounding_mode is None:
        return g.op("Div", operand(g, input, dtype), operand(g, other, dtype))
    # Integer Div in ONNX truncates; compute in double so that floor and trunc are exact.
    work = dtype if dtype in (_C.float32, _C.float64, _C.float16) else _C.float64
    q = g.op("Div", operand(g, input, work), operand(g, other, work))
    if rounding_mode == "floor":
        q = g.op("Floor", q)
    elif rounding_mode == "trunc":
        q = g.op("Mul", g.op("Sign", q), g.op("Floor", g.op("Abs", q)))
    else:
        raise SymbolicValueError(
            f"div: expected rounding_mode None, 'floor' or 'trunc'; got {rounding_mode!r}"
        )
    q.dtype = work
    return g.cast(q, dtype)


@function("floor_divide")
@operators(operator.floordiv, operator.ifloordiv)
def _floordiv(g, input, other):
    return _div(g, input, other, rounding_mode="floor")


@function("remainder")
@operators(operator.mod)
def _remainder(g, input, other):
    dtype = out_dtype(g)
    fmod = 0 if dtype not in (_C.float32, _C.float64, _C.float16) else 1
    a, b = operand(g, input, dtype), operand(g, other, dtype)
    if fmod:  # torch's remainder has the divisor's sign: a - floor(a / b) * b
        return g.op("Sub", a, g.op("Mul", g.op("Floor", g.op("Div", a, b)), b))
    return g.op("Mod", a, b, fmod=0)


@function("pow")
@operators(operator.pow, operator.ipow)
def _pow(g, input, exponent):
    dtype = out_dtype(g)
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool):
        x = operand(g, input, dtype)
        if exponent == 2:
            return g.op("Mul", x, x)
        if exponent == 0.5:
            return g.op("Sqrt", x)
        if exponent == 1:
            return g.op("Identity", x)
    return g.op("Pow", operand(g, input, dtype), operand(g, exponent, dtype))


@operators(operator.neg)
@function("neg", "negative")
def _neg(g, input):
    return g.op("Neg", input)


def _unary(op_type):
    def sym(g, input, *, out=None):
        return g.op(op_type, g.cast(input, out_dtype(g)))

    return sym


for _name, _op in (
    ("abs", "Abs"),
    ("sqrt", "Sqrt"),
    ("exp", "Exp"),
    ("log", "Log"),
    ("sin", "Sin"),
    ("cos", "Cos"),
    ("tan", "Tan"),
    ("tanh", "Tanh"),
    ("sigmoid", "Sigmoid"),
    ("erf", "Erf"),
    ("floor", "Floor"),
    ("ceil", "Ceil"),
    ("reciprocal", "Reciprocal"),
    ("sign", "Sign"),
    ("softsign", "Softsign"),
    ("logical_not", "Not"),
    ("bitwise_not", "Not"),
):
    function(_name)(_unary(_op))
function("round")(_unary("Round"))
operators(operator.abs)(_unary("Abs"))
operators(operator.invert)(_unary("Not"))


@function("rsqrt")
def _rsqrt(g, input):
    return g.op("Reciprocal", g.op("Sqrt", g.cast(input, out_dtype(g))))


@function("log1p")
def _log1p(g, input):
    x = g.cast(input, out_dtype(g))
    return g.op("Log", g.op("Add", x, g.const(1, x.dtype)))


@function("expm1")
def _expm1(g, input):
    x = g.cast(input, out_dtype(g))
    return g.op("Sub", g.op("Exp", x), g.const(1, x.dtype))


@function("logical_and", "bitwise_and")
@operators(operator.and_)
def _and(g, input, other):
    return g.op("And", operand(g, input, _C.bool), operand(g, other, _C.bool))


@function("logical_or", "bitwise_or")
@operators(operator.or_)
def _or(g, input, other):
    return g.op("Or", operand(g, input, _C.bool), operand(g, other, _C.bool))


@function("clamp", "clip")
def _clamp(g, input, min=None, max=None):
    dtype = out_dtype(g)
    x = g.cast(input, dtype)
    if isinstance(min, Value) or isinstance(max, Value):
        if min is not None:
            x = g.op("Max", x, operand(g, min, dtype))
        if max is not None:
            x = g.op("Min", x, operand(g, max, dtype))
        return x
    lo = None if min is None else g.const(min, dtype)
    hi = None if max is None else g.const(max, dtype)
    return g.op("Clip", x, lo, hi)


function("clamp_min")(lambda g, input, min: _clamp(g, input, min=min))
function("clamp_max")(lambda g, input, max: _clamp(g, input, max=max))


@function("where")
def _where(g, condition, input=None, other=None):
    if input is None:
        raise SymbolicValueError("where: the one-argument form (nonzero) is not supported")
    dtype = out_dtype(g)
    return g.op(
        "Where", g.cast(condition, _C.bool), operand(g, input, dtype), operand(g, other, dtype)
    )


@function("masked_fill")
def _masked_fill(g, input, mask, value):
    dtype = input.dtype
    return g.op("Where", g.cast(mask, _C.bool), operand(g, value, dtype), input)


# -- activations ---------------------------------------------------------------------------------


@function("relu")  # F.relu reaches the tracer with inplace= handed, as torch's does
def _relu(g, input, inplace=False):
    return g.op("Relu", input)


@function("relu6")
def _relu6(g, input, inplace=False):
    return g.op("Clip", input, g.const(0, input.dtype), g.const(6, input.dtype))


@function("hardtanh")
def _hardtanh(g, input, min_val=-1.0, max_val=1.0, inplace=False):
    return g.op("Clip", input, g.const(min_val, input.dtype), g.const(max_val, input.dtype))


@function("leaky_relu")
def _leaky_relu(g, input, negative_slope=0.01, inplace=False):
    return g.op("LeakyRelu", input, alpha=float(negative_slope))


@function("elu")
def _elu(g, input, alpha=1.0, inplace=False):
    return g.op("Elu", input, alpha=float(alpha))


@function("celu")
def _celu(g, input, alpha=1.0, inplace=False):
    return g.op("Celu", input, alpha=float(alpha))


@function("selu")
def _selu(g, input, inplace=False):
    return g.op("Selu", input)


@function("gelu")
def _gelu(g, input, approximate="none"):
    if g.opset >= 20:
        return g.op("Gelu", input, approximate=approximate)
    half, one = g.const(0.5, input.dtype), g.const(1.0, input.dtype)
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", g.op("Mul", input, input), input)
        inner = g.op("Add", input, g.op("Mul", cube, g.const(0.044715, input.dtype)))
        t = g.op("Tanh", g.op("Mul", inner, g.const(math.sqrt(2 / math.pi), input.dtype)))
    else:
        t = g.op("Erf", g.op("Div", input, g.const(math.sqrt(2.0), input.dtype)))
    return g.op("Mul", g.op("Mul", input, half), g.op("Add", t, one))


@function("silu")
def _silu(g, input, inplace=False):
    return g.op("Mul", input, g.op("Sigmoid", input))


@function("mish")
def _mish(g, input, inplace=False):
    return g.op("Mul", input, g.op("Tanh", g.op("Softplus", input)))


@function("softplus")
def _softplus(g, input, beta=1.0, threshold=20.0):
    if beta == 1:
        return g.op("Softplus", input)
    b = g.const(beta, input.dtype)
    return g.op("Div", g.op("Softplus", g.op("Mul", input, b)), b)


@function("hardswish")
def _hardswish(g, input, inplace=False):
    return g.op("HardSwish", input)


@function("hardsigmoid")
def _hardsigmoid(g, input, inplace=False):
    return g.op("HardSigmoid", input, alpha=1.0 / 6, beta=0.5)


@function("logsigmoid")
def _logsigmoid(g, input):
    return g.op("Neg", g.op("Softplus", g.op("Neg", input)))


@function("prelu")
def _prelu(g, input, weight):
    if weight.shape is not None and len(weight.shape) == 1 and input.rank > 2:
        weight = g.unsqueeze(weight, list(range(1, input.rank - 1)))
    return g.op("PRelu", input, weight)


@method("type_as")
def _type_as(g, input, other):
    return g.cast(input, other.dtype)


# -- activation modules ----------------------------------------------------------------------------

_SIMPLE_MODULES = {
    "ReLU": "relu",
    "ReLU6": "relu6",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "SiLU": "silu",
    "Mish": "mish",
    "Hardswish": "hardswish",
    "Hardsigmoid": "hardsigmoid",
    "SELU": "selu",
    "LogSigmoid": "logsigmoid",
    "Softsign": "softsign",
}


def _simple_module(fn_name):
    from ._registry import FUNCTIONS

    return lambda g, mod, input: FUNCTIONS[fn_name](g, input)


for _cls, _fn in _SIMPLE_MODULES.items():
    module(_cls)(_simple_module(_fn))

module("LeakyReLU")(lambda g, m, x: _leaky_relu(g, x, m.negative_slope))
module("ELU")(lambda g, m, x: _elu(g, x, m.alpha))
module("CELU")(lambda g, m, x: _celu(g, x, m.alpha))
module("GELU")(lambda g, m, x: _gelu(g, x, m.approximate))
module("Softplus")(lambda g, m, x: _softplus(g, x, m.beta, m.threshold))
module("Hardtanh")(lambda g, m, x: _hardtanh(g, x, m.min_val, m.max_val))
module("PReLU")(lambda g, m, x: _prelu(g, x, g.module_param(m, "weight")))
