"""ember.func's forward-mode transforms: jvp, jacfwd, hessian (forward-over-reverse), linearize.

All run on ember.autograd.forward_ad: jvp makes its primals dual in a level of its own and reads the
outputs' tangents; jacfwd is vmap over jvp, the batch being the basis of the inputs' tangent
space (one jvp per column where that cannot run); hessian is jacfwd of a reverse-mode Jacobian
whose autograd.grad results carry tangents. The transforms nest, each in a level of its own
(Note [Nested forward levels]); a jacfwd nested in another takes its Jacobian by rows where that
pays (jacfwd's nested case)."""

import threading

from .. import _C, autograd, overrides
from .._C import Tensor
from .._ops.creation import zeros, zeros_like
from .._ops.random import get_rng_state, set_rng_state
from ..autograd import forward_ad as fwad
from ..autograd.grad_mode import enable_grad
from ..overrides import routed
from . import _enclosing
from ._jacrev import jacrev
from ._pytree import _tree_flatten, _tree_unflatten
from ._vmap import _argnums, active_levels, vmap

__all__ = ["jvp", "jacfwd", "hessian", "linearize"]


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in _leaves(v)]
    return [tree]


def _structure(tree):
    if isinstance(tree, (tuple, list)):
        return (type(tree), tuple(_structure(t) for t in tree))
    if isinstance(tree, dict):
        return (dict, tuple((k, _structure(v)) for k, v in tree.items()))
    return "*"


def _unflatten(tree, it):
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(_unflatten(t, it) for t in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_unflatten(t, it) for t in tree)
    if isinstance(tree, dict):
        return {k: _unflatten(v, it) for k, v in tree.items()}
    return next(it)


