"""Samplers and splits as training scripts use them outside a process group: DistributedSampler
with explicit num_replicas/rank (padding, drop_last, set_epoch shuffling), random_split with
fractions and a seeded Generator, Subset/ConcatDataset indexing, SequentialSampler,
SubsetRandomSampler, BatchSampler, WeightedRandomSampler, and a DataLoader over a
DistributedSampler shard."""

import torch
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


def main():
    ds = TensorDataset(torch.arange(10).float().unsqueeze(1), torch.arange(10) % 3)
    for rank in range(3):
        s = DistributedSampler(ds, num_replicas=3, rank=rank, shuffle=False)
        print(f"dist_rank{rank}", list(s), len(s))
    s = DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False, drop_last=True)
    print("dist_drop_last", list(s), len(s), s.total_size)
    shuffled = DistributedSampler(ds, num_replicas=2, rank=0, shuffle=True, seed=3)
    e0 = list(shuffled)
    shuffled.set_epoch(1)
    e1 = list(shuffled)
    print("rng_dist_epochs", e0, e1)
    print(
        "dist_epoch_changes", e0 != e1, len(e0), sorted(set(e0) | set(e1)) == sorted(set(e0 + e1))
    )
    other = DistributedSampler(ds, num_replicas=2, rank=1, shuffle=True, seed=3)
    print("dist_disjoint", sorted(e0 + list(other)) == list(range(10)))
    loader = DataLoader(
        ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    )
    print("dist_loader", [b[0].flatten().tolist() for b in loader])
    try:
        DistributedSampler(ds, num_replicas=2, rank=2)
    except ValueError as e:
        print("bad_rank ValueError", "rank" in str(e).lower())

    g = torch.Generator().manual_seed(42)
    a, b = random_split(ds, [0.7, 0.3], generator=g)
    print("split_lengths", len(a), len(b), type(a).__name__)
    print("split_disjoint", sorted(a.indices + b.indices) == list(range(10)))
    print("rng_split", a.indices)
    parts = random_split(range(11), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
    print("split_fractions_remainder", [len(p) for p in parts])
    try:
        random_split(range(5), [3, 3])
    except ValueError as e:
        print("split_bad ValueError", "sum" in str(e).lower())
    sub = Subset(ds, [9, 0, 4])
    print("subset", [sub[i][1].item() for i in range(len(sub))], sub[0][0].tolist())
    cat = ConcatDataset([sub, ds])
    print("concat", len(cat), cat[3][0].tolist(), cat[-1][0].tolist(), cat.cumulative_sizes)
    print("sequential", list(SequentialSampler(range(4))))
    print(
        "batch_sampler",
        list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)),
    )
    print(
        "batch_sampler_drop",
        list(BatchSampler(range(7), 3, True)),
        len(BatchSampler(range(7), 3, True)),
    )
    srs = list(SubsetRandomSampler([1, 5, 7], generator=torch.Generator().manual_seed(1)))
    print("subset_random", sorted(srs))
    w = list(WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], num_samples=5, replacement=True))
    print("weighted_certain", w)
    w2 = list(WeightedRandomSampler([0.1, 0.2, 0.3, 0.4], num_samples=4, replacement=False))
    print("weighted_no_replacement", sorted(w2))
    rs = RandomSampler(
        range(6), replacement=True, num_samples=9, generator=torch.Generator().manual_seed(0)
    )
    print("random_replacement", len(list(rs)), len(rs))
    print("random_perm", sorted(RandomSampler(range(6))))


if __name__ == "__main__":
    main()
