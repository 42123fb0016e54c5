"""torch.optim.SGD over the fused ember._C._optim.sgd kernel."""

from .. import _C
from . import _mode_steps
from .optimizer import _check_fused, _FusedOptimizer, _to_scalar

__all__ = ["SGD"]


class SGD(_FusedOptimizer):
    """SGD(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
        maximize=False, foreach=None, differentiable=False, fused=None)

    Stochastic gradient descent with optional momentum, Nesterov and weight decay."""

    _load_defaults = {
        "nesterov": False,
        "maximize": False,
        "foreach": None,
        "differentiable": False,
        "fused": False,
    }

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def _update_sparse(self, group, param, grad):
        from ._sparse import sgd

        sgd(self, group, param, grad)

    _mode_step = _mode_steps.sgd

    def _update_group(self, group, params, grads):
        momentum = _to_scalar(group["momentum"])
        buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else []
        buffers = _C._optim.sgd(
            params,
            grads,
            buffers,
            _to_scalar(group["lr"]),
            momentum,
            _to_scalar(group["dampening"]),
            _to_scalar(group["weight_decay"]),
            group["nesterov"],
            group["maximize"],
        )
        if momentum != 0:
            for p, buf in zip(params, buffers):
                self.state[p]["momentum_buffer"] = buf