class _level:
    """A forward level of its own for one transform, inside any active ones (transforms nest:
    Note [Nested forward levels] in ember/autograd/_forward_nested.py)."""

    def __enter__(self):
        if _vmapped_jvp.depth and fwad._levels:
            # a transform inside jacfwd's vmapped jvp: its levels would see batched tangents,
            # which only the single-level paths handle; jacfwd goes by columns instead
            raise _NoBatchedJvp
        self.idx = fwad._enter_level(transform=True)
        _enclosing.transform_scope(1)

    def __exit__(self, *exc):
        _enclosing.transform_scope(-1)
        fwad.exit_dual_level(level=self.idx)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """jvp(func, primals, tangents, *, strict=False, has_aux=False) -> tuple

    Returns (func(*primals), J·tangents) (and the auxiliary output when has_aux) computed in
    forward mode: primals and tangents are tuples of the same structure."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
            "call f(*primals)."
        )
    if not isinstance(tangents, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should be valid "
            "to call f(*primals)."
        )
    if _structure(primals) != _structure(tangents):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure; got {len(_leaves(primals))} primals and {len(_leaves(tangents))} tangents"
        )
    with _level():
        return _jvp_in_level(func, primals, tangents, has_aux)


def _jvp_in_level(func, primals, tangents, has_aux):
    """jvp inside an active level (jacfwd enters one level for all its columns: entering a level
    installs the function mode, which costs milliseconds)."""
    func = routed(func)  # a public function taken before the level: its routing wrapper
    duals = [
        fwad.make_dual(p, t) if isinstance(p, Tensor) else p
        for p, t in zip(_leaves(primals), _leaves(tangents))
    ]
    out = overrides.routed(func)(*_unflatten(primals, iter(duals)))
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(
                "jvp(f, primals, tangents): output of function f should be a tuple: (output, "
                "aux) if has_aux is True"
            )
        out, aux = out
    flat = _leaves(out)
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                "jvp(f, primals, tangents): expected f(*primals) to return only tensors, got "
                f"unsupported type {type(o)}"
            )
    primal_outs, tangent_outs = [], []
    for o in flat:
        p, t = fwad.unpack_dual(o)
        primal_outs.append(p)
        tangent_outs.append(zeros_like(p) if t is None else t)
    fwad._current().tangents.clear()  # this call's tangents are read out
    if not _differentiable(primals, tangents, primal_outs):
        primal_outs = [fwad._detach_keeping(p) for p in primal_outs]
        tangent_outs = [fwad._detach_keeping(t) for t in tangent_outs]
    primal_tree = _unflatten(out, iter(primal_outs))
    tangent_tree = _unflatten(out, iter(tangent_outs))
    if has_aux:
        return primal_tree, tangent_tree, aux
    return primal_tree, tangent_tree


def _differentiable(primals, tangents, primal_outs):
    """Whether jvp's results stay in the enclosing autograd graph: its primals or tangents are
    in it, or func read a tensor of it from a closure or a module (Note [Enclosing graph])."""
    if any(isinstance(t, Tensor) and t.requires_grad for t in _leaves(primals) + _leaves(tangents)):
        return True
    if not _C.is_grad_enabled():
        return False
    phys = [p._v if type(p).__name__ == "BatchedTensor" else p for p in primal_outs]
    return _enclosing.captures_outer_graph(phys)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error", _columns=False):
    """jacfwd(func, argnums=0, has_aux=False, *, randomness='error') -> Callable

    The Jacobian of func with respect to the argnums inputs, in forward mode: one jvp per input
    element, so it suits functions with few inputs and many outputs. Each output leaf's Jacobian
    has shape output.shape + input.shape (a tuple over argnums when argnums is a tuple)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )

    def wrapper(*args):
        nums = _argnums(argnums, len(args))
        inputs = [args[k] for k in nums]
        for idx, x in enumerate(_leaves(inputs)):
            if isinstance(x, Tensor) and x.is_complex():
                raise RuntimeError(
                    "jacfwd: Expected all inputs to be real but received complex tensor at "
                    f"flattened input idx: {idx}"
                )
            if not isinstance(x, Tensor) or not x.is_floating_point():
                raise RuntimeError(
                    "jacfwd: expected the argnums inputs to be floating point tensors; got "
                    f"{getattr(x, 'dtype', type(x).__name__)}"
                )
        if not _columns and not fwad._levels and not active_levels():
            try:
                return _jacfwd_vmapped(func, args, nums, inputs, has_aux, randomness, argnums)
            except _NoBatchedJvp:
                pass  # an op without a batching rule: one jvp per column instead
        if fwad._levels and not has_aux and randomness == "error":
            # nested in another forward transform (jacfwd(jacfwd(f))): every column is a jvp
            # whose ops the outer level differentiates again, a row one backward pass; the
            # same matrix by rows when the output is a tensor with fewer elements than inputs
            n_in = sum(x.numel() for x in _leaves(inputs))
            try:
                return _jacrev_keeping_tangents(func, argnums, max_rows=n_in)(*args)
            except _PreferColumns:
                pass
        with _level():
            return _jacfwd_columns(func, args, nums, inputs, has_aux, randomness, argnums)

    return wrapper


class _NoBatchedJvp(Exception):
    pass


class _PreferColumns(Exception):
    """A Jacobian by rows would not pay (see jacfwd's nested case)."""


def _check_rows(out, max_rows):
    if max_rows is not None and (not isinstance(out, Tensor) or out.numel() > max_rows):
        raise _PreferColumns
    if not isinstance(out, Tensor):
        raise RuntimeError(f"hessian: expected func to return a Tensor; got {type(out).__name__}")


class _VmappedJvp(threading.local):
    depth = 0


_vmapped_jvp = _VmappedJvp()


