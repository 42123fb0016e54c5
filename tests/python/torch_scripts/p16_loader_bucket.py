"""A text-classification input pipeline: a Dataset of variable-length token lists, a custom
bucketing BatchSampler (sorted by length within chunks), collate_fn padding with
pad_sequence and returning lengths, DataLoader with num_workers=2, worker_init_fn,
persistent_workers and prefetch_factor, get_worker_info inside an IterableDataset that shards
itself, a WeightedRandomSampler with a seeded generator, and default_collate of nested
namedtuples and dicts; then a packed bidirectional GRU classifier on the batches."""

import collections
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Sampler,
    WeightedRandomSampler,
    get_worker_info,
)
from torch.utils.data.dataloader import default_collate

texts = [[(3 * i + 7 * j) % 11 + 1 for j in range(2 + (i * 5) % 7)] for i in range(14)]
labels = [int(sum(t) % 3 == 0) for t in texts]


class Tokens(Dataset):
    def __len__(self):
        return len(texts)

    def __getitem__(self, i):
        return torch.tensor(texts[i]), labels[i]


class BucketSampler(Sampler):
    def __init__(self, lengths, batch_size, chunk):
        self.lengths, self.batch_size, self.chunk = lengths, batch_size, chunk

    def __iter__(self):
        idx = list(range(len(self.lengths)))
        for start in range(0, len(idx), self.chunk):
            part = sorted(idx[start : start + self.chunk], key=lambda i: -self.lengths[i])
            for b in range(0, len(part), self.batch_size):
                yield part[b : b + self.batch_size]

    def __len__(self):
        return sum(
            math.ceil(min(self.chunk, len(self.lengths) - s) / self.batch_size)
            for s in range(0, len(self.lengths), self.chunk)
        )


def collate(batch):
    seqs, ys = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True), lengths, torch.tensor(ys)


def init_fn(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2


sampler = BucketSampler([len(t) for t in texts], batch_size=3, chunk=6)
loader = DataLoader(
    Tokens(),
    batch_sampler=sampler,
    collate_fn=collate,
    num_workers=2,
    worker_init_fn=init_fn,
    persistent_workers=True,
    prefetch_factor=2,
)
print("num_batches", len(sampler), len(loader))
batches = list(loader)
for xb, lb, yb in batches[:3]:
    print("batch", tuple(xb.shape), lb.tolist(), yb.tolist(), xb[0].tolist())
print("again_same", all(torch.equal(a[0], b[0]) for a, b in zip(batches, list(loader))))


class Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(wid, self.n, nw):
            yield {"i": i, "sq": torch.tensor([i * i], dtype=torch.float32), "w": wid}


items = list(DataLoader(Shards(7), batch_size=2, num_workers=2))
print("shards", [(b["i"].tolist(), b["w"].tolist()) for b in items])
print("shards_main", [b["i"].tolist() for b in DataLoader(Shards(5), batch_size=2)])

Point = collections.namedtuple("Point", ["xy", "tag"])
nested = default_collate(
    [
        {"p": Point(torch.tensor([1.0, 2.0]), 3), "name": "a"},
        {"p": Point(torch.tensor([4.0, 5.0]), 6), "name": "b"},
    ]
)
print(
    "collate",
    type(nested["p"]).__name__,
    nested["p"].xy.tolist(),
    nested["p"].tag.tolist(),
    nested["name"],
)

g = torch.Generator().manual_seed(0)
wsamp = WeightedRandomSampler([0.1, 0.0, 5.0, 1.0], num_samples=6, replacement=True, generator=g)
drawn = list(wsamp)
print("weighted", len(drawn), 1 in drawn)
print("rng_weighted", drawn)


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 5, padding_idx=0)
        self.gru = nn.GRU(5, 4, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(8, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.emb(x), lengths, batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        padded, out_len = pad_packed_sequence(out, batch_first=True)
        feat = torch.cat([h[-2], h[-1]], dim=1)
        return self.fc(feat), padded, out_len


model = GRUClassifier()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.3).sin() * 0.5)
    model.emb.weight[0].zero_()
opt = torch.optim.RMSprop(model.parameters(), lr=0.01, centered=True)
for epoch in range(2):
    total = 0.0
    for xb, lb, yb in loader:
        logits, padded, out_len = model(xb, lb)
        loss = F.cross_entropy(logits, yb)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.2)
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} {total:.5f}")
print(
    "padded_out", tuple(padded.shape), out_len.tolist(), round(padded[-1, -1].abs().sum().item(), 6)
)
print("emb_pad_grad", model.emb.weight.grad[0].abs().sum().item())
