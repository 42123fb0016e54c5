"""ember.distributed: ember trains in one process, so no process group can be created.

Programs written for torch commonly guard their distributed code with `is_available()` or
`is_initialized()`; those guards take the single-process path here. Calls that need a process
group raise torch's error for a missing default group.
"""

__all__ = [
    "is_available",
    "is_initialized",
    "is_torchelastic_launched",
    "init_process_group",
    "get_rank",
    "get_world_size",
    "barrier",
    "all_reduce",
    "broadcast",
    "all_gather",
    "destroy_process_group",
    "ReduceOp",
]

_NO_GROUP = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class ReduceOp:
    """The reduction names of the collectives (kept so that programs can refer to them)."""

    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG = (
        "SUM",
        "PRODUCT",
        "MIN",
        "MAX",
        "BAND",
        "BOR",
        "BXOR",
        "AVG",
    )


def is_available():
    """False: ember has no distributed backend (no gloo, no NCCL, no MPI)."""
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


def init_process_group(*args, **kwargs):
    raise RuntimeError(
        "ember.distributed: distributed training is not supported; ember runs in "
        "one process (is_available() is False)"
    )


def _needs_group(*args, **kwargs):
    raise ValueError(_NO_GROUP)


get_rank = get_world_size = barrier = all_reduce = broadcast = all_gather = _needs_group


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")
