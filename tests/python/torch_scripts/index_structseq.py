# ruff: noqa: E501
"""Indexing-heavy tensor code as data pipelines and metrics write it: the named results of
max/sort/topk/kthvalue/median/mode used by field and by unpacking, pickled and rebuilt, gather and
scatter_add_ from them, index_put_ with accumulate, boolean masks, bucketize/searchsorted,
unique with inverse and counts, repeat_interleave and broadcast advanced indexing."""

import io
import pickle

import torch

x = (torch.arange(24, dtype=torch.float32) * 0.7).sin().reshape(4, 6)
r = x.max(dim=1)
print("max_type", type(r).__name__, isinstance(r, tuple), len(r), type(r).n_fields)
print("max_fields", type(r).__match_args__, r.values.tolist() == r[0].tolist())
vals, idx = r
print("max_idx", idx.tolist(), [round(v, 4) for v in vals.tolist()])
print("max_repr", repr(r).splitlines()[0], repr(r).splitlines()[2][:8])
back = pickle.loads(pickle.dumps(r))
print("pickled", type(back).__name__, torch.equal(back.indices, r.indices))
buf = io.BytesIO()
torch.save({"best": r.values, "where": r.indices}, buf)
buf.seek(0)
print("saved", torch.load(buf)["where"].tolist())
rebuilt = type(r)((r.values * 2, r.indices))
print("rebuilt", type(rebuilt).__name__, [round(v, 4) for v in rebuilt.values.tolist()])
s = x.sort(dim=1, descending=True, stable=True)
print("sort_idx", s.indices[:, :3].tolist())
print("sort_gather", torch.equal(x.gather(1, s.indices), s.values))
t = torch.topk(x, k=2, dim=0, largest=False)
print("topk", t.indices.tolist(), isinstance(t, type(torch.topk(x, 1))))
kv = x.kthvalue(3, dim=1, keepdim=True)
print("kth", kv.indices.squeeze(1).tolist(), kv.values.shape)
med = torch.median(x, dim=0)
print("median", med.indices.tolist())
ints = torch.tensor([[1, 2, 2, 3], [4, 4, 1, 1], [0, 5, 5, 5]])
mo = ints.mode(dim=1)
print("mode", mo.values.tolist(), mo.indices.tolist())
mn, mx = torch.aminmax(x, dim=1)
print("aminmax", [round(v, 4) for v in (mx - mn).tolist()])
cm = torch.cummax(ints, dim=1)
print("cummax", cm.indices.tolist())
sl = torch.linalg.slogdet(x[:, :4] + 2 * torch.eye(4))
print("slogdet", sl.sign.item(), round(sl.logabsdet.item(), 4))
o1, o2 = torch.empty(0), torch.empty(0, dtype=torch.long)
ro = torch.max(x, 1, keepdim=True, out=(o1, o2))
print("out_form", type(ro).__name__, ro.values is o1, o2.shape)

# scatter/gather: per-class sums and a confusion matrix
labels = torch.tensor([0, 2, 1, 2, 0, 1, 1, 2])
preds = torch.tensor([0, 1, 1, 2, 2, 1, 0, 2])
conf = torch.zeros(3, 3, dtype=torch.long)
conf.index_put_((labels, preds), torch.ones_like(labels), accumulate=True)
print("confusion", conf.tolist())
sums = torch.zeros(3).scatter_add_(0, labels, torch.arange(8.0))
print("class_sums", sums.tolist(), torch.bincount(labels, minlength=4).tolist())
feat = torch.arange(16.0).reshape(8, 2)
print("index_add", torch.zeros(3, 2).index_add_(0, labels, feat, alpha=0.5).tolist())
print(
    "scatter_reduce",
    torch.zeros(3).scatter_reduce(0, labels, feat[:, 0], "amax", include_self=False).tolist(),
)

# boolean masks and where
m = x > 0.3
print("masked", m.sum().item(), [round(v, 4) for v in x[m][:4].tolist()])
y = x.clone()
y[~m] = 0.0
y[m & (x > 0.9)] *= -1
print("masked_set", round(y.sum().item(), 4))
print("nonzero", [t.tolist() for t in (x > 0.95).nonzero(as_tuple=True)])
print("where", torch.where(x > 0, x, torch.zeros(())).gt(0).sum().item())
print("argwhere", torch.argwhere(ints == 5).tolist())
ms = torch.zeros(4, 6).masked_scatter(m, torch.arange(24.0))
print("masked_scatter", ms[0].tolist())

# advanced indexing with broadcasting and mixed slices
rows = torch.tensor([[0], [2]])
cols = torch.tensor([1, 3, 5])
print("broadcast_idx", x[rows, cols].shape, [round(v, 4) for v in x[rows, cols].flatten().tolist()])
z = torch.arange(60).reshape(3, 4, 5)
print("mixed", z[1:, [0, 2], ::2].tolist())
print("ellipsis_none", z[..., None, 1].shape, z[None, :, -1].shape, z[[0, 2], :, [1, 4]].tolist())
pairs = [torch.tensor([0, 2, 1]), torch.tensor([1, 3, 0])]
print(
    "list_of_index_tensors",
    z[pairs].tolist(),
    x[[torch.arange(3), labels[:3]]].tolist() == x[torch.arange(3), labels[:3]].tolist(),
)
print("bool_row", z[torch.tensor([True, False, True])].shape)
z[:, [1, 3]] = -z[:, [1, 3]]
print("setitem", z[0, :, 0].tolist())

# bucketing and unique
edges = torch.tensor([-0.5, 0.0, 0.5])
print(
    "bucketize",
    torch.bucketize(x[0], edges).tolist(),
    torch.bucketize(x[0], edges, right=True).tolist(),
)
print(
    "searchsorted",
    torch.searchsorted(
        torch.tensor([1, 3, 5, 7]), torch.tensor([[0, 3], [6, 9]]), side="right"
    ).tolist(),
)
u, inv, cnt = torch.unique(ints, return_inverse=True, return_counts=True)
print("unique", u.tolist(), inv[1].tolist(), cnt.tolist())
uc, cc = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 2, 1, 3, 3]), return_counts=True)
print("unique_consec", uc.tolist(), cc.tolist())
print("unique_dim", torch.unique(torch.tensor([[1, 2], [1, 2], [0, 3]]), dim=0).tolist())
print(
    "repeat_interleave",
    torch.repeat_interleave(torch.tensor([1, 2, 3]), torch.tensor([2, 0, 3])).tolist(),
)
print(
    "take_along",
    torch.take_along_dim(x, s.indices[:, :1], dim=1).flatten().tolist() == s.values[:, 0].tolist(),
)
