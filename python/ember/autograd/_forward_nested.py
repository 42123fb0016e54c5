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
    from ._engine import grad
    from .forward_ad import _attach, _flat_tensors, _is_float, _requires_grad_alias
    from .grad_mode import enable_grad

    x = args[0] if args else None
    if not _is_float(x) or id(x) not in tangents:
        return None
    if sum(1 for t in _flat_tensors(args, kwargs) if isinstance(t, Tensor)) != 1:
        return None
    t = tangents[id(x)]
    with enable_grad():
        xa = _requires_grad_alias(x)
        ya = func(xa, *args[1:], **kwargs)
        if not isinstance(ya, Tensor) or tuple(ya.shape) != tuple(x.shape):
            return None
        if not ya.requires_grad:
            return None
        (d,) = grad([ya], [xa], [ones_like(ya)], create_graph=True, allow_unused=True)
    out = func(*args, **kwargs)
    _attach(out, [zeros_like(out) if d is None else d * t])
    return out


def generic(func, name, args, kwargs, tangents, inplace):
    """(output on aliases, tangents) as forward_ad._generic_tangents, visible to outer levels."""
    from .._ops.creation import ones_like, zeros_like
    from ._engine import grad
    from .forward_ad import (
        _hidden,
        _is_float,
        _map_args,
        _not_supported,
        _out_tensors,
        _requires_grad_alias,
    )
    from .grad_mode import enable_grad

    leaves, leaf_tangents, aliases = [], [], {}
    keep = _keeps_graph(args, kwargs)

    def fresh(a, clone=False):
        y = _requires_grad_alias(a)
        if y is a:  # already requires grad: a new leaf-like alias of it
            y = a.view_as(a)
        return y.clone() if clone else y

    def sub(a):
        key = id(a)
        if key in aliases:
            return aliases[key]
        target = inplace and a is args[0]
        if _is_float(a) and key in tangents:
            leaf = fresh(a)
            leaves.append(leaf)
            leaf_tangents.append(fresh(tangents[key]))
            alias = leaf.clone() if target else leaf
        elif target:
            alias = a.clone()
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
            raise _not_supported(name)
        by_id = {}
        if diff:
            try:
                us = [ones_like(o).requires_grad_(True) for o in diff]
                with _hidden("all"):  # plain graph work: only the last gradient needs tangents
                    gs = grad(diff, leaves, us, create_graph=True, allow_unused=True)
                    dot = None
                    for g, t in zip(gs, leaf_tangents):
                        if g is None:
                            continue
                        if not g.requires_grad:
                            if bool((g != 0).any()):
                                raise _not_supported(name)
                            continue
                        term = (g * t).sum()
                        dot = term if dot is None else dot + term
                if dot is not None and dot.requires_grad:
                    wrt = us + leaves + leaf_tangents
                    # reverse-over-forward: the tangent stays differentiable when the op's
                    # inputs are in a reverse graph
                    jv = list(grad([dot], wrt, create_graph=keep, allow_unused=True))[: len(us)]
                else:
                    jv = [None] * len(us)
            except (NotImplementedError, RuntimeError) as e:
                raise _not_supported(name, e) from e
            by_id = {id(o): j for o, j in zip(diff, jv)}
        result = []
        for o in outs:
            if not _is_float(o):
                result.append(None)
            elif id(o) in by_id:
                j = by_id[id(o)]
                result.append(zeros_like(o) if j is None else j)
            else:
                result.append(None)
    return out, result


def generic_batched(func, name, args, kwargs, tangents, inplace):
    """forward_ad._generic_tangents for tangents batched by vmap (jacfwd's basis) and unbatched
    primals: the op and its backward run once on the primals; J·t for each tangent of the batch
    is one more gradient of that op's node alone."""
    from .._ops.creation import ones_like, zeros_like
    from ..func._vmap import BatchedTensor, _size_of, align, levels_of
    from ._engine import grad
    from .forward_ad import _is_float, _map_args, _not_supported, _out_tensors
    from .grad_mode import enable_grad

    leaves, leaf_tangents, aliases = [], [], {}

    def sub(a):
        key = id(a)
        if key in aliases:
            return aliases[key]
        target = inplace and a is args[0]
        if _is_float(a) and key in tangents:
            if keep and a.requires_grad:
                leaf = a.view_as(a)  # in the reverse graph (reverse-over-forward)
                if target:
                    leaf = leaf.clone()
            else:
                leaf = a.detach()
                if target:
                    leaf = leaf.clone()
                leaf.requires_grad_(True)
            leaves.append(leaf)
            leaf_tangents.append(tangents[key])
            alias = leaf.clone() if target else leaf
        elif target:
            alias = a.detach().clone()
        else:
            alias = a
        aliases[key] = alias
        return alias

    keep = _keeps_graph(args, kwargs)
    levels = levels_of(*leaf_tangents_of(tangents))
    sizes = tuple(_size_of(lv) for lv in levels)
    with enable_grad():
        cargs, ckwargs = _map_args(sub, args, kwargs)
        out = func(*cargs, **ckwargs)
        if inplace:
            out = cargs[0]
        outs = _out_tensors(out)
        diff = [o for o in outs if _is_float(o) and o.requires_grad]
        if leaves and not diff and any(_is_float(o) for o in outs):
            raise _not_supported(name)
        by_id = {}
        if diff:
            try:
                us = [ones_like(o).requires_grad_(True) for o in diff]
                gs = grad(diff, leaves, us, create_graph=True, allow_unused=True)
                dot = None
                for g, t in zip(gs, leaf_tangents):
                    if g is None:
                        continue
                    if not g.requires_grad:
                        if bool((g != 0).any()):
                            raise _not_supported(name)
                        continue
                    if type(t) is BatchedTensor:
                        term = (g * align(t, levels, expand=True)).reshape(sizes + (-1,)).sum(-1)
                    else:
                        term = (g * t).sum()
                    dot = term if dot is None else dot + term
                if dot is not None and dot.requires_grad:
                    flat = dot.expand(sizes).reshape(-1)
                    rows = [
                        grad([flat[i]], us, retain_graph=True, create_graph=keep, allow_unused=True)
                        for i in range(flat.numel())
                    ]
                    jv = []
                    for k, o in enumerate(diff):
                        col = [zeros_like(o) if r[k] is None else r[k] for r in rows]
                        v = _stack()(col).reshape(sizes + tuple(o.shape))
                        jv.append(BatchedTensor(v, levels))
                else:
                    jv = [None] * len(us)
            except (NotImplementedError, RuntimeError) as e:
                raise _not_supported(name, e) from e
            by_id = {id(o): j for o, j in zip(diff, jv)}
        result = []
        for o in outs:
            if not _is_float(o):
                result.append(None)
            elif id(o) in by_id:
                j = by_id[id(o)]
                result.append(zeros_like(o) if j is None else j)
            else:
                result.append(None)
    return out, result


def _keeps_graph(args, kwargs):
    """Whether the op's inputs are in a reverse graph that its tangent must stay part of."""
    from .. import _C
    from .forward_ad import _flat_tensors

    return _C.is_grad_enabled() and any(t.requires_grad for t in _flat_tensors(args, kwargs))


def _stack():
    import ember

    return ember.stack


def leaf_tangents_of(tangents):
    return [t for t in tangents.values() if type(t).__name__ == "BatchedTensor"]
