"""torch's record of an op's arguments in a profile with record_shapes (Note [Profiler inputs] in
core/profiler.h): each argument's type name, strides and concrete value, from the entries the
recorder returns per argument: ("t", strides, dtype code) for a tensor, ("l", entries) for a
tensor list, ("v", value kind, value) for a number, ("s", value kind, values) for a number list,
None for an argument torch records no value of."""

import math

# ember's dtype codes (core/dtype.h's ScalarType order): the dtype's name, torch's C++ type name
# (its "Input type") and torch's ScalarType number (the value it records of a dtype argument).
_DTYPES = (
    ("uint8", "unsigned char", 0),
    ("int8", "signed char", 1),
    ("int16", "short int", 2),
    ("int32", "int", 3),
    ("int64", "long int", 4),
    ("float16", "c10::Half", 5),
    ("float32", "float", 6),
    ("float64", "double", 7),
    ("bool", "bool", 11),
    ("bfloat16", "c10::BFloat16", 15),
    ("complex64", "c10::complex<float>", 9),
    ("complex128", "c10::complex<double>", 10),
    ("qint8", "c10::qint8", 12),
    ("quint8", "c10::quint8", 13),
    ("qint32", "c10::qint32", 14),
    ("quint4x2", "c10::quint4x2", 16),
)
_CODE = {name: code for code, (name, _, _) in enumerate(_DTYPES)}
_DTYPE_KIND = 3  # profiler::ValueKind::DType


def tensor_entry(t):
    """The recorder's entry of tensor `t` (for ops written in Python)."""
    return ("t", list(t.stride()), _CODE[str(t.dtype).rsplit(".", 1)[-1]])


def describe(entries, count):
    """(types, strides, concrete values) of an op's `count` arguments, torch's "Input type",
    "Input Strides" and FunctionEvent.concrete_inputs; arguments past `entries` (those torch's
    schema has and ember's lacks) record nothing."""
    entries = list(entries or [])[:count]
    entries += [None] * (count - len(entries))
    described = [_describe(e) for e in entries]
    return [d[0] for d in described], [d[1] for d in described], [d[2] for d in described]


def _describe(e):
    if e is None:
        return "", [], None
    if e[0] == "t":
        return _DTYPES[e[2]][1], e[1], None
    if e[0] == "l":
        return "TensorList", [x[1] if x is not None and x[0] == "t" else [] for x in e[1]], None
    if e[0] == "v":
        return "Scalar", [], _value(e[1], e[2])
    return "ScalarList", [], [_value(e[1], x) for x in e[2]]


def _value(kind, v):
    return _DTYPES[v][2] if kind == _DTYPE_KIND else v


def concrete_text(v):
    """torch's "Concrete Inputs" string of a recorded value ("" for none)."""
    if v is None:
        return ""
    if isinstance(v, list):
        return "[" + ", ".join(concrete_text(x) for x in v) + "]"
    if isinstance(v, float):
        # c10's IValue printing: an integral double below 1e10 as "2.", others to 17 digits
        if math.isfinite(v) and abs(v) < 1e10 and v == int(v):
            return f"{int(v)}."
        return "%.17g" % v
    return str(v)
