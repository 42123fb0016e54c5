"""torch.optim.Adafactor (Shazeer & Stern, 2018), written with tensor ops.

Follows torch's single-tensor algorithm: a matrix's second moment is kept factored as row and
column means (O(m + n) memory instead of O(mn)), a vector's in full; the step is relative to the
parameter's RMS and the update is clipped by its own RMS (threshold d)."""

import math

from .._ops.creation import tensor
from .._type_info import finfo
from ..autograd.grad_mode import no_grad
from .optimizer import _FusedOptimizer, _get_scalar_dtype, _to_scalar

__all__ = ["Adafactor"]


class Adafactor(_FusedOptimizer):
    """Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
        foreach=None, maximize=False)

    Adafactor: Adam-like steps from a factored second-moment estimate, with relative step sizes
    and update clipping; eps is (eps1, eps2), eps1=None meaning the dtype's machine epsilon."""

    _complex_as_real = False  # torch refuses complex parameters here

    _load_defaults = {"foreach": None}

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _state_of(self, p, grad):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
            if grad.dim() > 1:
                state["row_var"] = grad.new_zeros([*grad.shape[:-1], 1])
                state["col_var"] = grad.new_zeros([*grad.shape[:-2], 1, grad.shape[-1]])
            else:
                state["variance"] = grad.new_zeros(grad.shape)
        return state

    @no_grad()
    def _update_group(self, group, params, grads):
        lr = _to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        wd, d, decay = group["weight_decay"], group["d"], group["beta2_decay"]
        for p, grad in zip(params, grads):
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self._state_of(p, grad)
            grad = -grad if group["maximize"] else grad
            e1 = finfo(p.dtype).eps if eps1 is None else eps1
            state["step"] += 1
            t = state["step"].item()
            weight = t**decay  # 1 - beta2_t: the share of the new squared gradient
            rel_step = min(lr, 1.0 / math.sqrt(t))
            scale = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rel_step
            if wd != 0:
                p.mul_(1 - lr * wd)
            if grad.dim() > 1:
                row, col = state["row_var"], state["col_var"]
                sq = grad * grad
                row.lerp_(sq.mean(dim=-1, keepdim=True), weight)
                col.lerp_(sq.mean(dim=-2, keepdim=True), weight)
                var = (row @ col).div_(row.mean(dim=-2, keepdim=True).clamp_(min=e1))
            else:
                var = state["variance"]
                var.lerp_(grad * grad, weight)
                var = var.clone()
            update = var.clamp_(min=e1 * e1).rsqrt_().mul_(grad)
            clip = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
            p.add_(update, alpha=-scale / clip)
