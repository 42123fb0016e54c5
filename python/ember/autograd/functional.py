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


def _check_strategy(strategy, vectorize, create_graph):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                'mode"` are not supported together (yet). Please either set `create_graph=False` '
                'or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )


def _forward_jacobian(func, inputs):
    """jacobian(strategy="forward-mode"): one forward-mode jvp per input element."""
    from ..func._forward import jacfwd

    xs = tuple(x.detach() for x in _tuple(inputs))
    jac = jacfwd(func, argnums=tuple(range(len(xs))))(*xs)
    if not isinstance(inputs, Tensor):
        return jac
    return jac[0] if isinstance(jac[0], Tensor) else tuple(j[0] for j in jac)


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
        strategy='reverse-mode') -> Tensor or tuple

    The Jacobian of func at inputs: one entry per (output, input) pair of shape output.shape +
    input.shape, nested outputs outside, inputs inside, collapsed where a single Tensor was
    given. strategy="forward-mode" (with vectorize=True, as torch requires) computes it with
    forward-mode AD, one pass per input element; "reverse-mode" one backward per output
    element."""
    _check_strategy(strategy, vectorize, create_graph)
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs)
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
    """hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
        outer_jacobian_strategy='reverse-mode') -> Tensor or tuple

    The Hessian of scalar func at inputs (a tuple of tuples for several inputs).
    outer_jacobian_strategy="forward-mode" (with vectorize=True) is forward-over-reverse."""
    single_in = isinstance(inputs, Tensor)
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        _check_strategy(outer_jacobian_strategy, vectorize, create_graph)
    if outer_jacobian_strategy == "forward-mode":
        _check_strategy("forward-mode", vectorize, create_graph)
        from ..func._forward import hessian as forward_over_reverse

        xs = tuple(x.detach() for x in _tuple(inputs))

        def scalar(*a):
            out = func(*a)
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError(
                    "The function given to hessian should return a single Tensor with a single "
                    "element"
                )
            return out.reshape(())

        h = forward_over_reverse(scalar, argnums=tuple(range(len(xs))))(*xs)
        return h[0][0] if single_in else h

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
    """vjp(func, inputs, v=None, create_graph=False, strict=False) -> tuple

    (func(inputs), vᵀ·J): the vector-Jacobian product at inputs."""
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
    """jvp(func, inputs, v=None, create_graph=False, strict=False) -> tuple

    (func(inputs), J·v), by the double-backward identity d/du <vjp(u), v> = J·v (as torch's)."""
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
    """vhp(func, inputs, v=None, create_graph=False, strict=False) -> tuple

    (func(inputs), vᵀ·H) for scalar func."""
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
    """hvp(func, inputs, v=None, create_graph=False, strict=False) -> tuple

    (func(inputs), H·v) for scalar func (H is symmetric, so this is vᵀ·H)."""
    return vhp(func, inputs, v, create_graph, strict)
