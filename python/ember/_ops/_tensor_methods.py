"""The one table of Tensor's Python-level methods, properties and class attributes.

The binding (`ember._C.Tensor`) defines most methods in C++; the entries below add those that are
simpler in Python or that forward to a Python-level function. Nothing else in the package
assigns to Tensor: the package root calls `install()` once, after every family is loaded.

- REPLACE: set whatever the binding has (Python protocols, conversions, torch-style overloads).
- FILL: set only where the binding has no attribute of that name.
- FORWARD / FORWARD_INPLACE: `t.name(...)` is the function `name(t, ...)`; the in-place form
  copies the result back into t (refusing dtypes t cannot hold). Filled like FILL.
- ALIASES: torch's NumPy-style names, for the plain and in-place method of each target.
Every plain Python function installed that takes `dim` or `keepdim` also accepts numpy's
`axis`/`keepdims` (see _numpy_kwargs).
"""

import types

from .. import (
    _C,
    _argparse,
    _dlpack,
    _legacy_types,
    _numpy_kwargs,
    _process,
    _shared,
    _storage,
    _subclass_dispatch,
    sparse,
)
from .._C import Tensor
from . import (
    attributes,
    complex,
    elementwise,
    extras,
    index,
    linalg,
    nn,
    products,
    quantized,
    random,
    reduce,
    shape,
    sort,
    tensor,
    tensor_api,
    tensor_api_s12,
    tensor_api_s13,
)
from ._util import check_inplace_result
from .complex_cast import warn_discard_imag


def _method_sig(fn, name):
    """torch's signature of fn's method form, for docstrings: the line of fn's docstring that is
    torch's signature for it (not nanobind's typed one), without `input` and `out=`."""
    for line in (fn.__doc__ or "").splitlines():
        line = line.strip()
        typed = ": " in line.split(")")[0] or line.endswith("-> object")  # nanobind's lines
        if line.startswith(name + "(") and not typed:
            params, _, ret = line[len(name) + 1 :].partition(")")
            params = [p for p in params.split(", ") if p != "out=None"][1:]
            if params and params[-1] == "*":
                params.pop()
            return "(" + ", ".join(params) + ")" + ret
    return "(*args, **kwargs) -> Tensor"


def _forward(fn, name):
    """A method calling fn(self, ...): a Python function binds as a method by itself, a binding
    function (which does not) gets a Python wrapper."""
    if isinstance(fn, types.FunctionType):
        return fn

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"{name}{_method_sig(fn, name)}\n\n{name}() with self as input."
    return method


# binary ops whose in-place form torch refuses by the operands' promoted dtype before its
# kernel's dtype check (gcd_ of bool and half: the cast error, not "gcd_cpu" for Half)
_PROMOTED_FIRST = frozenset(("gcd", "lcm", "ldexp", "xlogy", "nextafter", "heaviside"))


def _inplace(fn, name):
    # torch refuses in-place results its dtype cannot hold (e.g. float into long).
    def method(self, *args, **kwargs):
        if name in _PROMOTED_FIRST and args and isinstance(args[0], Tensor):
            check_inplace_result(_C.result_type(self, args[0]), self)
        result = fn(self, *args, **kwargs)
        check_inplace_result(result.dtype, self)
        return self.copy_(result)

    method.__name__ = name + "_"
    method.__doc__ = f"{name}_{_method_sig(fn, name)}\n\nIn-place form of {name}()."
    return method


def _caster(name, dtype_name):
    target = getattr(_C, dtype_name)
    real = not target.is_complex

    def cast(self, memory_format=None):
        if real and self.is_complex():
            warn_discard_imag()
        if memory_format is not None:
            return _C._to_format(self, target, memory_format, False)
        return self if self.dtype == target else _C._to_dtype(self, target, False)

    cast.__name__ = name
    cast.__doc__ = (
        f"{name}(memory_format=torch.preserve_format) -> Tensor\n\n"
        f"self as {dtype_name} (self itself when it already is)."
    )
    return cast


