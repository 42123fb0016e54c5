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


def _grads(outputs, inputs, grad_outputs, create_graph, unused=None, constant=None):
    """autograd.grad with zeros for the inputs it does not reach. In strict mode `unused(j)`
    is the error for input j not reached, `constant(j)` the one for a gradient with no graph
    under create_graph (torch's strict checks)."""
    gs = grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    for j, g in enumerate(gs):
        if g is None and unused is not None:
            raise RuntimeError(unused(j))
        if g is not None and create_graph and constant is not None and not g.requires_grad:
            raise RuntimeError(constant(j))
    gs = tuple(zeros_like(x) if g is None else g for g, x in zip(gs, inputs))
    return gs if create_graph else tuple(g.detach() for g in gs)


# torch's strict-mode errors
def _no_grad_output(i):
    return (
        f"Output {i} of the user-provided function does not require gradients. The outputs must "
        "be computed in a differentiable manner from the input when running in strict mode."
    )


def _independent(j):
    return (
        f"The output of the user-provided function is independent of input {j}. This is not "
        "allowed in strict mode."
    )


def _constant_jacobian(j):
    return (
        f"The jacobian of the user-provided function is independent of input {j}. This is not "
        "allowed in strict mode when create_graph=True."
    )


def _constant_gradient(j):
    return (
        "While computing the hessian, found that the jacobian of the user-provided function "
        f"with respect to input {j} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    )


def _check_outputs(outs, strict):
    if strict:
        for i, o in enumerate(outs):
            if not o.requires_grad:
                raise RuntimeError(_no_grad_output(i))


def _strict(strict, message):
    return message if strict else None


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
    if strict and vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`."
        )
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs)
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        xs = _fresh(_tuple(inputs), create_graph)
        out = func(*xs)
        single_out = isinstance(out, Tensor)
        outs = _tuple(out)
        _check_outputs(outs, strict)
        table = []
        for k, o in enumerate(outs):
            flat = o.reshape(-1)
            unused = _strict(
                strict,
                lambda j, k=k: (
                    f"Output {k} of the user-provided function is independent of input {j}. "
                    "This is not allowed in strict mode."
                ),
            )
            constant = _strict(strict, _constant_jacobian)
            rows = [
                _grads(flat[i], xs, None, create_graph, unused, constant)
                for i in range(flat.numel())
            ]
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
        _check_outputs((out,), strict)
        gs = _grads(out.reshape(()), xs, None, True)
        if strict:
            for j, g in enumerate(gs):
                if not g.requires_grad:
                    raise RuntimeError(_constant_gradient(j))
        return gs[0] if single_in else gs

    return jacobian(gradient, inputs, create_graph=create_graph, strict=strict)


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
        _check_outputs(outs, strict)
        gs = _grads(
            outs,
            xs,
            vs,
            create_graph,
            _strict(strict, _independent),
            _strict(strict, _constant_jacobian),
        )
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
        _check_outputs(outs, strict)
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        gs = grad(outs, xs, us, create_graph=True, allow_unused=True)
        if strict:
            for j, g in enumerate(gs):
                if g is None:
                    raise RuntimeError(_independent(j))
        dot = sum((g * t).sum() for g, t in zip(gs, vs) if g is not None)
        if isinstance(dot, Tensor):
            unused = _strict(
                strict,
                lambda i: (
                    "The gradient with respect to the input is independent of entry "
                    f"{i} in the grad_outputs when using the double backward trick to compute "
                    "forward mode gradients. This is not allowed in strict mode."
                ),
            )
            jv = _grads(dot, us, None, create_graph, unused, _strict(strict, _constant_jacobian))
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
        _check_outputs((out,), strict)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        if strict:
            for j, g in enumerate(gs):
                if g is None or not g.requires_grad:
                    raise RuntimeError(_constant_gradient(j))
        vs = _tuple(v)
        dot = sum((g * t).sum() for g, t in zip(gs, vs) if g is not None)
        unused = _strict(
            strict,
            lambda j: (
                f"The jacobian of the user-provided function is independent of input {j}. This "
                "is not allowed in strict mode."
            ),
        )
        res = _grads(dot, xs, None, create_graph, unused, _strict(strict, _constant_jacobian))
    return (out if create_graph else out.detach()), (res[0] if single_in else res)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """hvp(func, inputs, v=None, create_graph=False, strict=False) -> tuple

    (func(inputs), H·v) for scalar func (H is symmetric, so this is vᵀ·H)."""
    return vhp(func, inputs, v, create_graph, strict)
