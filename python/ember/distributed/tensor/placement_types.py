"""ember.distributed.tensor.placement_types: the placement classes
(torch.distributed.tensor.placement_types), _StridedShard among them."""

from ._api import Partial, Placement, Replicate, Shard, _StridedShard

__all__ = ["Partial", "Placement", "Replicate", "Shard", "_StridedShard"]
