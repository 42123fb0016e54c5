# ruff: noqa: E501
"""Index-heavy tensor code of the kind in graph, detection and NLP preprocessing: scatter/gather in
every reduction, index_put_ with duplicate indices, masked selection and scattering, bucketize and
searchsorted with sorters, unique over rows, nonzero/argwhere, index_* family, take/put_,
repeat_interleave, the *_scatter ops, einsum in ellipsis and sublist forms, histogram and the
small elementwise helpers people reach for."""

import torch

x = torch.arange(12, dtype=torch.float32).view(3, 4)
idx = torch.tensor([[0, 1, 0, 1], [1, 2, 2, 0], [0, 0, 1, 1]])
print("gather1", torch.gather(x, 1, idx % 4).tolist())
print("gather_neg", x.gather(-2, idx % 3).tolist())
src = torch.ones(3, 4)
print("scatter_add", torch.zeros(3, 3).scatter_add_(1, idx % 3, src).tolist())
for red in ["sum", "prod", "mean", "amax", "amin"]:
    for inc in (True, False):
        out = torch.full((3, 3), 2.0).scatter_reduce(1, idx % 3, x, reduce=red, include_self=inc)
        print(f"scatter_reduce_{red}_{inc}", out.tolist())
print("scatter_value", torch.zeros(2, 4).scatter(1, torch.tensor([[1], [3]]), 7.5).tolist())
print(
    "scatter_reduce_add",
    torch.zeros(2, 4)
    .scatter_(1, torch.tensor([[1, 1], [3, 0]]), torch.ones(2, 2), reduce="add")
    .tolist(),
)

t = torch.zeros(5)
t.index_put_((torch.tensor([0, 2, 2, 4]),), torch.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
print("index_put_acc", t.tolist())
m = torch.zeros(3, 3)
m[torch.tensor([0, 2]), torch.tensor([1, 1])] = torch.tensor([5.0, 6.0])
m[1, :] += 1
m[m > 4] *= 2
print("adv_assign", m.tolist())
mask = x % 3 == 0
print("masked_select", torch.masked_select(x, mask).tolist())
print("masked_scatter", torch.zeros(3, 4).masked_scatter(mask, torch.arange(100.0, 112.0)).tolist())
print("masked_fill_bcast", x.masked_fill(torch.tensor([True, False, True, False]), -1).tolist())

bounds = torch.tensor([1.0, 3.0, 5.0, 7.0])
v = torch.tensor([[0.5, 1.0, 3.0], [5.5, 7.0, 9.0]])
print(
    "bucketize",
    torch.bucketize(v, bounds).tolist(),
    torch.bucketize(v, bounds, right=True).tolist(),
)
print("bucketize_int32", torch.bucketize(v, bounds, out_int32=True).dtype)
unsorted = torch.tensor([7.0, 1.0, 5.0, 3.0])
sorter = torch.argsort(unsorted)
print(
    "searchsorted_sorter",
    torch.searchsorted(unsorted, torch.tensor([2.0, 5.0, 8.0]), sorter=sorter).tolist(),
)
print(
    "searchsorted_side", torch.searchsorted(bounds, torch.tensor([3.0, 5.0]), side="right").tolist()
)
print(
    "searchsorted_2d",
    torch.searchsorted(
        torch.tensor([[1.0, 2, 3], [2, 4, 6]]), torch.tensor([[2.5], [2.5]])
    ).tolist(),
)
print("searchsorted_scalar", torch.searchsorted(bounds, 4.0).item())

rows = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9], [3, 4]])
u, inv, cnt = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
print("unique_rows", u.tolist(), inv.tolist(), cnt.tolist())
u1, inv1 = torch.unique(torch.tensor([3, 1, 3, 2, 1]), return_inverse=True)
print("unique_flat", u1.tolist(), inv1.tolist())
uc, ic, cc = torch.unique_consecutive(
    torch.tensor([1, 1, 2, 2, 2, 1, 3]), return_inverse=True, return_counts=True
)
print("unique_consec", uc.tolist(), ic.tolist(), cc.tolist())
print(
    "unique_consec_dim",
    torch.unique_consecutive(torch.tensor([[1, 1, 2], [1, 1, 2]]), dim=1).tolist(),
)