REPLACE = {
    "dequantize": quantized.dequantize,  # a plain tensor becomes float32, as torch's
    # Python protocols
    "__repr__": tensor.__repr__,
    "__str__": object.__str__,  # as torch's: repr(), a subclass's own __repr__ included
    "__format__": tensor.__format__,
    "__hash__": tensor.__hash__,
    "__bool__": tensor.__bool__,
    "__int__": tensor.__int__,
    "__float__": tensor.__float__,
    "__index__": tensor.__index__,
    "__complex__": tensor.__complex__,
    "__iter__": tensor.__iter__,
    "__reversed__": tensor.__reversed__,
    "__contains__": tensor.__contains__,
    "__array__": tensor.__array__,
    "__array_wrap__": tensor.__array_wrap__,
    "__deepcopy__": tensor.__deepcopy__,
    "__reduce_ex__": tensor.__reduce_ex__,
    "__rtruediv__": tensor_api_s13.__rdiv__,  # torch's rounding: reciprocal, then the product
    # conversions and factories
    "to": tensor.to,
    "type": _legacy_types._type,
    "new": _legacy_types._tensor_new,
    "float": _caster("float", "float32"),
    "double": _caster("double", "float64"),
    "half": _caster("half", "float16"),
    "bfloat16": _caster("bfloat16", "bfloat16"),
    "long": _caster("long", "int64"),
    "int": _caster("int", "int32"),
    "short": _caster("short", "int16"),
    "char": _caster("char", "int8"),
    "byte": _caster("byte", "uint8"),
    "bool": _caster("bool", "bool"),
    "type_as": tensor.type_as,
    "as_subclass": tensor.as_subclass,
    "cpu": tensor.cpu,
    "cuda": tensor.cuda,
    "new_zeros": tensor._new("zeros"),
    "new_ones": tensor._new("ones"),
    "new_empty": tensor._new("empty"),
    "new_full": tensor.new_full,
    "new_tensor": tensor.new_tensor,
    # autograd
    "backward": tensor.backward,
    "register_hook": tensor.register_hook,
    # storage and sharing
    "share_memory_": _shared.share_memory_,
    "is_shared": _shared.is_shared,
    "untyped_storage": _storage.untyped_storage,
    "__dlpack__": _dlpack.__dlpack__,
    "__dlpack_device__": _dlpack.__dlpack_device__,
    "storage": _storage.storage,
    "resize_": _storage.resize_,
    "resize_as_": _storage.resize_as_,
    "set_": _storage.set_,
    # ops with several outputs or torch-style overloads
    "where": tensor.where,
    "max": reduce.max,
    "min": reduce.min,
    "var": reduce.var,
    "std": reduce.std,
    "norm": reduce.norm,
    "logsumexp": reduce.logsumexp,
    "sort": sort.sort,
    "topk": sort.topk,
    "kthvalue": sort.kthvalue,
    "median": sort.median,
    "mode": sort.mode,
    "cummax": sort.cummax,
    "cummin": sort.cummin,
    "unique": sort.unique,
    "tril": _forward(_C.tril, "tril"),
    "triu": _forward(_C.triu, "triu"),
    "diag": _forward(_C.diag, "diag"),
    "tril_": shape.tril_,
    "triu_": shape.triu_,
    "equal": elementwise.equal,
    "allclose": elementwise.allclose,
    "isclose": elementwise.isclose,
    "lerp_": elementwise.lerp_,
    "clamp_min": elementwise.clamp_min,
    "clamp_max": elementwise.clamp_max,
    "clamp_min_": elementwise.clamp_min_,
    "clamp_max_": elementwise.clamp_max_,
    # random sampling in place
    "uniform_": random.uniform_,
    "normal_": random.normal_,
    "bernoulli_": random.bernoulli_,
    "bernoulli": random.bernoulli,
    "random_": random.random_,
    "multinomial": random.multinomial,
    "exponential_": random.exponential_,
    "cauchy_": random.cauchy_,
    "log_normal_": random.log_normal_,
    "geometric_": random.geometric_,
}

PROPERTIES = {
    "device": tensor._device,
    "is_cpu": lambda self: self._device_str == "cpu",
    "is_xpu": lambda self: False,
    "is_mps": lambda self: False,
    "layout": lambda self: _process.strided,
    "itemsize": lambda self: self.element_size(),
    "nbytes": lambda self: self.numel() * self.element_size(),
    "grad_fn": tensor._grad_fn,
    "H": products._H,
    "mH": products._mH,
}

