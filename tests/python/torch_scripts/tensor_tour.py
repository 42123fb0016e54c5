"""A tour of tensor operations as the "Tensors" tutorial and everyday code use them: creation,
type promotion, integer and float division, rounding, comparisons, reductions, sorting, selection,
scatter/gather families, shape manipulation and numpy interop."""

import numpy as np
import torch


def show(name, t):
    if isinstance(t, torch.Tensor):
        print(f"{name} {t.dtype} {tuple(t.shape)} {t.tolist()}")
    else:
        print(f"{name} {t}")


def main():
    a = torch.tensor([[1, -2, 3], [-4, 5, -6]])
    f = torch.tensor([[0.5, -1.5, 2.5], [-3.5, 4.25, -0.75]])
    # promotion
    show("int_plus_float_scalar", a + 0.5)
    show("int_div", a / 2)
    show("floor_div", a // 4)
    show("floor_div_float", f // 1)
    show("remainder", a % 4)
    show("fmod", torch.fmod(a, 4))
    show(
        "uint8_int8", (torch.tensor([200], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8))
    )
    show("bool_add", torch.tensor([True, False]) + torch.tensor([True, True]))
    show("int_true_div_int", torch.tensor([7]) / torch.tensor([2]))
    show("half_float", (torch.ones(2, dtype=torch.float16) + torch.ones(2)).dtype)
    show("result_type", torch.result_type(torch.tensor([1]), 1.0))
    show("promote", torch.promote_types(torch.int32, torch.float16))
    show("can_cast", torch.can_cast(torch.float32, torch.int32))
    show("long_pow_neg", torch.tensor([2.0]) ** -1)
    show("int_pow", torch.tensor([2, 3]) ** 2)
    show("round_half_even", torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, 2.675])))
    show("round_decimals", torch.round(torch.tensor([1.2345, 2.5551]), decimals=2))
    show("trunc_frac", torch.stack([torch.trunc(f), torch.frac(f)]))
    show("ceil_floor", torch.stack([f.ceil(), f.floor()]))
    show("sign", torch.sign(torch.tensor([-2.0, 0.0, 3.0])))
    show("bitwise", [(a & 3).tolist(), (a | 8).tolist(), (a ^ 1).tolist(), (~a).tolist()])
    show("shift", torch.tensor([1, 8, -16]) << 2)
    show("rshift", torch.tensor([1, 8, -16]) >> 2)
    show("clamp_int", a.clamp(-3, 3))
    # reductions
    show("sum_dims", f.sum(dim=(0, 1)))
    show("mean_keep", f.mean(dim=1, keepdim=True))
    show("std", f.std(dim=1))
    show("var_unbiased0", f.var(dim=0, unbiased=False))
    show("var_correction", torch.var(f, dim=1, correction=0))
    vm = torch.var_mean(f, dim=1)
    show("var_mean", [vm[0].tolist(), vm[1].tolist()])
    show("prod", a.prod(dim=1))
    show("max_dim", list(f.max(dim=1)))
    show("argmax_ties", torch.tensor([1, 3, 3, 2]).argmax())
    show("argmin_flat", f.argmin())
    show("amax", f.amax(dim=0))
    show("aminmax", list(torch.aminmax(f)))
    show("logsumexp", f.logsumexp(dim=1))
    show(
        "norm",
        [f.norm().item(), f.norm(p=1).item(), torch.linalg.vector_norm(f, ord=float("inf")).item()],
    )
    show("cumsum", a.cumsum(dim=1))
    show("cumprod", a.cumprod(dim=0))
    show("logcumsumexp", f.logcumsumexp(dim=1))
    show(
        "median",
        [f.median().item(), f.median(dim=1).values.tolist(), f.median(dim=1).indices.tolist()],
    )
    show("nanmean", torch.tensor([1.0, float("nan"), 3.0]).nanmean())
    show("nansum", torch.tensor([1.0, float("nan"), 3.0]).nansum())
    show("mode", list(torch.tensor([1, 2, 2, 3, 3]).mode()))
    show("kthvalue", list(torch.tensor([5.0, 1.0, 4.0, 2.0]).kthvalue(2)))
    show("count_nonzero", torch.count_nonzero(a > 0, dim=0))
    show("all_any", [bool((a > -10).all()), bool((a > 5).any()), (a > 0).any(dim=1).tolist()])
    show("diff", torch.diff(torch.tensor([1, 4, 9, 16]), n=2))
    # sorting and selection
    s = torch.tensor([3, 1, 2, 1, 3, 0])
    show("sort_stable", list(torch.sort(s, stable=True)))
    show("sort_desc", list(s.sort(descending=True, stable=True)))
    show("argsort", s.argsort(stable=True))
    show("topk", list(torch.tensor([1.0, 5.0, 3.0, 5.0, 2.0]).topk(3)))
    show("topk_smallest", list(torch.tensor([1.0, 5.0, 3.0, 0.5]).topk(2, largest=False)))
    show("unique", list(torch.unique(s, return_inverse=True, return_counts=True)))
    show("unique_dim", torch.unique(torch.tensor([[1, 2], [1, 2], [0, 5]]), dim=0))
    show(
        "unique_consecutive",
        list(torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 1]), return_counts=True)),
    )
    show("bincount", torch.bincount(s, minlength=6))
    show("bincount_w", torch.bincount(s, weights=torch.arange(6.0)))
    show("histc", torch.histc(f, bins=4, min=-4, max=4))
    show(
        "searchsorted",
        torch.searchsorted(torch.tensor([1, 3, 5, 7]), torch.tensor([0, 3, 6, 9]), right=True),
    )
    show("bucketize", torch.bucketize(torch.tensor([0.5, 3.0, 7.5]), torch.tensor([1.0, 3.0, 5.0])))
    show("nonzero", torch.nonzero(a > 0))
    show("nonzero_tuple", [t.tolist() for t in torch.nonzero(a > 0, as_tuple=True)])
    show("where", torch.where(a > 0, a, torch.zeros_like(a)))
    show("where_scalar", torch.where(f > 0, 1.0, -1.0))
    show("masked_select", a.masked_select(a < 0))
    show("take", torch.take(a, torch.tensor([0, 5])))
    show("take_along", torch.take_along_dim(f, f.argsort(dim=1), dim=1))
    show("gather", a.gather(1, torch.tensor([[2, 0], [1, 1]])))
    show("index_select", a.index_select(1, torch.tensor([2, 0])))
    show("scatter", torch.zeros(2, 4).scatter(1, torch.tensor([[3, 0], [1, 2]]), 5.0))
    show("scatter_add", torch.zeros(5).scatter_add(0, torch.tensor([0, 1, 1, 4]), torch.ones(4)))
    show(
        "scatter_reduce",
        torch.zeros(3).scatter_reduce(
            0,
            torch.tensor([0, 0, 2]),
            torch.tensor([2.0, 5.0, 1.0]),
            reduce="amax",
            include_self=False,
        ),
    )
    show(
        "scatter_mean",
        torch.zeros(3).scatter_reduce(
            0, torch.tensor([0, 0, 2]), torch.tensor([2.0, 5.0, 1.0]), reduce="mean"
        ),
    )
    show(
        "index_add",
        torch.zeros(3, 2).index_add(0, torch.tensor([0, 2, 0]), torch.ones(3, 2), alpha=2),
    )
    show("index_copy", torch.zeros(3).index_copy(0, torch.tensor([2, 0]), torch.tensor([7.0, 8.0])))
    show("index_fill", torch.zeros(2, 3).index_fill(1, torch.tensor([1]), -1))
    show(
        "index_put_acc",
        torch.zeros(3).index_put_(
            (torch.tensor([0, 0, 2]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True
        ),
    )
    show("put_", torch.zeros(2, 2).put_(torch.tensor([3, 0]), torch.tensor([9.0, 1.0])))
    show(
        "masked_scatter",
        torch.zeros(4).masked_scatter(
            torch.tensor([True, False, True, False]), torch.tensor([5.0, 6.0])
        ),
    )
    # shapes
    show("cat", torch.cat([a, a[:1]], dim=0).shape)
    show("stack", torch.stack([a, a], dim=-1).shape)
    show(
        "hstack_vstack",
        [torch.hstack([a, a]).shape, torch.vstack([a[0], a[1]]).shape, torch.dstack([a, a]).shape],
    )
    show("tensor_split", [t.tolist() for t in torch.arange(7).tensor_split(3)])
    show("split_sizes", [t.tolist() for t in torch.arange(7).split([2, 5])])
    show("repeat", a[:, :1].repeat(2, 3).shape)
    show("repeat_interleave", torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([3, 1])))
    show("tile", torch.tile(torch.tensor([1, 2]), (2,)))
    show("roll", torch.roll(torch.arange(5), shifts=2))
    show("roll2d", torch.roll(a, shifts=(1, -1), dims=(0, 1)))
    show("flip", torch.flip(a, dims=[1]))
    show("rot90", torch.rot90(a, 1, [0, 1]))
    show(
        "tril_triu",
        [
            torch.tril(torch.ones(3, 3), diagonal=-1).sum().item(),
            torch.triu(torch.ones(3, 4), 1).sum().item(),
        ],
    )
    show(
        "meshgrid",
        [t.tolist() for t in torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")],
    )
    show("cartesian", torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4])))
    show("combinations", torch.combinations(torch.tensor([1, 2, 3]), r=2))
    show("block_diag", torch.block_diag(torch.ones(1, 1), 2 * torch.ones(2, 1)))
    show("diag_embed", torch.diag_embed(torch.tensor([1.0, 2.0])))
    show("outer", torch.outer(torch.tensor([1, 2]), torch.tensor([3, 4, 5])))
    show("kron", torch.kron(torch.eye(2), torch.tensor([[1.0, 2.0]])))
    show(
        "atleast",
        [torch.atleast_2d(torch.tensor(1.0)).shape, torch.atleast_3d(torch.ones(2)).shape],
    )
    show("einsum_trace", torch.einsum("ii", torch.arange(9.0).view(3, 3)))
    show("broadcast_shapes", torch.broadcast_shapes((2, 1, 3), (4, 1)))
    show(
        "broadcast_tensors",
        [t.shape for t in torch.broadcast_tensors(torch.ones(2, 1), torch.ones(3))],
    )
    # math
    x = torch.tensor([0.25, 1.0, 4.0])
    show("lerp", torch.lerp(x, torch.zeros(3), 0.25))
    show("addcmul", torch.addcmul(x, x, x, value=0.5))
    show("addcdiv", torch.addcdiv(x, x, x + 1, value=2))
    show("hypot_atan2", [torch.hypot(x, x).tolist(), torch.atan2(x, -x).tolist()])
    show("logaddexp", torch.logaddexp(x, -x))
    show("xlogy", torch.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0])))
    show(
        "special",
        [torch.special.expit(x).tolist(), torch.special.erfinv(torch.tensor([0.5])).tolist()],
    )
    show("sinc_log1p", [torch.sinc(x).tolist(), torch.log1p(x).tolist()])
    show(
        "nan_to_num",
        torch.nan_to_num(torch.tensor([float("nan"), float("inf"), -float("inf")]), posinf=9.0),
    )
    show("isclose", torch.isclose(torch.tensor([1.0, 1.001]), torch.tensor([1.0, 1.0]), rtol=1e-4))
    show("isin", torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4])))
    show("cross", torch.linalg.cross(torch.tensor([1.0, 0, 0]), torch.tensor([0, 1.0, 0])))
    show("dot_mv", [torch.dot(x, x).item(), torch.mv(torch.ones(2, 3), x).tolist()])
    # numpy bridge
    n = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(n)
    t[0, 0] = 42
    show("from_numpy_shares", n[0, 0])
    back = t.numpy()
    back[1, 1] = -1
    show("numpy_shares", t[1, 1].item())
    show("as_tensor_dtype", torch.as_tensor(np.array([1, 2], dtype=np.int16)).dtype)
    show("tensor_from_list_mixed", torch.tensor([1, 2.5, True]).dtype)
    show("tensor_from_np_scalar", torch.tensor(np.float64(1.5)).dtype)
    show("np_on_tensor", np.asarray(torch.ones(2, dtype=torch.float64)).dtype)
    show("np_sum_tensor", float(np.sum(torch.arange(4.0).numpy())))
    show(
        "zeros_like_np", torch.zeros_like(torch.from_numpy(np.ones((2, 2), dtype=np.float64))).dtype
    )
    torch.set_default_dtype(torch.float64)
    show(
        "default64",
        [
            torch.tensor([1.0]).dtype,
            torch.zeros(1).dtype,
            torch.arange(3.0).dtype,
            torch.tensor([1]).dtype,
        ],
    )
    show("default64_promote", (torch.tensor([1]) * 0.5).dtype)
    torch.set_default_dtype(torch.float32)


if __name__ == "__main__":
    main()
