"""torch.optim.Adam over the fused ember._C._optim.adam kernel."""

from .. import _C
from .._C import Tensor
from . import _mode_steps
from .optimizer import _check_betas, _check_fused, _FusedOptimizer, _to_scalar

__all__ = ["Adam"]


def _check_adam_args(lr, betas, eps, weight_decay, foreach, capturable):
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    _check_betas(betas)
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    both_float = isinstance(betas[0], float) and isinstance(betas[1], float)
    both_tensor = isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)
    if not (both_float or both_tensor):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor):
            if not capturable and foreach:
                raise ValueError(
                    f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
                )
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


class Adam(_FusedOptimizer):
    """Adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, amsgrad=False, *,
        foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
        decoupled_weight_decay=False)

    Adam (Kingma & Ba), with AMSGrad and optionally decoupled (AdamW) weight decay."""

    _sparse_advice = ", please consider SparseAdam instead"

    _load_defaults = {
        "amsgrad": False,
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
        "decoupled_weight_decay": False,
        "fused": None,
    }

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        _check_adam_args(lr, betas, eps, weight_decay, foreach, capturable)
        betas = tuple(map(_to_scalar, betas))
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    _mode_step = _mode_steps.adam

    def _update_group(self, group, params, grads):
        amsgrad = group["amsgrad"]
        states = self._lazy_states(
            params, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if amsgrad else ())
        )
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        _C._optim.adam(
            params,
            grads,
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [s["max_exp_avg_sq"] for s in states] if amsgrad else [],
            [s["step"] for s in states],
            _to_scalar(group["lr"]),
            beta1,
            beta2,
            _to_scalar(group["eps"]),
            _to_scalar(group["weight_decay"]),
            amsgrad,
            group["maximize"],
            group["decoupled_weight_decay"],
        )
