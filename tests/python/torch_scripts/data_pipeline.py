# ruff: noqa: E501
"""Data pipeline utilities: TensorDataset, Subset, ConcatDataset, random_split, samplers
(weighted, batch, distributed-free), default_collate of dicts / namedtuples / nested lists,
custom collate_fn, IterableDataset sharded by worker, worker_init_fn and drop_last."""

import collections
import math

import numpy as np
import torch
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
    random_split,
)
from torch.utils.data.dataloader import default_collate as dl_default_collate

Sample = collections.namedtuple("Sample", ["image", "label"])


class DictDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {
            "x": torch.full((2,), float(i)),
            "id": i,
            "name": f"item{i}",
            "meta": {"weight": i * 0.5, "np": np.array([i, i + 1], dtype=np.int32)},
            "pair": Sample(torch.tensor([i]), i % 2),
        }


class Stream(IterableDataset):
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
        return iter(range(lo, hi))


def seed_worker(worker_id):
    info = get_worker_info()
    np.random.seed(info.seed % 2**32)


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    return padded, lengths, torch.tensor(labels)


class VarLen(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return torch.arange(1, 2 + i % 4), i % 3


def main():
    torch.manual_seed(0)
    x = torch.arange(20, dtype=torch.float32).reshape(10, 2)
    y = torch.arange(10) % 3
    ds = TensorDataset(x, y)
    print(f"tensor_ds {len(ds)} {ds[3][0].tolist()} {ds[3][1].item()} tensors {len(ds.tensors)}")
    idx = np.array([1, 3, 5])
    print(f"np_index {x[idx][:, 0].tolist()} np_mask {y[np.array([True, False] * 5)].tolist()}")
    sub = Subset(ds, [1, 3, 5])
    print(f"subset {len(sub)} {sub[2][0].tolist()} indices {list(sub.indices)}")
    cat = ConcatDataset([sub, ds])
    print(f"concat {len(cat)} {cat[3][0].tolist()} {cat.cumulative_sizes}")
    g = torch.Generator().manual_seed(42)
    tr, va = random_split(ds, [0.8, 0.2], generator=g)
    print(
        f"split_sizes {len(tr)} {len(va)} disjoint {set(tr.indices).isdisjoint(va.indices)} cover {sorted(tr.indices + va.indices) == list(range(10))}"
    )
    a, b, c = random_split(range(10), [5, 3, 2])
    print(f"split_int {len(a)} {len(b)} {len(c)} type {type(a).__name__}")
    try:
        random_split(ds, [5, 6])
    except ValueError as e:
        print(f"split_error {type(e).__name__}")

    batch = default_collate([DictDataset(4)[i] for i in range(3)])
    print(f"collate_keys {sorted(batch)}")
    print(
        f"collate_x {tuple(batch['x'].shape)} id {batch['id'].tolist()} {batch['id'].dtype} name {batch['name']}"
    )
    print(
        f"collate_meta {batch['meta']['weight'].dtype} {batch['meta']['weight'].tolist()} np {batch['meta']['np'].dtype} {tuple(batch['meta']['np'].shape)}"
    )
    print(
        f"collate_pair {type(batch['pair']).__name__} {tuple(batch['pair'].image.shape)} {batch['pair'].label.tolist()}"
    )
    print(f"collate_same {dl_default_collate is default_collate}")
    print(f"collate_lists {default_collate([[1, 2.5], [3, 4.5]])}")
    print(f"collate_np_scalar {default_collate([np.float64(1.5), np.float64(2.0)])}")
    print(f"collate_bool {default_collate([True, False]).dtype}")

    loader = DataLoader(
        DictDataset(10), batch_size=4, shuffle=False, num_workers=2, worker_init_fn=seed_worker
    )
    ids = [b["id"].tolist() for b in loader]
    print(f"worker_dict_batches {ids} len {len(loader)}")
    loader = DataLoader(DictDataset(10), batch_size=4, drop_last=True)
    print(f"drop_last {len(loader)} {[b['id'].tolist() for b in loader]}")
    stream = DataLoader(Stream(3, 12), batch_size=2, num_workers=2)
    got = sorted(v for b in stream for v in b.tolist())
    print(f"iterable_workers {got}")
    print(f"iterable_single {[b.tolist() for b in DataLoader(Stream(0, 5), batch_size=2)]}")
    pad = DataLoader(VarLen(), batch_size=3, collate_fn=pad_collate)
    first = next(iter(pad))
    print(f"pad_collate {tuple(first[0].shape)} {first[1].tolist()} {first[2].tolist()}")
    nobatch = DataLoader(ds, batch_size=None)
    print(f"batch_none {next(iter(nobatch))[0].tolist()} {len(nobatch)}")

    weights = torch.tensor([0.0, 0.0, 1.0, 3.0])
    ws = WeightedRandomSampler(weights, num_samples=400, replacement=True)
    counts = collections.Counter(list(ws))
    print(
        f"weighted_support {sorted(counts)} len {len(ws)} ratio_ok {2.0 < counts[3] / counts[2] < 4.5}"
    )
    labels = torch.tensor([0] * 8 + [1] * 2)
    class_w = 1.0 / torch.bincount(labels).float()
    balanced = WeightedRandomSampler(class_w[labels], num_samples=len(labels), replacement=True)
    bl = DataLoader(TensorDataset(x, labels), batch_size=5, sampler=balanced)
    print(f"balanced_batches {len(bl)} shapes {[tuple(b[0].shape) for b in bl]}")
    bs = BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)
    print(f"batch_sampler {list(bs)} {len(bs)}")
    rs = RandomSampler(range(6), replacement=False)
    print(f"random_sampler_perm {sorted(rs) == list(range(6))} len {len(rs)}")
    rs2 = RandomSampler(range(6), replacement=True, num_samples=9)
    print(f"random_sampler_repl {len(list(rs2))}")
    sampler_loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, True))
    print(f"batch_sampler_loader {[b[1].tolist() for b in sampler_loader]}")
    gen_loader = DataLoader(
        ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(7)
    )
    order1 = [b[1].tolist() for b in gen_loader]
    gen_loader.generator.manual_seed(7)
    print(f"shuffle_repeatable {order1 == [b[1].tolist() for b in gen_loader]}")
    print(f"shuffle_is_perm {sorted(sum(order1, [])) == sorted(y.tolist())}")
    it = iter(DataLoader(ds, batch_size=3, num_workers=2, prefetch_factor=2, pin_memory=False))
    print(f"multiworker_order {[b[1].tolist() for b in it]}")
    try:
        DataLoader(ds, batch_size=2, shuffle=True, sampler=SequentialSampler(ds))
    except ValueError as e:
        print(f"sampler_shuffle_error {type(e).__name__}")


if __name__ == "__main__":
    main()
