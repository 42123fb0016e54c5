"""torch.distributed's smaller names beside the collectives: the error classes, the debug level,
point-to-point object lists, the coalesced collectives, subgroup helpers, get_node_local_rank,
get_pg_count and the rank-0 breakpoint. Built on distributed_c10d's public functions."""

import enum
import os
import warnings

from .. import _C as _C_root
from .._C import _distributed as _Cd
from . import distributed_c10d as c10d
from ._store import QueueEmptyError

__all__ = [
    "DistError",
    "DistBackendError",
    "DistStoreError",
    "DistNetworkError",
    "DebugLevel",
    "get_debug_level",
    "set_debug_level",
    "set_debug_level_from_env",
    "ProcessGroupGloo",
    "send_object_list",
    "recv_object_list",
    "all_gather_coalesced",
    "all_reduce_coalesced",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "get_node_local_rank",
    "get_pg_count",
    "breakpoint",
    "QueueEmptyError",
    "record_comm",
    "get_default_backend_for_device",
    "get_backend_config",
    "supports_complex",
    "is_xccl_available",
]


# torch's DistError family (DistError <- RuntimeError; DistBackendError, DistStoreError and
# DistNetworkError <- DistError), created by the C++ binding so that the runtime's store and
# network failures raise them (Note [Distributed errors] in csrc/ember/distributed/dist_error.h).
DistError = _Cd.DistError
DistBackendError = _Cd.DistBackendError
DistStoreError = _Cd.DistStoreError
DistNetworkError = _Cd.DistNetworkError


class record_comm:
    """record_comm(name)

    A context manager that names the collectives issued inside it for the profiler. ember's
    collectives are recorded under their own names, so the name is kept (record_comm.current)
    and nothing else changes."""

    current = None

    def __init__(self, name):
        self.name = name
        self._before = None

    def __enter__(self):
        self._before, record_comm.current = record_comm.current, self.name
        return self

    def __exit__(self, *exc):
        record_comm.current = self._before
        return False


def get_default_backend_for_device(device):
    """get_default_backend_for_device(device) -> str

    The backend a process group uses for device: "gloo" for the CPU ("nccl" for CUDA, as
    torch says, although ember runs on the CPU only)."""
    kind = str(device).split(":")[0]
    if kind == "cpu":
        return "gloo"
    if kind == "cuda":
        return "nccl"
    raise ValueError(f"Default backend not registered for device : {device}")


def get_backend_config(group=None):
    """get_backend_config(group=None) -> str

    The group's backend per device type, as torch writes it ("cpu:gloo,cuda:gloo" for a gloo
    group; a backend given per device type, "cpu:gloo", as it was given)."""
    backend = c10d.get_backend(group)
    return backend if ":" in backend else f"cpu:{backend},cuda:{backend}"


def supports_complex(reduceOp):
    """supports_complex(reduceOp) -> bool

    Whether reduceOp is defined on complex tensors (not MAX, MIN, PRODUCT or the bitwise ops)."""
    R = c10d.ReduceOp
    return reduceOp not in (R.MAX, R.MIN, R.PRODUCT, R.BAND, R.BOR, R.BXOR)


def is_xccl_available():
    """is_xccl_available() -> bool

    Whether the XCCL (Intel GPU) backend is built in: never in ember."""
    return False


# The C++ gloo process group that a ProcessGroup wraps (torch.distributed.ProcessGroupGloo).
ProcessGroupGloo = _Cd.ProcessGroupGloo


class DebugLevel(enum.Enum):
    """DebugLevel(value)

    How much the distributed runtime checks and logs: OFF, INFO or DETAIL
    (TORCH_DISTRIBUTED_DEBUG)."""

    OFF = 0
    INFO = 1
    DETAIL = 2


_debug = [DebugLevel.OFF]


def get_debug_level():
    """get_debug_level() -> DebugLevel

    The current debug level (set_debug_level, or TORCH_DISTRIBUTED_DEBUG when read)."""
    return _debug[0]


def set_debug_level(level):
    """set_debug_level(level) -> None

    Sets the debug level (a DebugLevel)."""
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level: expected a DebugLevel; got {type(level).__name__}")
    _debug[0] = level


