"""forward_ad's rules for the calls that are not ops: autograd.grad inside a level (forward-over-
reverse) and autograd.Function.apply with dual inputs (its jvp staticmethod)."""

from .._C import Tensor

# ----------------------------------------------------------------------------- autograd.grad


def _grad_with_tangents(outputs, inputs, grad_outputs, create_graph, allow_unused, run_grad):
    """autograd.grad inside a level: the results get tangents (forward-over-reverse).

    For r = Jᵀg with g independent of the inputs x, the derivative of r along x's tangent t is
    ∇ₓ<r, t> (the symmetry of second derivatives), plus Jᵀ t_g when g has a tangent."""
    from .._ops.creation import zeros_like

    # imported here: forward_ad imports this module
    from ._forward_rules import _conform
    from .forward_ad import _current, _detach_keeping, _has_batched, _hidden, _tangent
    from .grad_mode import enable_grad

    lv = _current()
    ins = list(inputs)
    tin = [_tangent(x) for x in ins]
    outs = list(outputs)
    go = list(grad_outputs) if grad_outputs is not None else None
    tgo = [_tangent(g) if isinstance(g, Tensor) else None for g in go] if go else []
    if all(t is None for t in tin) and all(t is None for t in tgo):
        return None
    if _has_batched({id(t): t for t in tin + tgo if t is not None}):
        raise NotImplementedError(
            "autograd.grad inside a forward level whose tangents are batched by vmap"
        )
    # With this level hidden, run_grad is autograd.grad as the levels outside it see it (they
    # give its results their own tangents in turn).
    with _hidden(lv), enable_grad():
        res = run_grad(outs, ins, go, True, True)
        tans = [None] * len(ins)
        dot = None
        for r, t in zip(res, tin):
            if r is not None and t is not None:
                term = (r * t).sum()
                dot = term if dot is None else dot + term
        if dot is not None and dot.requires_grad:
            hs = run_grad([dot], ins, None, True, True)
            tans = [h for h in hs]
        if any(t is not None for t in tgo):
            gos = [t if t is not None else zeros_like(g) for t, g in zip(tgo, go)]
            extra = run_grad(outs, ins, gos, True, True)
            tans = [e if t is None else (t if e is None else t + e) for t, e in zip(tans, extra)]
        final = []
        for k, (r, t, x) in enumerate(zip(res, tans, ins)):
            if r is None:
                if not allow_unused:
                    raise RuntimeError(
                        f"The differentiated Tensor at index {k} appears to not have been used "
                        "in the graph. Set allow_unused=True if this is the desired behavior."
                    )
                final.append(None)
                continue
            value = r if create_graph else _detach_keeping(r)
            tangent = (t if t is not None else zeros_like(r)) if not create_graph else t
            if tangent is not None and not create_graph:
                tangent = _detach_keeping(tangent)
            if tangent is None:
                tangent = zeros_like(r)
            lv.set(value, _conform(tangent, value))
            final.append(value)
    return tuple(final)


# ----------------------------------------------------------------------------- autograd.Function


def _function_apply(cls, ctx, args, kwargs, run_forward):
    """Function.apply with dual inputs: forward without tangents, then cls.jvp for the outputs."""
    # imported here: forward_ad imports this module
    from ._forward_rules import _conform, _is_float, _zeros_tangent
    from .forward_ad import _current, _hidden, _tangent
    from .function import Function

    lv = _current()
    tangents = [_tangent(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return run_forward()
    if cls.jvp is Function.jvp:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )
    with _hidden(lv):
        output = run_forward()
        targs = [
            (t if t is not None else _zeros_tangent(a)) if _is_float(a) else None
            for a, t in zip(args, tangents)
        ]
        saved = getattr(ctx, "_saved_for_forward", None)
        prev = ctx.to_save, ctx.saved_versions
        if saved is not None:
            ctx.to_save, ctx.saved_versions = saved
        try:
            result = cls.jvp(ctx, *targs)
        finally:
            ctx.to_save, ctx.saved_versions = prev
    outs = output if isinstance(output, tuple) else (output,)
    res = result if isinstance(result, tuple) else (result,)
    if len(res) != len(outs):
        raise RuntimeError(
            f"{cls.__name__}.jvp: expected as many tangents as forward returned outputs "
            f"({len(outs)}); got {len(res)}"
        )
    for o, t in zip(outs, res):
        if _is_float(o) and isinstance(t, Tensor):
            lv.set(o, _conform(t, o))
    return output
