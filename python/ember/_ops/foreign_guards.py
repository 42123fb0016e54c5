"""The foreign-tensor guard (Note [Foreign tensors], python/src/guard_object.h) in front of the
public functions and Tensor methods that have no guard of their own.

ember's guards (_ArgGuard, _SparseGuard, _ComplexGuard) check their arguments for an instance of
the class registered with `_C._set_foreign` (vmap's BatchedTensor) and hand such a call to its
hook before the binding, which would reject it, runs. The functions and methods that are bare
extension functions (`ember.special.i1`, `Tensor.exp2`, ...) get `_C._foreign_guard`, whose only
check is that one, so a reference to any of them taken before a vmap started still reaches the
batching rules. Metadata methods (dim, numel, item, data_ptr, ...) stay bare: BatchedTensor has
its own, and they are the hottest calls of Python code.
"""

import functools

from .. import _C

# Tensor's bare methods left unguarded: metadata and bookkeeping, which BatchedTensor answers
# itself; dunders (slots: a guard would slow `len(x)`).
_KEEP_BARE = frozenset(
    "dim ndimension numel nelement element_size storage_offset data_ptr is_floating_point "
    "is_complex item tolist numpy requires_grad_ is_inference retain_grad dequantize int_repr "
    "q_scale q_zero_point q_per_channel_scales q_per_channel_zero_points q_per_channel_axis".split()
)

_guards = {}  # id(original) -> (original, guard): one guard per callable wherever it is bound


def _guard(fn):
    entry = _guards.get(id(fn))
    if entry is None:
        guard = _C._foreign_guard(fn)
        functools.update_wrapper(guard, fn)
        entry = _guards[id(fn)] = (fn, guard)
    return entry[1]


def reads_values(fn):
    """The guard in front of a public Python function whose body reads tensor values (numpy(),
    tolist(), item(): frexp, linalg.matrix_exp's scaling, the LU permutation). A reference to it
    taken before a vmap started then hands a call with a BatchedTensor to its batching rule,
    which calls it on the physical tensors, instead of running the body on the BatchedTensor
    (Note [References taken before vmap] in ember/func/_foreign.py)."""
    return _guard(fn)


def _chain(fn):
    seen = 0
    while fn is not None and seen < 8:
        yield fn
        fn = getattr(fn, "__wrapped__", None)
        seen += 1


def install(root, modules):
    """Puts the guard in front of the bare extension functions of `modules` (a function that
    takes no tensor, such as get_default_dtype, is left alone) and of Tensor's bare methods. A
    bare function that the package root already guards under the same name (linalg.stack is the
    binding behind ember.stack) becomes the root's: tables keyed by the function (forward AD's
    formulas, vmap's rules) then see one object, as before."""
    for module in modules:
        for name, value in list(vars(module).items()):
            if name.startswith("_") or type(value).__name__ != "nb_func":
                continue
            if "Tensor" not in (getattr(value, "__doc__", None) or "").split("\n", 1)[0]:
                continue
            front = getattr(root, name, None)
            if front is not None and front is not value and any(f is value for f in _chain(front)):
                setattr(module, name, front)
            else:
                setattr(module, name, _guard(value))
    from . import _tensor_methods

    _tensor_methods.install_guards(
        {
            name: _guard(value)
            for name, value in vars(_C.Tensor).items()
            if not name.startswith("_")
            and name not in _KEEP_BARE
            and type(value).__name__ == "nb_method"
        }
    )


def guard_kernels(namespace, mask, route_name, also=()):
    """Puts a foreign guard that checks only the classes in the slots of `mask` in front of the
    extension functions of `namespace` (ember._C or one of its submodules: the kernels ember's
    Python functions call by attribute, so a reference to such a function taken before a
    DTensor existed still reaches DTensor's hook through its kernel). route_name(name, fn) is
    the name the guard takes (`__name__`: the name the hook's mode routes the call by). `also`:
    names guarded although their signature names no Tensor (`broadcast_tensors(*tensors)`).
    Once per namespace and mask; guards already in place stay."""
    for name, value in list(vars(namespace).items()):
        if name.startswith("_") or type(value).__name__ != "nb_func":
            continue
        doc = (getattr(value, "__doc__", None) or "").split("\n", 1)[0]
        if "Tensor" not in doc and name not in also:
            continue
        guard = _C._foreign_guard(value, mask)
        functools.update_wrapper(guard, value)
        guard.__name__ = route_name(name, value)
        setattr(namespace, name, guard)