def set_debug_level_from_env():
    """set_debug_level_from_env() -> None

    Sets the debug level from TORCH_DISTRIBUTED_DEBUG (OFF when unset); raises ValueError for
    a value other than OFF, INFO or DETAIL."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _debug[0] = DebugLevel[value]


_env_level = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
if _env_level in DebugLevel.__members__:
    _debug[0] = DebugLevel[_env_level]
del _env_level


def _peer(group, peer, group_peer, what):
    if peer is not None and group_peer is not None:
        raise ValueError(f"{what}: expected only one of the global and the group rank")
    if group_peer is not None:
        return c10d.get_global_rank(group or c10d.group.WORLD, group_peer)
    if peer is None:
        raise ValueError(f"{what}: expected a peer rank")
    return peer


def send_object_list(
    object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False
):
    """send_object_list(object_list, dst=None, group=None, device=None, group_dst=None,
        use_batch=False)

    Sends the picklable objects of object_list to rank dst, which receives them with
    recv_object_list (a list of the same length)."""
    dst = _peer(group, dst, group_dst, "send_object_list")
    if dst == c10d.get_rank():
        raise ValueError(
            "Invalid destination rank: destination rank should not be the same as "
            "the rank of the current process."
        )
    pieces = [c10d._to_tensor(obj) for obj in object_list]
    sizes = c10d._long([n for _, n in pieces])
    c10d.send(sizes, dst, group)
    data = _C_root.cat([t for t, _ in pieces]) if len(pieces) != 1 else pieces[0][0]
    c10d.send(data, dst, group)


def recv_object_list(
    object_list, src=None, group=None, device=None, group_src=None, use_batch=False
):
    """recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
        use_batch=False) -> int

    Receives len(object_list) objects sent with send_object_list into object_list, from rank src
    (any rank when None); returns the sender's rank."""
    sizes = c10d._long([0] * len(object_list))
    if src is None and group_src is None:
        sender = c10d.recv(sizes, None, group)
    else:
        sender = c10d.recv(sizes, _peer(group, src, group_src, "recv_object_list"), group)
    counts = [int(v) for v in sizes.tolist()]
    data = c10d._bytes(sum(counts))
    c10d.recv(data, sender, group)
    offset = 0
    for i, n in enumerate(counts):
        object_list[i] = c10d._from_tensor(data[offset : offset + n], n)
        offset += n
    return sender


class _Coalesced:
    """The Works of a coalesced collective, waited on together."""

    def __init__(self, works):
        self._works = [w for w in works if w is not None]

    def wait(self, timeout=None):
        for w in self._works:
            w.wait()
        return True

    def is_completed(self):
        return all(w.is_completed() for w in self._works)

    def is_success(self):
        return all(w.is_success() for w in self._works)


