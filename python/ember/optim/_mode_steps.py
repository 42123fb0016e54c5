"""Optimizer steps as torch's per-parameter ops, taken while a TorchDispatchMode is active.

ember's optimizers update a param group in one fused C++ call (Note [Fused optimizer math] in
csrc/ember/optim/fused.h), which no dispatch mode can see. torch's CPU default (foreach off for
CPU tensors) is its single-tensor step, whose ops a mode sees one by one; while a mode is active,
these functions take that step through ember's tensor ops instead, so the mode sees them. The
fused kernels follow the same sequence, so both give the same values."""

from ..autograd.grad_mode import no_grad


def active():
    """True while this thread has a TorchDispatchMode on."""
    from .. import _dispatch_bridge

    return bool(_dispatch_bridge.modes())


def sgd(opt, group, params, grads, scalar):
    lr, momentum, dampening, decay = (
        scalar(group[k]) for k in ("lr", "momentum", "dampening", "weight_decay")
    )
    with no_grad():
        for p, g in zip(params, grads):
            g = -g if group["maximize"] else g
            if decay != 0:
                g = g.add(p, alpha=decay)
            if momentum != 0:
                state = opt.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.detach().clone()
                else:
                    buf.mul_(momentum).add_(g, alpha=1 - dampening)
                g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
            p.add_(g, alpha=-lr)


def adam(opt, group, params, grads, scalar):
    # the public functions, which the modes see (as torch's lift_fresh, zeros_like, maximum)
    from .. import maximum, preserve_format, tensor, zeros_like
    from .optimizer import _get_scalar_dtype

    amsgrad = group["amsgrad"]
    lr, eps, decay = (scalar(group[k]) for k in ("lr", "eps", "weight_decay"))
    beta1, beta2 = (scalar(b) for b in group["betas"])
    names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
    with no_grad():
        states = []
        for p in params:  # torch creates every parameter's state before the first update
            state = opt.state[p]
            if not state:
                state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
                for name in names:
                    state[name] = zeros_like(p, memory_format=preserve_format)
            states.append(state)
        for p, g, state in zip(params, grads, states):
            g = -g if group["maximize"] else g
            state["step"] += 1
            if decay != 0 and group["decoupled_weight_decay"]:
                p.mul_(1 - lr * decay)
            elif decay != 0:
                g = g.add(p, alpha=decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            step = state["step"].item()
            root = (1 - beta2**step) ** 0.5
            second = exp_avg_sq
            if amsgrad:
                second = state["max_exp_avg_sq"]
                maximum(second, exp_avg_sq, out=second)
            denom = (second.sqrt() / root).add_(eps)
            p.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**step))