def _jacfwd_vmapped(func, args, nums, inputs, has_aux, randomness, argnums):
    """jacfwd as torch computes it: vmap over jvp, the batch being the basis of the inputs'
    tangent space (randomness as vmap's). The primals stay unbatched; only tangents carry the
    batch (forward_ad computes their derivatives on the primals, then applies them to the
    batched tangents through vmap's rules)."""
    from .._ops.creation import eye

    in_leaves = [_leaves(a) for a in inputs]
    flat = [x for leaves in in_leaves for x in leaves]
    n = sum(x.numel() for x in flat)
    if n == 0:
        raise _NoBatchedJvp
    dtype = flat[0].dtype
    basis = eye(n, dtype=dtype)
    tangents, off = [], 0
    for x in flat:
        k = x.numel()
        tangents.append(basis[:, off : off + k].to(x.dtype).reshape((n, *x.shape)))
        off += k
    state = {}

    def push(*tans):
        it = iter(tans)
        tangent_args = tuple(
            _unflatten(args[k], it) if k in nums else None for k in range(len(args))
        )
        with _level():
            out, col, *rest = _jvp_args(func, args, nums, tangent_args, has_aux)
        state["out"], state["aux"] = out, (rest[0] if has_aux else None)
        return col

    _vmapped_jvp.depth += 1
    try:
        cols = vmap(push, randomness=randomness)(*tangents)
    except _NoBatchedJvp:
        raise
    except Exception as e:
        # vmap's randomness errors are jacfwd's (torch raises them too); any other failure of
        # the batched path (an op without a batching rule, a derivative that needs the
        # tangents unbatched) leaves the columns to compute one by one
        if "randomness" in str(e):
            raise
        raise _NoBatchedJvp from e
    finally:
        _vmapped_jvp.depth -= 1
    out = state["out"]
    out_leaves = _leaves(out)
    col_leaves = _leaves(cols)
    per_out = []
    for o, c in zip(out_leaves, col_leaves):
        c = c.movedim(0, -1) if c.dim() > 1 else c
        per_arg, off = [], 0
        for a, leaves in enumerate(in_leaves):
            jl = []
            for x in leaves:
                k = x.numel()
                jl.append(c[..., off : off + k].reshape(tuple(o.shape) + tuple(x.shape)))
                off += k
            per_arg.append(_unflatten(inputs[a], iter(jl)))
        per_out.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
    result = _unflatten(out, iter(per_out))
    return (result, state["aux"]) if has_aux else result


def _jacfwd_columns(func, args, nums, inputs, has_aux, randomness, argnums):
    func = routed(func)
    in_leaves = [_leaves(a) for a in inputs]
    state = get_rng_state() if randomness == "same" else None
    columns = [[[] for _ in leaves] for leaves in in_leaves]  # [arg][leaf] -> per element
    out = aux = None
    for a, leaves in enumerate(in_leaves):
        for li, x in enumerate(leaves):
            basis = zeros(x.numel(), dtype=x.dtype)
            for e in range(x.numel()):
                tangents = []
                for b, leaves_b in enumerate(in_leaves):
                    for lj, y in enumerate(leaves_b):
                        if a == b and li == lj:
                            v = basis.clone()
                            v[e] = 1
                            tangents.append(v.reshape(tuple(x.shape)))
                        else:
                            tangents.append(zeros_like(y))
                it = iter(tangents)
                tangent_args = tuple(
                    _unflatten(args[k], it) if k in nums else None for k in range(len(args))
                )
                if state is not None:
                    set_rng_state(state)
                out, col, *rest = _jvp_args(func, args, nums, tangent_args, has_aux)
                if has_aux:
                    aux = rest[0]
                columns[a][li].append(_leaves(col))
    if out is None:  # inputs without elements: run once for the output structure
        out, *rest = _call(func, args, has_aux)
        if has_aux:
            aux = rest[0]
    out_leaves = _leaves(out)
    # jac[o][a][l]: d(output leaf o)/d(input leaf l of argnum a)
    per_out = []
    for oi, o in enumerate(out_leaves):
        per_arg = []
        for a, leaves in enumerate(in_leaves):
            jl = []
            for li, x in enumerate(leaves):
                cols = [c[oi] for c in columns[a][li]]
                if cols:
                    j = _stack()(cols, -1).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    j = zeros(*(tuple(o.shape) + tuple(x.shape)), dtype=o.dtype)
                jl.append(j)
            per_arg.append(_unflatten(inputs[a], iter(jl)))
        per_out.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
    result = _unflatten(out, iter(per_out))
    return (result, aux) if has_aux else result


def _call(func, args, has_aux):
    out = overrides.routed(func)(*args)
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(
                "jacfwd(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
                "has_aux is True"
            )
        return out[0], out[1]
    return (out,)


