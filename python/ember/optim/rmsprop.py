"""torch.optim.RMSprop over the fused ember._C._optim.rmsprop kernel."""

from .. import _C
from .optimizer import _check_hparams, _FusedOptimizer, _to_scalar

__all__ = ["RMSprop"]


class RMSprop(_FusedOptimizer):
    """RMSprop(params, lr=0.01, alpha=0.99, eps=1e-08, weight_decay=0, momentum=0, centered=False,
        capturable=False, foreach=None, maximize=False, differentiable=False)

    RMSprop (Hinton), optionally centered and with momentum."""

    _capturable_paths = (("params and state_steps", True), ("params and state_steps", True))

    _load_defaults = {
        "momentum": 0,
        "centered": False,
        "foreach": None,
        "maximize": False,
        "differentiable": False,
        "capturable": False,
    }

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_hparams(lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update_group(self, group, params, grads):
        momentum, centered = _to_scalar(group["momentum"]), group["centered"]
        states = self._lazy_states(
            params,
            "square_avg",
            *(("momentum_buffer",) if momentum > 0 else ()),
            *(("grad_avg",) if centered else ()),
        )
        _C._optim.rmsprop(
            params,
            grads,
            [s["square_avg"] for s in states],
            [s["grad_avg"] for s in states] if centered else [],
            [s["momentum_buffer"] for s in states] if momentum > 0 else [],
            [s["step"] for s in states],
            _to_scalar(group["lr"]),
            _to_scalar(group["alpha"]),
            _to_scalar(group["eps"]),
            _to_scalar(group["weight_decay"]),
            momentum,
            centered,
            group["maximize"],
        )
