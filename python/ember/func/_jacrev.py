"""jacrev: the Jacobian by reverse mode, vmap over vjp's rows."""

import functools

from .. import overrides
from .._C import Tensor
from ..autograd.forward_ad import _tangent
from ._pytree import _tree_flatten, _tree_unflatten
from ._vmap import _argnums, vjp, vmap


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """jacrev(func, argnums=0, *, has_aux=False, chunk_size=None) -> Callable

    The Jacobian of func by reverse mode: output shape followed by input shape. The rows are
    computed together by vmap over vjp (`chunk_size` rows at a time when given)."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums(argnums, len(args))
        if not has_aux and any(
            isinstance(t, Tensor) and _tangent(t) is not None for t in _tree_flatten(args)[0]
        ):
            # Inside a forward-mode level (jacfwd(jacrev(f))): vmap's rows would drop tangents.
            from ._forward import _jacrev_keeping_tangents

            return _jacrev_keeping_tangents(func, argnums)(*args)

        def partial(*diff):
            call = list(args)
            for k, d in zip(nums, diff):
                call[k] = d
            return overrides.routed(func)(*call)

        out, vjp_fn, *rest = vjp(partial, *[args[k] for k in nums], has_aux=has_aux)
        aux = rest[0] if has_aux else None
        out_leaves, out_spec = _tree_flatten(out)
        from .._ops.creation import eye

        inputs = [args[k] for k in nums]
        results = []  # per output leaf: tuple of per-input jacobians
        for o in out_leaves:
            n = o.numel()
            basis = eye(n, dtype=o.dtype).reshape((n, *o.shape))
            others = [_zero_like_logical(p) for p in out_leaves]

            def row(v, o=o, others=others):
                cots = [v if q is o else z for q, z in zip(out_leaves, others)]
                return vjp_fn(_tree_unflatten(cots, out_spec))

            rows = vmap(row, chunk_size=chunk_size)(basis) if n else None
            jacs = []
            for k, x in enumerate(inputs):
                x_leaves, x_spec = _tree_flatten(x)
                r_leaves = [None] * len(x_leaves) if rows is None else _tree_flatten(rows[k])[0]
                js = []
                for xl, r in zip(x_leaves, r_leaves):
                    if r is None:
                        from .._ops.creation import zeros

                        js.append(zeros((*o.shape, *xl.shape), dtype=xl.dtype))
                    else:
                        js.append(r.reshape((*o.shape, *xl.shape)))
                jacs.append(_tree_unflatten(js, x_spec))
            results.append(jacs[0] if isinstance(argnums, int) else tuple(jacs))
        result = _tree_unflatten(results, out_spec)
        return (result, aux) if has_aux else result

    return wrapper


def _zero_like_logical(t):
    from .._ops.creation import zeros

    return zeros(tuple(t.shape), dtype=t.dtype)
