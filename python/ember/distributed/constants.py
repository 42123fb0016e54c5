"""ember.distributed.constants (torch.distributed.constants): the default timeout of a process
group; the NCCL one is None, as in a torch built without NCCL."""

from ._groups import default_pg_timeout

default_pg_nccl_timeout = None

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]
