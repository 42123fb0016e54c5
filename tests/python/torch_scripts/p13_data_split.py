"""Dataset plumbing: random_split by fractions with a seeded generator, Subset, ConcatDataset,
StackDataset, default_collate / default_convert on nested samples, unpad/unpack_sequence."""

import collections

import torch
from torch.nn.utils.rnn import pack_sequence, pad_sequence, unpack_sequence, unpad_sequence
from torch.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from torch.utils.data._utils.collate import default_collate, default_convert

Point = collections.namedtuple("Point", ["x", "y"])


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"v": torch.tensor([float(i), float(i * i)]), "id": i, "p": Point(i, float(i) / 2)}


ds = Squares(10)
g = torch.Generator().manual_seed(0)
parts = random_split(ds, [0.7, 0.2, 0.1], generator=g)
print("split_lens", [len(p) for p in parts])
print("rng_split_idx", [p.indices for p in parts])
print("split_cover", sorted(i for p in parts for i in p.indices) == list(range(10)))
parts2 = random_split(range(10), [0.5, 0.5], generator=torch.Generator().manual_seed(0))
print("rng_split_range", [list(p) for p in parts2])
try:
    random_split(ds, [4, 4])
except ValueError as e:
    print("bad_split", str(e))

sub = Subset(ds, [9, 3, 5])
print("subset", [s["id"] for s in sub], len(sub))
cat = ConcatDataset([Subset(ds, range(3)), TensorDataset(torch.arange(4.0))])
print("concat_len", len(cat), cat.cumulative_sizes)
print("concat_last", cat[-1][0].item(), cat[2]["id"])

stack = StackDataset(a=TensorDataset(torch.arange(5.0)), b=Squares(5))
item = stack[3]
print("stack_item", sorted(item), item["a"][0].item(), item["b"]["id"])
tstack = StackDataset(torch.arange(3), torch.arange(3) * 10)
print("stack_tuple", tstack[2])

batch = default_collate([ds[i] for i in (1, 2, 4)])
print("collate_keys", sorted(batch))
print("collate_v", batch["v"].tolist())
print("collate_id", batch["id"].tolist(), batch["id"].dtype)
print(
    "collate_point",
    type(batch["p"]).__name__,
    batch["p"].x.tolist(),
    batch["p"].y.tolist(),
    batch["p"].y.dtype,
)
conv = default_convert({"a": [1, 2], "t": torch.ones(2)})
print("convert", conv["a"], conv["t"].tolist())

loader = DataLoader(Subset(ds, [0, 2, 4, 6, 8]), batch_size=2)
print("loader_ids", [b["id"].tolist() for b in loader])

seqs = [torch.arange(1.0, 4.0), torch.arange(5.0, 7.0), torch.tensor([9.0])]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True, padding_value=-1.0)
print("padded", padded.tolist())
back = unpad_sequence(padded, lengths, batch_first=True)
print("unpadded", [s.tolist() for s in back])
padded_left = pad_sequence(seqs, batch_first=True, padding_side="left")
print("padded_left", padded_left.tolist())
packed = pack_sequence(seqs)
print("packed", packed.data.tolist(), packed.batch_sizes.tolist())
print("unpacked", [s.tolist() for s in unpack_sequence(packed)])
packed_u = pack_sequence([seqs[1], seqs[0], seqs[2]], enforce_sorted=False)
print("unpacked_unsorted", [s.tolist() for s in unpack_sequence(packed_u)])
print("sorted_idx", packed_u.sorted_indices.tolist(), packed_u.unsorted_indices.tolist())
