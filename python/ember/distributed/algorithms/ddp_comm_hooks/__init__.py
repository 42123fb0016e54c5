"""ember.distributed.algorithms.ddp_comm_hooks: communication hooks for DistributedDataParallel
(DDP.register_comm_hook(state, hook)); `default_hooks` holds the all-reduce and compressing
hooks, `debugging_hooks` the no-op one, `powerSGD_hook` PowerSGD's low-rank compression.
DDPCommHookType names them for register_ddp_comm_hook, as torch's (its QUANTIZE_PER_TENSOR and
QUANTIZE_PER_CHANNEL are missing: ember has no quantization hooks)."""

import enum
from functools import partial

from . import ddp_zero_hook, debugging_hooks, default_hooks, powerSGD_hook

__all__ = [
    "DDPCommHookType",
    "ddp_zero_hook",
    "debugging_hooks",
    "default_hooks",
    "powerSGD_hook",
    "register_ddp_comm_hook",
]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


def _powerSGD_comm_hook_wrapper(
    comm_hook, model, state, matrix_approximation_rank, start_powerSGD_iter=1_000
):
    # as the other members, `state` is only the process group: PowerSGD's own state wraps it
    powersgd_state = powerSGD_hook.PowerSGDState(
        process_group=state,
        matrix_approximation_rank=matrix_approximation_rank,
        start_powerSGD_iter=start_powerSGD_iter,
    )
    model.register_comm_hook(powersgd_state, comm_hook)


def _powersgd(hook, rank):
    return enum.member(
        partial(_powerSGD_comm_hook_wrapper, comm_hook=hook, matrix_approximation_rank=rank)
    )


class DDPCommHookType(enum.Enum):
    """The hooks of ddp_comm_hooks by name; a member's value registers its hook:
    `DDPCommHookType.ALLREDUCE.value(model=model, state=process_group)`."""

    ALLREDUCE = enum.member(partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook))
    FP16_COMPRESS = enum.member(
        partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.fp16_compress_hook)
    )
    BF16_COMPRESS = enum.member(
        partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.bf16_compress_hook)
    )
    POWER_SGD = _powersgd(powerSGD_hook.powerSGD_hook, 1)
    POWER_SGD_RANK2 = _powersgd(powerSGD_hook.powerSGD_hook, 2)
    BATCHED_POWER_SGD = _powersgd(powerSGD_hook.batched_powerSGD_hook, 1)
    BATCHED_POWER_SGD_RANK2 = _powersgd(powerSGD_hook.batched_powerSGD_hook, 2)
    NOOP = enum.member(partial(_ddp_comm_hook_wrapper, comm_hook=debugging_hooks.noop_hook))


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """register_ddp_comm_hook(comm_hook_type, model, state=None) -> None

    Registers the hook `comm_hook_type` (a DDPCommHookType) on the DDP model `model`; `state`
    (a process group, or None for the default one) is handed to it."""
    comm_hook_type.value(model=model, state=state)
