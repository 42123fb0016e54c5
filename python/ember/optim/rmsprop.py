"""torch.optim.RMSprop over the fused ember._C._optim.rmsprop kernel."""

import ember
from ember import _C

from .optimizer import Optimizer, _get_scalar_dtype, _to_scalar

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton), optionally centered and with momentum."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if isinstance(lr, ember.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], ember.Tensor):
                    p_state["step"] = ember.tensor(float(p_state["step"]),
                                                   dtype=_get_scalar_dtype())

    def step(self, closure=None):
        """Performs one RMSprop step; `closure` re-evaluates the model and returns the loss."""
        loss = self._call_closure(closure)
        for group in self.param_groups:
            params, grads = self._params_with_grad(group)
            if not params:
                continue
            momentum, centered = _to_scalar(group["momentum"]), group["centered"]
            states = []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = ember.tensor(0.0, dtype=_get_scalar_dtype())
                    state["square_avg"] = ember.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = ember.zeros_like(p)
                    if centered:
                        state["grad_avg"] = ember.zeros_like(p)
                states.append(state)
            _C._optim.rmsprop(
                params, grads, [s["square_avg"] for s in states],
                [s["grad_avg"] for s in states] if centered else [],
                [s["momentum_buffer"] for s in states] if momentum > 0 else [],
                [s["step"] for s in states], _to_scalar(group["lr"]), _to_scalar(group["alpha"]),
                _to_scalar(group["eps"]), _to_scalar(group["weight_decay"]), momentum, centered,
                group["maximize"])
        return loss