def _jvp_args(func, args, nums, tangent_args, has_aux):
    primals = tuple(args[k] for k in nums)
    tangents = tuple(tangent_args[k] for k in nums)

    def inner(*ps):
        call = list(args)
        for k, p in zip(nums, ps):
            call[k] = p
        return overrides.routed(func)(*call)

    result = _jvp_in_level(inner, primals, tangents, has_aux)
    for idx, o in enumerate(_leaves(result[0])):
        if o.is_complex():  # torch's jacfwd takes real outputs only
            raise RuntimeError(
                "jacfwd: Expected all outputs to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )
    return result


def _jacrev_keeping_tangents(func, argnums, max_rows=None):
    """A reverse-mode Jacobian whose result carries tangents inside a forward level; with
    `max_rows`, _PreferColumns when func's output is not a tensor of at most that many
    elements."""

    def wrapper(*args):
        nums = _argnums(argnums, len(args))
        if active_levels() or not all(isinstance(args[k], Tensor) for k in nums):
            # inside vmap, or pytree inputs: rows by vjp (grad-inside-vmap's backward)
            return _rows_in_vmap(func, args, nums, argnums, max_rows)
        with enable_grad():
            call = list(args)
            for k in nums:
                call[k] = fwad._requires_grad_alias(args[k])
                if call[k] is not args[k]:
                    _enclosing.own_leaf(call[k])
            out = overrides.routed(func)(*call)
            _check_rows(out, max_rows)
            inputs = [call[k] for k in nums]
            flat = out.reshape(-1)
            rows = [[] for _ in inputs]
            for i in range(flat.numel()):
                gs = autograd.grad(
                    flat[i], inputs, retain_graph=True, create_graph=True, allow_unused=True
                )
                for r, g, x in zip(rows, gs, inputs):
                    r.append(zeros_like(x) if g is None else g)
        jacs = []
        stack_ = _stack()  # the mode's wrapper, so that the rows' tangents are stacked too
        for r, x in zip(rows, inputs):
            j = stack_(r, 0) if r else zeros(0, *x.shape, dtype=x.dtype)
            jacs.append(j.reshape(tuple(out.shape) + tuple(x.shape)))
        return jacs[0] if isinstance(argnums, int) else tuple(jacs)

    return wrapper


def _rows_in_vmap(func, args, nums, argnums, max_rows=None):
    """_jacrev_keeping_tangents inside vmap (vmap(hessian(f))): one vjp, then a backward per
    output element, whose results get their tangents (Note [Forward-over-reverse under vmap])."""
    from ._vmap import vjp

    def partial(*diff):
        call = list(args)
        for k, d in zip(nums, diff):
            call[k] = d
        return overrides.routed(func)(*call)

    inputs = [args[k] for k in nums]
    out, vjp_fn = vjp(partial, *inputs)
    _check_rows(out, max_rows)
    n = out.numel()
    rows = []
    for i in range(n):
        e = zeros(n, dtype=out.dtype)
        e[i] = 1
        rows.append(vjp_fn(e.reshape(tuple(out.shape))))
    stack_ = _stack()
    jacs = []
    for k, x in enumerate(inputs):
        x_leaves, spec = _tree_flatten(x)
        per_leaf = []
        for li, xl in enumerate(x_leaves):
            col = [_tree_flatten(row[k])[0][li] for row in rows]
            j = stack_(col, 0) if col else zeros(0, *xl.shape, dtype=xl.dtype)
            per_leaf.append(j.reshape(tuple(out.shape) + tuple(xl.shape)))
        jacs.append(_tree_unflatten(per_leaf, spec))
    return jacs[0] if isinstance(argnums, int) else tuple(jacs)


def _stack():
    # ember.stack as the namespace holds it now: the active modes' wrapper, so that the
    # columns' tangents are stacked too (the binding itself is not in any namespace)
    import ember

    return ember.stack


def hessian(func, argnums=0):
    """hessian(func, argnums=0) -> Callable

    The Hessian of func with respect to the argnums inputs, forward-over-reverse (jacfwd of a
    reverse-mode Jacobian): shape output.shape + input.shape + input.shape."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """linearize(func, *primals) -> (Tensor, Callable)

    Returns (func(*primals), jvp_fn) where jvp_fn(*tangents) gives J·tangents at the primals."""
    out = overrides.routed(func)(*primals)
    detached = tuple(p.detach() if isinstance(p, Tensor) else p for p in primals)

    def jvp_fn(*tangents):
        if len(tangents) != len(primals):
            raise RuntimeError(
                f"linearize: expected {len(primals)} tangents, one per primal; got {len(tangents)}"
            )
        return jvp(func, detached, tuple(tangents))[1]

    return out, jvp_fn
