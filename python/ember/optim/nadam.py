"""torch.optim.NAdam and torch.optim.RAdam, written with in-place tensor ops.

Both follow torch's single-tensor algorithms step for step (including the float32 mu_product of
NAdam), so trajectories match torch's to rounding. Composites, as Adadelta/Adamax are."""

from .._C import lerp
from .._ops.creation import tensor
from ..autograd.grad_mode import no_grad
from .optimizer import _check_betas, _FusedOptimizer, _get_scalar_dtype, _to_scalar

__all__ = ["NAdam", "RAdam"]


def _check_common(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    _check_betas(betas)
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _decay(p, grad, lr, wd, decoupled):
    if wd == 0:
        return grad
    if decoupled:
        p.mul_(1 - lr * wd)
        return grad
    return grad.add(p, alpha=wd)


class NAdam(_FusedOptimizer):
    """NAdam(params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, momentum_decay=0.004,
        decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
        differentiable=False)

    Adam with Nesterov momentum (Dozat, 2016), with torch's momentum-decay schedule."""

    _capturable_paths = (
        ("params, mu_products and state_steps", True),
        ("params, mu_products, and state_steps", False),
    )

    _load_defaults = {
        "decoupled_weight_decay": False,
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
    }

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_common(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def _update_group(self, group, params, grads):
        lr, (beta1, beta2) = _to_scalar(group["lr"]), group["betas"]
        eps, wd, psi = group["eps"], group["weight_decay"], group["momentum_decay"]
        for p, grad, state in zip(
            params, grads, self._lazy_states(params, "exp_avg", "exp_avg_sq")
        ):
            if "mu_product" not in state:
                state["mu_product"] = tensor(1.0, dtype=_get_scalar_dtype())
            grad = -grad if group["maximize"] else grad
            state["step"] += 1
            step = state["step"].item()
            grad = _decay(p, grad, lr, wd, group["decoupled_weight_decay"])
            bias_correction2 = 1 - beta2**step
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
            state["mu_product"].mul_(mu)
            mu_product = state["mu_product"].item()
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.copy_(lerp(exp_avg, grad, 1 - beta1))
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
            p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
            p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))


class RAdam(_FusedOptimizer):
    """RAdam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0,
        decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
        differentiable=False)

    Rectified Adam (Liu et al., 2019): plain momentum SGD until the variance estimate settles."""

    _load_defaults = {
        "decoupled_weight_decay": False,
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
    }

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_common(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def _update_group(self, group, params, grads):
        lr, (beta1, beta2) = _to_scalar(group["lr"]), group["betas"]
        eps, wd = group["eps"], group["weight_decay"]
        rho_inf = 2 / (1 - beta2) - 1
        for p, grad, state in zip(
            params, grads, self._lazy_states(params, "exp_avg", "exp_avg_sq")
        ):
            grad = -grad if group["maximize"] else grad
            state["step"] += 1
            step = state["step"].item()
            grad = _decay(p, grad, lr, wd, group["decoupled_weight_decay"])
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.copy_(lerp(exp_avg, grad, 1 - beta1))
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            corrected = exp_avg / bias_correction1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = (
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5
                adaptive = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
            else:
                p.add_(corrected * lr, alpha=-1.0)
