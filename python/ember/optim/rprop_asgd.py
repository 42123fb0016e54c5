"""torch.optim.Rprop and torch.optim.ASGD, following torch's single-tensor algorithms step for
step (ASGD's eta and mu stay 0-d tensors of the scalar dtype, as torch's do)."""

from .._ops.creation import full, full_like, ones, tensor, zeros, zeros_like
from .._ops.index import where
from ..autograd.grad_mode import no_grad
from .optimizer import _FusedOptimizer, _get_scalar_dtype, _to_scalar

__all__ = ["Rprop", "ASGD"]


class Rprop(_FusedOptimizer):
    """Rprop(params, lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-06, 50), *, capturable=False,
        foreach=None, maximize=False, differentiable=False)

    Resilient backpropagation: per-weight step sizes grown or shrunk by the gradient's sign."""

    _capturable_paths = (("params and state_steps", True), ("params and state_steps", True))

    _load_defaults = {
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
    }

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def _update_group(self, group, params, grads):
        etaminus, etaplus = group["etas"]
        step_min, step_max = group["step_sizes"]
        lr = _to_scalar(group["lr"])
        for p, grad in zip(params, grads):
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
                state["prev"] = zeros_like(p)
                state["step_size"] = full_like(grad, lr)
            grad = -grad if group["maximize"] else grad
            state["step"] += 1
            prev, step_size = state["prev"], state["step_size"]
            sign = grad.mul(prev).sign()
            factor = where(
                sign > 0,
                full([], etaplus, dtype=p.dtype),
                where(sign < 0, full([], etaminus, dtype=p.dtype), ones([], dtype=p.dtype)),
            )
            step_size.mul_(factor).clamp_(step_min, step_max)
            # After a sign change the step is skipped and the gradient forgotten.
            grad = where(sign < 0, zeros([], dtype=grad.dtype), grad)
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)


class ASGD(_FusedOptimizer):
    """ASGD(params, lr=0.01, lambd=0.0001, alpha=0.75, t0=1000000.0, weight_decay=0, foreach=None,
        maximize=False, differentiable=False, capturable=False)

    Averaged SGD (Polyak and Juditsky): SGD with a decaying rate, plus a running average `ax`
    of the iterates from step t0 on."""

    _capturable_paths = (
        ("params, mus, etas, and state_steps", True),
        ("params, mus, etas, and state_steps", False),
    )

    _load_defaults = {
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
    }

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def _update_group(self, group, params, grads):
        lr, lambd, alpha = _to_scalar(group["lr"]), group["lambd"], group["alpha"]
        t0, wd = group["t0"], group["weight_decay"]
        for p, grad in zip(params, grads):
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
                state["eta"] = tensor(lr, dtype=_get_scalar_dtype())
                state["mu"] = ones([], dtype=_get_scalar_dtype())
                state["ax"] = zeros_like(p)
            grad = -grad if group["maximize"] else grad
            state["step"] += 1
            step = state["step"].item()
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            eta = state["eta"].item()
            p.mul_(1 - lambd * eta)
            p.add_(grad, alpha=-eta)
            ax = state["ax"]
            if state["mu"].item() != 1:
                ax.add_(p.sub(ax).mul_(state["mu"]))
            else:
                ax.copy_(p)
            state["eta"].copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            state["mu"].copy_(tensor(1 / max(1, step - t0)))
