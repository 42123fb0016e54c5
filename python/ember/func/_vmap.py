"""vmap by batching rules: a BatchedTensor holds one physical tensor whose leading dimensions are
the batch dimensions of the active vmap levels; every ember operation on it reaches a rule (through
an ember.overrides function mode) that runs the operation once on the physical tensor.

Note [vmap levels]: each vmap call gets a level (a number growing with nesting). A BatchedTensor
carries `_lv`, the ascending tuple of levels it is batched over, and `_v`, the physical tensor
whose first len(_lv) dimensions are those levels' batch dimensions, in the same order; the rest
are the logical dimensions the user's function sees. A rule lines its arguments up on the union
of their levels (size-1 dimensions where an argument is not batched, so broadcasting fills them),
calls the ember function on the physical tensors and wraps the result. Nesting needs no recursion:
a tensor batched by two vmaps is one physical tensor with two leading batch dimensions.

Note [vmap and autograd]: rules run ordinary ember operations on the physical tensors, so the
autograd tape records them as for any program. grad/vjp inside vmap expand their differentiated
inputs over every active level before calling the function, so each batch element has its own
copy of an unbatched parameter and the physical backward pass yields per-example gradients
(what torch.func computes with a batched backward). A vjp_fn called under a vmap level newer than
its vjp (jacrev's rows) runs one physical backward pass per element of the newer levels over the
graph the vjp recorded (_vmap_ad.backward_rows): ember's backward nodes are C++ and cannot be
batched after the fact, and running the function again at the newer level (what this did before)
ran it twice, drew its random numbers twice and needed a batching rule for every op it calls.
"""

import functools
import itertools
import threading

from .. import _C, autograd, overrides
from .._C import Tensor
from ..autograd import _engine
from ..autograd import forward_ad as _fwad
from ..autograd import function as _function
from ..autograd.forward_ad import _redispatch, _requires_grad_alias
from ..autograd.grad_mode import enable_grad
from . import _enclosing
from ._pytree import (
    _broadcast_dims,
    _check_out_dims,
    _mapped_inputs,
    _spec_pprint,
    _structure_error,
    _tree_flatten,
    _tree_unflatten,
)

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "BatchedTensor"]

_local = threading.local()
_level_ids = itertools.count(1)


class _Level:
    __slots__ = ("id", "size", "randomness")

    def __init__(self, id, size, randomness):
        self.id, self.size, self.randomness = id, size, randomness


def _levels():
    stack = getattr(_local, "levels", None)
    if stack is None:
        stack = _local.levels = []
    return stack


def _size_of(level):
    for lv in _levels():
        if lv.id == level:
            return lv.size
    raise RuntimeError(
        "vmap: a BatchedTensor escaped the vmap that created it; return tensors from the vmapped "
        "function instead of storing them elsewhere"
    )


