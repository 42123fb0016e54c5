"""torch.optim.Adagrad over the fused ember._C._optim.adagrad kernel."""

from .. import _C
from .._ops.creation import full_like, tensor
from .optimizer import _check_fused, _check_hparams, _FusedOptimizer, _get_scalar_dtype, _to_scalar

__all__ = ["Adagrad"]


class Adagrad(_FusedOptimizer):
    """Adagrad(params, lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
        foreach=None, *, maximize=False, differentiable=False, fused=None)

    Adagrad (Duchi et al.); its state is created for every parameter at construction."""

    _load_defaults = {
        "foreach": None,
        "maximize": False,
        "differentiable": False,
        "fused": None,
    }

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _check_hparams(
            lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
                state["sum"] = full_like(p, initial_accumulator_value)

    def share_memory(self):
        """No-op kept for API compatibility (ember has one process's memory)."""

    def _update_sparse(self, group, param, grad):
        from ._sparse import adagrad

        adagrad(self, group, param, grad)

    def _update_group(self, group, params, grads):
        states = [self.state[p] for p in params]
        _C._optim.adagrad(
            params,
            grads,
            [s["sum"] for s in states],
            [s["step"] for s in states],
            _to_scalar(group["lr"]),
            _to_scalar(group["lr_decay"]),
            _to_scalar(group["weight_decay"]),
            _to_scalar(group["eps"]),
            group["maximize"],
        )