PROPERTY_DOCS = {
    "device": "device -> device\n\nWhere the tensor's data lives: the CPU, or a PrivateUse1 "
    "backend's device.",
    "is_cpu": "is_cpu -> bool\n\nWhether the tensor lives on the CPU.",
    "is_xpu": "is_xpu -> bool\n\nFalse: every ember tensor lives on the CPU.",
    "is_mps": "is_mps -> bool\n\nFalse: every ember tensor lives on the CPU.",
    "layout": "layout -> layout\n\nThe memory layout: strided, for every ember tensor.",
    "itemsize": "itemsize -> int\n\nThe size of one element in bytes.",
    "nbytes": "nbytes -> int\n\nThe size of the elements in bytes (numel() * itemsize).",
    "mH": "mH -> Tensor\n\nThe conjugate transpose of the last two dims (mT for real dtypes).",
}

# numpy scalars defer their binary operators to the tensor's reflected ones (2.0 * t is a tensor).
CLASS_ATTRIBUTES = {"__array_priority__": 1000}

FILL = {
    "qscheme": quantized._qscheme_method,
    "softmax": nn.softmax,
    "log_softmax": nn.log_softmax,
    "hardshrink": nn.tensor_hardshrink,
    "prelu": nn.tensor_prelu,
    "addmm_": products._addmm_,
    "baddbmm_": products._baddbmm_,
    "polygamma": elementwise._polygamma,
    "polygamma_": elementwise._polygamma_,
    "float_power_": elementwise.float_power_,
    "fill_diagonal_": index._fill_diagonal_,
    "sum_to_size": reduce._sum_to_size,
    "new_empty_strided": tensor._new_empty_strided,
    "apply_": tensor._apply_,
    "map_": tensor._map_,
    "is_same_size": attributes.is_same_size,
    "is_nonzero": attributes.is_nonzero,
    "is_signed": attributes.is_signed,
    "transpose_": shape._geometry(lambda t, a, b: t.transpose(a, b)),
    "swapaxes_": shape._geometry(lambda t, a, b: t.transpose(a, b)),
    "swapdims_": shape._geometry(lambda t, a, b: t.transpose(a, b)),
    "t_": shape._geometry(lambda t: t.t()),
    "pin_memory": tensor._pin_memory,
    "is_pinned": tensor._is_pinned,
    "get_device": attributes.get_device,
    "register_post_accumulate_grad_hook": tensor._register_post_accumulate_grad_hook,
}

for _name, _params in (
    ("transpose_", "dim0, dim1"),
    ("swapaxes_", "axis0, axis1"),
    ("swapdims_", "dim0, dim1"),
    ("t_", ""),
):
    FILL[_name].__doc__ = (
        f"{_name}({_params}) -> Tensor\n\nIn-place form of {_name[:-1]}(): "
        "self takes the view's sizes and strides."
    )
del _name, _params

FILL.update(tensor_api.METHODS)  # torch's methods for drop-in running (issue 16)
PROPERTIES.update(tensor_api.PROPERTIES)
PROPERTY_DOCS.update(tensor_api.PROPERTY_DOCS)
FILL.update(tensor_api_s12.METHODS)  # session 12's missing names
PROPERTIES.update(tensor_api_s12.PROPERTIES)
PROPERTY_DOCS.update(tensor_api_s12.PROPERTY_DOCS)
FILL.update(tensor_api_s13.METHODS)  # session 13's: __rdiv__ and the Python 2 names