class BatchedTensor:
    """BatchedTensor(value, levels)

    The tensor a vmapped function sees: `value` with its leading dimensions (one per entry of
    `levels`) hidden. `isinstance(x, ember.Tensor)` holds, as for torch's batched tensors."""

    __slots__ = ("_v", "_lv", "__weakref__")  # forward_ad keys its tangents by weak reference
    __torch_function__ = None  # ember.overrides treats it as a tensor-like type

    def __init__(self, value, levels):
        self._v = value
        self._lv = levels

    @property
    def __class__(self):
        return Tensor

    # -- logical metadata
    @property
    def shape(self):
        return self._v.shape[len(self._lv) :]

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[dim]

    def dim(self):
        return self._v.dim() - len(self._lv)

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        return iter(self.unbind(0))

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return self._v.device

    @property
    def layout(self):
        return self._v.layout

    @property
    def is_cuda(self):
        return self._v.is_cuda

    @property
    def requires_grad(self):
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._v.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def _version(self):
        return self._v._version

    @property
    def is_leaf(self):
        return self._v.is_leaf

    @property
    def grad_fn(self):
        return self._v.grad_fn

    @property
    def grad(self):
        return None

    @property
    def data(self):
        return BatchedTensor(self._v.data, self._lv)

    @property
    def T(self):
        return self.permute(*range(self.dim() - 1, -1, -1))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def is_floating_point(self):
        return self._v.is_floating_point()

    def is_complex(self):
        return self._v.is_complex()

    def element_size(self):
        return self._v.element_size()

    def get_device(self):
        return self._v.get_device()

    def is_contiguous(self, *args, **kwargs):
        return self._v.is_contiguous(*args, **kwargs)

    def stride(self, dim=None):
        """The logical dimensions' strides in the physical tensor (ember's *_like read them)."""
        s = tuple(self._v.stride())[len(self._lv) :]
        return s if dim is None else s[dim]

    def __repr__(self):
        return f"BatchedTensor(levels={self._lv}, value={self._v!r})"

    # -- what vmap cannot batch: torch's errors (float(), int() and complex() read one value
    # through item(); bool() is a branch on the value; tolist()/numpy() read storage that a
    # batched tensor does not have)
    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file a "
            "bug report."
        )

    def __bool__(self):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues ."
        )

    def _read_value(self, *args):
        return self.item()

    __int__ = __float__ = __complex__ = _read_value

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return self.item()

    def _no_storage(self, *args, **kwargs):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    tolist = numpy = _no_storage

    __hash__ = object.__hash__

    def __getattr__(self, name):
        # Tensor methods defined in Python after this module was imported (ember/__init__ adds
        # some): route them like the others, and remember the method on the class.
        value = vars(Tensor).get(name)
        if isinstance(value, property) and name.startswith("is_"):
            # flags of the storage (is_quantized, is_sparse, is_meta, ...): the physical tensor's,
            # which ember's own functions read before computing (F.relu reads is_quantized)
            return getattr(self._v, name)
        if value is None or name.startswith("__") or isinstance(value, (property, type)):
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        if isinstance(value, (staticmethod, classmethod)):
            return getattr(Tensor, name)
        method = _method(name, overrides.original(value))
        setattr(BatchedTensor, name, method)
        return method.__get__(self)


def _method(name, original):
    def method(self, *args, **kwargs):
        stack = overrides._stack()
        if stack and type(stack[-1]).__name__ == "_ForwardMode":
            # a forward level inside this vmap (vmap over jvp) sees the call first, as it sees
            # plain tensors' methods; it hands the call on to vmap's mode
            return overrides._route(original, (self, *args), kwargs)
        return _dispatch(original, (self, *args), kwargs)

    method.__name__ = name
    return method


# Every other Tensor method and operator goes to its batching rule.
_SKIP = set(vars(BatchedTensor)) | {"__init__", "__new__", "__repr__", "__str__", "__format__"}


def _bind_tensor_methods():
    """BatchedTensor's methods for Tensor's current ones; run again on the first vmap, after the
    package has put its Python methods and guards (ember/_ops/complex.py) on Tensor."""
    for name, value in list(vars(Tensor).items()):
        if name in _SKIP or isinstance(value, (property, type, staticmethod, classmethod)):
            continue
        if name.startswith("_") and name not in overrides._ROUTED_DUNDERS:
            continue
        if callable(value):
            setattr(BatchedTensor, name, _method(name, overrides.original(value)))


_bind_tensor_methods()

# BatchedTensor's own methods (metadata: size, dim, numel, ...), for Tensor's called on it
_OWN = {
    name: vars(BatchedTensor)[name]
    for name in _SKIP
    if not name.startswith("_") and callable(vars(BatchedTensor).get(name))
}


def _foreign_hook(fn, args, kwargs):
    from ._foreign import call

    return call(fn, args, kwargs)


# Every guard of the extension hands a call with a BatchedTensor to the hook before its binding
# (Note [Foreign tensors], python/src/guard_object.h; ember/func/_foreign.py routes it).
_C._set_foreign(BatchedTensor, _foreign_hook)


def _grad_of_batched(*args):
    from ._vmap_ad import autograd_grad

    return autograd_grad(*args)


def _check_user_grad(*args):
    from ._vmap_ad import check_user_grad

    check_user_grad(*args)


