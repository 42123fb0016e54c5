"""Forward-mode tangents of an op while other forward levels are active outside the one handling
it (ember.func's jvp of jvp, jacfwd of jacfwd).

Note [Nested forward levels]: a level's handler runs with its own mode off, so every op it runs
reaches the levels outside it, which differentiate those ops in turn. The single-level fast paths
of forward_ad cannot serve there: they call a backward node directly or detach inputs, and the
outer levels would not see that. Here the derivative is built from ops and autograd.grad calls
the outer levels do see:

- elementwise ops: f'(x) = autograd.grad(f(x), x, ones) with x an alias keeping the outer
  tangents, so the outer levels give f'(x) its tangent f''(x)·s (forward-over-reverse), and the
  tangent f'(x)·t is a product they differentiate as any other;
- every other op: J·t = ∇ᵤ<Jᵀu, t> (the op's backward is linear in u), the last gradient taken
  with respect to u, the op's inputs and t together, so that the outer levels' rule for
  autograd.grad (forward_ad._grad_with_tangents, exact when every tensor carrying their tangents
  is among the inputs) gives J·t its tangent.
"""

from .._C import Tensor


def elementwise(func, args, kwargs, tangents):
    """The tangent of a one-tensor elementwise op as f'(x)·t; None if the op is not one."""
    from .._ops.creation import ones_like, zeros_like
    from ._engine import _grad as grad
    from .forward_ad import _attach, _elementwise_input, _requires_grad_alias
    from .grad_mode import enable_grad

    dual = _elementwise_input(args, kwargs, tangents)
    if dual is None:
        return None
    x, t = dual
    batched = type(x).__name__ == "BatchedTensor"  # batched by vmap: f' on the physical tensor
    if batched:
        from ..func import _vmap_ad

        if _vmap_ad.outer_logical(args, kwargs, tangents):
            batched = False  # outer levels inside the vmap: f' from logical ops they see
    base = x._v if batched else x
    with enable_grad():
        if not batched:
            xa = _requires_grad_alias(x)
        elif _keeps_graph(args, kwargs):
            xa = base.view_as(base)
        else:
            xa = base.detach().requires_grad_(True)
        ya = func(xa, *args[1:], **kwargs)
        if not isinstance(ya, Tensor) or tuple(ya.shape) != tuple(base.shape):
            return None
        if not ya.requires_grad:
            return None
        (d,) = grad([ya], [xa], [ones_like(ya)], create_graph=True, allow_unused=True)
    out = func(*args, **kwargs)
    if d is not None and batched:
        from ..func._vmap import BatchedTensor

        d = BatchedTensor(d, x._lv)
    _attach(out, [zeros_like(out) if d is None else d * t])
    return out


def generic(func, name, args, kwargs, tangents, inplace, prepare=None, ones=None):
    """(output on aliases, tangents) as _forward_generic._generic_tangents, visible to outer levels.
    `prepare(a)` maps each dual input and its tangent before they become leaves, `ones(o)` makes
    the cotangent u of an output (vmap's logical variant, _vmap_ad.generic_logical, passes
    both)."""
    from .._ops.creation import ones_like
    from ._engine import _grad as grad
    from ._forward_generic import _tangent_dot, _tangents_on_leaves
    from .forward_ad import _hidden, _requires_grad_alias

    keep = _keeps_graph(args, kwargs)
    ones = ones_like if ones is None else ones

    def fresh(a):
        if prepare is not None:
            a = prepare(a)
        y = _requires_grad_alias(a)
        return a.view_as(a) if y is a else y  # already requires grad: a new leaf-like alias

    def new_leaf(a, t, target):
        return fresh(a), fresh(t)

    def jv(diff, leaves, leaf_tangents):
        us = [ones(o).requires_grad_(True) for o in diff]
        with _hidden("all"):  # plain graph work: only the last gradient needs tangents
            gs = grad(diff, leaves, us, create_graph=True, allow_unused=True)
            dot = _tangent_dot(gs, leaf_tangents, name)
        if dot is None or not dot.requires_grad:
            return [None] * len(us)
        wrt = us + leaves + leaf_tangents
        # reverse-over-forward: the tangent stays differentiable when the op's inputs are in a
        # reverse graph
        return list(grad([dot], wrt, create_graph=keep, allow_unused=True))[: len(us)]

    return _tangents_on_leaves(
        func, name, args, kwargs, tangents, inplace, new_leaf, jv, lambda a: a.clone(), False
    )


