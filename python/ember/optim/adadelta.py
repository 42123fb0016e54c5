"""torch.optim.Adadelta and torch.optim.Adamax, written with in-place tensor ops.

These follow torch's single-tensor algorithms step for step. They are composites (one kernel per
tensor op) rather than fused kernels: correct first; a fused kernel comes when a benchmark asks.
"""

from .._C import amax, cat, lerp
from ..autograd.grad_mode import no_grad
from .optimizer import _check_betas, _FusedOptimizer, _to_scalar

__all__ = ["Adadelta", "Adamax"]


def _check(name, value, low=0.0):
    if not low <= value:
        raise ValueError(f"Invalid {name}: {value}")


class Adadelta(_FusedOptimizer):
    """Adadelta(params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0, foreach=None, *,
        capturable=False, maximize=False, differentiable=False)

    Adadelta (Zeiler, 2012): per-coordinate steps from running averages of g² and Δx²."""

    _capturable_paths = (("params and state_steps", False), ("params and state_steps", False))

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        _check("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def _update_group(self, group, params, grads):
        lr, rho = _to_scalar(group["lr"]), group["rho"]
        eps, wd = group["eps"], group["weight_decay"]
        states = self._lazy_states(params, "square_avg", "acc_delta")
        for p, grad, state in zip(params, grads, states):
            grad = -grad if group["maximize"] else grad
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            state["step"] += 1
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)


class Adamax(_FusedOptimizer):
    """Adamax(params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, foreach=None, *,
        maximize=False, differentiable=False, capturable=False)

    Adamax (Kingma & Ba, 2014): Adam with the infinity norm of past gradients."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def _update_group(self, group, params, grads):
        lr, (beta1, beta2) = _to_scalar(group["lr"]), group["betas"]
        eps, wd = group["eps"], group["weight_decay"]
        for p, grad, state in zip(params, grads, self._lazy_states(params, "exp_avg", "exp_inf")):
            grad = -grad if group["maximize"] else grad
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            state["step"] += 1
            exp_avg.copy_(lerp(exp_avg, grad, 1 - beta1))
            norm_buf = cat(
                [exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0
            )
            exp_inf.copy_(amax(norm_buf, 0))
            clr = lr / (1 - beta1 ** state["step"].item())
            p.addcdiv_(exp_avg, exp_inf, value=-clr)
