"""ember.autograd.forward_ad: forward-mode automatic differentiation with dual tensors.

Inside `with dual_level():`, `make_dual(x, t)` gives a tensor that carries the tangent `t` beside
its value; every differentiable op applied to dual tensors gives outputs carrying J·t, and
`unpack_dual(y)` returns `(primal, tangent)`. This is torch's API and nesting rule (one level at a
time; entering a second raises).

How tangents travel (see docs/ARCHITECTURE.md, "Forward-mode AD"):

- Entering a level pushes a function mode (ember.overrides), so every public op call reaches
  `_ForwardMode.__torch_function__`. A call without dual arguments runs untouched.
- Views and linear ops (view, reshape, transpose, select, slicing, split, cat, stack, sum, mean,
  clone, to, ...) apply the same op to the tangents: the tangent of a view is that view of the
  tangent, so an in-place op on a view updates its base's tangent, as in torch.
- Products (mul, matmul, mm, bmm, dot, einsum, linear, ...), add/sub/div and in-place arithmetic
  have explicit forward formulas in `_RULES`.
- Every other op takes its forward derivative from its reverse-mode formula, the one declared with
  the op in C++ (csrc/ember/ops, EMBER_DERIVATIVE): the op's backward B(u) = Jᵀu is linear in u,
  and differentiating <B(u), t> with respect to u gives J·t. The op runs once with graph-recording
  aliases of its dual inputs and the two small backward passes touch only that op's node. An op
  whose backward cannot be differentiated raises torch's NotImplementedError "Trying to use
  forward AD with <op> that does not support it ...".
- Integer and boolean outputs, and `detach`/`.data`/`*_like` results, carry no tangent.
- `autograd.grad` inside a level gives its results tangents too (forward-over-reverse, which
  `func.hessian` uses), and `autograd.Function` subclasses use their `jvp` staticmethod.

Tangents are held per level in a table keyed by the Python tensor object (weakly), and are all
dropped when the level exits.
"""

import collections
import threading
import weakref

from .. import _C
from .. import overrides as _overrides
from .._C import Tensor
from ..overrides import TorchFunctionMode
from . import _forward_linalg, _forward_nested
from ._forward_calls import _function_apply, _grad_with_tangents  # noqa: F401  (autograd uses)
from ._forward_generic import _generic_tangents
from ._forward_rules import (
    _ABS,
    _ARITH,
    _COMPLEX_INPLACE,
    _COMPLEX_SAFE,
    _ELEMENTWISE,
    _INPLACE_DUNDERS,
    _LINEAR,
    _MULTILINEAR,
    _NO_TANGENT,
    _PASS_THROUGH,
    _UNSUPPORTED,
    _VIEW_PROPERTIES,
    _arith_tangent,
    _complex_abs_tangent,
    _complex_dual,
    _conform,
    _flat_tensors,
    _is_diff,
    _is_float,
    _is_inplace,
    _linear_fn_tangent,
    _linear_tangent,
    _multilinear_tangent,
    _not_supported,
    _op_name,
    _out_tensors,
    _unsupported_error,
    _zeros_tangent,
)

__all__ = [
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "UnpackedDualTensor",
]


