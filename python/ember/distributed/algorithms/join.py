"""The join context manager: training with uneven inputs over ranks (torch.distributed.algorithms.
join).

Inside `with Join([ddp_model, zero_optim]):`, each iteration of a rank that still has inputs
announces itself (the first joinable's forward all-reduces a one). A rank that ran out of
inputs leaves its loop and, in __exit__, answers those announcements with zeros; while the sum is
non-zero some rank is still training, and the joined rank runs every joinable's main hook, which
issues the same collectives that joinable issues on the training ranks (so nobody hangs). When
the sum is zero every rank has joined, and the post hooks run (DDP copies the last joiner's
model to everyone).
"""

import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

from ..._ops import creation
from .. import distributed_c10d as dist

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """A joinable's hooks: main_hook() shadows one iteration's collectives on a joined rank;
    post_hook(is_last_joiner) runs once every rank has joined."""

    def main_hook(self):
        """main_hook() -> None"""

    def post_hook(self, is_last_joiner):
        """post_hook(is_last_joiner) -> None"""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """Joinable()

    Base of the classes Join manages (DistributedDataParallel, ZeroRedundancyOptimizer): they
    give a join_hook, the device and the process group, and call Join.notify_join_context once
    per iteration."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """join_hook(**kwargs) -> JoinHook"""

    @property
    @abstractmethod
    def join_device(self):
        """The device the join collectives use."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group the join collectives use."""


_SKEW_WARNING = 1000


class Join:
    """Join(joinables, enable=True, throw_on_early_termination=False, **kwargs)

    Context manager for ranks with different numbers of inputs: a rank that ran out shadows
    the others' collectives (through each joinable's join hook, built with **kwargs) until all
    ranks ran out. With throw_on_early_termination every rank raises RuntimeError as soon as
    one ran out instead."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(self._joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group) for j in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = self._joinables[0].join_process_group
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc, tb):
        if not self._enable or exc_type is not None:
            return  # an exception propagates as it is
        iterations = 0
        is_last_joiner = True
        while True:
            if iterations > _SKEW_WARNING:
                warnings.warn(
                    f"Detected uneven input skew of greater than {_SKEW_WARNING}. This means "
                    f"that rank {self._rank} has at least {_SKEW_WARNING} fewer inputs than "
                    "other currently-active ranks. This level of skew could lead to "
                    "performance degradation during training.",
                    stacklevel=2,
                )
            active = creation.zeros(1)
            dist.all_reduce(active, group=self._process_group)
            if active.item() == 0:
                break
            if self._throw_on_early_termination:
                dist.all_reduce(creation.ones(1), group=self._process_group)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            iterations += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    @staticmethod
    def notify_join_context(joinable):
        """notify_join_context(joinable) -> Optional[Work]

        Called by a joinable once per iteration on a rank that still has inputs: announces the
        rank to the joined ones (only for the first joinable of an enabled Join)."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(
                f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
            )
        config = joinable._join_config
        if not (config.is_first_joinable and config.enable):
            return None
        group = joinable.join_process_group
        work = dist.all_reduce(creation.ones(1), group=group, async_op=True)
        if config.throw_on_early_termination:
            exhausted = creation.zeros(1)
            dist.all_reduce(exhausted, group=group)
            if exhausted.item():
                raise RuntimeError(
                    "Detected at least one rank that exhausted inputs. Throwing across all ranks."
                )
        return work