# t.name(...) is name(t, ...) for these functions of the families (or of the binding).
FORWARD = {
    "narrow_copy": extras.narrow_copy,
    "unsafe_chunk": extras.unsafe_chunk,
    "unsafe_split": extras.unsafe_split,
    "index_reduce": extras.index_reduce,
    "addbmm": products.addbmm,
    "addmv": products.addmv,
    "addr": products.addr,
    "adjoint": products.adjoint,
    "cross": products.cross,
    "kron": products.kron,
    "trace": products.trace,
    "vdot": products.vdot,
    "aminmax": reduce.aminmax,
    "corrcoef": reduce.corrcoef,
    "cov": reduce.cov,
    "dist": reduce.dist,
    "histogram": reduce.histogram,
    "nanmean": reduce.nanmean,
    "nansum": reduce.nansum,
    "renorm": reduce.renorm,
    "msort": sort.msort,
    "nanmedian": sort.nanmedian,
    "nanquantile": sort.nanquantile,
    "quantile": sort.quantile,
    "unique_consecutive": sort.unique_consecutive,
    "angle": complex.angle,
    "conj": complex.conj,
    "conj_physical": complex.conj_physical,
    "deg2rad": elementwise.deg2rad,
    "float_power": elementwise.float_power,
    "frexp": elementwise.frexp,
    "gcd": elementwise.gcd,
    "heaviside": elementwise.heaviside,
    "is_conj": complex.is_conj,
    "is_neg": complex.is_neg,
    "isreal": complex.isreal,
    "lcm": elementwise.lcm,
    "ldexp": elementwise.ldexp,
    "logaddexp": elementwise.logaddexp,
    "logaddexp2": elementwise.logaddexp2,
    "logit": elementwise.logit,
    "mvlgamma": elementwise.mvlgamma,
    "nextafter": elementwise.nextafter,
    "positive": elementwise.positive,
    "rad2deg": elementwise.rad2deg,
    "real": complex.real,
    "resolve_conj": complex.resolve_conj,
    "resolve_neg": complex.resolve_neg,
    "sgn": complex.sgn,
    "xlogy": elementwise.xlogy,
    "digamma": _C.digamma,
    "i0": _C.i0,
    "lgamma": _C.lgamma,
    "diag_embed": shape.diag_embed,
    "diagflat": shape.diagflat,
    "diff": shape.diff,
    "dsplit": shape.dsplit,
    "hsplit": shape.hsplit,
    "ravel": shape.ravel,
    "rot90": shape.rot90,
    "tensor_split": shape.tensor_split,
    "vsplit": shape.vsplit,
    "diagonal_scatter": index.diagonal_scatter,
    "index_copy": index.index_copy,
    "masked_scatter": index.masked_scatter,
    "put": index.put,
    "select_scatter": index.select_scatter,
    "slice_scatter": index.slice_scatter,
    "take_along_dim": index.take_along_dim,
    "cholesky": linalg.cholesky,
    "cholesky_inverse": linalg.cholesky_inverse,
    "cholesky_solve": linalg.cholesky_solve,
    "det": linalg.det,
    "inverse": linalg.inverse,
    "logdet": linalg.logdet,
    "lu": linalg.lu,
    "matrix_exp": linalg.matrix_exp,
    "matrix_power": linalg.matrix_power,
    "pinverse": linalg.pinverse,
    "qr": linalg.qr,
    "slogdet": linalg.slogdet,
    "svd": linalg.svd,
    "triangular_solve": linalg.triangular_solve,
}

# t.name_(...) computes name(t, ...) and copies it into t.
FORWARD_INPLACE = {
    "index_reduce": extras.index_reduce,
    "addbmm": products.addbmm,
    "addmv": products.addmv,
    "addr": products.addr,
    "cumprod": _C.cumprod,
    "deg2rad": elementwise.deg2rad,
    "digamma": _C.digamma,
    "gcd": elementwise.gcd,
    "heaviside": elementwise.heaviside,
    "i0": _C.i0,
    "index_copy": index.index_copy,
    "lcm": elementwise.lcm,
    "ldexp": elementwise.ldexp,
    "lgamma": _C.lgamma,
    "logit": elementwise.logit,
    "masked_scatter": index.masked_scatter,
    "mvlgamma": elementwise.mvlgamma,
    "nan_to_num": _C.nan_to_num,
    "put": index.put,
    "rad2deg": elementwise.rad2deg,
    "renorm": reduce.renorm,
    "sgn": complex.sgn,
    "xlogy": elementwise.xlogy,
    "nextafter": elementwise.nextafter,
}

ALIASES = {
    "arccos": "acos",
    "arcsin": "asin",
    "arctan": "atan",
    "arccosh": "acosh",
    "arcsinh": "asinh",
    "arctanh": "atanh",
    "arctan2": "atan2",
    "clip": "clamp",
    "absolute": "abs",
    "negative": "neg",
    "multiply": "mul",
    "divide": "div",
    "subtract": "sub",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
    "fix": "trunc",
}


