"""ember.distributed.algorithms.ddp_comm_hooks: communication hooks for DistributedDataParallel
(DDP.register_comm_hook(state, hook)); `default_hooks` holds the all-reduce and compressing
hooks, `debugging_hooks` the no-op one, `powerSGD_hook` PowerSGD's low-rank compression."""

from . import ddp_zero_hook, debugging_hooks, default_hooks, powerSGD_hook

__all__ = ["ddp_zero_hook", "debugging_hooks", "default_hooks", "powerSGD_hook"]
