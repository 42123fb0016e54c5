"""Finite-difference checks of analytical gradients (float64 inputs recommended)."""

import itertools

from .._C import Tensor, float64, stack, view_as_complex, view_as_real
from .._ops.creation import zeros, zeros_like
from ._engine import grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    # torch takes a list of inputs (or outputs) as the tuple of them
    if isinstance(x, tuple):
        return x
    return tuple(x) if isinstance(x, list) else (x,)


def _numerical_jacobian(fn, inputs, out_index, eps):
    # fn runs with grad mode on: gradgradcheck's fn differentiates inside itself.
    out = _as_tuple(fn(*inputs))[out_index]
    jac = []
    for x in inputs:
        if not (isinstance(x, Tensor) and x.requires_grad):
            jac.append(None)
            continue
        cols = []
        # each element is written in place through its index (in row-major order): reshape(-1)
        # of a non-contiguous input (a slice) would perturb a copy the function never reads
        data = x.detach()
        for idx in itertools.product(*(range(s) for s in data.shape)):
            orig = data[idx].item()
            data[idx] = orig + eps
            plus = _as_tuple(fn(*inputs))[out_index].detach().double().flatten().clone()
            data[idx] = orig - eps
            minus = _as_tuple(fn(*inputs))[out_index].detach().double().flatten().clone()
            data[idx] = orig
            cols.append((plus - minus) / (2 * eps))
        jac.append(stack(cols, 1) if cols else zeros(out.numel(), 0, dtype=float64))
    return jac


def _analytical_jacobian(fn, inputs, out_index, create=False):
    out = _as_tuple(fn(*inputs))[out_index]
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    rows = [[] for _ in diff_inputs]
    flat_n = out.numel()
    for j in range(flat_n):
        g = zeros(flat_n, dtype=out.dtype)
        g[j] = 1
        grads = grad(out, diff_inputs, g.reshape(out.shape), retain_graph=True, allow_unused=True)
        for k, (gi, x) in enumerate(zip(grads, diff_inputs)):
            rows[k].append(
                zeros(x.numel(), dtype=float64) if gi is None else gi.detach().reshape(-1).double()
            )
    return [
        stack(r, 0) if r else zeros(0, x.numel(), dtype=float64) for r, x in zip(rows, diff_inputs)
    ]


def _any_complex(xs):
    return any(isinstance(x, Tensor) and x.dtype.is_complex for x in xs)


def _through_real_views(func, inputs):
    """func on real views: complex inputs become real pairs (leaves of their own), complex
    outputs are returned as view_as_real."""
    flags = [isinstance(x, Tensor) and x.dtype.is_complex for x in inputs]
    real_inputs = tuple(
        view_as_real(x.detach()).clone().requires_grad_(x.requires_grad) if c else x
        for x, c in zip(inputs, flags)
    )

    def wrapped(*xs):
        args = [view_as_complex(x) if c else x for x, c in zip(xs, flags)]
        out = func(*args)
        outs = tuple(
            view_as_real(o) if isinstance(o, Tensor) and o.dtype.is_complex else o
            for o in _as_tuple(out)
        )
        return outs if isinstance(out, tuple) else outs[0]

    return wrapped, real_inputs


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_backward_ad=True,
    fast_mode=False,
    masked=None,
    **_,
):
    """gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True,
        nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
        check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
        check_backward_ad=True, fast_mode=False, masked=None)

    True if the analytical Jacobian of `func` matches central differences. Complex inputs and
    outputs are checked through their real views (view_as_real): the real Jacobian of that map
    holds every derivative, and torch's convention (the gradient of a real function f of
    z = x + iy is df/dx + i df/dy) is the real view of the gradient."""
    inputs = _as_tuple(inputs)
    outs = _as_tuple(func(*inputs))
    if _any_complex(inputs) or _any_complex(outs):
        func, inputs = _through_real_views(func, inputs)
        outs = _as_tuple(func(*inputs))
    for o, out in enumerate(outs):
        if not (isinstance(out, Tensor) and out.is_floating_point()):
            continue
        numerical = [j for j in _numerical_jacobian(func, inputs, o, eps) if j is not None]
        analytical = _analytical_jacobian(func, inputs, o)
        for k, (a, n) in enumerate(zip(analytical, numerical)):
            if a.shape != n.shape or not bool(((a - n).abs() <= atol + rtol * n.abs()).all()):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {o} with respect to input {k},\n"
                        f"numerical:{n}\nanalytical:{a}\n"
                    )
                return False
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    **_,
):
    """gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
        gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
        check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
        check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False)

    gradcheck of the gradient function itself (second derivatives)."""
    from .._ops.random import randn  # on use: ember._ops.random imports this package

    inputs = _as_tuple(inputs)
    outs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        grad_outputs = tuple(randn(o.shape, dtype=o.dtype, requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)

    def first_grads(*args):
        xs, gos = args[: len(inputs)], args[len(inputs) :]
        out = _as_tuple(func(*xs))
        d = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
        grads = grad(out, d, gos, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else zeros_like(x) for g, x in zip(grads, d))

    return gradcheck(
        first_grads,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
