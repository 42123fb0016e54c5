# ruff: noqa: E501
"""Variable-length data the way NLP/speech loaders feed it: a Dataset of dict samples (tensors,
numpy arrays, strings, namedtuples), a length-bucketing batch sampler, a collate_fn padding with
pad_sequence (right and left), default_collate on nested structures, DataLoader with
batch_sampler and two workers (worker_init_fn / get_worker_info), a DistributedSampler split
by hand, and a packed LSTM over the batches."""

import collections

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset, Sampler, get_worker_info
from torch.utils.data.dataloader import default_collate
from torch.utils.data.distributed import DistributedSampler

Meta = collections.namedtuple("Meta", ["idx", "weight"])


class Utterances(Dataset):
    def __init__(self, n=20):
        self.lengths = [3 + (i * 7) % 9 for i in range(n)]

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        L = self.lengths[i]
        feats = torch.sin(torch.arange(L * 4, dtype=torch.float32).view(L, 4) * 0.1 + i)
        return {
            "feats": feats,
            "label": i % 3,
            "spk": np.array([i % 2, i % 5], dtype=np.int64),
            "text": f"utt{i}",
            "meta": Meta(i, 0.5 * (i % 4)),
        }


class BucketBatchSampler(Sampler):
    """Sorts indices by length inside buckets so each batch has similar lengths."""

    def __init__(self, lengths, batch_size, bucket=8):
        self.lengths, self.batch_size, self.bucket = lengths, batch_size, bucket

    def __iter__(self):
        idx = list(range(len(self.lengths)))
        batches = []
        for s in range(0, len(idx), self.bucket):
            chunk = sorted(idx[s : s + self.bucket], key=lambda i: -self.lengths[i])
            batches += [
                chunk[j : j + self.batch_size] for j in range(0, len(chunk), self.batch_size)
            ]
        return iter(batches)

    def __len__(self):
        return sum(
            -(-min(self.bucket, len(self.lengths) - s) // self.batch_size)
            for s in range(0, len(self.lengths), self.bucket)
        )


def pad_collate(samples, left=False):
    feats = [s["feats"] for s in samples]
    lengths = torch.tensor([f.shape[0] for f in feats])
    padded = pad_sequence(
        feats, batch_first=True, padding_value=0.0, padding_side="left" if left else "right"
    )
    rest = default_collate([{k: v for k, v in s.items() if k != "feats"} for s in samples])
    return padded, lengths, rest


def seen_by(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2


def main():
    ds = Utterances()
    print(f"lengths {ds.lengths}")
    sampler = BucketBatchSampler(ds.lengths, batch_size=3)
    print(f"batches {list(sampler)} len {len(sampler)}")
    padded, lengths, rest = pad_collate([ds[0], ds[1], ds[2]])
    print(
        f"collated {tuple(padded.shape)} lengths {lengths.tolist()} label {rest['label'].tolist()}"
    )
    print(f"collated_spk {rest['spk'].dtype} {rest['spk'].tolist()} text {rest['text']}")
    print(
        f"collated_meta {type(rest['meta']).__name__} {rest['meta'].idx.tolist()} {rest['meta'].weight.dtype}"
    )
    left, _, _ = pad_collate([ds[0], ds[1]], left=True)
    print(f"left_pad {left[1, :, 0].tolist()}")

    loader = DataLoader(
        ds, batch_sampler=sampler, collate_fn=pad_collate, num_workers=2, worker_init_fn=seen_by
    )
    lstm = nn.LSTM(4, 6, batch_first=True)
    with torch.no_grad():
        for i, p in enumerate(lstm.parameters()):
            p.copy_(
                torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).view_as(p) * 0.3
            )
    clf = nn.Linear(6, 3)
    with torch.no_grad():
        clf.weight.copy_(torch.sin(torch.arange(18, dtype=torch.float32)).view(3, 6))
        clf.bias.zero_()
    opt = torch.optim.Adam(list(lstm.parameters()) + list(clf.parameters()), lr=0.01)
    for epoch in range(2):
        total = 0.0
        order = []
        for padded, lengths, rest in loader:
            packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=True)
            _, (h, _) = lstm(packed)
            loss = nn.functional.cross_entropy(clf(h[-1]), rest["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            order.append(rest["meta"].idx.tolist())
        print(f"epoch{epoch} loss {total:.5f} first_batches {order[:2]}")

    plain = DataLoader(
        ds,
        batch_size=4,
        shuffle=False,
        drop_last=True,
        collate_fn=lambda b: pad_collate(b, left=False),
    )
    shapes = [tuple(p.shape) for p, _, _ in plain]
    print(f"plain_shapes {shapes} len {len(plain)}")
    parts = []
    for rank in range(3):
        ds_sampler = DistributedSampler(ds, num_replicas=3, rank=rank, shuffle=False)
        parts.append(list(ds_sampler))
    print(
        f"dist_split {parts} {len(DistributedSampler(ds, num_replicas=3, rank=0, shuffle=False, drop_last=True))}"
    )
    nested = default_collate(
        [(torch.tensor(1.0), {"a": [1, 2]}), (torch.tensor(2.0), {"a": [3, 4]})]
    )
    print(f"nested {nested[0].tolist()} {[v.tolist() for v in nested[1]['a']]}")
    try:
        default_collate([torch.zeros(2), torch.zeros(3)])
    except RuntimeError as e:
        print(f"ragged_error {str(e)[:50]}")


if __name__ == "__main__":
    main()
