"""Tensor's methods and operators behind the sparse guard (ember._C._sparse_guard).

A sparse tensor's C++ tensor is its values array, so a binding given a sparse argument would
compute on the values and return a wrong answer. Every public Tensor method and operator is put
behind the guard, which costs a dense call a few pointer compares and forwards it unchanged; a
call with a sparse argument goes to the path made here:

- operators (``param @ s``, ``x * s``) return NotImplemented, so that Python calls the sparse
  tensor's reflected operator (``s.__rmatmul__``), which computes torch's result or raises;
- methods with a sparse form (``x.mm(s)``, ``x.add(s)``, ``x.addmm(s, y)``, ``x.add_(s)``) call
  it, as the package functions do;
- every other method raises NotImplementedError (torch raises its dispatch error there).
See docs/ARCHITECTURE.md ("Sparse tensors").
"""

import functools

from .. import _C
from . import _ops
from . import _tensor as st
from ._tensor import SparseTensor

# Not guarded: protocols and conversions that take no tensor argument or only read an argument's
# attributes, and methods whose own implementation accepts sparse arguments.
_SKIP = set(
    "__init__ __new__ __repr__ __str__ __format__ __hash__ __bool__ __int__ __float__ __index__ "
    "__complex__ __len__ __iter__ __reversed__ __array__ __array_wrap__ __deepcopy__ __copy__ "
    "__reduce__ __reduce_ex__ __getstate__ __setstate__ __dlpack__ __dlpack_device__ "
    "__torch_function__ __torch_dispatch__ __init_subclass__ __class_getitem__ __sizeof__ "
    "__getattr__ __getattribute__ __setattr__ __delattr__ __dir__ __del__ __neg__ __pos__ "
    "__abs__ __invert__ to type_as to_dense to_sparse to_sparse_csr to_sparse_coo sparse_mask "
    "sparse_dim dense_dim".split()
)
_GUARDED_DUNDERS = set(
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ "
    "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __and__ __rand__ __or__ __ror__ __xor__ "
    "__rxor__ __lshift__ __rshift__ __rlshift__ __rrshift__ __eq__ __ne__ __lt__ __le__ __gt__ "
    "__ge__ __matmul__ __rmatmul__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ "
    "__imod__ __ipow__ __iand__ __ior__ __ixor__ __ilshift__ __irshift__ __imatmul__ "
    "__getitem__ __setitem__ __contains__".split()
)
# In-place operators with a sparse form: `x += s` is x.add_(s), as torch's.
_INPLACE_DUNDERS = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_"}


def _refuse(name, args, kwargs):
    flat = []
    for a in list(args) + list(kwargs.values()):
        flat.extend(a if isinstance(a, (list, tuple)) else (a,))
    sp = next(a for a in flat if isinstance(a, SparseTensor))
    raise NotImplementedError(
        f"{name}: expected dense tensors; got a sparse argument (layout {sp.layout!r}); call "
        "to_dense() on it first"
    )


def _inplace(path):
    def run(self, other, *, alpha=1):
        out = path(self, other, alpha=alpha)
        if isinstance(out, SparseTensor):
            out = st.to_dense(out)
        return self.copy_(out)

    return run


def _method_paths():
    """{name: fn(self, *args, **kwargs)}: the sparse forms of dense Tensor methods, with torch's
    parameter names."""
    add = lambda self, other, *, alpha=1: _ops.add(self, other, alpha=alpha)  # noqa: E731
    sub = lambda self, other, *, alpha=1: _ops.sub(self, other, alpha=alpha)  # noqa: E731
    mul = lambda self, other: _ops.mul(self, other)  # noqa: E731
    div = lambda self, other, *, rounding_mode=None: _ops.div(  # noqa: E731
        self, other, rounding_mode=rounding_mode
    )
    return {
        "mm": lambda self, mat2: _ops.mm(self, mat2),
        "matmul": lambda self, other: _ops.matmul(self, other),
        "addmm": lambda self, mat1, mat2, *, beta=1, alpha=1: _ops.addmm(
            self, mat1, mat2, beta=beta, alpha=alpha
        ),
        "add": add,
        "sub": sub,
        "subtract": sub,
        "mul": mul,
        "multiply": mul,
        "div": div,
        "divide": div,
        "true_divide": div,
        "add_": _inplace(add),
        "sub_": _inplace(sub),
        "mul_": _inplace(lambda self, other, alpha=1: mul(self, other)),
    }


