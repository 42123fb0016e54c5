# ruff: noqa: E501
"""Data loading as research code writes it: a map-style dataset of dicts (tensors, strings, ints,
numpy arrays), a custom length-bucketing Sampler, BatchSampler, a collate_fn that pads with
pad_sequence and builds masks, default_collate on namedtuples and nested dicts, num_workers=2 with
worker_init_fn and get_worker_info, persistent workers, an IterableDataset sharded per worker,
ConcatDataset / Subset / StackDataset indexing and a seeded random_split."""

from collections import namedtuple

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Sampler,
    SequentialSampler,
    StackDataset,
    Subset,
    get_worker_info,
    random_split,
)
from torch.utils.data.dataloader import default_collate

Pair = namedtuple("Pair", ["x", "y"])


class Sentences(Dataset):
    def __init__(self, n=14):
        self.lens = [(i * 5) % 7 + 1 for i in range(n)]

    def __len__(self):
        return len(self.lens)

    def __getitem__(self, i):
        ln = self.lens[i]
        return {
            "ids": torch.arange(ln) + i,
            "label": i % 3,
            "name": f"s{i}",
            "feat": np.full(2, i, dtype=np.float32),
        }


class BucketSampler(Sampler):
    def __init__(self, lens, batch):
        self.lens, self.batch = lens, batch

    def __iter__(self):
        order = sorted(range(len(self.lens)), key=lambda i: (self.lens[i], i))
        chunks = [order[i : i + self.batch] for i in range(0, len(order), self.batch)]
        yield from chunks[::-1]

    def __len__(self):
        return (len(self.lens) + self.batch - 1) // self.batch


def collate(batch):
    ids = [b["ids"] for b in batch]
    lens = torch.tensor([len(t) for t in ids])
    padded = pad_sequence(ids, batch_first=True, padding_value=-1)
    mask = torch.arange(padded.shape[1])[None, :] < lens[:, None]
    return {
        "ids": padded,
        "mask": mask,
        "label": torch.tensor([b["label"] for b in batch]),
        "names": [b["name"] for b in batch],
        "feat": default_collate([b["feat"] for b in batch]),
    }


def init_fn(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2


def main():
    ds = Sentences()
    dl = DataLoader(ds, batch_sampler=BucketSampler(ds.lens, 4), collate_fn=collate)
    print("n_batches", len(dl))
    for k, b in enumerate(dl):
        if k < 2:
            print(
                f"batch{k}",
                tuple(b["ids"].shape),
                b["mask"].sum().item(),
                b["label"].tolist(),
                b["names"],
                b["feat"].dtype,
                b["feat"][:, 0].tolist(),
            )
    dlw = DataLoader(
        ds,
        batch_sampler=BucketSampler(ds.lens, 4),
        collate_fn=collate,
        num_workers=2,
        worker_init_fn=init_fn,
        persistent_workers=True,
        prefetch_factor=2,
    )
    order = [b["names"] for b in dlw]
    order2 = [b["names"] for b in dlw]
    print("workers_order", order == order2, order[0], order[-1])

    dflt = DataLoader(ds, batch_size=3, collate_fn=lambda b: [x["name"] for x in b])
    print("plain_collate_fn", next(iter(dflt)))
    bs = list(BatchSampler(SequentialSampler(range(10)), batch_size=4, drop_last=True))
    print("batch_sampler", bs, len(BatchSampler(range(10), 4, False)))
    print(
        "collate_namedtuple",
        default_collate([Pair(torch.tensor(1.0), 2), Pair(torch.tensor(3.0), 4)]),
    )
    nested = default_collate(
        [
            {"a": {"b": torch.ones(2)}, "c": (1.5, "z")},
            {"a": {"b": torch.zeros(2)}, "c": (2.5, "w")},
        ]
    )
    print(
        "collate_nested",
        nested["a"]["b"].tolist(),
        nested["c"][0].dtype,
        nested["c"][0].tolist(),
        nested["c"][1],
    )
    print(
        "collate_numpy_scalar",
        default_collate([np.float64(1.5), np.float64(2.0)]).dtype,
        default_collate([True, False]).dtype,
    )

    class Stream(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = get_worker_info()
            wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(wid, self.n, nw))

    got = sorted(x.item() for b in DataLoader(Stream(11), batch_size=2, num_workers=2) for x in b)
    print("iterable_workers", got)
    print("iterable_main", [b.tolist() for b in DataLoader(Stream(5), batch_size=2)])

    cat = ConcatDataset([Subset(ds, [0, 1, 2]), Subset(ds, range(10, 14))])
    print("concat", len(cat), cat[3]["name"], cat[-1]["name"], cat.cumulative_sizes)
    st = StackDataset(ds, torch.arange(14) * 10)
    print("stack_ds", len(st), st[2][1].item(), st[2][0]["name"])
    st2 = StackDataset(a=torch.arange(3), b=torch.ones(3))
    print("stack_ds_kw", sorted(st2[1].keys()), st2[1]["a"].item())
    tr, va = random_split(range(10), [0.7, 0.3], generator=torch.Generator().manual_seed(42))
    print("split_sizes", len(tr), len(va))
    print("rng_split", list(tr))
    loader = DataLoader(
        torch.arange(10.0), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(1)
    )
    print("rng_shuffle", [b.tolist() for b in loader])
    print("shuffle_covers", sorted(v for b in loader for v in b.tolist()) == list(range(10)))
    print("drop_last_len", len(DataLoader(torch.arange(10), batch_size=4, drop_last=True)))


if __name__ == "__main__":
    main()