def transforms_active():
    """Whether a transform of ember.func runs now (torch's `_are_functorch_transforms_active`):
    a vmap, grad/vjp, or the forward level of a jvp/jacfwd. Every backward() asks: attribute
    reads only."""
    if getattr(_local, "levels", None) or getattr(_local, "depth", 0):
        return True
    return bool(_fwad._levels) and any(lv.transform for lv in _fwad._levels)


_engine._set_batched_grad_handler(
    BatchedTensor, _grad_of_batched, _check_user_grad, transforms_active
)


def _function_of_batched(*args):
    from ._vmap_function import apply

    return apply(*args)


_function._set_batched_apply(BatchedTensor, _function_of_batched)


def _is_batched(x):
    return type(x) is BatchedTensor


def _has_batched(args, kwargs):
    for a in itertools.chain(args, kwargs.values()):
        if type(a) is BatchedTensor:
            return True
        if type(a) in (list, tuple):
            for b in a:
                if type(b) is BatchedTensor:
                    return True
    return False


def _rule_name(func):
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return name


_rules = None  # the _batch_rules module, imported on first use (it needs the whole package)


def _load_rules():
    """The _batch_rules module, with the rules of _batch_rules_nn registered into its RULES."""
    global _rules
    if _rules is None:
        from . import (  # noqa: F401
            _batch_rules,
            _batch_rules_fft,
            _batch_rules_more,
            _batch_rules_nn,
            _batch_rules_rnn,
            _foreign,
        )

        _bind_tensor_methods()
        _foreign.install(_batch_rules)
        _rules = _batch_rules
    return _rules


def _dispatch(func, args, kwargs):
    rules = _load_rules()
    rule = rules.RULES.get(id(func))
    if not _has_batched(args, kwargs):
        if rule is not None and getattr(rule, "random", False):
            return _outside_vmap(rule, func, args, kwargs)
        return _outside_vmap(None, func, args, kwargs)
    if rule is None and args and type(args[0]) is BatchedTensor:
        own = _OWN.get(getattr(func, "__name__", None))
        if own is not None:  # Tensor.size(x), Tensor.dim(x): BatchedTensor answers itself
            return own(*args, **kwargs)
    if rule is None:
        raise RuntimeError(
            f"vmap: Batching rule not implemented for {rules.op_name(func)}. ember has no "
            "per-example fallback loop; express the function with operations that have batching "
            "rules, or move this call out of vmap."
        )
    return _outside_vmap(rule, func, args, kwargs)


def _outside_vmap(rule, func, args, kwargs):
    """rule(func, args, kwargs), or func(*args, **kwargs) without a rule, with the vmap mode
    switched off (as ember.overrides does for calls it routes, so the rule's own tensor calls
    are not routed back here) and func reaching the modes outside vmap: a forward-AD level of a
    jvp/jacfwd around the vmap would otherwise never see the call and drop its tangents."""
    stack = overrides._stack()
    mode = stack.pop() if stack and type(stack[-1]) is _VmapMode else None
    try:
        if stack:
            func = _redispatch(func)
        return rule(func, args, kwargs) if rule is not None else func(*args, **kwargs)
    finally:
        if mode is not None:
            stack.append(mode)


