"""How DTensors compute: a function mode that sends every ember call taking a DTensor to a
sharding rule.

A rule picks the placements its operands must have (redistributing them, differentiably, when
they differ), runs the plain ember function on the local pieces, and wraps the result with the
output placements. Autograd stays the local one: the pieces carry the graph, redistribution is
an autograd Function whose backward moves the gradient back, and a Replicate operand of a
computation that differs between the ranks of a mesh dimension (its output there is Shard or
Partial) gets its gradient summed over that dimension (_sync_grad). So the gradient of every
DTensor, kept as its piece, is laid out as the DTensor itself (Partial's as Replicate).

Operators without a rule run on the whole tensor: their DTensor operands are made Replicate and
the result is a Replicate DTensor (correct, at the price of the gathers). A plain tensor beside
DTensors is refused as torch refuses it (one element excepted, taken as Replicate).

This module holds the mode, the naming of the routed function, the passthrough of local calls
and properties, and the table from names to rules; the rules are in _sharding_rules.py
(elementwise, reductions, matmul, views), _sharding_rules_shape.py (cat, split, indexing, ...),
_sharding_rules_norm.py (norms), _sharding_rules_loss.py (pointwise losses, cosine_similarity,
pairwise_distance, einsum), _sharding_rules_setitem.py (__setitem__) and
_sharding_rules_nn.py (nn.functional), the helpers and the fallback they share in
_dispatch_utils.py.
"""

import contextlib
import threading

from ... import _C, overrides
from . import _api
from ._api import DTensor, Replicate, _StridedShard
from ._dispatch_utils import _fallback, _is_inplace, _orig, _wrap
from ._sharding_rules import (
    _ELEMENTWISE,
    _elementwise,
    _matmul,
    _permute,
    _reduction,
    _reshape,
    _transpose,
    _unsqueeze,
)
from ._sharding_rules_foreach import rules as _foreach_rules
from ._sharding_rules_loss import RULES as _LOSS_RULES
from ._sharding_rules_nn import (
    _ALONG_DIM,
    _along_dim,
    _cross_entropy,
    _cross_entropy_kernel,
    _dropout,
    _embedding,
    _layer_norm,
    _sdpa,
    _softmax,
)
from ._sharding_rules_norm import RULES as _NORM_RULES
from ._sharding_rules_setitem import RULES as _SETITEM_RULES
from ._sharding_rules_shape import RULES as _SHAPE_RULES

_tls = threading.local()  # per thread: the flags of mode_flag
_MODE = None