nz = torch.tensor([[0, 1, 0], [2, 0, 3]])
print("nonzero", nz.nonzero().tolist(), [t.tolist() for t in nz.nonzero(as_tuple=True)])
print("argwhere", torch.argwhere(nz > 1).tolist())
print(
    "count_nonzero",
    torch.count_nonzero(nz, dim=(0, 1)).item(),
    torch.count_nonzero(nz, dim=0).tolist(),
)

base = torch.zeros(4, 3)
print("index_add", base.index_add(0, torch.tensor([0, 2, 0]), torch.ones(3, 3), alpha=2.5).tolist())
print("index_copy", base.index_copy(1, torch.tensor([2, 0]), torch.arange(8.0).view(4, 2)).tolist())
print("index_fill", base.index_fill(0, torch.tensor([1, 3]), torch.tensor(-2.0)).tolist())
print(
    "index_reduce",
    torch.ones(3, 2)
    .index_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([[2.0, 3], [4, 5], [6, 7]]), "prod")
    .tolist(),
)
print("index_select", x.index_select(1, torch.tensor([3, 0])).tolist())
print("take", torch.take(x, torch.tensor([[0, 11], [5, 6]])).tolist())
p = torch.zeros(2, 3)
p.put_(torch.tensor([1, 1, 4]), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)
print("put_acc", p.tolist())
print(
    "take_along",
    torch.take_along_dim(x, torch.argsort(x, dim=1, descending=True), dim=1)[:, :2].tolist(),
)

print(
    "repeat_interleave",
    torch.repeat_interleave(torch.tensor([1, 2, 3]), torch.tensor([2, 0, 1])).tolist(),
)
print("repeat_interleave_dim", torch.tensor([[1, 2], [3, 4]]).repeat_interleave(2, dim=0).tolist())
print("repeat_interleave_counts", torch.repeat_interleave(torch.tensor([1, 3, 2])).tolist())
print(
    "repeat_interleave_out",
    torch.tensor([5, 6]).repeat_interleave(torch.tensor([1, 2]), output_size=3).tolist(),
)
print(
    "tensor_split",
    [t.tolist() for t in torch.arange(7).tensor_split([2, 5])],
    [t.shape[0] for t in torch.arange(7).tensor_split(3)],
)
print(
    "hsplit",
    [tuple(t.shape) for t in torch.hsplit(x, 2)],
    [tuple(t.shape) for t in torch.vsplit(x, [1])],
)
print("movedim", torch.zeros(2, 3, 4, 5).movedim((0, 1), (3, 2)).shape)
print("roll", torch.roll(x, shifts=(1, -1), dims=(0, 1)).tolist())
print("rot90", torch.rot90(x, -1, (0, 1)).tolist())
print("diag_embed", torch.diag_embed(torch.tensor([[1.0, 2.0]]), offset=1).tolist())
print("diagonal_scatter", torch.diagonal_scatter(torch.zeros(3, 3), torch.ones(2), 1).tolist())
print("select_scatter", torch.select_scatter(torch.zeros(2, 3), torch.ones(3), 0, 1).tolist())
print(
    "slice_scatter",
    torch.slice_scatter(torch.zeros(4, 4), torch.ones(2, 4), start=1, end=4, step=2).tolist(),
)
print(
    "tril_indices",
    torch.tril_indices(3, 4, offset=1).tolist(),
    torch.triu_indices(3, 3, -1).tolist(),
)

a = torch.arange(24, dtype=torch.float32).view(2, 3, 4)
b = torch.arange(8, dtype=torch.float32).view(4, 2)
print("einsum_ellipsis", torch.einsum("...ij,jk->...ik", a, b).sum().item())
print("einsum_sublist", torch.einsum(a, [0, 1, 2], b, [2, 3], [0, 3]).tolist())
print(
    "einsum_diag",
    torch.einsum("ii->i", torch.arange(9.0).view(3, 3)).tolist(),
    torch.einsum("ii", torch.arange(9.0).view(3, 3)).item(),
)
print("einsum_outer_batch", torch.einsum("bi,bj->bij", x[:2], x[1:]).shape)
print("einsum_list_arg", torch.einsum("ij,jk", [x, torch.ones(4, 2)]).tolist())

