"""ember.distributed.tensor: DTensor, a tensor laid out over a DeviceMesh
(torch.distributed.tensor).

Each mesh dimension has a placement: Shard(d) splits tensor dim d over the ranks of that mesh
dimension as torch.chunk does (the last chunks may be smaller or empty), Replicate() keeps a full
copy on each, Partial() holds addends whose sum is the value. A DTensor is a Tensor whose data is
this rank's local piece, with its mesh, placements and global shape. redistribute() moves between
layouts with collectives (Shard->Replicate all_gather, Partial->Replicate all_reduce,
Partial->Shard reduce_scatter, Shard(i)->Shard(j) gather and cut, Replicate->Shard a local
slice); ember's operators on DTensors follow sharding rules (_sharding_rules.py,
_sharding_rules_nn.py, routed by _dispatch.py) and are differentiable, and so are redistribute,
from_local, to_local and full_tensor.
"""

from ._api import (
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)
from ._factories import empty, full, ones, rand, randn, zeros

__all__ = [
    "DTensor",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_module",
    "distribute_tensor",
    "empty",
    "full",
    "ones",
    "rand",
    "randn",
    "zeros",
]
