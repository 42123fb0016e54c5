# ruff: noqa: E501
"""Data loading as NLP and tabular code writes it: a map-style dataset of dicts with
variable-length token lists, a collate_fn that pads with pad_sequence and keeps lengths, a
length-bucketing batch sampler subclassing Sampler, BatchSampler over SequentialSampler,
default_collate on nested dicts/tuples/namedtuples/numpy, ConcatDataset and Subset indexing,
random_split / RandomSampler / WeightedRandomSampler driven by a seeded Generator, and
DataLoader lengths with drop_last."""

import collections

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    WeightedRandomSampler,
    default_collate,
    random_split,
)

Pair = collections.namedtuple("Pair", ["x", "y"])


class Sentences(Dataset):
    def __init__(self, n=10):
        self.items = [list(range(1 + i % 4, 1 + i % 4 + 2 + (i * 3) % 5)) for i in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        toks = self.items[i]
        return {"ids": torch.tensor(toks), "label": i % 3, "weight": float(len(toks))}


def pad_collate(batch):
    ids = [b["ids"] for b in batch]
    lengths = torch.tensor([len(t) for t in ids])
    return {
        "ids": pad_sequence(ids, batch_first=True, padding_value=0),
        "lengths": lengths,
        "labels": torch.tensor([b["label"] for b in batch]),
        "weight": torch.tensor([b["weight"] for b in batch], dtype=torch.float64),
    }


class BucketSampler(Sampler):
    def __init__(self, lengths, batch_size):
        self.lengths = lengths
        self.batch_size = batch_size

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: (self.lengths[i], i))
        for k in range(0, len(order), self.batch_size):
            yield order[k : k + self.batch_size]

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


ds = Sentences()
loader = DataLoader(ds, batch_size=4, collate_fn=pad_collate)
for k, batch in enumerate(loader):
    print(
        f"pad_batch{k}",
        tuple(batch["ids"].shape),
        batch["lengths"].tolist(),
        batch["labels"].tolist(),
        batch["weight"].dtype,
    )
print(
    "loader_len",
    len(loader),
    len(DataLoader(ds, batch_size=4, drop_last=True, collate_fn=pad_collate)),
)

bucket = BucketSampler([len(t) for t in ds.items], 3)
for k, batch in enumerate(DataLoader(ds, batch_sampler=bucket, collate_fn=pad_collate)):
    print(f"bucket{k}", batch["lengths"].tolist(), batch["ids"].sum().item())

bs = BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)
print("batch_sampler", list(bs), len(bs), len(BatchSampler(SequentialSampler(range(7)), 3, True)))

plain = [
    {
        "a": torch.tensor([1.0, 2.0]),
        "b": (np.float32(0.5), np.arange(2)),
        "p": Pair(1, 2.5),
        "s": "x",
    },
    {
        "a": torch.tensor([3.0, 4.0]),
        "b": (np.float32(1.5), np.arange(2) + 1),
        "p": Pair(3, 4.5),
        "s": "y",
    },
]
col = default_collate(plain)
print("collate_a", col["a"].tolist(), col["a"].dtype)
print("collate_b", col["b"][0].dtype, col["b"][0].tolist(), col["b"][1].tolist(), col["b"][1].dtype)
print("collate_p", type(col["p"]).__name__, col["p"].x.tolist(), col["p"].y.dtype, col["s"])
print(
    "collate_nums",
    default_collate([1, 2, 3]).dtype,
    default_collate([1.0, 2.0]).dtype,
    default_collate([True, False]).dtype,
)

both = ConcatDataset([Sentences(3), Sentences(5)])
print("concat", len(both), both[4]["ids"].tolist(), both.cumulative_sizes)
sub = Subset(ds, [9, 2, 5])
print("subset", len(sub), [s["label"] for s in sub], sub[0]["ids"].tolist())

g = torch.Generator().manual_seed(0)
a, b = random_split(range(10), [0.7, 0.3], generator=g)
print("split_sizes", len(a), len(b), sorted(list(a) + list(b)) == list(range(10)))
print("rng_split", list(a))
g = torch.Generator().manual_seed(1)
rs = list(RandomSampler(range(6), generator=g))
print("random_sampler", sorted(rs), len(rs))
print("rng_random_sampler", rs)
ws = list(
    WeightedRandomSampler(
        [0.0, 1.0, 0.0, 2.0],
        num_samples=6,
        replacement=True,
        generator=torch.Generator().manual_seed(2),
    )
)
print("weighted_support", sorted(set(ws)) in ([1, 3], [1], [3]), len(ws))
print("rng_weighted", ws)
wn = list(
    WeightedRandomSampler(
        [1.0, 1.0, 0.0, 1.0],
        num_samples=3,
        replacement=False,
        generator=torch.Generator().manual_seed(3),
    )
)
print("weighted_noreplace", sorted(wn))
shuffled = DataLoader(
    ds,
    batch_size=5,
    shuffle=True,
    collate_fn=pad_collate,
    generator=torch.Generator().manual_seed(4),
)
seen = sorted(int(l) for batch in shuffled for l in batch["labels"])
print("shuffle_cover", seen, len(shuffled))