class _DTensorMode(overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not any(issubclass(t, _api._DTensorBase) for t in types):
            return func(*args, **kwargs)
        return dispatch(func, args, kwargs)


_activating = threading.Lock()


def activate():
    """Puts the DTensor mode at the bottom of every thread's mode stack (once; it stays), so a
    DTensor computes as one in threads that never built one, and registers DTensor with ember's
    guards (_foreign_hook)."""
    global _MODE
    if _MODE is not None:
        return
    with _activating:
        if _MODE is None:
            mode = _DTensorMode()
            overrides._enter_outermost(mode)
            _MODE = mode
            mask = 0
            for cls in (DTensor, _api._dtensor_parameter_class()):
                mask |= 1 << _C._set_foreign(cls, _foreign_hook)
            _guard_kernels(mask)


# ember._C._nn kernels that nn.functional's Python functions call with the leading arguments
# of the public function of that name, so that function's rule fits them
_NN_SAME_CALL = frozenset(
    "softmax log_softmax gelu silu mish elu selu celu leaky_relu hardtanh relu6 softplus "
    "hardswish hardsigmoid softsign tanhshrink softshrink hardshrink threshold glu".split()
)


def _guard_kernels(mask):
    """Guards ember._C's and ember._C._nn's kernels for DTensor only: a Python function of
    ember kept before any mesh existed (`from ember.nn.functional import relu`, an activation
    stored on a model built first) calls its kernel by attribute, which then routes. A kernel
    that is not the binding behind ember's function of its name, or takes other arguments than
    the public function, routes under a name with no rule (the fallback on whole tensors)."""
    from ..._ops.foreign_guards import guard_kernels

    ember = _api._lib()

    def root_name(name, fn):
        front = getattr(ember, name, None)
        chain, seen = front, 0
        while chain is not None and seen < 8:
            if chain is fn:
                return name
            chain, seen = getattr(chain, "__wrapped__", None), seen + 1
        return "_C." + name

    guard_kernels(_C, mask, root_name, also=("broadcast_tensors",))
    guard_kernels(_C._nn, mask, lambda n, fn: n if n in _NN_SAME_CALL else "_C._nn." + n)


def _foreign_hook(fn, args, kwargs):
    """A guarded function's call with a DTensor among its arguments (Note [Foreign tensors] in
    python/src/guard_object.h): a reference taken before the routing wrappers were installed
    (`from ember import relu` at the top of a program, `Tensor.sum` kept in a variable) reaches
    the modes as the routed function would, as torch's C++ entry checks for subclasses. Inside
    the DTensor mode's own handler (the mode is off there) the binding runs on the local piece,
    which is what the rules call it for."""
    if not any(m is _MODE for m in overrides._stack()):
        return NotImplemented
    return overrides._route(fn, args, kwargs)


# --- naming the routed function ---------------------------------------------------------------

_PROPS = {}


def _name(func):
    if getattr(func, "__name__", "") == "__get__" and isinstance(
        getattr(func, "__self__", None), property
    ):
        if not _PROPS:
            for n, v in vars(_C.Tensor).items():
                if isinstance(v, property):
                    _PROPS[id(v)] = n
            for owner, n, v in overrides._patches:
                if owner is _C.Tensor and isinstance(v, property):
                    _PROPS[id(v)] = n
        return "prop:" + _PROPS.get(id(func.__self__), "?")
    return getattr(func, "__name__", "")


# --- passthrough and properties -----------------------------------------------------------

_SELF_RETURNING = {"requires_grad_", "retain_grad", "share_memory_"}
_LOCAL = {
    "backward",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "data_ptr",
    "element_size",
    "is_contiguous",
    "is_floating_point",
    "is_complex",
    "get_device",
    "untyped_storage",
    "storage_offset",
    "is_shared",
    "is_pinned",
    "type",
    # torch reads a scalar from the local piece as it is (a Partial's own addend: its
    # _local_scalar_dense has no sharding rule and no redistribution)
    "item",
    "__float__",
    "__int__",
    "__index__",
    "__bool__",
}


def _local_call(func, name, args, kwargs):
    self = args[0]
    rest = [a._local_tensor if isinstance(a, DTensor) else a for a in args[1:]]
    kw = {k: (v._local_tensor if isinstance(v, DTensor) else v) for k, v in kwargs.items()}
    if name == "type" and (rest or kw):
        return _fallback(func, name, args, kwargs)
    out = func(self._local_tensor, *rest, **kw)
    return self if name in _SELF_RETURNING else out


def _prop(func, name, args, kwargs):
    x = args[0]
    if name in ("prop:T", "prop:mT"):
        return _transpose(func, name, args, kwargs)
    if name == "prop:data":
        return _wrap(x._local_tensor.detach(), x._mesh, x._placements, x._shape)
    if name in ("prop:real", "prop:imag", "prop:H", "prop:mH"):
        return _fallback(func, name, args, kwargs)
    return func(x._local_tensor)


_RULES = {}


def _register():
    for n in _ELEMENTWISE:
        _RULES[n] = _elementwise
    for n in ("sum", "mean", "amax", "amin", "max", "min", "prod", "any", "all", "count_nonzero"):
        _RULES[n] = _reduction
    for n in ("mm", "matmul", "bmm", "__matmul__", "__rmatmul__", "linear", "addmm"):
        _RULES[n] = _matmul
    for n in ("softmax", "log_softmax"):
        _RULES[n] = _softmax
    for n in _ALONG_DIM:
        _RULES[n] = _along_dim
    _RULES["layer_norm"] = _layer_norm
    _RULES["rms_norm"] = _layer_norm
    _RULES["dropout"] = _dropout
    for n in ("cross_entropy", "nll_loss"):
        _RULES[n] = _cross_entropy
        _RULES[f"_C._nn.{n}"] = _cross_entropy_kernel
    _RULES["embedding"] = _embedding
    _RULES["scaled_dot_product_attention"] = _sdpa
    for n in ("transpose", "swapaxes", "swapdims", "t"):
        _RULES[n] = _transpose
    _RULES["permute"] = _permute
    _RULES["unsqueeze"] = _unsqueeze
    for n in ("view", "reshape", "view_as", "reshape_as", "flatten", "unflatten"):
        _RULES[n] = _reshape
    _RULES.update(_SHAPE_RULES)
    _RULES.update(_NORM_RULES)
    _RULES.update(_LOSS_RULES)
    _RULES.update(_SETITEM_RULES)
    _RULES.update(_FOREACH)
    for n in _LOCAL | _SELF_RETURNING:
        _RULES[n] = _local_call


def _foreach_names():
    from ..._ops import foreach

    return foreach.__all__


_FOREACH = _foreach_rules(_foreach_names())
_register()
# the rules that keep a _StridedShard operand as it is (the others get it gathered)
_KEEPS_STRIDED = {_elementwise, _local_call, *_FOREACH.values()}


@contextlib.contextmanager
def mode_flag(name):
    """Turns this thread's flag `name` on inside the block (nesting counts): "implicit" (plain
    tensors beside DTensors taken as Replicate: experimental.implicit_replication, and the
    targets under parallel.loss_parallel) and "loss_parallel"."""
    setattr(_tls, name, getattr(_tls, name, 0) + 1)
    try:
        yield
    finally:
        setattr(_tls, name, getattr(_tls, name) - 1)


def flag_on(name):
    return getattr(_tls, name, 0) > 0


def _check_no_plain_tensors(name, values):
    """torch refuses a plain tensor beside DTensors, except one element (taken as Replicate)."""
    if flag_on("implicit"):
        return
    for v in values:
        if isinstance(v, (list, tuple)):
            _check_no_plain_tensors(name, v)
        elif isinstance(v, _C.Tensor) and not isinstance(v, _api._DTensorBase) and v.numel() != 1:
            raise RuntimeError(
                f"{name}: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor "
                "to DTensor before calling distributed operators!"
            )


def dispatch(func, args, kwargs):
    """Computes func(*args, **kwargs) where some argument is a DTensor."""
    name = _name(func)
    if name.startswith("prop:"):
        return _prop(func, name, args, kwargs)
    # copy_ of a whole plain tensor into a DTensor keeps its piece (how load_state_dict fills
    # sharded parameters from a full state dict; torch refuses it)
    if name not in _LOCAL and name not in _SELF_RETURNING and name != "copy_":
        _check_no_plain_tensors(name, args)
        _check_no_plain_tensors(name, kwargs.values())
    if name == "tolist":  # torch's reads a plain tensor's data and refuses every subclass
        raise RuntimeError(
            f".tolist() is not supported for tensor subclasses, got {args[0].__class__.__name__}"
        )
    if name == "type_as":
        return _elementwise(_orig("to", _C.Tensor), "to", (args[0], args[1].dtype), {})
    rule = _RULES.get(name)
    if (
        rule is None
        or not isinstance(args[0] if args else None, DTensor)
        and rule
        in (
            _reduction,
            _softmax,
            _along_dim,
            _layer_norm,
            _dropout,
            _transpose,
            _permute,
            _unsqueeze,
            _reshape,
            _local_call,
        )
    ):
        return _fallback(func, name, args, kwargs)
    if rule not in _KEEPS_STRIDED and _has_strided(args, kwargs):
        if _is_inplace(name) or name == "__setitem__":
            raise NotImplementedError(
                f"{name}: in place on a DTensor with _StridedShard placements; redistribute it "
                "first"
            )
        args, kwargs = _unstride(args), {k: _unstride(v) for k, v in kwargs.items()}
    return rule(func, name, args, kwargs)


def _strided(v):
    return isinstance(v, DTensor) and any(isinstance(p, _StridedShard) for p in v._placements)


def _has_strided(args, kwargs):
    for v in (*args, *kwargs.values()):
        if _strided(v) or isinstance(v, (list, tuple)) and any(_strided(x) for x in v):
            return True
    return False


def _unstride(v):
    """v with its _StridedShard mesh dims gathered (Replicate): the rules that move or cut
    dims reason about plain Shard layouts; the elementwise, foreach and local ones keep it."""
    if _strided(v):
        pl = [Replicate() if isinstance(p, _StridedShard) else p for p in v._placements]
        return v.redistribute(v._mesh, pl)
    if isinstance(v, (list, tuple)):
        return type(v)(_unstride(x) for x in v)
    return v


__all__ = []
_ = _api
