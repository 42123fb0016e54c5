"""DistributedSampler: one replica's share of a dataset, as torch.utils.data.DistributedSampler.

ember runs in one process, so num_replicas and rank must be given (torch would read them from the
process group); the partition is torch's: shuffle by seed + epoch, pad by repeating indices (or
drop the tail with drop_last), then every num_replicas-th index from rank.
"""

import math

from ... import distributed as dist
from ..._C import Generator
from ..._ops.random import randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
        drop_last=False)

    Gives each of num_replicas processes its own equal share of the dataset's indices, reshuffled
    per epoch with set_epoch."""

    def __init__(
        self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False
    ):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            short = self.total_size - len(indices)
            indices += (indices * math.ceil(short / max(len(indices), 1)))[:short]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Makes the next shuffle differ: each epoch seeds with seed + epoch."""
        self.epoch = epoch