def table():
    """{name: what install() sets on Tensor} for the binding as it is (FILL entries the binding
    already has are left out); properties appear as property objects."""
    if not _bound_names:  # the binding's names, as the first call (install's) found them:
        _bound_names.update(set(dir(Tensor)) - set(_installed))  # the sparse guards replace some
    bound = _bound_names
    out = {}
    fills = dict(FILL)
    fills.update({n: _forward(f, n) for n, f in FORWARD.items()})
    fills.update({n + "_": _inplace(f, n) for n, f in FORWARD_INPLACE.items()})
    for name, fn in fills.items():
        if name not in bound:
            out[name] = fn
    out.update(REPLACE)
    out.update(
        {name: property(fget, doc=PROPERTY_DOCS.get(name)) for name, fget in PROPERTIES.items()}
    )
    out["grad"] = tensor._grad_warning_getter(_grad_property)
    out.update(sparse.dense_tensor_methods())  # to_sparse, to_dense, ... (ember/sparse/)
    # complex tensors take the complex paths of these methods (ember/_ops/complex.py)
    out.update(complex.tensor_methods(lambda name: out.get(name) or _bound_method(name)))
    # torch's overload resolution for the methods whose binding takes fewer forms (_argparse.py),
    # in front of the numpy keyword renaming
    out.update(
        _argparse.method_guards(
            lambda name: _numpy_kwargs.accepting_numpy_names(out.get(name) or _bound_method(name))
        )
    )
    out.update(CLASS_ATTRIBUTES)
    out.update(_subclass_dispatch.tensor_attributes())  # __torch_function__ of subclasses
    # an alias is its target as installed, behind the same guards (x.clip of a complex tensor
    # takes clamp's complex path, x.arccos acos's)
    for alias, target in ALIASES.items():
        for suffix in ("", "_"):
            if (target + suffix in bound or target + suffix in out) and alias + suffix not in bound:
                out[alias + suffix] = out.get(target + suffix) or getattr(Tensor, target + suffix)
    for name, fn in out.items():
        if not name.startswith("__"):
            out[name] = _numpy_kwargs.accepting_numpy_names(fn)
    # last: every public method and operator behind the sparse guard, so that a sparse argument
    # never reaches a binding that would compute on its values array (ember/sparse/)
    if not _binding_attrs:  # the binding's own attributes, as the first call found them
        _binding_attrs.update({n: vars(Tensor)[n] for n in bound if n in vars(Tensor)})
    attrs = {n: a for n, a in _binding_attrs.items() if n not in out}
    attrs.update(out)
    out.update(sparse.tensor_method_guards(attrs))
    return out


def _bound_method(name):
    """The binding's own attribute `name` (before install, or as install found it)."""
    return _originals.setdefault(name, vars(Tensor).get(name))


_originals = {}
_installed = {}
_binding_attrs = {}
_bound_names = set()
_grad_property = Tensor.grad  # the binding's property, which the Python one wraps


def install():
    """Sets every entry of table() on Tensor (once; later calls change nothing)."""
    if _installed:
        return
    # Users see the class where they import it from (`<class 'ember.Tensor'>`, as torch's
    # `torch.Tensor`; pickle finds it there too). Set here, not in the binding, so that the
    # extension's stub still declares the class with its methods.
    Tensor.__module__ = "ember"
    for name, value in table().items():
        setattr(Tensor, name, value)
        _installed[name] = value


def install_guards(methods):
    """Puts vmap's foreign-tensor guards (ember/_ops/foreign_guards.py) in front of Tensor's bare
    methods: {name: guard}. Guards are C++ objects in front of the binding, as the sparse
    paths' (not Python-level methods of the table)."""
    for name, value in methods.items():
        setattr(Tensor, name, value)


def install_backend_methods(methods):
    """Adds a PrivateUse1 backend's methods (``Tensor.is_npu``, ``Tensor.npu``; made by
    ember.utils.generate_methods_for_privateuse1_backend) to Tensor through this table."""
    for name in methods:
        if name in vars(Tensor):
            raise RuntimeError(
                f"The custom device module of Tensor has already been registered with {name}"
            )
    for name, value in methods.items():
        setattr(Tensor, name, value)
        _installed[name] = value
