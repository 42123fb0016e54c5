# ruff: noqa: E501
"""Reductions and out= as statistics and metric code writes them: dtype= and keepdim on sum /
mean / prod / cumsum, correction and unbiased on std / var and their *_mean forms, named-tuple
results of max / min / sort / topk / mode / median, multi-dim amax / logsumexp / all / any /
count_nonzero, nan-aware reductions, norms, and out= tensors (including resizing an empty one and
the tuple out of max)."""

import torch

x = torch.cos(torch.arange(24, dtype=torch.float32) * 0.77).view(2, 3, 4)
xi = torch.arange(1, 13).view(3, 4)


def r(t, n=5):
    if isinstance(t, torch.Tensor):
        return [round(v, n) for v in t.flatten().tolist()]
    return round(float(t), n)


print(
    "sum_dtype",
    torch.sum(xi, dtype=torch.float64).dtype,
    xi.sum(1, dtype=torch.int32).dtype,
    torch.sum(torch.ones(3, dtype=torch.bool)).dtype,
    torch.ones(2, dtype=torch.uint8).sum().dtype,
)
print(
    "sum_dims",
    r(x.sum((0, 2))),
    r(x.sum(dim=(-1,), keepdim=True).squeeze()),
    tuple(x.sum(dim=(0, 1, 2), keepdim=True).shape),
    r(x.sum(dim=[])),
)
print(
    "mean_dtype",
    r(xi.mean(dtype=torch.float32)),
    r(torch.mean(x, (0, 1))),
    xi.float().mean(0, keepdim=True).shape,
)
try:
    xi.mean()
except RuntimeError as e:
    print("mean_int_err", str(e)[:80])
print("prod", xi.prod().item(), xi.prod(1).tolist(), torch.prod(xi, 0, dtype=torch.float64).dtype)
print(
    "cumsum",
    xi.cumsum(1, dtype=torch.float32)[:, -1].tolist(),
    torch.cumprod(xi[0], 0).tolist(),
    torch.cumsum(torch.tensor([True, True, False]), 0).dtype,
)
print(
    "std_var",
    r(x.std()),
    r(x.std(unbiased=False)),
    r(x.var(1)),
    r(x.var(dim=(0, 2), correction=0)),
    r(torch.std(x, dim=-1, correction=2, keepdim=True)),
)
sv, mv = torch.std_mean(x, dim=1)
vv, mm = torch.var_mean(x, (0, 2), unbiased=False)
print("std_mean", r(sv[0]), r(mv[1]), r(vv), r(mm))
mx = torch.max(x, dim=1)
print(
    "max_nt",
    type(mx).__name__,
    len(mx),
    isinstance(mx, tuple),
    r(mx.values[0]),
    mx.indices[1].tolist(),
)
vals, idxs = x.min(-1, keepdim=True)
print("min_kd", tuple(vals.shape), idxs.flatten().tolist())
print(
    "max_binary",
    r(torch.max(x[0], x[1])),
    r(torch.maximum(x[0], torch.tensor(0.5))),
    r(torch.fmax(torch.tensor([float("nan"), 1.0]), torch.tensor([2.0, float("nan")]))),
)
s = torch.sort(torch.tensor([3, 1, 2, 1, 3]), descending=True, stable=True)
print("sort_nt", s.values.tolist(), s.indices.tolist(), type(s).__name__)
t = torch.topk(x.flatten(), 3, largest=False)
print("topk_nt", r(t.values), t.indices.tolist())
md = torch.mode(torch.tensor([[1, 2, 2, 3], [4, 4, 5, 5]]), 1)
print("mode", md.values.tolist(), md.indices.tolist())
me = torch.median(torch.tensor([[3.0, 1.0, 2.0, 4.0]]), 1)
print(
    "median",
    me.values.tolist(),
    me.indices.tolist(),
    torch.median(torch.tensor([1.0, 5.0, 2.0, 8.0])).item(),
)
print(
    "amax_multi",
    r(torch.amax(x, dim=(0, 2))),
    r(torch.amin(x, (1, 2), keepdim=True)),
    r(torch.logsumexp(x, dim=(1, 2))),
)
b = x > 0
print(
    "all_any",
    torch.all(b, dim=2).tolist(),
    torch.any(b, (0, 2)).tolist(),
    b.all().item(),
    torch.any(torch.tensor([0, 2])).dtype,
    torch.all(torch.tensor([1, 2], dtype=torch.uint8)).dtype,
)
print("count_nonzero", torch.count_nonzero(b, dim=(0, 2)).tolist())
n = torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]])
print(
    "nan_red",
    r(torch.nansum(n)),
    r(torch.nanmean(n, 1)),
    r(torch.nanmedian(n)),
    torch.nanmedian(n, 1).indices.tolist(),
    r(torch.nanquantile(n, 0.5, dim=1)),
)
print(
    "nan_propagate",
    torch.max(n).item() != torch.max(n).item(),
    torch.argmax(n[0]).item(),
    n.sum(1).isnan().tolist(),
)
print(
    "norms",
    r(x.norm()),
    r(x.norm(p=1, dim=2)),
    r(torch.norm(x[0], p="fro")),
    r(torch.norm(x[0], p="nuc")),
    r(torch.linalg.vector_norm(x, ord=float("inf"), dim=(1, 2))),
    r(torch.linalg.norm(x[0], ord=2)),
)
print(
    "argmax",
    x.argmax().item(),
    x.argmax(dim=1, keepdim=True).flatten().tolist(),
    torch.argmin(x, 2).tolist(),
)
print("aminmax", r(torch.aminmax(x).min), r(torch.aminmax(x).max))

out = torch.empty(0)
torch.add(x[0], x[1], out=out)
print("out_resize", tuple(out.shape), r(out.sum()))
o2 = torch.zeros(3, 4)
ret = torch.mul(x[0], 2, out=o2)
print("out_identity", ret is o2, r(o2.sum()))
om = torch.empty(3, 3)
torch.matmul(x[0], x[1].T, out=om)
print("out_matmul", r(om.trace()))
oc = torch.empty(0)
torch.cat([x[0], x[1]], dim=0, out=oc)
print("out_cat", tuple(oc.shape))
osum = torch.empty(())
torch.sum(x, dim=None, out=osum) if False else torch.sum(x, (0, 1, 2), out=osum)
print("out_sum", r(osum))
mv_, mi_ = torch.empty(0), torch.empty(0, dtype=torch.long)
torch.max(x, 2, out=(mv_, mi_))
print("out_max_tuple", tuple(mv_.shape), mi_.flatten().tolist())
ow = torch.empty(3, 4)
torch.where(x[0] > 0, x[0], torch.zeros(()), out=ow)
print("out_where", r(ow.sum()))
oe = torch.empty(2, 3, 4)
torch.exp(x, out=oe)
torch.clamp(x, -0.5, 0.5, out=oe)
print("out_unary", r(oe.sum()))
oi = torch.empty(3, dtype=torch.long)
torch.argmax(x[0], 1, out=oi) if hasattr(torch, "argmax") else None
print("out_argmax", oi.tolist())
try:
    torch.add(x[0], x[1], out=torch.empty(3, 4, dtype=torch.int64))
except RuntimeError as e:
    print("out_dtype_err", str(e)[:70])
oq = torch.empty(2)
torch.quantile(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([0.25, 0.5]), out=oq)
print("out_quantile", oq.tolist())
