"""Cyclical learning-rate schedules: CyclicLR and OneCycleLR (torch.optim.lr_scheduler)."""

import math
import types

from ._lr_base import LRScheduler, _check_optimizer, _per_group, _set_group_value

__all__ = ["CyclicLR", "OneCycleLR"]


def _set_momentum(group, value, use_beta1):
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _momentum_params(sched, optimizer, base_momentum, max_momentum, last_epoch):
    """Validates cycle_momentum and seeds each group's momentum (or beta1) at its maximum."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
        )
    sched.use_beta1 = "betas" in optimizer.defaults
    base_moms = _per_group("base_momentum", optimizer, base_momentum)
    max_moms = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for top, base, group in zip(max_moms, base_moms, optimizer.param_groups):
            _set_momentum(group, top, sched.use_beta1)
            group["max_momentum"] = top
            group["base_momentum"] = base
    return base_moms, max_moms


class CyclicLR(LRScheduler):
    """CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
        mode='triangular', gamma=1.0, scale_fn=None, scale_mode='cycle', cycle_momentum=True,
        base_momentum=0.8, max_momentum=0.9, last_epoch=-1)

    Cycles the lr between base_lr and max_lr (triangular, triangular2, exp_range or custom)."""

    def __init__(
        self,
        optimizer,
        base_lr,
        max_lr,
        step_size_up=2000,
        step_size_down=None,
        mode="triangular",
        gamma=1.0,
        scale_fn=None,
        scale_mode="cycle",
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch=-1,
    ):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _momentum_params(
                self, optimizer, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is None and self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self._scale_fn_custom is None and self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude scale at cycle (or iteration) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / 2.0 ** (x - 1)
        return self.gamma**x

    def get_lr(self):
        """The lrs for the current iteration (also sets the cycled momentum or beta1)."""
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            factor = x / self.step_ratio
        else:
            factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base + (top - base) * factor * scale for base, top in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, base, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                _set_momentum(group, top - (top - base) * factor * scale, self.use_beta1)
        return lrs

    def state_dict(self):
        """Attributes; a callable-object scale_fn is saved as its __dict__, a function as None."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (
            fn.__dict__.copy()
            if fn is not None and not isinstance(fn, types.FunctionType)
            else None
        )
        return state

    def load_state_dict(self, state_dict):
        """Restores attributes and the state of a callable-object scale_fn."""
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """OneCycleLR(optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
        pct_start=0.3, anneal_strategy='cos', cycle_momentum=True, base_momentum=0.85,
        max_momentum=0.95, div_factor=25.0, final_div_factor=10000.0, three_phase=False,
        last_epoch=-1)

    The 1cycle policy: warm up to max_lr, then anneal far below the initial lr."""

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        # Phases as (end_step, start_lr, end_lr, start_momentum, end_momentum) group keys.
        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                self._phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                self._phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                self._phase(
                    self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"
                ),
            ]
        else:
            self._schedule_phases = [
                self._phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                self._phase(
                    self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"
                ),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _momentum_params(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
        return {
            "end_step": end_step,
            "start_lr": start_lr,
            "end_lr": end_lr,
            "start_momentum": start_momentum,
            "end_momentum": end_momentum,
        }

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        """The lrs for the current step (also sets the cycled momentum or beta1)."""
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps "
                f"is {self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == last:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(
                            group,
                            self._anneal(
                                group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                            ),
                            self.use_beta1,
                        )
                    break
                start_step = end_step
        return lrs