class _VmapMode(overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


# -- physical layout helpers (used by the rules)


def levels_of(*xs):
    """The sorted union of the levels of the BatchedTensors among xs."""
    out = ()
    for x in xs:
        if type(x) is BatchedTensor and x._lv != out:
            out = tuple(sorted(set(out) | set(x._lv))) if out else x._lv
    return out


# Tensor's own methods, taken before any mode patches the class: the layout helpers run on every
# batched op, and the patched forms would route each call through ember.overrides first.
_dim = vars(Tensor)["dim"]
_shape = vars(Tensor)["shape"].__get__


def _view_op(name):
    """Tensor's own view method `name`; while modes are active, Tensor's current (routing) one,
    so that a forward-AD level around the vmap sees the view (the aligned tensor would lose its
    tangent)."""
    own = vars(Tensor)[name]

    def call(v, *args):
        return (vars(Tensor)[name] if overrides._stack() else own)(v, *args)

    return call


_unsqueeze = _view_op("unsqueeze")
_reshape = _view_op("reshape")
_expand = _view_op("expand")


def logical_dim(x):
    return _dim(x._v) - len(x._lv) if type(x) is BatchedTensor else _dim(x)


def align(x, levels, rank=None, expand=False):
    """x's physical tensor with one leading dimension per level (size 1 where x is not batched
    over it, unless `expand`), its logical dimensions left-padded with 1s up to `rank`."""
    if type(x) is BatchedTensor:
        v, lv = x._v, x._lv
        if lv != levels:
            for i, level in enumerate(levels):
                if level not in lv:
                    v = _unsqueeze(v, i)
    else:
        v = x
        if levels:
            v = _reshape(v, (1,) * len(levels) + tuple(_shape(v)))
    nb = len(levels)
    if rank is not None and _dim(v) - nb < rank:
        shape = tuple(_shape(v))
        v = _reshape(v, shape[:nb] + (1,) * (rank - (len(shape) - nb)) + shape[nb:])
    if expand and nb:
        shape = tuple(_shape(v))
        want = tuple(_size_of(level) for level in levels)
        if shape[:nb] != want:
            v = _expand(v, want + shape[nb:])
    return v


def wrap(out, levels):
    """Physical results (a tensor or a sequence of them) back to BatchedTensors over levels."""
    if not levels:
        return out
    if isinstance(out, Tensor) and type(out) is not BatchedTensor:
        return BatchedTensor(out, levels)
    if isinstance(out, (tuple, list)):
        items = [wrap(o, levels) for o in out]
        if type(out) in (tuple, list):
            return type(out)(items)
        try:
            return type(out)(*items)
        except TypeError:
            return type(out)(items)
    return out


def first_order():
    """Whether the innermost grad transform running now wants first-order gradients only (its
    inputs did not require grad: nothing differentiates its result). Rules may then take
    routes whose backward is not differentiable again (Note [Per-example conv weight
    gradients] in _batch_rules_nn.py)."""
    if getattr(_local, "first_order", False):
        _local.first_order_taken = True
        return True
    return False


class _FirstOrder:
    """While a transform runs func: whether first-order gradients suffice, and the count of
    transforms running (an inner grad's result may be differentiated by an outer one, even when
    the inner one's own inputs do not require grad)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.prev = getattr(_local, "first_order", False)
        _local.first_order = self.value
        _local.depth = getattr(_local, "depth", 0) + 1
        self.prev_vmaps = getattr(_local, "grad_vmaps", -1)
        _local.grad_vmaps = len(_levels())
        _enclosing.transform_scope(1)

    def __exit__(self, *exc):
        _local.first_order = self.prev
        _local.depth -= 1
        _local.grad_vmaps = self.prev_vmaps
        _enclosing.transform_scope(-1)


def _inside_transform():
    return getattr(_local, "depth", 0) > 0


def grad_inside_innermost_vmap():
    """Whether the innermost grad transform (grad, vjp) runs inside the innermost vmap: then the
    BatchedTensors a function sees are tracked by that transform, as torch's GradTrackingTensors
    wrapping its batched tensors are, and autograd.grad of them has a meaning."""
    return getattr(_local, "grad_vmaps", -1) >= len(_levels()) > 0


def active_levels():
    return tuple(lv.id for lv in _levels())


# -- vmap


def _func_name(func):
    return getattr(func, "__name__", None) or type(func).__name__


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None) -> Callable

    func vectorized over dimension `in_dims` of its inputs: each ember operation inside runs once
    on the whole batch through its batching rule; results carry the batch at `out_dims`.
    `in_dims`/`out_dims` are ints, None (not mapped) or pytrees matching the inputs/outputs;
    `randomness` is 'error', 'different' or 'same'; `chunk_size` splits the batch into pieces."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    fname = _func_name(func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        leaves, spec, dims, size = _mapped_inputs(fname, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, fname, leaves, spec, dims, size, kwargs, out_dims, randomness)
        pieces = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            part = [lf if d is None else lf.narrow(d, start, n) for lf, d in zip(leaves, dims)]
            pieces.append(
                _run(func, fname, part, spec, dims, n, kwargs, out_dims, randomness, flat=True)
            )
        out_leaves, out_spec, odims = pieces[0]
        merged = []
        for k, (leaf, od) in enumerate(zip(out_leaves, odims)):
            if od is None:
                merged.append(leaf)
            else:
                from .. import cat

                merged.append(cat([p[0][k] for p in pieces], od))
        return _tree_unflatten(merged, out_spec)

    return wrapped


def _run(func, fname, leaves, spec, dims, size, kwargs, out_dims, randomness, flat=False):
    level = _Level(next(_level_ids), size, randomness)
    stack = _levels()
    modes = overrides._get_current_function_mode_stack()
    mode = None if modes and isinstance(modes[-1], _VmapMode) else _VmapMode()
    patched = None
    if mode is not None:
        mode.__enter__()
        if not any(isinstance(m, _VmapMode) for m in modes):  # the outermost vmap
            from . import _foreign

            _load_rules()
            patched = _foreign.patched_C()
            patched.__enter__()
    stack.append(level)
    _engine._transform_entered(1)
    try:
        inputs = [_batch_input(lf, d, level.id) for lf, d in zip(leaves, dims)]
        out = _callable(func)(*_tree_unflatten(inputs, spec), **kwargs)
        out_leaves, out_spec = _tree_flatten(out)
        _check_out_dims(out_dims, fname)
        odims = _broadcast_dims(out_dims, out_spec)
        if odims is None:
            raise _structure_error(
                f"vmap({fname}, ..., out_dims={out_dims})(<inputs>)",
                "out_dims",
                out_dims,
                out_spec,
                "outputs",
            )
        result = [_unbatch_output(o, d, level, fname) for o, d in zip(out_leaves, odims)]
    finally:
        stack.pop()
        _engine._transform_entered(-1)
        if patched is not None:
            patched.__exit__()
        if mode is not None:
            mode.__exit__(None, None, None)
    if flat:
        return result, out_spec, odims
    return _tree_unflatten(result, out_spec)


def _callable(func):
    """func itself, or, for an ember function or Tensor method passed directly (vmap(ember.dot),
    taken before the mode patched it), the routed form that reaches its batching rule."""
    routed = overrides.routed(func)
    if routed is not func:
        return routed
    if id(func) in _load_rules().RULES:
        return lambda *args, **kwargs: _dispatch(func, args, kwargs)
    return func


def _batch_input(leaf, d, level):
    if d is None:
        return leaf
    if type(leaf) is BatchedTensor:
        nb = len(leaf._lv)
        d = d % leaf.dim()
        return BatchedTensor(leaf._v.movedim(nb + d, nb), leaf._lv + (level,))
    return BatchedTensor(leaf.movedim(d, 0) if d else leaf, (level,))


def _unbatch_output(out, od, level, fname):
    if od is None:
        if type(out) is BatchedTensor and level.id in out._lv:
            raise ValueError(
                f"vmap({fname}, ..., out_dims=None): the function returned a tensor that is "
                "batched over the vmapped dimension; out_dims=None is only for outputs that do "
                "not depend on the mapped inputs"
            )
        return out
    if not isinstance(out, Tensor):
        raise ValueError(
            f"vmap({fname}, ...): `{fname}` must only return Tensors, got type {type(out)}. "
            "Did you mean to set out_dims= to None for output?"
        )
    n = out.dim() + 1
    if not -n <= od < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{n}, {n - 1}], but got {od})"
        )
    od %= n
    if type(out) is BatchedTensor:
        lv = out._lv
        if level.id in lv:
            pos = lv.index(level.id)
            rest = lv[:pos] + lv[pos + 1 :]
            v = out._v.movedim(pos, len(rest) + od)
            return BatchedTensor(v, rest) if rest else v
        nb = len(lv)
        v = out._v.unsqueeze(nb + od)
        shape = list(v.shape)
        shape[nb + od] = level.size
        return BatchedTensor(v.expand(*shape), lv)
    v = out.unsqueeze(od)
    shape = list(v.shape)
    shape[od] = level.size
    return v.expand(*shape)


# -- reverse-mode transforms that work inside vmap (Note [vmap and autograd])


def _argnums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for k in nums:
        if not -n <= k < n:
            raise RuntimeError(f"Got argnum={k}, but only {n} positional inputs")
    return tuple(k % n for k in nums)


def _phys(x):
    return x._v if type(x) is BatchedTensor else x


def _prepare_input(x, levels):
    """x expanded over `levels` (so every batch element owns a copy) and tracked by autograd,
    connected to x's own graph when x already requires grad (an enclosing transform)."""
    if not isinstance(x, Tensor):
        return x
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if not x.requires_grad:
        if not levels and type(x) is not BatchedTensor:
            return _enclosing.own_leaf(
                _requires_grad_alias(x)
            )  # keeps a forward-mode tangent (jvp of grad)
        if _vmap_ad().has_tangent(x):  # forward-over-reverse under vmap: keep the tangents
            return _vmap_ad().prepare_dual(x, levels)
        # A fresh leaf: the expanded view itself, so backward stops there (no sum over copies).
        x = BatchedTensor(x._v.detach(), x._lv) if type(x) is BatchedTensor else x.detach()
        v = _enclosing.own_leaf(align(x, levels, expand=True).requires_grad_(True))
    else:
        v = align(x, levels, expand=True)
        if levels and fwad_levels():  # the new wrapper keeps x's tangents (nested grads)
            return _vmap_ad().carry(x, BatchedTensor(v, levels))
    return BatchedTensor(v, levels) if levels else v


def _vmap_ad():
    from . import _vmap_ad

    return _vmap_ad


def fwad_levels():
    from ..autograd import forward_ad

    return forward_ad._levels


def _requires_grad(tree):
    """Whether tree's tensors belong to an enclosing transform: a graph or a forward tangent."""
    return any(
        isinstance(t, Tensor) and (t.requires_grad or _vmap_ad().has_tangent(t))
        for t in _tree_flatten(tree)[0]
    )


def _zeros_for(x):
    from .._ops.creation import zeros_like

    return zeros_like(_phys(x))


def _backward(outs, inputs, cotangents, create_graph, materialize=True):
    """Physical autograd.grad of outs (logical tensors) against inputs (prepared by
    _prepare_input) with cotangents; returns logical gradients batched like the inputs (zeros
    for inputs the outputs do not reach, None when not `materialize`)."""
    if fwad_levels():
        lv = _vmap_ad().dual_level_of(inputs, cotangents)
        if lv is not None:  # Note [Forward-over-reverse under vmap]
            return _vmap_ad().backward_dual(lv, outs, inputs, cotangents, create_graph, _backward)
    out_p, cot_p = [], []
    for o, c in zip(outs, cotangents):
        if not isinstance(o, Tensor) or not _phys(o).requires_grad:
            continue
        lv = levels_of(o, c)
        out_p.append(align(o, lv, expand=True))
        cot_p.append(align(c, lv, rank=logical_dim(o), expand=True).expand_as(out_p[-1]))
    in_p = [_phys(i) for i in inputs]
    if out_p:
        gs = autograd.grad(
            out_p, in_p, cot_p, retain_graph=True, create_graph=create_graph, allow_unused=True
        )
    else:
        gs = [None] * len(in_p)
    res = []
    for g, i, p in zip(gs, inputs, in_p):
        if g is None and not materialize:
            res.append(None)
            continue
        g = _zeros_for(i) if g is None else g
        if not create_graph:
            g = g.detach()
        res.append(BatchedTensor(g, i._lv) if type(i) is BatchedTensor else g)
    return res


def _captures_outer_graph(outs):
    if fwad_levels():
        # inside a forward level, inputs carrying tangents already make the result
        # differentiable (_requires_grad); the others keep the first-order route
        return False
    return _enclosing.captures_outer_graph(
        [_phys(t) for t in _tree_flatten(outs)[0] if isinstance(t, Tensor)]
    )


def _detached(tree):
    leaves, spec = _tree_flatten(tree)
    out = []
    for t in leaves:
        if type(t) is BatchedTensor:
            t = BatchedTensor(t._v.detach(), t._lv)
        elif isinstance(t, Tensor):
            t = t.detach()
        out.append(t)
    return _tree_unflatten(out, spec)


def grad_and_value(func, argnums=0, has_aux=False):
    """grad_and_value(func, argnums=0, has_aux=False) -> Callable

    Like grad, returning (gradient, value); works inside vmap (per-example gradients)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        outer = _inside_transform() or _requires_grad(args)
        levels = active_levels()
        grad_enabled = _C.is_grad_enabled()

        def run(first_order):
            enclosing = getattr(_local, "first_order_taken", False)
            _local.first_order_taken = False
            try:
                with _FirstOrder(first_order):
                    call = list(args)
                    for k in nums:
                        leaves, spec = _tree_flatten(args[k])
                        call[k] = _tree_unflatten([_prepare_input(t, levels) for t in leaves], spec)
                    out = overrides.routed(func)(*call, **kwargs)
                    # func may read a tensor of the enclosing autograd (a closure's parameter):
                    # the gradient stays differentiable with respect to it, as torch's does.
                    captures = not outer and grad_enabled and _captures_outer_graph(out)
                    return call, out, captures, _local.first_order_taken
            finally:
                _local.first_order_taken = enclosing or _local.first_order_taken

        with enable_grad():
            call, out, captures, took_first_order = run(not outer)
            if captures:
                outer = True
                if took_first_order:  # a rule took a first-order-only route: run differentiably
                    call, out, _, _ = run(False)
        with enable_grad(), _FirstOrder(not outer):
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}"
                )
            if out.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?"
                )
            inputs, specs = [], []
            for k in nums:
                leaves, spec = _tree_flatten(call[k])
                inputs += leaves
                specs.append((len(leaves), spec))
            from .._ops.creation import ones

            grads = _backward([out], inputs, [ones(tuple(out.shape), dtype=out.dtype)], outer)
        it = iter(grads)
        per_arg = tuple(_tree_unflatten([next(it) for _ in range(n)], sp) for n, sp in specs)
        g = per_arg[0] if isinstance(argnums, int) else per_arg
        if not outer:
            out = _detached(out)
            aux = _detached(aux)
        return (g, (out, aux)) if has_aux else (g, out)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """grad(func, argnums=0, has_aux=False) -> Callable

    The gradient of scalar-valued func with respect to the argnums inputs; works inside vmap
    (per-example gradients) and nests."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """vjp(func, *primals, has_aux=False) -> (output, vjp_fn) or (output, vjp_fn, aux)

    func(*primals) and a function mapping cotangents of the output to cotangents of the primals;
    vjp_fn may be vmapped (jacrev does)."""
    outer = _inside_transform() or _requires_grad(primals)
    levels = active_levels()
    grad_enabled = _C.is_grad_enabled()
    leaves, spec = _tree_flatten(primals)
    with enable_grad(), _FirstOrder(False):
        call_leaves = [_prepare_input(t, levels) for t in leaves]
        out = overrides.routed(func)(*_tree_unflatten(call_leaves, spec))
        aux = None
        if has_aux:
            out, aux = out
        outer = outer or (grad_enabled and _captures_outer_graph(out))
    out_leaves, out_spec = _tree_flatten(out)

    def vjp_fn(*cotangents):
        cot = cotangents[0] if len(cotangents) == 1 else cotangents
        cot_leaves, cot_spec = _tree_flatten(cot)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_spec_pprint(cot_spec)}, primal output: "
                f"{_spec_pprint(out_spec)}"
            )
        newer = set(levels_of(*cot_leaves)) - set(levels)
        with enable_grad(), _FirstOrder(False):
            if not newer:
                return tuple(
                    _tree_unflatten(
                        _backward(out_leaves, call_leaves, cot_leaves, True if outer else False),
                        spec,
                    )
                )
            # Batched cotangents over a newer level (jacrev's rows): one backward pass of the
            # graph the vjp recorded per element of the newer levels; func runs once.
            res = _vmap_ad().backward_rows(out_leaves, call_leaves, cot_leaves, levels, outer)
        return tuple(_tree_unflatten(res, spec))

    value = out if outer else _detached(out)
    if has_aux:
        return value, vjp_fn, (aux if outer else _detached(aux))
    return value, vjp_fn
