"""The base of ember.optim's learning-rate schedulers: LRScheduler and the helpers that read and
write a value per parameter group (shared by lr_scheduler, _cyclic_lr and swa_utils)."""

import warnings

from .._C import Tensor
from .optimizer import Optimizer, _to_scalar

_EPOCH_DEPRECATION = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer, key):
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    # A tensor lr is updated in place so that optimizers holding it see the change.
    if isinstance(group[key], Tensor):
        group[key].fill_(_to_scalar(value))
    else:
        group[key] = value


def _per_group(name, optimizer, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        return [_copy(v) for v in value]
    return [_copy(value)] * len(optimizer.param_groups)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """LRScheduler(optimizer, last_epoch=-1)

    Base class: sets 'initial_lr' in each group, then takes the initial step (epoch 0)."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n2. You're using last_epoch >= 0 "
                        "for a fresh training run (not recommended)"
                    )
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restores attributes saved by state_dict()."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates set by the last step, one per param group."""
        return self._last_lr

    def get_lr(self):
        """The learning rates for the current last_epoch (subclasses implement it)."""
        raise NotImplementedError

    def _warn_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def step(self, epoch=None):
        """Advances one epoch (or jumps to `epoch`, deprecated) and sets the groups' lr."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                "1.1.0 and later, you should call them in the opposite order: `optimizer.step()` "
                "before `lr_scheduler.step()`.  Failure to do this will result in PyTorch "
                "skipping the first value of the learning rate schedule. See more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def _current_lrs(self):
        return _group_values(self.optimizer, "lr")

    def _scaled(self, factor):
        return [group["lr"] * factor for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler
