"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp over ember.autograd.grad.

Inputs and outputs are a Tensor or a tuple of Tensors; results take torch's nesting (a tuple per
output of tuples per input, collapsed where the caller passed single tensors)."""

from .._C import Tensor, stack
from .._ops.creation import ones_like, zeros, zeros_like
from ._engine import grad
from .grad_mode import enable_grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _fresh(inputs, create_graph):
    return tuple(
        x if create_graph and x.requires_grad else x.detach().requires_grad_(True) for x in inputs
    )


def _grads(outputs, inputs, grad_outputs, create_graph):
    gs = grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    gs = tuple(zeros_like(x) if g is None else g for g, x in zip(gs, inputs))
    return gs if create_graph else tuple(g.detach() for g in gs)


def _maybe_detach(ts, create_graph):
    return ts if create_graph else tuple(t.detach() for t in ts)


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        xs = _fresh(_tuple(inputs), create_graph)
        out = func(*xs)
        single_out = isinstance(out, Tensor)
        outs = _tuple(out)
        table = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [_grads(flat[i], xs, None, create_graph) for i in range(flat.numel())]
            per_in = []
            for j, x in enumerate(xs):
                col = stack([r[j] for r in rows], 0) if rows else zeros(0, *x.shape, dtype=x.dtype)
                per_in.append(col.reshape(tuple(o.shape) + tuple(x.shape)))
            table.append(per_in[0] if single_in else tuple(per_in))
    return table[0] if single_out else tuple(table)


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    single_in = isinstance(inputs, Tensor)

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError(
                "The function given to hessian should return a single Tensor with a single element"
            )
        gs = _grads(out.reshape(()), xs, None, True)
        return gs[0] if single_in else gs

    return jacobian(gradient, inputs, create_graph=create_graph)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        xs = _fresh(_tuple(inputs), create_graph)
        out = func(*xs)
        outs = _tuple(out)
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function "
                    "returns a single Tensor with a single element."
                )
            vs = (ones_like(outs[0]),)
        else:
            vs = _tuple(v)
        gs = _grads(outs, xs, vs, create_graph)
    out = (
        out
        if create_graph
        else (out.detach() if isinstance(out, Tensor) else _maybe_detach(outs, False))
    )
    return out, (gs[0] if single_in else gs)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """J v by the double-vjp identity: d/du <vjp(u), v> = J v."""
    with enable_grad():
        xs = _fresh(_tuple(inputs), create_graph)
        vs = (ones_like(xs[0]),) if v is None else _tuple(v)
        out = func(*xs)
        outs = _tuple(out)
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        gs = grad(outs, xs, us, create_graph=True, allow_unused=True)
        dot = sum((g * t).sum() for g, t in zip(gs, vs) if g is not None)
        if isinstance(dot, Tensor):
            jv = _grads(dot, us, None, create_graph)
        else:
            jv = tuple(zeros_like(o) for o in outs)
    out = (
        out
        if create_graph
        else (out.detach() if isinstance(out, Tensor) else _maybe_detach(outs, False))
    )
    return out, (jv[0] if isinstance(out, Tensor) else jv)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        xs = _fresh(_tuple(inputs), True)
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hvp should contain a single element"
            )
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        vs = _tuple(v)
        dot = sum((g * t).sum() for g, t in zip(gs, vs) if g is not None)
        res = _grads(dot, xs, None, create_graph)
    return (out if create_graph else out.detach()), (res[0] if single_in else res)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """H v; the Hessian of a twice-differentiable scalar function is symmetric, so H v = v H."""
    return vhp(func, inputs, v, create_graph, strict)
