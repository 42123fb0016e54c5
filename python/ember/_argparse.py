"""torch's argument parser for the calls ember's bindings do not take as they are: `out=`, keyword
forms of overloads, and the TypeError text when nothing matches.

Each function or Tensor method named in OUT_OPS or SIGNATURES gets ``_C._arg_guard(orig, slow)``
in front of it (python/src/arg_guard.cpp). A call without ``out=`` goes to the binding directly;
only a call with ``out=``, or one the binding rejected with nanobind's "incompatible function
arguments", reaches ``slow`` here, which

- resolves the call against torch's overloads of the op (SIGNATURES, in torch's order: the first
  that binds wins, as in torch's parser) and calls the binding again in the positional form it
  takes (``x.view(size=(6,))`` -> ``x.view((6,))``, ``pow(self=2, exponent=t)`` -> ``pow(2, t)``);
- or raises torch's TypeError: ``op(): argument 'x' (position 2) must be Tensor, not str`` for an
  op with one signature, ``op() received an invalid combination of arguments - got (Tensor,
  str), but expected one of:`` and the signatures for an overloaded one;
- and for ``out=``: computes the result, then writes it into ``out`` as torch does (write_out).

Ops without a SIGNATURES entry use the signature line of their docstring for the message.
"""

import ast
import os
import sys
import warnings

from . import _C, return_types
from ._C import Tensor
from ._out_overlap import CAT_NAMES, check_no_internal_overlap, check_no_overlap

__all__ = ["guard", "guarded", "method_guards", "write_out", "OUT_OPS", "SIGNATURES"]

# -------------------------------------------------------------------------------------------
# torch's signatures of the overloaded ops (types in torch's words), function forms; a method's
# are the same without the leading `Tensor input` (METHOD_SIGNATURES adds the method-only ones).

_OUT = "Tensor out = None"
_OUTS = "tuple of Tensors out = None"
_REDUCE_VAR = (
    "Tensor input, tuple of ints? dim, bool unbiased = True, bool keepdim = False, *, " + _OUT,
    "Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, "
    + _OUT,
    "Tensor input, bool unbiased = True",
)
_RANGE = (
    "*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False"
)

SIGNATURES = {
    "add": ("Tensor input, Tensor other, *, Number alpha = 1, " + _OUT,),
    "sub": ("Tensor input, Tensor other, *, Number alpha = 1, " + _OUT,),
    "addcmul": ("Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, " + _OUT,),
    "addcdiv": ("Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, " + _OUT,),
    "div": (
        "Tensor input, Tensor other, *, " + _OUT,
        "Tensor input, Tensor other, *, str rounding_mode, " + _OUT,
        "Tensor input, Number other, *, str rounding_mode",
    ),
    "pow": (
        "Tensor input, Tensor exponent, *, " + _OUT,
        "Number self, Tensor exponent, *, " + _OUT,
        "Tensor input, Number exponent, *, " + _OUT,
    ),
    "sum": (
        "Tensor input, *, torch.dtype dtype = None",
        "Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None, "
        + _OUT,
    ),
    "mean": (
        "Tensor input, *, torch.dtype dtype = None, " + _OUT,
        "Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None, "
        + _OUT,
    ),
    "prod": (
        "Tensor input, *, torch.dtype dtype = None",
        "Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, " + _OUT,
    ),
    "std": _REDUCE_VAR,
    "var": _REDUCE_VAR,
    "max": (
        "Tensor input, *, " + _OUT,
        "Tensor input, Tensor other, *, " + _OUT,
        "Tensor input, int dim, bool keepdim = False, *, " + _OUTS,
    ),
    "min": (
        "Tensor input, *, " + _OUT,
        "Tensor input, Tensor other, *, " + _OUT,
        "Tensor input, int dim, bool keepdim = False, *, " + _OUTS,
    ),
    "median": ("Tensor input", "Tensor input, int dim, bool keepdim = False, *, " + _OUTS),
    "nanmedian": ("Tensor input", "Tensor input, int dim, bool keepdim = False, *, " + _OUTS),
    "sort": (
        "Tensor input, *, bool stable, int dim = -1, bool descending = False, " + _OUTS,
        "Tensor input, int dim = -1, bool descending = False, *, " + _OUTS,
    ),
    "topk": (
        "Tensor input, int k, int dim = -1, bool largest = True, bool sorted = True, *, " + _OUTS,
    ),
    "clamp": (
        "Tensor input, Tensor min = None, Tensor max = None, *, " + _OUT,
        "Tensor input, Number min = None, Number max = None, *, " + _OUT,
    ),
    "where": (
        "Tensor condition",
        "Tensor condition, Tensor input, Tensor other, *, " + _OUT,
        "Tensor condition, Number self, Tensor other",
        "Tensor condition, Tensor input, Number other",
        "Tensor condition, Number self, Number other",
    ),
    "linspace": tuple(
        f"{a} start, {b} end, int steps, {_RANGE}"
        for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"))
    )
    + ("Number start, Number end, int steps, " + _RANGE,),
    "logspace": tuple(
        f"{a} start, {b} end, int steps, float base = 10.0, {_RANGE}"
        for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"))
    )
    + ("Number start, Number end, int steps, float base = 10.0, " + _RANGE,),
    "tensor_split": (
        "Tensor input, tuple of ints indices, int dim = 0",
        "Tensor input, Tensor tensor_indices_or_sections, int dim = 0",
        "Tensor input, int sections, int dim = 0",
    ),
    "minimum": ("Tensor input, Tensor other, *, " + _OUT,),
    "maximum": ("Tensor input, Tensor other, *, " + _OUT,),
    "fmin": ("Tensor input, Tensor other, *, " + _OUT,),
    "fmax": ("Tensor input, Tensor other, *, " + _OUT,),
    "logical_and": ("Tensor input, Tensor other, *, " + _OUT,),
    "logical_or": ("Tensor input, Tensor other, *, " + _OUT,),
    "logical_xor": ("Tensor input, Tensor other, *, " + _OUT,),
    "atan2": ("Tensor input, Tensor other, *, " + _OUT,),
    "arctan2": ("Tensor input, Tensor other, *, " + _OUT,),
    "hypot": ("Tensor input, Tensor other, *, " + _OUT,),
    "equal": ("Tensor input, Tensor other",),
    "index_select": ("Tensor input, int dim, Tensor index, *, " + _OUT,),
    "flip": ("Tensor input, tuple of ints dims",),
    "roll": ("Tensor input, tuple of ints shifts, tuple of ints dims = None",),
    "permute": ("Tensor input, tuple of ints dims",),
    "matmul": ("Tensor input, Tensor other, *, " + _OUT,),
    "mm": ("Tensor input, Tensor mat2, *, " + _OUT,),
    "bmm": ("Tensor input, Tensor mat2, *, " + _OUT,),
}