def generic_batched(func, name, args, kwargs, tangents, inplace):
    """_forward_generic's rule for tangents batched by vmap (jacfwd's basis, vmap over jvp),
    the primals batched or not: the op and its backward run once on the physical tensors; J·t
    for every tangent of the batch is one gradient of that op's node per element of the levels
    only the tangents carry (the primals' own batch elements are independent, so one gradient
    of their sum serves them all)."""
    from ..func._vmap import BatchedTensor, align, levels_of
    from ._forward_generic import _tangents_on_leaves
    from ._forward_rules import _flat_tensors

    keep = _keeps_graph(args, kwargs)
    phys = []
    # the primals' batch: a dual input not batched over all of it is expanded over it, so that
    # its gradient is per batch element (as grad inside vmap does)
    primal_lv = levels_of(*_flat_tensors(args, kwargs))

    def new_leaf(a, t, target):
        v = align(a, primal_lv, expand=True) if primal_lv else a
        if keep and v.requires_grad:
            p = v.view_as(v)  # in the reverse graph (reverse-over-forward)
        else:
            p = v.detach().requires_grad_(True)
        phys.append(p)
        return (BatchedTensor(p, primal_lv) if primal_lv else p), t

    def jv(diff, leaves, leaf_tangents):
        by_id = _batched_jv(diff, leaves, phys, leaf_tangents, keep, name)
        return [by_id[id(o)] for o in diff]

    return _tangents_on_leaves(
        func, name, args, kwargs, tangents, inplace, new_leaf, jv, detach=False
    )


def _batched_jv(diff, leaves, phys, leaf_tangents, keep, name):
    from .._ops.creation import ones_like, zeros_like
    from ..func._vmap import BatchedTensor, _size_of, align, levels_of
    from ._engine import _grad as grad
    from ._forward_generic import _tangent_dot

    diff_p = [o._v if type(o) is BatchedTensor else o for o in diff]
    us = [ones_like(p).requires_grad_(True) for p in diff_p]
    gs = grad(diff_p, phys, us, create_graph=True, allow_unused=True)
    primal_lv = levels_of(*leaves, *diff)
    union = levels_of(*leaves, *diff, *leaf_tangents)
    extra = tuple(lv for lv in union if lv not in primal_lv)
    sizes = tuple(_size_of(lv) for lv in union)

    def term(k, g, t):
        leaf = leaves[k]
        gl = BatchedTensor(g, leaf._lv) if type(leaf) is BatchedTensor else g
        prod = align(gl, union, expand=True) * align(
            t,
            union,
            rank=g.dim() - len(leaf._lv if type(leaf) is BatchedTensor else ()),
            expand=True,
        )
        return prod.reshape(sizes + (-1,)).sum(-1)

    dot = _tangent_dot(gs, leaf_tangents, name, term)
    if dot is None or not dot.requires_grad:
        return {id(o): None for o in diff}
    qpos = [union.index(lv) for lv in extra]
    ppos = [k for k in range(len(union)) if k not in qpos]
    nq = 1
    for lv in extra:
        nq *= _size_of(lv)
    dq = dot.permute(qpos + ppos).reshape(nq, -1).sum(-1) if union else dot.reshape(1)
    rows = [
        grad([dq[i]], us, retain_graph=True, create_graph=keep, allow_unused=True)
        for i in range(nq)
    ]
    by_id = {}
    for k, (o, p) in enumerate(zip(diff, diff_p)):
        olv = o._lv if type(o) is BatchedTensor else ()
        col = [zeros_like(p) if r[k] is None else r[k] for r in rows]
        v = _stack()(col)  # [nq, *olv sizes, *logical]
        v = v.reshape(tuple(_size_of(lv) for lv in extra) + tuple(v.shape[1:]))
        order = extra + olv  # the physical order now; BatchedTensor wants levels ascending
        want = tuple(sorted(order))
        if want != order:
            perm = [order.index(lv) for lv in want]
            v = v.permute(perm + list(range(len(order), v.dim())))
        by_id[id(o)] = BatchedTensor(v, want) if want else v
    return by_id


def _keeps_graph(args, kwargs):
    """Whether the op's inputs are in a reverse graph that its tangent must stay part of."""
    from .. import _C
    from ._forward_rules import _flat_tensors

    return _C.is_grad_enabled() and any(t.requires_grad for t in _flat_tensors(args, kwargs))


def _stack():
    import ember

    return ember.stack
