"""The backward overloads TorchDispatchModes see (Note [Dispatch modes] in _dispatch_bridge.py).

torch's backward of ``mm``/``addmm``/``bmm``/``baddbmm``/``convolution`` runs ATen overloads that
a dispatch mode sees (FlopCounterMode counts them). ember's backward formulas are C++, so while a
mode is active these calls are wrapped in ``Through``, whose backward computes the same gradients
with the overloads torch's formulas use, each going down the modes active at backward time."""

from . import _C
from .autograd.function import Function


def _op(name, overload):
    from ._op_overloads import ops

    return getattr(getattr(ops.aten, name), overload)


def _call(name, overload, *args):
    return _op(name, overload)(*args)


def _scaled(t, factor):
    return t if factor == 1 else _call("mul", "Tensor", t, factor)


def _sum_to(grad, shape):
    """``grad`` reduced to ``shape`` as autograd reduces a broadcast input's gradient."""
    shape = list(shape)
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [
        lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1
    ]
    if not dims:
        return grad
    out = _call("sum", "dim_IntList", grad, dims, True)
    return _call("view", "default", out, shape) if lead else out


def _column_major(m):
    return m.dim() == 2 and m.stride(0) == 1 and m.stride(1) == m.shape[0] and m.shape[1] > 1


def _t(m):
    return _call("t", "default", m)


def _mm(grad, args, kwargs, needs, out=None):
    """As torch's: a column-major operand (a weight's ``t()``) gets its gradient as the
    transpose of a product of row-major ones."""
    a, b = args
    ga = gb = None
    if needs[0]:
        if _column_major(a):
            ga = _t(_call("mm", "default", b, _t(grad)))
        else:
            ga = _call("mm", "default", grad, _t(b))
    if needs[1]:
        if _column_major(b):
            gb = _t(_call("mm", "default", _t(grad), a))
        else:
            gb = _call("mm", "default", _t(a), grad)
    return ga, gb


def _bmm(grad, args, kwargs, needs, out=None):
    a, b = args
    ga = gb = None
    if needs[0]:
        ga = _call("bmm", "default", grad, _call("transpose", "int", b, 1, 2))
    if needs[1]:
        gb = _call("bmm", "default", _call("transpose", "int", a, 1, 2), grad)
    return ga, gb


def _scaled_sum(product):
    """The backward of beta * base + alpha * product(a, b) (addmm over mm, baddbmm over bmm)."""

    def backward(grad, args, kwargs, needs, out=None):
        base, a, b = args
        beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
        ga, gb = product(grad, (a, b), {}, needs[1:])  # before the bias's, as torch's order
        gbase = _sum_to(_scaled(grad, beta), base.shape) if needs[0] else None
        return (
            gbase,
            ga if ga is None else _scaled(ga, alpha),
            gb if gb is None else _scaled(gb, alpha),
        )

    return backward


_addmm = _scaled_sum(_mm)
_baddbmm = _scaled_sum(_bmm)


def _convolution(grad, args, kwargs, needs, out=None):
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = args
    bias_sizes = None
    if bias is not None:
        bias_sizes = [w.shape[1] * groups if transposed else w.shape[0]]
    mask = [bool(needs[0]), bool(needs[1]), bias is not None and bool(needs[2])]
    gx, gw, gb = _call(
        "convolution_backward", "default", grad, x, w, bias_sizes, stride, padding, dilation,
        transposed, output_padding, groups, mask,
    )  # fmt: skip
    return (gx, gw, gb) + (None,) * 6


def _relu(grad, args, kwargs, needs, out):
    return (_call("threshold_backward", "default", grad, out, 0),)


def _log_softmax(grad, args, kwargs, needs, out):
    x, dim, _half_to_float = args
    return (_call("_log_softmax_backward_data", "default", grad, out, dim, x.dtype), None, None)


def _nll_loss_forward(grad, args, kwargs, needs, out):
    x, target, weight, reduction, ignore_index = args
    gx = _call(
        "nll_loss_backward", "default", grad, x, target, weight, reduction, ignore_index, out[1]
    )
    return (gx,) + (None,) * 4


def _native_batch_norm(grad, args, kwargs, needs, out):
    x, weight, bias, mean, var, training, _momentum, eps = args
    mask = [
        bool(needs[0]),
        weight is not None and bool(needs[1]),
        bias is not None and bool(needs[2]),
    ]
    gx, gw, gb = _call(
        "native_batch_norm_backward", "default", grad, x, weight, mean, var, out[1], out[2],
        training, eps, mask,
    )  # fmt: skip
    return (gx, gw, gb) + (None,) * 5


_FORMULAS = {
    ("relu", "default"): _relu,
    ("_log_softmax", "default"): _log_softmax,
    ("nll_loss_forward", "default"): _nll_loss_forward,
    ("native_batch_norm", "default"): _native_batch_norm,
    ("mm", "default"): _mm,
    ("addmm", "default"): _addmm,
    ("bmm", "default"): _bmm,
    ("baddbmm", "default"): _baddbmm,
    ("convolution", "default"): _convolution,
}


def _key(op):
    return (op.overloadpacket.__name__, op._overloadname) if op.namespace == "aten" else None


def has_formula(op):
    return _key(op) in _FORMULAS


class Through(Function):
    """One overload's call down the modes, with the backward above (autograd's level)."""

    @staticmethod
    def forward(ctx, op, kwargs, *args):
        from ._dispatch_bridge import dispatch

        ctx.op, ctx.kwargs, ctx.nargs = op, kwargs, len(args)
        out = dispatch(op, args, kwargs)
        # relu's and _log_softmax's backward read the output; nll_loss's its total_weight,
        # batch_norm's its saved statistics (the first output is the one differentiated).
        # Saved, so that an in-place change of one before backward raises as torch's does.
        outs = out if isinstance(out, tuple) else (out,)
        ctx.save_for_backward(*args, *outs)
        ctx.tuple_out = isinstance(out, tuple)
        if ctx.tuple_out:
            ctx.mark_non_differentiable(*out[1:])
            # their gradients stay None: zeros made for them would reach the modes
            ctx.set_materialize_grads(False)
        return out

    @staticmethod
    def backward(ctx, grad, *_rest):
        needs = ctx.needs_input_grad[2:]
        if grad is None:
            return (None,) * (2 + len(needs))
        saved = ctx.saved_tensors
        args, outs = saved[: ctx.nargs], saved[ctx.nargs :]
        out = outs if ctx.tuple_out else outs[0]
        grads = _FORMULAS[_key(ctx.op)](grad, args, ctx.kwargs, needs, out)
        return (None, None, *(g if isinstance(g, _C.Tensor) else None for g in grads))