# Ops whose signatures above (or here) are checked before the binding runs, not only after it
# rejects a call: the binding takes forms torch's parser refuses (a bool for an int, a keyword
# beside a positional overload). A "?" after a type: None is accepted (torch's `int[1]?`).
SIGNATURES.update(
    argmax=("Tensor input, int dim = None, bool keepdim = False, *, " + _OUT,),
    argmin=("Tensor input, int dim = None, bool keepdim = False, *, " + _OUT,),
    movedim=(
        "Tensor input, int source, int destination",
        "Tensor input, tuple of ints source, tuple of ints destination",
    ),
    moveaxis=(
        "Tensor input, int source, int destination",
        "Tensor input, tuple of ints source, tuple of ints destination",
    ),
    # the scans: the binding's int caster takes a bool (x.cumsum(True) scanned dim 1)
    cumsum=("Tensor input, int dim, *, torch.dtype dtype = None, " + _OUT,),
    cumprod=("Tensor input, int dim, *, torch.dtype dtype = None, " + _OUT,),
    logcumsumexp=("Tensor input, int dim, *, " + _OUT,),
    cummax=("Tensor input, int dim, *, " + _OUTS,),
    cummin=("Tensor input, int dim, *, " + _OUTS,),
)
# (sum/mean/prod/median: torch's keepdim= needs dim=, `x.sum(keepdim=True)` is its TypeError)
STRICT = frozenset(
    "std var std_mean var_mean argmax argmin movedim moveaxis pow sum mean prod median "
    "nanmedian cumsum cumprod logcumsumexp cummax cummin cumsum_ cumprod_".split()
)

# Tensor methods: the function's signatures less `input`, and the method-only overloads.
METHOD_SIGNATURES = {
    "view": ("torch.dtype dtype", "tuple of ints size"),
    "reshape": ("tuple of ints shape",),
    "permute": ("tuple of ints dims",),
    "expand": ("tuple of ints size, *, bool implicit = False",),
    "repeat": ("tuple of ints repeats",),
    "flip": ("tuple of ints dims",),
    "masked_fill": ("Tensor mask, Tensor value", "Tensor mask, Number value"),
    "copy_": ("Tensor other, bool non_blocking = False",),
    "add_": ("Tensor other, *, Number alpha = 1",),
    "sub_": ("Tensor other, *, Number alpha = 1",),
    "addcmul_": ("Tensor tensor1, Tensor tensor2, *, Number value = 1",),
    "addcdiv_": ("Tensor tensor1, Tensor tensor2, *, Number value = 1",),
    "cumsum_": ("int dim, *, torch.dtype dtype = None",),
    "cumprod_": ("int dim, *, torch.dtype dtype = None",),
}

