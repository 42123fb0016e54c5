"""torch.distributed.distributed_c10d: process groups, collectives and stores, over Gloo.

torch keeps them in one module; ember splits them by family and this module gathers them under
torch's names: the stores (_store.py), the groups and rank maps (_groups.py), the tensor
collectives and point-to-point calls (_collectives.py) and the object collectives
(_object_collectives.py). The private names other parts of ember.distributed use are re-exported
too."""

from ._collectives import (
    P2POp,
    ReduceOp,
    Work,
    all_gather,
    all_gather_single,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    batch_isend_irecv,
    broadcast,
    gather,
    irecv,
    isend,
    monitored_barrier,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_single,
    scatter,
    send,
)
from ._groups import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_backend_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    is_ucc_available,
    new_group,
)
from ._groups import _default as _default
from ._groups import _get_default_store as _get_default_store
from ._groups import _get_global_rank as _get_global_rank
from ._groups import _group as _group
from ._groups import _world as _world
from ._object_collectives import _bytes as _bytes
from ._object_collectives import _from_tensor as _from_tensor
from ._object_collectives import _long as _long
from ._object_collectives import _to_tensor as _to_tensor
from ._object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore

__all__ = [
    "Backend",
    "FileStore",
    "GroupMember",
    "HashStore",
    "P2POp",
    "PrefixStore",
    "ProcessGroup",
    "ReduceOp",
    "Store",
    "TCPStore",
    "Work",
    "all_gather",
    "all_gather_object",
    "all_gather_single",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_backend_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_single",
    "scatter",
    "scatter_object_list",
    "send",
]
