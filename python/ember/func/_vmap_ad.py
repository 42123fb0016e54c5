"""Forward-over-reverse under vmap: grad/vjp of dual tensors inside vmap, and autograd.grad of
BatchedTensors.

Note [Forward-over-reverse under vmap]: forward_ad keys a tangent by the Python tensor it belongs
to. A forward level outside a vmap (jvp(vmap(grad f))) sees the rules' physical ops, so its
tangents sit on physical tensors and autograd.grad of those (forward_ad._grad_with_tangents)
gives the gradients their tangents as without vmap. A forward level inside a vmap
(vmap(jvp(grad f)), vmap(hessian(f)): per-example Hessian-vector products) sees the logical ops,
so its tangents sit on BatchedTensors, which the physical autograd.grad never sees. For those,
the gradient's tangent is computed here at the logical level, with torch's identity for
r = Jᵀg: dr = ∇ₓ<r, t> + Jᵀ dg (the symmetry of second derivatives), where every gradient is
grad-inside-vmap's physical backward over per-example copies of the inputs, so each batch
element gets its own Hessian-vector product. The gradients are taken with that level hidden, so
the levels outside it (nested jacfwd, a forward level outside the vmap) differentiate them in
turn: the recursion goes from the innermost level carrying logical tangents outwards.
"""

from .._C import Tensor
from ..autograd import forward_ad as fwad
from ..autograd.grad_mode import enable_grad
from . import _enclosing
from ._vmap import BatchedTensor, align, levels_of


def logical_tangents(x):
    """[(level, tangent)] of the visible forward levels that key a tangent by x itself."""
    out = []
    for lv in fwad._visible():
        t = lv.get(x)
        if t is not None:
            out.append((lv, t))
    return out


def has_tangent(x):
    """Whether x, or the physical tensor of a BatchedTensor x, carries a forward tangent."""
    if not fwad._levels or not isinstance(x, Tensor):
        return False
    for lv in fwad._visible():
        if lv.get(x) is not None or (type(x) is BatchedTensor and lv.get(x._v) is not None):
            return True
    return False


def carry(src, dst, tangents=None):
    """dst gets src's logical tangents (those keyed by src) at every visible level."""
    for lv, t in logical_tangents(src) if tangents is None else tangents:
        lv.set(dst, t)
    return dst


def prepare_dual(x, levels):
    """grad-inside-vmap's input for a dual x that does not require grad: a fresh leaf expanded
    over `levels` (one copy per batch element), carrying x's tangents, logical and physical."""
    logical = logical_tangents(x)
    if type(x) is BatchedTensor:
        base = BatchedTensor(fwad._detach_keeping(x._v), x._lv)
    else:
        base = fwad._detach_keeping(x)
    v = align(base, levels, expand=True)  # routed views: physical tangents follow
    if v.requires_grad:  # align returned a tensor of the graph: alias it as a leaf
        v = fwad._detach_keeping(v)
    _enclosing.own_leaf(v.requires_grad_(True))
    return carry(x, BatchedTensor(v, levels) if levels else v, logical)


def dual_level_of(inputs, cotangents):
    """The innermost visible forward level keying a tangent by one of the (logical) inputs or
    cotangents, when any input is a BatchedTensor; None otherwise."""
    if not fwad._levels or not any(type(i) is BatchedTensor for i in inputs):
        return None
    for lv in reversed(fwad._visible()):
        for t in (*inputs, *cotangents):
            if isinstance(t, Tensor) and lv.get(t) is not None:
                return lv
    return None


def backward_dual(lv, outs, inputs, cotangents, create_graph, backward):
    """`backward(outs, inputs, cotangents, create_graph)` (grad-inside-vmap's physical backward,
    logical results) whose results carry their tangents at level lv (the Note above)."""
    from .._ops.creation import ones, zeros

    tin = [lv.get(i) for i in inputs]
    tgo = [lv.get(c) if isinstance(c, Tensor) else None for c in cotangents]
    with fwad._hidden(lv), enable_grad():
        res = backward(outs, inputs, cotangents, True)
        dot = None
        for r, t in zip(res, tin):
            if t is None:
                continue
            term = (r * t).sum()
            dot = term if dot is None else dot + term
        tans = [None] * len(inputs)
        if dot is not None and dot.requires_grad:
            tans = backward([dot], inputs, [ones((), dtype=dot.dtype)], True)
        if any(t is not None for t in tgo):
            gos = [
                t if t is not None else zeros(tuple(o.shape), dtype=o.dtype)
                for t, o in zip(tgo, outs)
            ]
            extra = backward(outs, inputs, gos, True)
            tans = [e if t is None else t + e for t, e in zip(tans, extra)]
        final = []
        for r, t in zip(res, tans):
            if t is None:
                t = zeros(tuple(r.shape), dtype=r.dtype)
            if not create_graph:
                r, t = _detached(r), _detached(t)
            lv.set(r, t)
            final.append(r)
    return final