# torch's deprecated overloads, a Number before the tensors (``p.data.add_(-lr, grad)`` in older
# optimizers): tried after the current ones, with torch's warning (once a process, as torch's).
DEPRECATED = {
    "add": "Tensor input, Number alpha, Tensor other",
    "sub": "Tensor input, Number alpha, Tensor other",
    "addcmul": "Tensor input, Number value, Tensor tensor1, Tensor tensor2",
    "addcdiv": "Tensor input, Number value, Tensor tensor1, Tensor tensor2",
}
_deprecated_warned = []


def _drop(text, names):
    """A signature's text without the parameters in `names` (and a `*` left last)."""
    parts = [p for p in text.split(", ") if p.split(" = ")[0].rpartition(" ")[2] not in names]
    while parts and parts[-1] == "*":
        parts.pop()
    return ", ".join(parts)


for _name in ("var_mean", "std_mean"):
    SIGNATURES[_name] = tuple(_drop(s, ("out",)) for s in _REDUCE_VAR)
for _name in (
    "sum mean prod median nanmedian std var max min sort topk clamp pow add sub addcmul addcdiv "
    "argmax argmin movedim moveaxis cumsum cumprod logcumsumexp cummax cummin"
).split():
    METHOD_SIGNATURES[_name] = tuple(
        _drop(s, ("input", "out")) for s in SIGNATURES[_name] if not s.startswith("Number self")
    )

# Functions that take out= in torch (checked against torch 2.13 by tests/python/test_out_arg.py).
_ELEMENTWISE_OUT_OPS = (
    # elementwise, unary
    "abs absolute acos arccos acosh arccosh asin arcsin asinh arcsinh atan arctan atanh arctanh "
    "ceil cos cosh deg2rad rad2deg digamma erf erfc erfinv exp exp2 expm1 fix floor frac lgamma "
    "log log10 log1p log2 logit i0 isneginf isposinf nan_to_num neg negative reciprocal round "
    "rsqrt sigmoid sign sgn signbit sin sinc sinh sqrt square tan tanh trunc logical_not "
    "bitwise_not "
    # elementwise, binary and ternary
    "add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow "
    "float_power atan2 arctan2 hypot copysign maximum minimum fmax fmin eq ne lt le gt ge greater "
    "greater_equal less less_equal not_equal logical_and logical_or logical_xor bitwise_and "
    "bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift lerp xlogy nextafter ldexp "
    "logaddexp logaddexp2 gcd lcm heaviside addcmul addcdiv clamp clip where"
).split()
_OTHER_OUT_OPS = (
    # reductions, scans, sorts
    "sum nansum prod mean nanmean std var amax amin argmax argmin all any logsumexp norm cumsum "
    "cumprod cummax cummin logcumsumexp max min median nanmedian mode kthvalue sort topk aminmax "
    "quantile nanquantile "
    # products
    "matmul mm bmm addmm addbmm baddbmm addmv mv dot vdot outer ger inner kron tensordot cross "
    # joins and selections
    "cat concat concatenate stack hstack vstack dstack column_stack gather index_select "
    "masked_select take diag tril triu "
    # factories
    "zeros ones empty full arange linspace logspace eye rand randn randint randperm"
).split()
OUT_OPS = _ELEMENTWISE_OUT_OPS + _OTHER_OUT_OPS
LINALG_OUT_OPS = (
    "norm vector_norm matrix_norm inv det slogdet solve cholesky qr eigh eigvalsh svd svdvals pinv "
    "matrix_power matrix_rank cross lu_factor multi_dot vecdot inv_ex cholesky_ex solve_ex"
).split()
# ops whose result takes out's dtype when dtype= is not given (factories, accumulating reductions)
_DTYPE_FROM_OUT = set(
    "zeros ones empty full arange linspace logspace eye rand randn randint randperm sum nansum "
    "prod cumsum cumprod".split()
)

# ops whose out must have the result's dtype exactly (torch's kernels check instead of casting):
# products, selections, and the linalg functions ("linalg_" names)
_EXACT_DTYPE = set(
    "mm bmm matmul addmm addbmm baddbmm addmv mv dot vdot amax amin index_select gather where "
    "clamp clip norm tril triu masked_select take cross tensordot inner quantile nanquantile "
    "argmax argmin all any max min median nanmedian mode kthvalue sort topk cummax cummin "
    "aminmax".split()
)
# unary ops that keep the input's dtype: torch's iterator checks out's dtype is the input's
_SAME_DTYPE = set(
    "abs absolute neg negative floor ceil round trunc fix frac sign sgn bitwise_not "
    "conj_physical".split()
)
_CAT_LIKE = set("cat concat concatenate stack hstack vstack dstack column_stack".split())
# the C++ names torch's "Expected out tensor to have dtype ..." prints
_CPP_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}

