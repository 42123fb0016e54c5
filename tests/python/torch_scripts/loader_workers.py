# ruff: noqa: E501
"""DataLoader features that real input pipelines lean on, with worker processes: a map-style
Dataset read by num_workers=2 with persistent_workers and prefetch_factor, a custom
bucketing batch Sampler (lengths grouped, shuffled with a seeded generator), a collate_fn that
pads and returns a dict, worker_init_fn seeding numpy per worker, an IterableDataset sharded
by get_worker_info() so that no sample repeats, pin_memory on a CPU machine, a
DistributedSampler-style split by hand, and the order / content checks that make them safe."""

import math

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, Sampler, get_worker_info


class VarLenDataset(Dataset):
    def __init__(self, n=20):
        self.items = [torch.arange(1 + (i * 7) % 6, dtype=torch.float32) + i for i in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        info = get_worker_info()
        return {"x": self.items[i], "idx": i, "worker": -1 if info is None else info.id}


class BucketBatchSampler(Sampler):
    def __init__(self, lengths, batch_size, generator=None):
        self.lengths, self.bs, self.g = lengths, batch_size, generator

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: (self.lengths[i], i))
        batches = [order[i : i + self.bs] for i in range(0, len(order), self.bs)]
        perm = torch.randperm(len(batches), generator=self.g).tolist()
        for p in perm:
            yield batches[p]

    def __len__(self):
        return math.ceil(len(self.lengths) / self.bs)


def pad_collate(batch):
    lens = torch.tensor([len(b["x"]) for b in batch])
    out = torch.zeros(len(batch), int(lens.max()))
    for i, b in enumerate(batch):
        out[i, : len(b["x"])] = b["x"]
    return {
        "x": out,
        "lengths": lens,
        "idx": torch.tensor([b["idx"] for b in batch]),
        "workers": [b["worker"] for b in batch],
    }


class ShardedRange(IterableDataset):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(wid, self.n, nw):
            yield torch.tensor([i, i * i])


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)


class NumpyNoise(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor([float(i), float(np.random.rand() < 2.0)])


def main():
    torch.manual_seed(0)
    ds = VarLenDataset()
    lengths = [len(t) for t in ds.items]
    g = torch.Generator().manual_seed(1234)
    sampler = BucketBatchSampler(lengths, batch_size=4, generator=g)
    loader = DataLoader(
        ds,
        batch_sampler=sampler,
        collate_fn=pad_collate,
        num_workers=2,
        persistent_workers=True,
        prefetch_factor=2,
    )
    seen = []
    for epoch in range(2):
        widths, workers = [], set()
        for batch in loader:
            workers |= set(batch["workers"])
            seen += batch["idx"].tolist()
            widths.append(batch["x"].shape[1])
            assert (
                batch["x"].sum(1) == torch.stack([ds.items[i].sum() for i in batch["idx"]])
            ).all()
        print(
            f"epoch{epoch} batches {len(widths)} widths_sorted {sorted(widths)} workers_used {sorted(workers)}"
        )
    print(f"each_twice {sorted(seen) == sorted(list(range(20)) * 2)} len {len(loader)}")
    print(f"rng_order {seen[:8]}")

    # Sharded iterable dataset: each sample exactly once across workers.
    it = DataLoader(ShardedRange(11), batch_size=3, num_workers=2)
    got = torch.cat(list(it))
    print(
        f"sharded n {got.size(0)} unique {got[:, 0].unique().numel()} sum_sq {got[:, 1].sum().item()} batches {len(list(it))}"
    )
    single = torch.cat(list(DataLoader(ShardedRange(11), batch_size=4)))
    print(f"single_proc_order {single[:, 0].tolist()}")

    # worker_init_fn and a seeded generator: two loaders with the same seed agree.
    def run(seed):
        gen = torch.Generator().manual_seed(seed)
        dl = DataLoader(
            NumpyNoise(),
            batch_size=2,
            shuffle=True,
            num_workers=2,
            worker_init_fn=seed_worker,
            generator=gen,
        )
        return torch.cat([b[:, 0] for b in dl]).tolist()

    a, b = run(7), run(7)
    print(f"reproducible {a == b} permutation {sorted(a) == list(range(8))}")

    # pin_memory, drop_last, timeout and in-order results with workers.
    dl = DataLoader(
        torch.arange(10.0),
        batch_size=3,
        num_workers=2,
        pin_memory=False,
        drop_last=True,
        timeout=30,
    )
    print(f"ordered {[x.tolist() for x in dl]} len {len(dl)}")
    # Manual distributed split: rank r takes every world_size-th index after padding.
    n, world = 10, 3
    idx = list(range(n)) + list(range(n))[: (-n) % world]
    shards = [idx[r::world] for r in range(world)]
    print(f"dist_shards {shards}")
    from torch.utils.data.distributed import DistributedSampler

    ds_s = [
        list(DistributedSampler(range(n), num_replicas=world, rank=r, shuffle=False))
        for r in range(world)
    ]
    print(
        f"distributed_sampler_same {ds_s == shards} drop_last {[list(DistributedSampler(range(n), num_replicas=world, rank=r, shuffle=False, drop_last=True)) for r in range(world)]}"
    )


if __name__ == "__main__":
    main()
