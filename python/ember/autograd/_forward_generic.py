"""The generic forward-mode rule: an op's tangent from its reverse-mode formula (forward_ad's
module docstring explains the double-backward trick). _forward_nested shares the body."""

from ._forward_rules import _is_float, _map_args, _not_supported, _out_tensors


def _generic_tangents(func, name, args, kwargs, tangents, inplace):
    """Runs func on graph-recording aliases of the dual inputs and returns (output, tangents),
    the tangents from the op's backward formula (see the module docstring)."""
    from .._ops.creation import ones_like
    from ._engine import _grad as grad

    def new_leaf(a, t, target):
        leaf = a.detach()
        if target:
            leaf = leaf.clone()
        return leaf.requires_grad_(True), t

    def jv(diff, leaves, leaf_tangents):
        # B(u) is linear in u, so any u works; ones keeps formulas that take log|u|
        # (logcumsumexp's) away from their singularity at 0.
        us = [ones_like(o).requires_grad_(True) for o in diff]
        gs = grad(diff, leaves, us, create_graph=True, allow_unused=True)
        dot = _tangent_dot(gs, leaf_tangents, name)
        if dot is not None and dot.requires_grad:
            return grad(dot, us, allow_unused=True)
        return [None] * len(us)

    return _tangents_on_leaves(func, name, args, kwargs, tangents, inplace, new_leaf, jv)


def _tangents_on_leaves(
    func, name, args, kwargs, tangents, inplace, new_leaf, jv, copy_target=None, detach=True
):
    """The body the generic forward rules share (this module's and _forward_nested's): runs func
    under enable_grad with every dual input replaced by a leaf, `new_leaf(a, tangent, target)`
    -> (leaf, the tangent to pair with it), `target` when the op writes a in place (a non-dual
    in-place target is replaced by `copy_target(a)`, a detached clone by default). `jv(diff,
    leaves, leaf_tangents)` gives J·t for the differentiable outputs, in diff's order. Returns
    (output, one tangent or None per output tensor), the tangents detached when `detach`."""
    from .._ops.creation import zeros_like
    from .grad_mode import enable_grad

    leaves, leaf_tangents, aliases = [], [], {}

    def sub(a):
        key = id(a)
        if key in aliases:
            return aliases[key]
        target = inplace and a is args[0]
        if _is_float(a) and key in tangents:
            leaf, t = new_leaf(a, tangents[key], target)
            leaves.append(leaf)
            leaf_tangents.append(t)
            alias = leaf.clone() if target else leaf
        elif target:
            alias = copy_target(a) if copy_target is not None else a.detach().clone()
        else:
            alias = a
        aliases[key] = alias
        return alias

    with enable_grad():
        cargs, ckwargs = _map_args(sub, args, kwargs)
        out = func(*cargs, **ckwargs)
        if inplace:
            out = cargs[0]
        outs = _out_tensors(out)
        diff = [o for o in outs if _is_float(o) and o.requires_grad]
        if leaves and not diff and any(_is_float(o) for o in outs):
            # floating results the dual inputs do not reach: ember has no derivative for this
            # op (reverse mode records nothing either), so no tangent can be given
            raise _not_supported(name)
        by_id = {}
        if diff:
            try:
                by_id = {id(o): j for o, j in zip(diff, jv(diff, leaves, leaf_tangents))}
            except (NotImplementedError, RuntimeError) as e:
                raise _not_supported(name, e) from e
        result = []
        for o in outs:
            if not _is_float(o) or id(o) not in by_id:
                # not floating, or an output the op does not differentiate (slogdet's sign)
                result.append(None)
                continue
            j = by_id[id(o)]
            j = zeros_like(o) if j is None else j
            result.append(j.detach() if detach else j)
    return out, result


def _tangent_dot(gs, leaf_tangents, name, term=None):
    """Σ <Jᵀu, t> over the leaves (None when no gradient reaches them); `term(k, g, t)` gives
    the k-th leaf's summand, (g * t).sum() by default."""
    dot = None
    for k, (g, t) in enumerate(zip(gs, leaf_tangents)):
        if g is None:
            continue
        if not g.requires_grad:
            # Jᵀu that does not depend on u is either zero or computed by a backward kernel
            # that cannot be differentiated: no forward formula.
            if bool((g != 0).any()):
                raise _not_supported(name)
            continue
        part = (g * t).sum() if term is None else term(k, g, t)
        dot = part if dot is None else dot + part
    return dot