# -------------------------------------------------------------------------------------------
# Signatures


class _Param:
    __slots__ = ("type", "name", "default", "has_default", "kwonly", "optional")

    def __init__(self, text, kwonly):
        text, eq, default = text.partition(" = ")
        self.type, _, self.name = text.strip().rpartition(" ")
        # "tuple of ints? dim": None is accepted although there is no default (torch's `int[1]?`)
        nullable = self.type.endswith("?")
        self.type = self.type.rstrip("?")
        self.has_default = bool(eq)
        try:
            self.default = ast.literal_eval(default) if eq else None
        except (ValueError, SyntaxError):
            self.default = None
        self.optional = nullable or (self.has_default and self.default is None)
        self.kwonly = kwonly

    def code(self):
        """(name, type code, flags, aliases) for the C++ guard's check (arg_guard.cpp)."""
        code = _CODES.get(self.type, 0)
        if code == 7 and self.name in ("dim", "shifts"):
            code = 8
        flags = self.has_default | self.kwonly << 1 | self.optional << 2
        aliases = [a for a, n in _ALIASES.items() if n == self.name]
        return (self.name, code, flags, aliases)


# numpy's keyword spellings torch's parser takes for its own names
_ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input"}
_ALIASES["x2"] = "other"

_CODES = {
    "Tensor": 1,
    "Number": 2,
    "int": 3,
    "float": 4,
    "bool": 5,
    "str": 6,
    "tuple of ints": 7,
    "tuple of Tensors": 9,
    "torch.dtype": 10,
}


class _Signature:
    def __init__(self, text):
        self.text = text.replace("?", "")
        self.params = []
        kwonly = False
        for part in (p.strip() for p in text.split(", ") if p.strip()):
            if part == "*":
                kwonly = True
                continue
            self.params.append(_Param(part, kwonly))
        self.positional = [p for p in self.params if not p.kwonly]

    def bind(self, args, kwargs):
        """{name: value} of a call that matches, else (position, param, value) of the first
        argument of the wrong type, or None for a wrong count / keyword."""
        pos = self.positional
        # varargs ints for a leading int list: view(2, 3) as view((2, 3))
        if (
            pos
            and pos[0].type == "tuple of ints"
            and args
            and all(_is_int(a) for a in args)
            and len(pos) == 1
        ):
            args = (tuple(args),)
        if len(args) > len(pos):
            return None
        bound = {}
        for p, a in zip(pos, args):
            bound[p.name] = a
        for k, v in kwargs.items():
            if not any(p.name == k for p in self.params):
                k = _ALIASES.get(k, k)
            if k in bound or not any(p.name == k for p in self.params):
                return None
            bound[k] = v
        for p in self.params:
            if p.name not in bound and not p.has_default:
                return None
        for i, p in enumerate(self.params):
            if p.name in bound and not _accepts(p, bound[p.name]):
                return (i + 1, p, bound[p.name])
        return bound


def _is_int(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, int) or type(v).__name__.startswith(("int", "uint")):  # numpy ints
        return True
    return isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point() and not _bool(v)


def _bool(t):
    return t.dtype == _C.bool


def _is_number(v):
    if isinstance(v, (int, float, complex)):  # bool included, as torch's Number
        return True
    if isinstance(v, Tensor):
        return False
    return type(v).__module__ == "numpy" and getattr(v, "ndim", 1) == 0


def _accepts(p, v):
    if v is None:
        return p.optional
    t = p.type
    if t == "Tensor":
        return isinstance(v, Tensor)
    if t == "Number":
        return _is_number(v)
    if t == "int":
        return _is_int(v)
    if t == "float":
        return (_is_number(v) and not isinstance(v, (bool, complex))) or (
            isinstance(v, Tensor) and v.dim() == 0
        )
    if t == "bool":
        return isinstance(v, bool) or type(v).__name__ == "bool_"
    if t == "str":
        return isinstance(v, str)
    if t == "tuple of ints":
        if _is_int(v):  # torch's int[1] parameters take one int
            return p.name in ("dim", "shifts")
        return isinstance(v, (tuple, list)) and all(_is_int(x) for x in v)
    if t == "tuple of Tensors":
        return isinstance(v, (tuple, list)) and all(isinstance(x, Tensor) for x in v)
    if t == "torch.dtype":
        return isinstance(v, _C.dtype)
    if t == "torch.Generator":
        return isinstance(v, _C.Generator)
    return True  # device, layout, memory_format: the binding checks them


