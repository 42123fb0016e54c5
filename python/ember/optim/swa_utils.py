"""torch.optim.swa_utils: AveragedModel (SWA and EMA weight averages), SWALR and update_bn."""

import copy
import itertools
import math

from .. import nn
from .._C import Tensor, int64, lerp
from .._ops.creation import tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules import batchnorm
from ._lr_base import LRScheduler, _per_group

__all__ = [
    "AveragedModel",
    "SWALR",
    "update_bn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
]


def get_ema_avg_fn(decay=0.999):
    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def get_ema_multi_avg_fn(decay=0.999):
    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if p_ema.is_floating_point() or p_ema.is_complex():
                p_ema.copy_(lerp(p_ema, p_model, 1 - decay))
            else:  # integer buffers (BatchNorm's num_batches_tracked): no lerp, as torch's
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            p_avg.add_((p_model - p_avg) / (n + 1))

    return swa_update


class AveragedModel(nn.Module):
    """A copy of `model` whose parameters (and, with use_buffers, buffers) are running averages
    of the model's, updated by update_parameters(model)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", tensor(0, dtype=int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    @no_grad()
    def update_parameters(self, model):
        mine, theirs = self._tensors(self.module), [p.detach() for p in self._tensors(model)]
        if self.n_averaged.item() == 0:
            for a, b in zip(mine, theirs):
                a.copy_(b)
        elif self.multi_avg_fn is not None:
            # As torch's: one call per (device, dtype) group, so each list holds one dtype.
            groups = {}
            for a, b in zip(mine, theirs):
                pair = groups.setdefault((str(a.device), a.dtype), ([], []))
                pair[0].append(a)
                pair[1].append(b)
            for group_mine, group_theirs in groups.values():
                self.multi_avg_fn(group_mine, group_theirs, self.n_averaged)
        else:
            fn = self.avg_fn or get_swa_avg_fn()
            for a, b in zip(mine, theirs):
                a.copy_(fn(a, b, self.n_averaged))
        if not self.use_buffers:
            # Buffers (BatchNorm statistics) follow the model; update_bn recomputes them.
            for a, b in zip(self.module.buffers(), model.buffers()):
                a.copy_(b.detach())
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recomputes BatchNorm running statistics with one pass over loader (cumulative average)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, batchnorm._BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to swa_lr over anneal_epochs ('cos' or 'linear'), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_func = self._cos_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cos_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
            for g in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            g["swa_lr"] * alpha + lr * (1 - alpha)
            for g, lr in zip(self.optimizer.param_groups, prev_lrs)
        ]