def _to_be_deprecated(name):
    warnings.warn(
        f"`torch.distributed.{name}` will be deprecated. If you must use it, please revisit our "
        "documentation later at "
        "https://pytorch.org/docs/main/distributed.html#collective-functions",
        FutureWarning,
        stacklevel=3,
    )


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False)

    all_gather of each tensor of input_tensor_list into the list of output_tensor_lists of the
    same position (output_tensor_lists[rank][i] is rank's input_tensor_list[i]). Warns as
    torch 2.13 (to be deprecated)."""
    _to_be_deprecated("all_gather_coalesced")
    world = c10d.get_world_size(group)
    if len(output_tensor_lists) != world:
        raise ValueError(
            f"all_gather_coalesced: expected {world} output lists (one per rank); "
            f"got {len(output_tensor_lists)}"
        )
    works = []
    for i, tensor in enumerate(input_tensor_list):
        outs = [output_tensor_lists[r][i] for r in range(world)]
        works.append(c10d.all_gather(outs, tensor, group, async_op=async_op))
    return _Coalesced(works) if async_op else None


def all_reduce_coalesced(tensors, op=c10d.ReduceOp.SUM, group=None, async_op=False):
    """all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False)

    all_reduce of every tensor of tensors (one dtype) as one flattened buffer, in place. Warns
    as torch 2.13 (to be deprecated)."""
    _to_be_deprecated("all_reduce_coalesced")
    if isinstance(tensors, _C_root.Tensor):
        tensors = [tensors]
    if not tensors:
        return _Coalesced([]) if async_op else None
    if len({t.dtype for t in tensors}) != 1:
        raise ValueError("all_reduce_coalesced: expected every tensor to have the same dtype")
    flat = _C_root.cat([t.reshape(-1) for t in tensors])
    c10d.all_reduce(flat, op, group)
    offset = 0
    for t in tensors:
        n = t.numel()
        t.copy_(flat[offset : offset + n].reshape(t.shape))
        offset += n
    return _Coalesced([]) if async_op else None


def new_subgroups(
    group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
        group_desc=None)

    Splits the ranks of group (the world) into consecutive subgroups of group_size; returns
    (this rank's subgroup, every subgroup). Every rank must call it."""
    if group_size is None:
        raise ValueError(
            "Default group size only takes effect when CUDA is available. If your subgroup using "
            "a backend that does not depend on CUDA, please pass in 'group_size' correctly."
        )
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    ranks = (
        list(range(c10d.get_world_size())) if group is None else c10d.get_process_group_ranks(group)
    )
    if group_size > len(ranks):
        raise ValueError(
            f"The arg 'group_size' ({group_size}) must not exceed the world size ({len(ranks)})"
        )
    if len(ranks) % group_size:
        raise ValueError("The world size must be divisible by 'group_size'")
    chunks = [ranks[i : i + group_size] for i in range(0, len(ranks), group_size)]
    return new_subgroups_by_enumeration(chunks, timeout, backend, pg_options, group_desc)


def new_subgroups_by_enumeration(
    ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
        pg_options=None, group_desc=None)

    A subgroup for each list of global ranks (no rank in two lists); returns (this rank's
    subgroup or None, every subgroup). Every rank must call it."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen = {}
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(
                    f"Rank {r} has appeared in both subgroup {seen[r]} and {list(ranks)}"
                )
            seen[r] = list(ranks)
    me = c10d.get_rank()
    mine, subgroups = None, []
    for ranks in ranks_per_subgroup_list:
        sub = c10d.new_group(list(ranks), timeout=timeout, backend=backend, pg_options=pg_options)
        subgroups.append(sub)
        if me in ranks:
            mine = sub
    return mine, subgroups


def get_node_local_rank(fallback_rank=None):
    """get_node_local_rank(fallback_rank=None) -> int

    This process's rank within its node: LOCAL_RANK (set by the launcher), else fallback_rank;
    raises RuntimeError when neither is there."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Pass fallback_rank to get_node_local_rank to run "
        "outside a launcher (for example in a single-process run)."
    )


def get_pg_count():
    """get_pg_count() -> int

    How many process groups this process has created since init_process_group (the default
    group included; 0 before it)."""
    return c10d._world.count if c10d.is_initialized() else 0


_breakpoint_hits = {}


def breakpoint(rank=0, skip=0, timeout_s=3600):  # noqa: A001
    """breakpoint(rank=0, skip=0, timeout_s=3600)

    Stops rank `rank` in pdb (reading the terminal, even under a launcher that redirects stdin)
    while every other rank waits in a barrier; skips the first `skip` calls from the same place."""
    import traceback

    if skip > 0:
        key = "".join(traceback.format_stack()[:-1])
        _breakpoint_hits[key] = _breakpoint_hits.get(key, 0) + 1
        if _breakpoint_hits[key] <= skip:
            return
    if c10d.get_rank() == rank:
        debugger = _distributed_pdb()
        debugger.message(
            f"\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called "
            f"dist.breakpoint(rank={rank})\n"
        )
        debugger.set_trace()
    c10d.barrier()


def _distributed_pdb():
    """A pdb that reads the terminal while it interacts (launchers redirect the workers' stdin)."""
    import pdb

    class _DistributedPdb(pdb.Pdb):
        def interaction(self, *args, **kwargs):
            saved, raw = self.stdin, self.use_rawinput
            try:
                with open("/dev/stdin") as terminal:
                    self.stdin, self.use_rawinput = terminal, False
                    pdb.Pdb.interaction(self, *args, **kwargs)
            finally:
                self.stdin, self.use_rawinput = saved, raw

    return _DistributedPdb()
