"""Streaming data as real pipelines write it: an IterableDataset that shards its stream across
DataLoader workers with get_worker_info, worker_init_fn, persistent workers over two epochs,
batching of dicts/namedtuples/strings by default_collate, ChainDataset, a generator-backed
stream with batch_size=None, drop_last, a custom collate padding variable-length sequences, and
the order in which batches of several workers arrive."""

import math
from collections import namedtuple

import torch
from torch.utils.data import ChainDataset, DataLoader, IterableDataset, get_worker_info
from torch.utils.data.dataloader import default_collate

Sample = namedtuple("Sample", ["x", "label"])


class RangeStream(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        for i in range(lo, hi):
            yield {"idx": i, "x": torch.tensor([float(i), float(i) ** 0.5]), "name": f"s{i}"}


class StridedStream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(wid, self.n, nw):
            yield Sample(torch.full((2,), float(i)), i % 3)


class VarLen(IterableDataset):
    def __iter__(self):
        for n in [3, 1, 4, 1, 5, 2]:
            yield torch.arange(1, n + 1)


def pad_collate(batch):
    lengths = torch.tensor([len(s) for s in batch])
    padded = torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=0)
    return padded, lengths


def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.tag = f"w{worker_id}"


def main():
    ds = RangeStream(3, 10)
    single = [b["idx"].tolist() for b in DataLoader(ds, batch_size=3)]
    print("single_proc", single)
    multi = [b["idx"].tolist() for b in DataLoader(ds, batch_size=2, num_workers=2)]
    print("two_workers", multi)
    b0 = next(iter(DataLoader(ds, batch_size=2)))
    print("dict_batch", sorted(b0), b0["x"].shape, b0["name"], b0["idx"].dtype)
    loader = DataLoader(
        StridedStream(10),
        batch_size=4,
        num_workers=2,
        persistent_workers=True,
        worker_init_fn=seed_worker,
    )
    for epoch in range(2):
        batches = [(tuple(b.x.shape), b.label.tolist()) for b in loader]
        print(f"epoch{epoch}", batches, type(next(iter(loader))).__name__)
    drop = [len(b.label) for b in DataLoader(StridedStream(10), batch_size=4, drop_last=True)]
    print("drop_last", drop)
    chain = ChainDataset([RangeStream(0, 2), RangeStream(7, 9)])
    print("chain", [d["idx"] for d in chain])
    unbatched = list(DataLoader(RangeStream(0, 3), batch_size=None))
    print(
        "batch_size_none", [type(u["idx"]).__name__ for u in unbatched], unbatched[1]["x"].tolist()
    )
    padded = list(DataLoader(VarLen(), batch_size=3, collate_fn=pad_collate))
    print("pad_collate", [(p.tolist(), ln.tolist()) for p, ln in padded])
    print("default_collate", default_collate([(1, 2.0, "a"), (3, 4.0, "b")]))
    print("collate_tensors", default_collate([torch.ones(2), torch.zeros(2)]).tolist())
    print("collate_nested", default_collate([{"a": [1, 2]}, {"a": [3, 4]}]))
    import numpy as np

    print("collate_numpy", default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])]).dtype)
    try:
        len(DataLoader(ds, batch_size=2))
    except TypeError as e:
        print("len_iterable TypeError", "len" in str(e))
    try:
        list(DataLoader(ds, batch_size=2, shuffle=True))
    except ValueError as e:
        print("shuffle_iterable ValueError", "shuffle" in str(e))


if __name__ == "__main__":
    main()