def _path(name, orig, paths, keep):
    """What a call of Tensor.name with a sparse argument runs."""
    if name in _INPLACE_DUNDERS:
        target = paths[_INPLACE_DUNDERS[name]]
    elif name.startswith("__"):
        target = None
    else:
        target = paths.get(name)

    def path(self, *args, **kwargs):
        if isinstance(self, SparseTensor):
            # SparseTensor has its own form of every public method but those it keeps from
            # Tensor (requires_grad_, backward, ...), so a sparse self here is one of those or
            # an unbound call Tensor.name(s, ...) of ember.sparse's reading its values array;
            # an operator SparseTensor inherits (==, !=, ...) refuses, as torch's.
            if not name.startswith("__") or name in keep:
                return orig(self, *args, **kwargs)
            _refuse(name, (self,) + args, kwargs)
        if target is not None:
            return target(self, *args, **kwargs)
        if name.startswith("__") and name not in ("__getitem__", "__setitem__", "__contains__"):
            return NotImplemented  # Python then tries the sparse operand's reflected operator
        _refuse(name, args, kwargs)

    path.__name__ = name
    return path


_SCALAR_ANNOTATIONS = set(
    "int bool float str Number dtype|None int|None float|None str|None bool|None".split()
)


def _params(signature):
    """The parameters of a nanobind signature line, without self (split at top-level commas)."""
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    if ") ->" in signature:
        inner = signature[signature.index("(") + 1 : signature.rindex(") ->")]
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += (ch in "[(") - (ch in "])")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out[1:] if out and out[0] == "self" else out


def _takes_no_tensor(orig):
    """True for a binding method whose every overload takes only scalars (x.t(), x.size(d),
    x.sum(...)'s typed form): no tensor can reach it, so it needs no guard. Untyped parameters
    (*args, *shape) and tensor or object ones count as tensors."""
    sigs = getattr(orig, "__nb_signature__", None)
    if type(orig).__name__ not in ("nb_method", "nb_func") or not sigs:
        return False
    for sig in sigs:
        for p in _params(sig[0]):
            if p == "*":
                continue
            if ":" not in p:
                return False
            ann = p.split(":", 1)[1].split("=")[0].replace(" ", "")
            if ann not in _SCALAR_ANNOTATIONS:
                return False
    return True


def tensor_method_guards(attrs, keep):
    """{name: guard} for Tensor's table: each public method and operator of `attrs` ({name:
    attribute}, what Tensor will hold) behind _C._sparse_guard with its sparse path."""
    paths = _method_paths()
    out = {}
    for name, orig in attrs.items():
        if name in _SKIP or isinstance(orig, (type, property, staticmethod, classmethod)):
            continue
        if name.startswith("_") and name not in _GUARDED_DUNDERS:
            continue
        if not callable(orig) or _takes_no_tensor(orig):
            continue
        guard = _C._sparse_guard(orig, _path(name, orig, paths, keep))
        try:
            functools.update_wrapper(guard, orig)
        except AttributeError:
            pass
        out[name] = guard
    return out


# package-level bindings that read only their arguments' dtype or shape, or take no tensor
_FUNCTION_SKIP = set(
    "promote_types get_default_dtype set_default_dtype can_cast from_numpy result_type "
    "broadcast_shapes is_grad_enabled is_inference_mode_enabled get_num_threads "
    "set_num_threads".split()
)


# package functions written in Python that would read a sparse argument's values array
_PYTHON_READERS = set(
    "conj_physical unique unique_consecutive rrelu normal logit max min median nanmedian "
    "nansum std var std_mean var_mean".split()
)


def function_guards(namespace, guarded):
    """{name: guard} for the package root: each public binding function of `namespace` not in
    `guarded` (those have sparse paths) behind _C._sparse_guard, refusing sparse arguments as the
    methods do; `ember.maximum(x, s)` would otherwise compute on s's values array."""
    out = {}
    for name, orig in namespace.items():
        if name.startswith("_") or name in guarded or name in _FUNCTION_SKIP:
            continue
        # a binding behind another guard (complex's) is guarded as well: the check sees
        # the outer callable's arguments, which reach the binding unchanged
        inner = orig
        while type(inner).__name__ != "nb_func" and hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        if type(inner).__name__ != "nb_func" or _takes_no_tensor(inner):
            if name not in _PYTHON_READERS:
                continue

        def path(*args, __name=name, **kwargs):
            _refuse(__name, args, kwargs)

        out[name] = functools.update_wrapper(_C._sparse_guard(orig, path), orig)
    return out
