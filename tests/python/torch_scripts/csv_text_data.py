"""A text dataset read from CSV-like text as small NLP projects write it: csv.DictReader over an
io.StringIO file, a regex tokenizer, a vocabulary with <pad>/<unk>/<bos>/<eos> and min_freq
(Counter.most_common order), a map-style Dataset returning (ids, label, length), a custom
length-bucketing batch Sampler (a torch.utils.data.Sampler subclass), collate_fn with
pad_sequence (batch_first, padding_value) and a padding mask, pack_padded_sequence into an
LSTM, StackDataset / ConcatDataset / Subset, a DataLoader with a seeded torch.Generator
(shuffling that repeats for the same seed), and a few epochs of training and evaluation."""

import csv
import io
import re
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import ConcatDataset, DataLoader, Dataset, Sampler, StackDataset, Subset

CSV_TEXT = """id,text,label
1,"The movie was great, truly great!",pos
2,Terrible plot and worse acting.,neg
3,"I loved it; would watch again",pos
4,boring... fell asleep,neg
5,A great cast and a great script,pos
6,"Worse than I feared, terrible",neg
7,loved the music,pos
8,not good not great just boring,neg
9,great fun for all,pos
10,acting was terrible,neg
"""

TOKEN = re.compile(r"[a-z']+|[!?.;,]")


def tokenize(text):
    return TOKEN.findall(text.lower())


class Vocab:
    def __init__(self, counter, min_freq=1, specials=("<pad>", "<unk>", "<bos>", "<eos>")):
        self.itos = list(specials) + sorted(
            w for w, c in counter.items() if c >= min_freq and w not in specials
        )
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def __call__(self, tokens):
        return [self.stoi.get(t, self.stoi["<unk>"]) for t in tokens]


class ReviewDataset(Dataset):
    def __init__(self, rows, vocab, labels):
        self.items = [
            (torch.tensor([2] + vocab(tokenize(r["text"])) + [3]), labels[r["label"]]) for r in rows
        ]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        ids, label = self.items[i]
        return ids, label, len(ids)


class BucketSampler(Sampler):
    """Batches of indices with similar lengths, longest first."""

    def __init__(self, lengths, batch_size):
        self.lengths, self.batch_size = lengths, batch_size

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: (-self.lengths[i], i))
        for s in range(0, len(order), self.batch_size):
            yield order[s : s + self.batch_size]

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


def collate(batch):
    ids, labels, lengths = zip(*batch)
    padded = pad_sequence(ids, batch_first=True, padding_value=0)
    return {
        "ids": padded,
        "mask": padded != 0,
        "labels": torch.tensor(labels),
        "lengths": torch.tensor(lengths),
    }


class Classifier(nn.Module):
    def __init__(self, vocab_size, dim=8, hidden=12):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 2)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(
            self.emb(ids), lengths, batch_first=True, enforce_sorted=False
        )
        out, (h, _) = self.rnn(packed)
        padded, lens = pad_packed_sequence(out, batch_first=True)
        return self.out(h[-1]), padded, lens


def main():
    rows = list(csv.DictReader(io.StringIO(CSV_TEXT)))
    print("rows", len(rows), rows[0], list(rows[0].keys()))
    counter = Counter(t for r in rows for t in tokenize(r["text"]))
    print("most_common", counter.most_common(4))
    vocab = Vocab(counter, min_freq=2)
    print("vocab", len(vocab), vocab.itos[:10])
    print("encode", vocab(tokenize("A great, GREAT unknown movie!")))
    labels = {"neg": 0, "pos": 1}
    ds = ReviewDataset(rows, vocab, labels)
    print("item", ds[3][0].tolist(), ds[3][1:])

    sampler = BucketSampler([ds[i][2] for i in range(len(ds))], 3)
    print("buckets", list(sampler), len(sampler))
    loader = DataLoader(ds, batch_sampler=sampler, collate_fn=collate)
    batch = next(iter(loader))
    print(
        "batch",
        tuple(batch["ids"].shape),
        batch["lengths"].tolist(),
        batch["mask"].sum(1).tolist(),
        batch["labels"].tolist(),
    )
    print("padded_row", batch["ids"][-1].tolist())

    g = torch.Generator().manual_seed(1234)
    shuffled = DataLoader(ds, batch_size=4, shuffle=True, generator=g, collate_fn=collate)
    first = [b["labels"].tolist() for b in shuffled]
    g.manual_seed(1234)
    again = [b["labels"].tolist() for b in shuffled]
    print("rng_shuffle", first)
    print("shuffle_repeats", first == again, [len(x) for x in first])

    stacked = StackDataset(ds, torch.arange(len(ds)) * 10)
    print("stack", stacked[2][1].item(), len(stacked), stacked[2][0][1])
    named = StackDataset(text=ds, weight=torch.linspace(0, 1, len(ds)))
    print("stack_named", sorted(named[4].keys()), round(named[4]["weight"].item(), 4))
    both = ConcatDataset([Subset(ds, [0, 1]), Subset(ds, range(8, 10))])
    print("concat", len(both), [both[i][1] for i in range(len(both))], both.cumulative_sizes)

    model = Classifier(len(vocab))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.41 + i).view_as(p) * 0.3
            )
        model.emb.weight[0].zero_()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for epoch in range(6):
        total = 0.0
        for b in loader:
            logits, padded, lens = model(b["ids"], b["lengths"])
            loss = F.cross_entropy(logits, b["labels"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b["labels"])
        if epoch % 2 == 1:
            print("epoch", epoch, round(total / len(ds), 5))
    print(
        "unpacked", tuple(padded.shape), lens.tolist(), round(padded[:, -1].abs().sum().item(), 5)
    )
    model.eval()
    correct = 0
    with torch.no_grad():
        for b in loader:
            logits, _, _ = model(b["ids"], b["lengths"])
            correct += (logits.argmax(1) == b["labels"]).sum().item()
    print("accuracy", correct / len(ds))
    print("pad_idx_grad_zero", model.emb.weight.grad[0].abs().sum().item())


if __name__ == "__main__":
    main()