vals = torch.tensor([0.1, 0.4, 0.4, 0.9, 1.5, -0.2])
print(
    "bincount_w",
    torch.bincount(torch.tensor([0, 1, 1, 3]), weights=torch.tensor([0.5, 1.0, 2.0, 3.0])).tolist(),
)
h, edges = torch.histogram(vals, bins=torch.tensor([0.0, 0.5, 1.0, 2.0]), density=True)
print("histogram", h.tolist(), edges.tolist())
h2, e2 = torch.histogram(vals, bins=3, range=(0.0, 1.5), weight=torch.ones(6) * 2)
print("histogram_range", h2.tolist(), e2.tolist())
print("histc", torch.histc(vals, bins=4, min=0, max=1).tolist())
print("cummin", [t.tolist() for t in torch.cummin(torch.tensor([3, 1, 2, 0, 5]), 0)])
print("cummax_ties", torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 0).indices.tolist())
print("aminmax", [t.tolist() for t in torch.aminmax(x, dim=0)])
print(
    "nan_to_num",
    torch.nan_to_num(
        torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0]), nan=0.0, posinf=9.0
    ).tolist(),
)
print(
    "clamp_tensor", x.clamp(min=torch.tensor([1.0, 2.0, 3.0, 4.0]), max=torch.tensor(8.0)).tolist()
)
print("where_scalar", torch.where(x > 5, x, 0.0).tolist(), torch.where(x > 9, 1, 0).dtype)
print(
    "lerp_tensor",
    torch.lerp(torch.zeros(3), torch.ones(3) * 10, torch.tensor([0.0, 0.25, 1.0])).tolist(),
)
mant, ex = torch.frexp(torch.tensor([8.0, 0.3, -5.0]))
print("frexp", mant.tolist(), ex.tolist(), torch.ldexp(mant, ex).tolist())
print(
    "copysign",
    torch.copysign(torch.tensor([1.0, -2.0, 3.0]), torch.tensor([-0.0, 1.0, -1.0])).tolist(),
)
print(
    "fmod_rem",
    torch.fmod(torch.tensor([-7, 7]), 3).tolist(),
    torch.remainder(torch.tensor([-7.0, 7.0]), -3).tolist(),
)
print(
    "floor_divide",
    torch.floor_divide(torch.tensor([-7, 7]), 2).tolist(),
    torch.div(torch.tensor([-7, 7]), 2, rounding_mode="trunc").tolist(),
)
print(
    "shifts", (torch.tensor([1, 8, -16]) << 2).tolist(), (torch.tensor([1, 8, -16]) >> 1).tolist()
)
print(
    "isclose",
    torch.isclose(
        torch.tensor([1.0, float("nan"), 2.0]),
        torch.tensor([1.0 + 1e-9, float("nan"), 2.1]),
        equal_nan=True,
    ).tolist(),
)
print("kthvalue", [t.tolist() for t in torch.kthvalue(x, 2, dim=1, keepdim=True)])
print(
    "combinations", torch.combinations(torch.tensor([1, 2, 3]), r=2, with_replacement=True).tolist()
)
print("cartesian", torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4])).tolist())
print("logcumsumexp", torch.logcumsumexp(torch.tensor([0.0, 1.0, -1.0]), 0).tolist())
print("block_diag", torch.block_diag(torch.ones(1, 2), torch.tensor([[3]])).tolist())
print(
    "tensordot", torch.tensordot(a, b, dims=([2], [0])).shape, torch.tensordot(x, x, dims=2).item()
)
print("cdist", torch.cdist(x[:2], x[1:], p=1).tolist())
print("diff", torch.diff(torch.tensor([1, 4, 9, 16]), n=2, prepend=torch.tensor([0])).tolist())
print("flatten_unflatten", x.flatten().unflatten(0, (2, -1)).shape, x.unflatten(1, (2, 2)).shape)