_PARSED = {}
_C._arg_guard_dtype_type(_C.dtype)


def _signatures(key, texts):
    sigs = _PARSED.get(key)
    if sigs is None:
        sigs = _PARSED[key] = [_Signature(t) for t in texts]
    return sigs


# -------------------------------------------------------------------------------------------
# torch's TypeError text


def _describe(v):
    """torch's name for an argument's type: Tensor, int, tuple of (int, str), torch.dtype."""
    if isinstance(v, Tensor):
        return type(v).__name__ if type(v) is not Tensor else "Tensor"
    if isinstance(v, tuple):
        return "tuple of (" + ", ".join(_describe(x) for x in v) + ")"
    if isinstance(v, list):
        return "list of [" + ", ".join(_describe(x) for x in v) + "]"
    if isinstance(v, _C.dtype):
        return "torch.dtype"
    return type(v).__name__


def _got(args, kwargs):
    return ", ".join(
        [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
    )


def type_error(name, sigs, args, kwargs):
    """The TypeError torch's parser raises for a call of `name` that matches none of sigs."""
    if len(sigs) == 1:
        r = sigs[0].bind(args, kwargs)
        if isinstance(r, tuple):
            pos, p, v = r
            where = f" (position {pos})" if not p.kwonly else ""
            return TypeError(
                f"{name}(): argument '{p.name}'{where} must be {p.type}, not {_describe(v)}"
            )
    lines = "".join(f" * ({s.text})\n" for s in sigs)
    head = "one of" if len(sigs) > 1 else ""
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({_got(args, kwargs)}), "
        f"but expected {head}:\n{lines}"
        if head
        else f"{name}() received an invalid combination of arguments - got "
        f"({_got(args, kwargs)}), but expected ({sigs[0].text})"
    )


def _doc_signature(orig, name, method):
    """An untyped signature from the docstring's torch line, for ops without a table entry."""
    for line in (getattr(orig, "__doc__", None) or "").splitlines():
        line = line.strip()
        if line.startswith(name + "(") and ": " not in line.split(")")[0]:
            params = line[len(name) + 1 :].partition(")")[0]
            if method and params.startswith(("input, ", "self, ")):
                params = params.split(", ", 1)[1]
            return params.replace("=", " = ")
    return "..."


# -------------------------------------------------------------------------------------------
# out=


def _flat_tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, Tensor))


def _type_name(dtype):
    from ._type_info import scalar_type_name

    return scalar_type_name(dtype)