def _detached(x):
    if type(x) is BatchedTensor:
        return BatchedTensor(fwad._detach_keeping(x._v), x._lv)
    return fwad._detach_keeping(x)


def check_user_grad(outputs, inputs, grad_outputs):
    """A user's autograd.grad with BatchedTensors among its arguments raises torch's error
    where torch's does: unless a grad transform runs inside the innermost vmap, a tensor
    batched by that vmap is not tracked by autograd (torch's BatchedTensor wrapper has no
    graph), so a batched output is one that does not require grad and a batched input one
    that is not differentiated. Batched grad_outputs alone are a batch of vectors for an
    unbatched graph (torch's vmap over autograd.grad), which autograd_grad computes."""
    from ._vmap import grad_inside_innermost_vmap

    if grad_inside_innermost_vmap():
        return
    for k, o in enumerate(outputs):
        if type(o) is BatchedTensor or (o.grad_fn is None and not o.requires_grad):
            raise RuntimeError(
                f"element {k} of tensors does not require grad and does not have a grad_fn"
            )
    if any(type(i) is BatchedTensor or not i.requires_grad for i in inputs):
        raise RuntimeError("One of the differentiated Tensors does not require grad")


def autograd_grad(outputs, inputs, grad_outputs, create_graph, allow_unused, materialize):
    """ember.autograd.grad called with BatchedTensors (inside vmap): the per-example gradients
    of grad-inside-vmap's physical backward, for inputs batched over every level of the
    outputs (a tensor created or prepared inside the vmap); for an unbatched graph and batched
    grad_outputs, one backward pass per batch element (backward_rows)."""
    from .._ops.creation import ones
    from ._vmap import _backward, _phys

    outs = list(outputs)
    ins = list(inputs)
    if grad_outputs is None:
        gos = [None] * len(outs)
    else:
        gos = list(grad_outputs)
    if not levels_of(*outs, *ins) and all(g is not None for g in gos):
        res = backward_rows(outs, ins, gos, (), create_graph, materialize=materialize)
        _check_used(res, allow_unused)
        return tuple(res)
    for k, (o, g) in enumerate(zip(outs, gos)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            gos[k] = ones(tuple(o.shape), dtype=o.dtype)
    want = levels_of(*outs, *gos)
    for i in ins:
        if not isinstance(i, Tensor) or not _phys(i).requires_grad:
            raise RuntimeError(
                "One of the differentiated Tensors does not require grad"
                if isinstance(i, Tensor)
                else f"grad: expected Tensors as inputs; got {type(i).__name__}"
            )
        have = i._lv if type(i) is BatchedTensor else ()
        if any(level not in have for level in want):
            raise RuntimeError(
                "vmap: autograd.grad of a batched output with respect to a tensor that is not "
                "batched over all of its vmap levels would sum over the batch; take per-example "
                "gradients with ember.func.grad inside vmap instead"
            )
    for o in outs:
        if not _phys(o).requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    res = _backward(outs, ins, gos, create_graph, materialize=materialize)
    _check_used(res, allow_unused)
    return tuple(res)


def _check_used(res, allow_unused):
    for k, r in enumerate(res):
        if r is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {k} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )


def backward_rows(outs, inputs, cotangents, levels, create_graph, materialize=True):
    """_backward for cotangents batched over levels newer than the graph's (`levels`): the
    newer levels' elements run one physical backward each over the same graph, stacked (None
    for an input no output reaches, unless `materialize`)."""
    from .. import autograd
    from ._vmap import _phys, _size_of, _zeros_for, active_levels, logical_dim

    now = active_levels()
    new = tuple(lv for lv in now if lv not in levels)
    sizes = tuple(_size_of(lv) for lv in new)
    n = 1
    for s in sizes:
        n *= s
    nb = len(levels)
    pairs = []
    for o, c in zip(outs, cotangents):
        if not isinstance(o, Tensor) or not _phys(o).requires_grad:
            continue
        op = align(o, levels, expand=True)
        cp = align(c, levels + new, rank=logical_dim(o), expand=True)
        cp = cp.expand(tuple(cp.shape[: nb + len(new)]) + tuple(op.shape[nb:]))
        cp = cp.reshape(tuple(cp.shape[:nb]) + (n,) + tuple(cp.shape[nb + len(new) :]))
        pairs.append((op, cp))
    in_p = [_phys(i) for i in inputs]
    rows = []
    used = [False] * len(in_p)
    for r in range(n):
        if pairs:
            gs = autograd.grad(
                [op for op, _ in pairs],
                in_p,
                [cp.select(nb, r) for _, cp in pairs],
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
        else:
            gs = [None] * len(in_p)
        used = [u or g is not None for u, g in zip(used, gs)]
        rows.append([_zeros_for(i) if g is None else g for g, i in zip(gs, inputs)])
    res = []
    for k, (i, p) in enumerate(zip(inputs, in_p)):
        from .. import stack

        if not used[k] and not materialize:
            res.append(None)
            continue
        col = stack([row[k] for row in rows], nb)  # the newer levels after the graph's
        v = col.reshape(tuple(col.shape[:nb]) + sizes + tuple(col.shape[nb + 1 :]))
        if not create_graph:
            v = v.detach()
        res.append(BatchedTensor(v, levels + new))
    return res


# -- forward levels nested inside vmap (vmap(jacfwd(jacfwd(f))))


def outer_logical(args, kwargs, tangents):
    """Whether a forward level visible now (one outside the level handling an op) keys a tangent
    by one of the op's BatchedTensor arguments (or by its physical tensor: a level outside the
    vmap, jvp(vmap(jvp(f)))), the op's tangents being batched over no level
    its primals are not: then the op's derivative must be built from logical ops and gradients
    those levels see (generic_logical, elementwise_logical) instead of physical ones."""
    from ..autograd._forward_rules import _flat_tensors

    if not fwad._levels:
        return False
    vis = fwad._visible()
    if not vis:
        return False
    found = False
    args_t = list(_flat_tensors(args, kwargs))
    for a in args_t:
        if type(a) is BatchedTensor and any(
            lv.get(a) is not None or lv.get(a._v) is not None for lv in vis
        ):
            found = True  # a level outside keys a tangent by it, or by its physical tensor
            break
    if not found:
        return False
    primal_lv = levels_of(*args_t)
    return all(
        lvl in primal_lv for t in tangents.values() if type(t) is BatchedTensor for lvl in t._lv
    )


def _expanded(a, levels):
    """a as a BatchedTensor over every one of `levels` (per-example copies), keeping a's
    tangents: the logical ones carried over, the physical ones through the routed views."""
    if not levels or (type(a) is BatchedTensor and a._lv == levels):
        return a
    tans = logical_tangents(a)
    return carry(a, BatchedTensor(align(a, levels, expand=True), levels), tans)


def generic_logical(func, name, args, kwargs, tangents, inplace):
    """forward_ad's generic rule (J·t = ∇ᵤ<Jᵀu, t>) on the logical tensors of a vmap, for a
    level nested inside other forward levels that key their tangents by BatchedTensors: the
    nested rule (_forward_nested.generic) with every dual input and tangent expanded over the
    primals' levels first, so its gradients are autograd.grad of BatchedTensors (per-example
    physical backward passes, which give their results the outer levels' tangents: Note
    [Forward-over-reverse under vmap])."""
    from ..autograd._forward_nested import generic
    from ..autograd._forward_rules import _flat_tensors

    primal_lv = levels_of(*_flat_tensors(args, kwargs))
    return generic(
        func,
        name,
        args,
        kwargs,
        tangents,
        inplace,
        prepare=lambda a: _expanded(a, primal_lv),
        ones=_ones_like,
    )


def _ones_like(o):
    from .._ops.creation import ones_like

    return BatchedTensor(ones_like(o._v), o._lv) if type(o) is BatchedTensor else ones_like(o)
