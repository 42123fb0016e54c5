"""What single-process programs written for torch's distributed tools meet in ember:
ember.distributed's guards and errors, DataParallel, DistributedSampler's partition."""

import numpy as np
import pytest

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.utils.data import DataLoader, DistributedSampler


def test_distributed_guards_and_errors():
    # Gloo is there, but a single process that never joined a group has no default group.
    assert dist.is_available() and not dist.is_initialized()
    for f in (dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(ValueError, match="process group has not been initialized"):
            f()
    with pytest.raises(RuntimeError, match="NCCL built in"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="process group"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))


def test_data_parallel_is_the_module():
    lin = nn.Linear(3, 2)
    dp = nn.DataParallel(lin)
    x = ember.randn(4, 3)
    np.testing.assert_array_equal(dp(x).detach().numpy(), lin(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"] and dp.module is lin
    assert dp.device_ids == []
    out = nn.parallel.data_parallel(lin, x)
    np.testing.assert_array_equal(out.detach().numpy(), lin(x).detach().numpy())


@pytest.mark.parametrize(
    "n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False)]
)
def test_distributed_sampler_partition(n, replicas, drop_last):
    shards = [
        list(DistributedSampler(range(n), replicas, r, shuffle=False, drop_last=drop_last))
        for r in range(replicas)
    ]
    per = (n // replicas) if drop_last else -(-n // replicas)
    assert all(len(s) == per for s in shards)
    merged = [i for row in zip(*shards) for i in row]  # rank r takes every replicas-th index
    if drop_last:
        assert merged == list(range(per * replicas))
    else:
        assert merged == [i % n for i in range(per * replicas)]  # padded by wrapping around


def test_distributed_sampler_shuffles_by_epoch():
    s = DistributedSampler(range(20), num_replicas=2, rank=0, seed=3)
    first, again = list(s), list(s)
    assert first == again and len(set(first)) == 10
    s.set_epoch(1)
    assert list(s) != first
    both = set(DistributedSampler(range(20), 2, 0, seed=7)) | set(
        DistributedSampler(range(20), 2, 1, seed=7)
    )
    assert both == set(range(20))  # the two ranks see the same permutation, split
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="process group"):
        DistributedSampler(range(4))
    batches = list(DataLoader(range(8), batch_size=2, sampler=DistributedSampler(range(8), 2, 1)))
    assert sum(len(b) for b in batches) == 4