def _cpp_name(dtype):
    name = repr(dtype).split(".")[-1]
    return _CPP_NAMES.get(name, name)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_level():
    """The warnings stacklevel of the first frame outside ember, counted from the function
    calling this one (the path to a write differs: guards, the slow path, out= helpers)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _write_one(name, result, out, cast=False):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_describe(out)}")
    if name in _SAME_DTYPE and result.dtype != out.dtype and not cast:
        raise RuntimeError(
            f"Found dtype {_type_name(out.dtype)} but expected {_type_name(result.dtype)}"
        )
    exact = name in _EXACT_DTYPE or name.startswith("linalg_")
    if result.dtype != out.dtype and exact:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp_name(result.dtype)}, but got "
            f"{_cpp_name(out.dtype)} instead"
        )
    if result.dtype != out.dtype and not _C.can_cast(result.dtype, out.dtype):
        if name in _CAT_LIKE:
            raise TypeError(
                "torch.cat(): input types can't be cast to the desired output type "
                f"{_type_name(out.dtype)}"
            )
        raise RuntimeError(
            f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
            f"{_type_name(out.dtype)}"
        )
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        if out.numel() != 0:
            _warn_resized(tuple(out.shape), shape)
        out.resize_(shape)
    with _NoGrad():
        out.copy_(result)
    return out


def _warn_resized(had, shape):
    warnings.warn(
        f"An output with one or more elements was resized since it had shape "
        f"{list(had)}, which does not match the required output shape "
        f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
        "outputs will not be resized unless they have zero elements. You can explicitly "
        "reuse an out tensor t by resizing it, inplace, to zero elements with "
        "t.resize_(0).",
        UserWarning,
        stacklevel=_caller_level(),
    )


class _NoGrad:
    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


def write_out(name, result, out):
    """Writes `result` (a tensor or a tuple of them) into `out` as torch's out= does: out's
    dtype must hold the result's (torch's can_cast rule), a differently shaped out is resized
    (with torch's warning when it had elements), and out is returned (a tuple as the op's
    result type for several outputs)."""
    if isinstance(result, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(
                f"{name}(): argument 'out' must be tuple of {len(result)} Tensors, "
                f"not {_describe(out)}"
            )
        written = [_write_one(name, r, o) for r, o in zip(result, out)]
        kind = return_types.out_type(type(result))
        try:
            return kind(written)  # a structseq
        except TypeError:
            return tuple(written)
    return _write_one(name, result, out)


def _call_out(name, orig, args, kwargs, out):
    if _C.is_grad_enabled() and any(
        t.requires_grad for t in _flat_tensors(list(args) + list(kwargs.values()) + [out])
    ):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    if name in _ELEMENTWISE_OUT_NAMES and isinstance(out, Tensor):
        check_no_internal_overlap(out)
    form = _ELEMENTWISE_OUT.get(_OUT_ALIASES.get(name, name))
    if form is not None and _plain(out) and all(_plain(a) for a in args):
        had = tuple(out.shape) if out.numel() else None
        try:
            form(*args, out=out, **kwargs)
        except TypeError as e:  # a form of the op the out= kernel does not take
            if "incompatible function arguments" not in str(e):
                raise
        else:
            if had is not None and tuple(out.shape) != had:
                _warn_resized(had, tuple(out.shape))
            return out
    if form is not None and isinstance(out, Tensor):
        complex_abs = _complex_abs(name, args)
        if not (complex_abs and not out.is_complex()):
            _check_out_first(name, form, args, kwargs, out)
        if complex_abs:
            return _write_one(name, orig(*args, **kwargs), out, cast=True)
    if isinstance(out, Tensor) and (name in _ELEMENTWISE_OUT_NAMES or name in CAT_NAMES):
        inputs = _flat_tensors(list(args) + list(kwargs.values()))
        check_no_overlap(out, inputs, same_too=name in CAT_NAMES)
    if name in _DTYPE_FROM_OUT and kwargs.get("dtype") is None and isinstance(out, Tensor):
        kwargs["dtype"] = out.dtype
    return write_out(name, orig(*args, **kwargs), out)


def _complex_abs(name, args):
    """torch's abs of a complex input casts its real result into out: any out its dtype casts
    to, or a complex out of the input's dtype (checked as the other calls, which keep the input's
    dtype exactly)."""
    return name in ("abs", "absolute") and _complex_first(args)


def _complex_first(args):
    return bool(args) and isinstance(args[0], Tensor) and args[0].is_complex()


# ops whose CPU kernels refuse a complex input before torch checks out= (torch's texts)
_REFUSES_COMPLEX = {
    "ceil": "ceil is not supported for complex inputs",
    "floor": "floor is not supported for complex inputs",
    "trunc": "trunc is not supported for complex inputs",
    "fix": "trunc is not supported for complex inputs",
    "sign": "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
    "torch.sgn instead.",
}


def _as_meta(v):
    if not isinstance(v, Tensor):
        return v
    return _C._empty_meta(list(v.shape), list(v.stride()), v.dtype)


def _meta_checkable(v):
    if not isinstance(v, Tensor):
        return isinstance(v, (int, float, complex, bool))
    return type(v) is Tensor and v.device.type in _PLAIN_DEVICES and not v.is_quantized


def _check_out_first(name, form, args, kwargs, out):
    """torch's out= checks (out's dtype, its memory) before the kernel's dtype refusal, for the
    calls the out= kernels do not take (a complex operand or out): the out= kernel runs on meta
    copies, which checks out as torch's structured kernels do and computes nothing; the call
    itself then runs through write_out."""
    if name in _REFUSES_COMPLEX and _complex_first(args):
        raise NotImplementedError(_REFUSES_COMPLEX[name])
    values = [*args, *kwargs.values(), out]
    if not all(_meta_checkable(v) for v in values):
        return
    meta_kwargs = {k: _as_meta(v) for k, v in kwargs.items()}
    try:
        form(*[_as_meta(a) for a in args], out=_as_meta(out), **meta_kwargs)
    except TypeError as e:  # a form of the op the out= kernel does not take
        if "incompatible function arguments" not in str(e):
            raise


# The elementwise ops whose out= runs their out= kernel, after torch's out= checks in C++
# (Note [Meta step] in csrc/ember/ops/meta.h): no result tensor, no copy when out has the
# result's dtype. Other ops, and calls with a tensor subclass (sparse tensors among them), a
# complex or quantized tensor or a device other than cpu and meta, compute the result and write
# it (write_out).
_ELEMENTWISE_OUT = _C._elementwise_out
_ELEMENTWISE_OUT_NAMES = frozenset(_ELEMENTWISE_OUT_OPS)
# torch's aliases run their op's out= kernel, with its checks in its order (out's dtype first)
_OUT_ALIASES = {
    "absolute": "abs",
    "negative": "neg",
    "fix": "trunc",
    "arccos": "acos",
    "arcsin": "asin",
    "arctan": "atan",
    "arccosh": "acosh",
    "arcsinh": "asinh",
    "arctanh": "atanh",
    "subtract": "sub",
    "multiply": "mul",
    "arctan2": "atan2",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
}


_PLAIN_DEVICES = frozenset(("cpu", "meta"))


def _plain(v):
    if type(v) is not Tensor:
        return isinstance(v, (int, float))
    return v.device.type in _PLAIN_DEVICES and not v.is_complex() and not v.is_quantized


# -------------------------------------------------------------------------------------------
# The slow path


def _normalized_call(orig, sig, bound, lead):
    """orig called with `bound` (a match of sig) in positional form: every non-keyword-only
    parameter up to the last one given, defaults in between; keyword-only ones as keywords."""
    pos = sig.positional
    last = max((i for i, p in enumerate(pos) if p.name in bound), default=-1)
    args = list(lead)
    for p in pos[: last + 1]:
        args.append(bound[p.name] if p.name in bound else p.default)
    kwargs = {p.name: bound[p.name] for p in sig.params if p.kwonly and p.name in bound}
    return orig(*args, **kwargs)


# ember.func.vmap's hook for a guarded function called with its BatchedTensor (which the binding
# rejects): a reference taken before vmap patched the namespaces still reaches the batching rules.
# foreign(guard, args, kwargs) returns NotImplemented when the call is not vmap's.
foreign = None


def set_foreign(hook):
    """Installs the hook the slow path offers a rejected call before resolving it (vmap's)."""
    global foreign
    foreign = hook


def _slow(name, orig, texts, method, strict=False, holder=()):
    key = (name, method)

    def offer(args, kwargs):
        """A rejected call offered to vmap's hook, then to a tensor-like argument's own
        __torch_function__; NotImplemented when neither takes it."""
        if foreign is not None and holder:
            out = foreign(holder[0], args, kwargs)
            if out is not NotImplemented:
                return out
        if holder:
            from ._subclass_dispatch import dispatch_rejected

            return dispatch_rejected(holder[0], args, kwargs)
        return NotImplemented

    def call(*args, **kwargs):
        """orig; when it rejects the arguments, torch's resolution of the overloads."""
        if strict:  # the guard's check could not tell: bind as torch's parser
            sigs = _signatures(key, texts)
            rest = args[1:] if method else args
            if not _binds_any(sigs, rest, kwargs):
                out = offer(args, kwargs)
                if out is not NotImplemented:
                    return out
                raise type_error(name, sigs, rest, kwargs)
        try:
            return orig(*args, **kwargs)
        except TypeError as e:
            out = offer(args, kwargs)
            if out is not NotImplemented:
                return out
            if not texts and "incompatible function arguments" not in str(e):
                raise
            error = e
        lead, rest = (args[:1], args[1:]) if method else ((), args)
        if texts:
            return _resolve(name, orig, _signatures(key, texts), rest, kwargs, lead, error)
        doc = _Signature(_doc_signature(orig, name, method))
        raise (
            overflow_error(name, None, rest, kwargs) or type_error(name, [doc], rest, kwargs)
        ) from None

    def slow(*args, **kwargs):
        out = kwargs.pop("out", None)
        if out is None:
            return call(*args, **kwargs)
        if texts and not method and any("out" not in t for t in texts):
            # only some overloads take out= (sum(x, out=o) is torch's TypeError)
            sigs = _signatures(key, texts)
            given = {**kwargs, "out": out}
            probe = args
            if name in _NUMBERS_AS_TENSORS:  # torch's parser takes a number for a Tensor here
                probe = tuple(Tensor() if _is_number(a) else a for a in args)
            if not _binds_any(sigs, probe, given):
                raise type_error(name, sigs, args, given)
        return _call_out(name, call, args, kwargs, out)

    return slow


# torch's python_arg_parser takes a Python number for a Tensor argument of these ops only
# (should_allow_numbers_as_tensors): div(x, 2, out=o) and div(2, x, out=o) bind
_NUMBERS_AS_TENSORS = frozenset(
    "add div divide mul multiply sub subtract true_divide floor_divide".split()
)


def _resolve(name, orig, sigs, args, kwargs, lead, error):
    """The call bound to the first of sigs that takes it, made again in the binding's form;
    torch's TypeError when none does. `error` is the binding's own TypeError, raised when a
    signature binds but the binding still refuses the values (its message is the better one)."""
    for sig in sigs:
        bound = sig.bind(args, kwargs)
        if isinstance(bound, dict):
            try:
                return _normalized_call(orig, sig, bound, lead)
            except TypeError as e:
                if "incompatible function arguments" in str(e):
                    continue
                raise
    if "incompatible function arguments" not in str(error) and _binds_any(sigs, args, kwargs):
        raise error
    old = DEPRECATED.get(name.rstrip("_"))
    if old is not None:
        method = bool(lead)
        sig = _Signature(_drop(old, ("input",)) if method else old)
        bound = sig.bind(args, kwargs)
        if isinstance(bound, dict):
            _warn_deprecated(name, sig, sigs, method)
            number = sig.positional[1 - method].name
            tensors = [bound[p.name] for p in sig.positional if p.name != number]
            return orig(*lead, *tensors, **{number: bound[number]})
    raise (
        overflow_error(name, sigs, args, kwargs) or type_error(name, sigs, args, kwargs)
    ) from None


class _Wide(int):
    """Stands in for a Python int beyond 64 bits while a call is bound to torch's signatures."""


def overflow_error(name, sigs, args, kwargs):
    """The error torch's parser raises for a call it takes but for a Python int beyond 64 bits
    (below -2**63 or from 2**64 on), which ember's binding only rejects: ValueError for an int
    parameter, OverflowError for a Number (or a tensor that takes a number). None when no
    argument is such an int or the call binds no signature anyway. sigs None: the binding's
    own signature, whose types are not known here (its ops take a Number)."""
    wide = [v for v in (*args, *kwargs.values()) if type(v) is int and not -(2**63) <= v < 2**64]
    if not wide:
        return None
    number = OverflowError(
        "int too big to convert" if wide[0] > 0 else "can't convert negative int to unsigned"
    )
    if sigs is None:
        return number
    stand_ins = [_Wide(0)] + ([Tensor()] if name in _NUMBERS_AS_TENSORS else [])
    for stand_in in stand_ins:

        def sub(v):
            return stand_in if any(v is w for w in wide) else v

        probe = (tuple(sub(a) for a in args), {k: sub(v) for k, v in kwargs.items()})
        for sig in sigs:
            bound = sig.bind(*probe)
            if not isinstance(bound, dict):
                continue
            kinds = {p.type for p in sig.params if type(bound.get(p.name)) is _Wide}
            if kinds & {"int", "tuple of ints"}:
                return ValueError("Overflow when unpacking long long")
            return number
    return None


def _warn_deprecated(name, sig, sigs, method):
    if _deprecated_warned:
        return
    _deprecated_warned.append(name)
    out = "" if method else ", *, Tensor out = None"
    instead = "\n\t".join(f"{name}({s.text})" for s in sigs)
    warnings.warn(
        f"This overload of {name} is deprecated:\n\t{name}({sig.text}{out})\n"
        f"Consider using one of the following signatures instead:\n\t{instead}",
        UserWarning,
        stacklevel=_caller_level(),
    )


def _binds_any(sigs, args, kwargs):
    return any(isinstance(s.bind(args, kwargs), dict) for s in sigs)


def guard(name, orig, method=False):
    """orig behind the argument guard (see the module's docstring)."""
    import functools

    table = METHOD_SIGNATURES if method else SIGNATURES
    texts = table.get(name)
    strict = texts is not None and name in STRICT
    check = None
    if strict:
        check = tuple(tuple(p.code() for p in s.params) for s in _signatures((name, method), texts))
    holder = []
    g = _C._arg_guard(
        orig, _slow(name, orig, texts, method, strict, holder), texts is not None, check, method
    )
    holder.append(g)
    return functools.update_wrapper(g, orig)


def guarded(namespace, names, prefix=""):
    """{name: guarded function} for each of `names` in `namespace` (a module's globals): the
    package root's OUT_OPS and SIGNATURES, ember.linalg's LINALG_OUT_OPS (prefix "linalg_")."""
    out = {}
    for name in dict.fromkeys(names):
        fn = namespace.get(name)
        if fn is not None and callable(fn) and not isinstance(fn, type):
            out[name] = guard(prefix + name, fn)
    return out


def method_guards(current):
    """{name: guarded method} for Tensor's table (ember/_ops/_tensor_methods.py): the methods in
    METHOD_SIGNATURES as `current(name)` gives them."""
    out = {}
    for name in METHOD_SIGNATURES:
        fn = current(name)
        if fn is not None:
            out[name] = guard(name, fn, method=True)
    return out