class UnpackedDualTensor(collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """UnpackedDualTensor(primal, tangent)

    What unpack_dual returns: the primal value (a view without the tangent) and the tangent
    (None when the tensor carries none at that level)."""


class _Level:
    def __init__(self, idx, transform=False):
        self.idx = idx
        self.transform = transform  # ember.func's jvp/jacfwd, not a dual_level block
        self.tangents = {}  # id(tensor) -> (weakref to the tensor, tangent)
        self.mode = None
        self.hidden = False  # while set, this level neither sees ops nor gives tangents

    def get(self, t):
        entry = self.tangents.get(id(t))
        if entry is None or entry[0]() is not t:
            return None
        return entry[1]

    def set(self, t, tangent):
        key = id(t)
        table = self.tangents

        def drop(_ref, key=key, table=table):
            entry = table.get(key)
            if entry is not None and entry[0] is _ref:
                del table[key]

        table[key] = (weakref.ref(t, drop), tangent)

    def discard(self, t):
        if self.get(t) is not None:
            del self.tangents[id(t)]


_levels = []  # the live levels, outermost first (dual_level allows one; ember.func nests them)
_local = threading.local()


def _visible():
    """The levels that see ops now, outermost first: a level's mode is off while it handles an
    op (ember.overrides pops it), so the ops its handler runs reach only the levels outside it,
    which differentiate them in turn (Note [Nested forward levels] in docs/ARCHITECTURE.md)."""
    if not _levels:
        return []
    from ..overrides import _stack

    modes = _stack()
    return [lv for lv in _levels if not lv.hidden and lv.mode in modes]


def _current():
    vis = _visible()
    return vis[-1] if vis else None


def _level_for(level):
    if level is None:
        return _current()
    for lv in _levels:
        if lv.idx == level:
            return lv
    return None


def _is_active():
    return bool(_visible())


class _hidden:
    """Runs the enclosed ember calls as if `lv` (default: the innermost visible level; "all":
    every level) were not active; the other levels still see them."""

    def __init__(self, lv=None):
        if lv == "all":
            self.lvs = list(_levels)
        else:
            lv = _current() if lv is None else lv
            self.lvs = [lv] if lv is not None else []

    def __enter__(self):
        self.prev = [lv.hidden for lv in self.lvs]
        for lv in self.lvs:
            lv.hidden = True

    def __exit__(self, *exc):
        for lv, prev in zip(self.lvs, self.prev):
            lv.hidden = prev


def _suspended():
    """Every level off for the enclosed calls (forward_ad's own bookkeeping)."""
    return _hidden("all")


def enter_dual_level():
    """enter_dual_level() -> int

    Starts a new forward AD level and returns its index; dual tensors made without an explicit
    level belong to it. Only one level can be active at a time."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _enter_level()


def _enter_level(transform=False):
    """A new level inside the active ones (ember.func's jvp and jacfwd nest this way, with
    `transform` set)."""
    lv = _Level(len(_levels), transform)
    lv.mode = _ForwardMode(lv)
    _levels.append(lv)
    lv.mode.__enter__()
    if len(_levels) == 1:
        _route_private_nn(True)
    return lv.idx


_nn_patches = []


def _route_private_nn(on):
    """Routes ember._C._nn (the kernels nn modules such as LSTM call directly) to the mode too,
    so that their outputs get tangents; public functions are routed by the mode itself."""
    from .. import overrides

    nn = _C._nn
    if on:
        for name, value in list(vars(nn).items()):
            if name.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            _nn_patches.append((name, value))
            setattr(nn, name, overrides._cached(value, overrides._function_wrapper))
    else:
        for name, value in _nn_patches:
            setattr(nn, name, value)
        _nn_patches.clear()


def exit_dual_level(*, level=None):
    """exit_dual_level(*, level=None) -> None

    Ends the forward AD level `level` (default: the current one); every tangent of that level is
    dropped."""
    lv = _levels[-1] if _levels else None
    if lv is None or (level is not None and level != lv.idx):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This "
            "is not supported."
        )
    _levels.pop()
    lv.tangents.clear()
    if not _levels:
        _route_private_nn(False)
    lv.mode.__exit__(None, None, None)


class dual_level:
    """dual_level()

    Context manager for a forward AD level: dual tensors made inside carry their tangents until
    the block ends, when every tangent of the level is dropped."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def make_dual(tensor, tangent, *, level=None):
    """make_dual(tensor, tangent, *, level=None) -> Tensor

    A view of `tensor` that carries `tangent` as its forward gradient at `level` (default: the
    current level). The tangent must have the primal's shape; both must be floating or complex."""
    lv = _level_for(level)
    if lv is None:
        if level is None:
            raise RuntimeError(
                "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                "enter_dual_level() first."
            )
        raise RuntimeError(f"make_dual: expected an active forward AD level; got level={level}")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(
            f"make_dual: expected tensor and tangent to be Tensors; got "
            f"{type(tensor).__name__} and {type(tangent).__name__}"
        )
    if not _is_diff(tensor):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not _is_diff(tangent):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            "Tensor, this is not supported. Tensor is of size "
            f"{_shape_text(tensor.shape)} while the given forward gradient is of size "
            f"{_shape_text(tangent.shape)}."
        )
    with _hidden(lv):
        dual = tensor.view_as(tensor)  # the other levels' tangents stay on the view
    lv.set(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """unpack_dual(tensor, *, level=None) -> UnpackedDualTensor

    The named tuple (primal, tangent) of `tensor` at `level` (default: the current level):
    primal is a view of `tensor` without the tangent, tangent is None if it carries none."""
    lv = _level_for(level)
    tangent = lv.get(tensor) if lv is not None and isinstance(tensor, Tensor) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _hidden(lv):
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def _tangent(t):
    lv = _current()
    return lv.get(t) if lv is not None else None


def _set_tangent(t, tangent):
    lv = _current()
    if lv is not None and isinstance(t, Tensor):
        lv.set(t, tangent)


def _detach_keeping(t):
    """t.detach() carrying t's tangents at the visible levels (detach drops them)."""
    vis = _visible()
    if type(t).__name__ == "BatchedTensor":  # vmap's: its physical tensor keeps its own tangents
        d = type(t)(_detach_keeping(t._v), t._lv)
    else:
        with _suspended():
            d = t.detach()
    for lv in vis:
        tan = lv.get(t)
        if tan is not None:
            lv.set(d, tan)
    return d


def _requires_grad_alias(x):
    """x as a tensor that requires grad, keeping x's tangent (detach would drop it)."""
    if x.requires_grad:
        return x
    return _detach_keeping(x).requires_grad_(True)


def _redispatch(func):
    """The routing wrapper of the original `func` a mode received: calling it hands the op to
    the modes outside the one handling it (the outer forward levels, vmap), where calling `func`
    itself would skip them."""
    wrappers = _overrides._wrappers
    entry = wrappers.get(id(func))
    if entry is not None and entry[0] is func:
        return entry[1]
    if getattr(func, "__name__", None) == "__get__":  # a property's getter
        prop = getattr(func, "__self__", None)
        entry = wrappers.get(id(prop))
        if entry is not None and entry[0] is prop:
            return entry[1].fget
    return func


def _handling():
    """The level whose handler is running (its tangents are the ones being computed)."""
    return getattr(_local, "handling", None) or _current()


class _ForwardMode(TorchFunctionMode):
    def __init__(self, level=None):
        self.level = level

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        lv = self.level
        if lv is None or lv.hidden:
            return _redispatch(func)(*args, **kwargs)
        prev = getattr(_local, "handling", None)
        _local.handling = lv
        try:
            return self._handle(lv, func, args, kwargs)
        finally:
            _local.handling = prev

    def _handle(self, lv, func, args, kwargs):
        tangents = {}
        if lv is not None:
            for t in _flat_tensors(args, kwargs):
                tan = lv.get(t)
                if tan is not None:
                    tangents[id(t)] = tan
        name = _op_name(func)
        func = _redispatch(func)
        if not tangents:
            return func(*args, **kwargs)
        if name.startswith("property:"):
            if name not in _VIEW_PROPERTIES:
                return func(*args, **kwargs)
            name = _VIEW_PROPERTIES[name]
        if name in _UNSUPPORTED and any(
            _is_float(t) and id(t) in tangents for t in _flat_tensors(args, kwargs)
        ):
            raise _unsupported_error(name)
        if name in _NO_TANGENT or name in _PASS_THROUGH:
            return func(*args, **kwargs)
        inplace = name not in ("__iter__", "__setitem__") and _is_inplace(name)
        if _complex_dual(args, kwargs, tangents, inplace or name == "__setitem__"):
            _check_complex_rule(name, inplace)
        with _hidden(lv):
            if name == "__iter__":
                parts = _outplace(_C.Tensor.unbind, "unbind", (args[0],), {}, tangents)
                return iter(parts)
            if name == "__setitem__":
                return _setitem(func, args, kwargs, tangents)
            if inplace:
                return _inplace(func, name, args, kwargs, tangents)
            if name in _ABS and args[0].is_complex():
                out = func(*args, **kwargs)
                _attach(out, [_complex_abs_tangent(args[0], tangents[id(args[0])])])
                return out
            out = _outplace(func, name, args, kwargs, tangents)
        if name not in _COMPLEX_SAFE and any(
            o is not None and o.is_complex() for o in _out_tensors(out)
        ):
            # the rules built on reverse formulas give no complex tangents: a zero tangent
            # downstream (polar(r, theta).real) would be silently wrong
            raise _not_supported(name)
        return out


def _check_complex_rule(name, inplace):
    """Raises torch's error for a call on complex dual tensors no complex rule covers (only the
    real-linear ops, products, quotients and abs have one), rather than carry a wrong tangent."""
    if inplace:
        ok = _INPLACE_DUNDERS.get(name, name[:-1]) in _COMPLEX_INPLACE
    else:
        ok = name in _COMPLEX_SAFE or name in _ABS or name == "__setitem__"
    if not ok:
        raise _not_supported(name)


def _has_batched(tangents):
    return any(type(t).__name__ == "BatchedTensor" for t in tangents.values())


def _batched_call(args, kwargs, tangents):
    """Whether vmap batches this op's tangents or its dual inputs (vmap over jvp)."""
    if _has_batched(tangents):
        return True
    return any(
        type(t).__name__ == "BatchedTensor" and id(t) in tangents
        for t in _flat_tensors(args, kwargs)
    )


def _generic_for(nested, batched, args, kwargs, tangents=None):
    if batched:
        from ..func import _vmap_ad

        if tangents is not None and _vmap_ad.outer_logical(args, kwargs, tangents):
            return _vmap_ad.generic_logical  # levels nested inside vmap
        return _forward_nested.generic_batched
    if nested or _needs_real_run(args, kwargs):
        # outer levels, or a reverse graph the tangent must stay in (reverse-over-forward):
        # the path whose derivative is built from differentiable ops
        return _forward_nested.generic
    return _generic_tangents


def _needs_real_run(args, kwargs):
    return _C.is_grad_enabled() and any(t.requires_grad for t in _flat_tensors(args, kwargs))


def _attach(out, tan_list):
    lv = _handling()
    for o, t in zip(_out_tensors(out), tan_list):
        if o is not None and t is not None and _is_diff(o):
            lv.set(o, _conform(t, o))


def _outplace(func, name, args, kwargs, tangents):
    if name in _LINEAR or name in _MULTILINEAR or name in _ARITH or name == "linear":
        out = func(*args, **kwargs)
        if not any(_is_diff(o) for o in _out_tensors(out) if o is not None):
            return out
        if name in _LINEAR:
            tan = _linear_tangent(func, name, args, kwargs, tangents)
        elif name in _MULTILINEAR:
            tan = _multilinear_tangent(func, args, kwargs, tangents)
        elif name == "linear":
            tan = _linear_fn_tangent(args, kwargs, tangents)
        else:
            tan = _arith_tangent(name, args, kwargs, out, tangents)
        if isinstance(out, Tensor):
            _attach(out, [tan])
        else:
            _attach(out, list(tan) if isinstance(tan, (list, tuple)) else [tan])
        return out
    if name in _forward_linalg.RULES and id(args[0]) in tangents:
        out = func(*args, **kwargs)
        _attach(out, _forward_linalg.RULES[name](args, kwargs, out, tangents))
        return out
    # Levels outside this one see the ops run here, or tangents batched by vmap (jacfwd): the
    # paths that build derivatives from ops (Note [Nested forward levels]).
    batched = _batched_call(args, kwargs, tangents)
    nested = batched or _current() is not None
    if name in _ELEMENTWISE:
        if nested:
            done = _forward_nested.elementwise(func, args, kwargs, tangents)
        else:
            done = _elementwise(func, args, kwargs, tangents)
        if done is not None:
            return done
    from .._ops.random import get_rng_state, set_rng_state

    real = _needs_real_run(args, kwargs) or nested
    state = get_rng_state()
    generic = _generic_for(nested, batched, args, kwargs, tangents)
    out, tans = generic(func, name, args, kwargs, tangents, inplace=False)
    if not any(_is_float(o) for o in _out_tensors(out) if o is not None):
        real = True  # nothing differentiable: the result must be the op's own, not an alias's
    if real:
        set_rng_state(state)
        out = func(*args, **kwargs)
    else:
        out = _detached(out)
    _attach(out, tans)
    return out


def _elementwise_input(args, kwargs, tangents):
    """(x, x's tangent) when the call's only tensor argument is its first, a floating dual
    tensor (the elementwise fast paths' case); None otherwise."""
    x = args[0] if args else None
    if not _is_float(x) or id(x) not in tangents:
        return None
    if sum(1 for t in _flat_tensors(args, kwargs) if isinstance(t, Tensor)) != 1:
        return None
    return x, tangents[id(x)]


def _elementwise(func, args, kwargs, tangents):
    """The tangent of a one-node elementwise op from its node; None if the op is not one."""
    from .grad_mode import enable_grad

    dual = _elementwise_input(args, kwargs, tangents)
    if dual is None:
        return None
    x, t = dual
    real = _needs_real_run(args, kwargs)
    with enable_grad():
        # With a reverse graph to keep (x requires grad), the op's own node is used, so the
        # tangent stays differentiable with respect to x (reverse-over-forward).
        src = x if real else x.detach().requires_grad_(True)
        out = func(src, *args[1:], **kwargs)
        node = out.grad_fn if isinstance(out, Tensor) else None
        if node is None or tuple(out.shape) != tuple(x.shape):
            return None
        edges = node.next_functions
        if len(edges) != 1 or edges[0][0] is None:
            return None
        expected = src.grad_fn
        if (expected is not None and edges[0][0] is not expected) or (
            expected is None and type(edges[0][0]).__name__ != "AccumulateGrad"
        ):
            return None  # a composite of several nodes: the generic path handles it
        (tangent,) = node(t)
    if not real:
        out = out.detach()
        if not (_C.is_grad_enabled() and t.requires_grad) and tangent is not None:
            tangent = tangent.detach()
    _attach(out, [tangent if tangent is not None else _zeros_tangent(out)])
    return out


def _detached(out):
    if isinstance(out, Tensor):
        return out.detach() if out.requires_grad else out
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return type(out)(*(_detached(o) for o in out))
    if isinstance(out, (list, tuple)):
        return type(out)(_detached(o) for o in out)
    return out


def _store_inplace(self, new_tangent, returned):
    lv = _handling()
    old = lv.get(self)
    if new_tangent is None:
        return
    new_tangent = _conform(new_tangent, self)
    if old is not None and tuple(old.shape) == tuple(self.shape):
        old.copy_(new_tangent)
        new_tangent = old
    else:
        lv.set(self, new_tangent)
    if isinstance(returned, Tensor) and returned is not self:
        lv.set(returned, new_tangent)


def _inplace(func, name, args, kwargs, tangents):
    self = args[0]
    base = _INPLACE_DUNDERS.get(name, name[:-1])
    if not _is_diff(self):
        return func(*args, **kwargs)
    if base == "copy":
        src = args[1] if len(args) > 1 else kwargs.get("src")
        ts = tangents.get(id(src))
        new = ts if ts is not None else _zeros_tangent(self)
        returned = func(*args, **kwargs)
        _store_inplace(self, new.expand(tuple(self.shape)).clone(), returned)
        return returned
    if base in ("add", "sub", "mul", "div"):
        other = args[1] if len(args) > 1 else kwargs.get("other")
        ta, tb = tangents.get(id(self)), tangents.get(id(other))
        if base == "mul":
            terms = []
            if ta is not None:
                terms.append(ta * other)
            if tb is not None:
                terms.append(self * tb)
            new = terms[0] if len(terms) == 1 else terms[0] + terms[1]
            returned = func(*args, **kwargs)
        elif base == "div" and kwargs.get("rounding_mode") is None:
            returned = func(*args, **kwargs)  # self now holds the quotient
            new = ta if ta is not None else None
            if tb is not None:
                new = -(self * tb) if new is None else new - self * tb
            new = new / other
        elif base in ("add", "sub"):
            alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
            coef = alpha if base == "add" else -alpha
            new = ta
            if tb is not None:
                term = tb if coef == 1 else tb * coef
                new = term if new is None else new + term
            returned = func(*args, **kwargs)
        else:
            returned = func(*args, **kwargs)
            new = _zeros_tangent(self)
        _store_inplace(self, new, returned)
        return returned
    from .._ops.random import get_rng_state, set_rng_state

    state = get_rng_state()
    batched = _batched_call(args, kwargs, tangents)
    generic = _generic_for(batched or _current() is not None, batched, args, kwargs, tangents)
    _, tans = generic(func, name, args, kwargs, tangents, inplace=True)
    set_rng_state(state)
    returned = func(*args, **kwargs)
    _store_inplace(self, tans[0] if tans else None, returned)
    return returned


def _setitem(func, args, kwargs, tangents):
    self, index, value = args[0], args[1], args[2]
    result = func(*args, **kwargs)
    if not _is_diff(self):
        return result
    lv = _handling()
    ts = lv.get(self)
    if ts is None:
        ts = _zeros_tangent(self)
        lv.set(self, ts)
    tv = tangents.get(id(value)) if isinstance(value, Tensor) else None
    ts[index] = tv if tv is not None else 0
    return result
