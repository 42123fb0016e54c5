"""Less common tensor functions a data-processing script reaches for: narrow/chunk/unbind,
squeeze over several dims, moveaxis/swapaxes, broadcast_to, diagflat, addbmm/addr/ger/inner,
logit/sgn/clamp_min, asarray, apply_/map_, new_* constructors, triangular_solve, linalg.eig,
complex printing, unique variants, histogramdd, and their printed forms."""

import numpy as np
import torch


def r(t, n=4):
    return [round(v, n) for v in t.flatten().tolist()]


a = torch.arange(24.0).reshape(2, 3, 4)
print("narrow", a.narrow(2, 1, 2).shape, r(torch.narrow(a, 0, 1, 1)[0, 0]))
print("chunk", [c.shape for c in a.chunk(3, dim=2)], [c.shape for c in torch.chunk(a, 2, 1)])
print("unbind", [r(t) for t in torch.unbind(a[0], 1)][:2])
print(
    "squeeze_multi",
    torch.zeros(1, 3, 1, 2).squeeze((0, 2)).shape,
    torch.zeros(1, 3, 1).squeeze(1).shape,
)
print(
    "moveaxis",
    torch.moveaxis(a, 0, -1).shape,
    torch.swapaxes(a, 0, 2).shape,
    a.swapdims(1, 2).shape,
)
print("broadcast_to", torch.broadcast_to(torch.tensor([1, 2, 3]), (2, 3)).tolist())
print(
    "diagflat",
    torch.diagflat(torch.tensor([[1, 2], [3, 4]])).tolist(),
    torch.diagflat(torch.tensor([1.0, 2.0]), offset=1).shape,
)
m1, m2 = torch.ones(3, 2, 4), torch.linspace(0, 1, 60).reshape(3, 4, 5) / 2
print("addbmm", r(torch.addbmm(torch.ones(2, 5), m1, m2, beta=0.5, alpha=2)[0]))
v1, v2 = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])
print("ger", torch.ger(v1, v2).tolist(), r(torch.addr(torch.ones(2, 3), v1, v2, alpha=2)))
print("inner", torch.inner(torch.ones(2, 3), torch.arange(6.0).reshape(2, 3)).tolist())
p = torch.tensor([0.0, 0.25, 0.5, 1.0])
print("logit", r(torch.logit(p)), r(torch.logit(p, eps=1e-3)))
print(
    "sgn",
    torch.sgn(torch.tensor([-2.0, 0.0, 3.0])).tolist(),
    torch.sgn(torch.tensor([3 + 4j])).tolist(),
)
print(
    "clamp_min",
    torch.clamp_min(torch.tensor([-1.0, 2.0]), 0.5).tolist(),
    torch.tensor([1, 5]).clamp_max(3).tolist(),
)
arr = np.arange(6, dtype=np.float64).reshape(2, 3)
t = torch.asarray(arr)
print(
    "asarray",
    t.dtype,
    t.shape,
    torch.asarray([1, 2.5]).dtype,
    torch.asarray(arr, dtype=torch.float32).dtype,
)
arr[0, 0] = 100.0
print("asarray_shares", t[0, 0].item(), torch.asarray(arr, copy=True)[0, 0].item())
u = torch.tensor([1.0, 2.0, 3.0])
u.apply_(lambda z: z * 10 + 1)
u.map_(torch.tensor([1.0, 1.0, 2.0]), lambda z, w: z * w)
print("apply_map", u.tolist())
base = torch.zeros(2, dtype=torch.float64)
print(
    "new_ctor",
    base.new_tensor([1, 2]).dtype,
    base.new_ones(2, 2).dtype,
    base.new_full((2,), 7).tolist(),
    base.new_empty(3).shape,
    base.new_zeros((1, 2), dtype=torch.int32).dtype,
)
A = torch.tensor([[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [-1.0, 0.5, 4.0]])
B = torch.arange(6.0).reshape(3, 2)
sol, clone = torch.triangular_solve(B, A, upper=False)
print("triangular_solve", r(sol), torch.allclose(A @ sol, B))
print("solve_triangular", r(torch.linalg.solve_triangular(A, B, upper=False, left=True)))
M = torch.tensor([[2.0, 1.0], [-1.0, 2.0]])
vals, vecs = torch.linalg.eig(M)
print("eig", vals.dtype, r(torch.view_as_real(vals.sort(stable=True)[0] if False else vals)))
print("eig_check", torch.allclose(M.to(vals.dtype) @ vecs, vecs * vals, atol=1e-5))
print("eigvals_sym", r(torch.linalg.eigvalsh(torch.tensor([[2.0, 1.0], [1.0, 2.0]]))))
z = torch.tensor([1 + 2j, -0.5j, 3.25 + 0j])
print("complex_repr", z)
print("complex_ops", z.abs().tolist(), r(z.angle()), z.conj().imag.tolist(), (z * 1j).real.tolist())
print("complex_dtype", z.dtype, z.real.dtype, torch.promote_types(torch.float64, torch.complex64))
print("polar", torch.polar(torch.tensor([2.0]), torch.tensor([0.0])))
x = torch.tensor([3, 1, 2, 3, 1, 1, 5])
vals, inv, cnt = torch.unique(x, return_inverse=True, return_counts=True)
print("unique", vals.tolist(), inv.tolist(), cnt.tolist())
print("unique_unsorted_sorted", torch.unique(x, sorted=True).tolist())
rows = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9]])
print(
    "unique_dim",
    torch.unique(rows, dim=0).tolist(),
    torch.unique(rows, dim=0, return_inverse=True)[1].tolist(),
)
uc, ci, cc = torch.unique_consecutive(x, return_inverse=True, return_counts=True)
print("unique_consecutive", uc.tolist(), ci.tolist(), cc.tolist())
pts = torch.tensor([[0.1, 0.2], [0.5, 0.5], [0.9, 0.1], [0.4, 0.8]])
hist, edges = torch.histogramdd(pts, bins=[2, 2], range=[0.0, 1.0, 0.0, 1.0])
print("histogramdd", hist.tolist(), [e.tolist() for e in edges])
h, be = torch.histogram(
    torch.tensor([1.0, 2.0, 1.0, 4.0]), bins=3, weight=torch.tensor([1.0, 2.0, 3.0, 4.0])
)
print("histogram", h.tolist(), r(be))
print(
    "bincount_w",
    torch.bincount(
        torch.tensor([0, 1, 1, 3]), weights=torch.tensor([0.5, 1.0, 1.5, 2.0]), minlength=5
    ).tolist(),
)
print(
    "float_power",
    torch.float_power(torch.tensor([2, 3]), 2).dtype,
    torch.tensor([4]).float_power(0.5).tolist(),
)
print("frexp", [t.tolist() for t in torch.frexp(torch.tensor([8.0, 0.3, -5.0]))])
print("ldexp", torch.ldexp(torch.tensor([1.0, 3.0]), torch.tensor([2, -1])).tolist())
print(
    "copysign",
    torch.copysign(torch.tensor([1.0, -2.0, 3.0]), torch.tensor([-1.0, 1.0, -0.0])).tolist(),
)
print("nextafter", torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])).item() - 1.0 > 0)
print(
    "xlogy",
    torch.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0])).tolist(),
    r(torch.special.xlog1py(torch.tensor([2.0]), torch.tensor([1.0]))),
)
print("erfcx", r(torch.special.erfcx(torch.tensor([-1.0, 0.0, 5.0, 30.0]))))
print(
    "sinc_i0",
    r(torch.sinc(torch.tensor([0.0, 0.5, 1.5]))),
    r(torch.i0(torch.tensor([0.0, 1.0, 3.0]))),
)
print(
    "trapz",
    round(torch.trapezoid(torch.tensor([1.0, 4.0, 9.0]), dx=0.5).item(), 4),
    r(torch.cumulative_trapezoid(torch.tensor([1.0, 4.0, 9.0]), x=torch.tensor([0.0, 1.0, 3.0]))),
)
print(
    "vander",
    torch.vander(torch.tensor([1, 2, 3]), N=3).tolist(),
    torch.linalg.vander(torch.tensor([2.0, 3.0])).tolist(),
)
print("tril_idx", torch.tril_indices(3, 3, offset=-1).tolist(), torch.triu_indices(2, 3).tolist())
print(
    "combinations",
    torch.combinations(torch.tensor([1, 2, 3]), r=2).tolist(),
    torch.combinations(torch.tensor([1, 2]), with_replacement=True).tolist(),
)
print("cartesian", torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4])).tolist())
print(
    "take_along",
    torch.take_along_dim(
        torch.tensor([[10, 30, 20], [5, 4, 6]]), torch.tensor([[2], [0]]), dim=1
    ).tolist(),
)
print("block_diag", torch.block_diag(torch.ones(1, 2), torch.tensor([[3]])).tolist())
print("kron", torch.kron(torch.eye(2), torch.tensor([[1, 2]])).tolist())
print(
    "rot90",
    torch.rot90(torch.arange(4).reshape(2, 2), 1, [0, 1]).tolist(),
    torch.rot90(torch.arange(4).reshape(2, 2), -1).tolist(),
)
print(
    "logcumsumexp",
    r(torch.logcumsumexp(torch.tensor([0.0, 1.0, 2.0]), 0)),
    r(torch.cummin(torch.tensor([3, 1, 2, 0]), 0).indices),
)
print("aminmax", [t.tolist() for t in torch.aminmax(torch.tensor([[1, 5], [-2, 3]]), dim=0)])
print(
    "nanops",
    torch.nanmean(torch.tensor([1.0, float("nan"), 3.0])).item(),
    torch.nansum(torch.tensor([float("nan"), 2.0])).item(),
    torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0, 2.0])).item(),
)
print(
    "quantile",
    r(torch.quantile(torch.arange(10.0), torch.tensor([0.1, 0.5, 0.95]), interpolation="midpoint")),
    r(torch.nanquantile(torch.tensor([1.0, float("nan"), 2.0]), 0.5)),
)
print(
    "kthvalue_mode",
    torch.kthvalue(torch.tensor([5, 1, 4, 2]), 2).values.item(),
    torch.mode(torch.tensor([1, 2, 2, 3, 3])).values.item(),
)
print(
    "msort",
    torch.msort(torch.tensor([[3, 1], [1, 2]])).tolist(),
    torch.argsort(torch.tensor([2, 1, 2, 0]), stable=True, descending=True).tolist(),
)
print("isin", torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4]), invert=True).tolist())
print("count_nonzero", torch.count_nonzero(torch.tensor([[0, 1], [2, 0]]), dim=0).tolist())
print(
    "diff",
    torch.diff(torch.tensor([1, 4, 9, 16]), n=2).tolist(),
    torch.diff(
        torch.tensor([1.0, 2.0]), prepend=torch.tensor([0.0]), append=torch.tensor([5.0])
    ).tolist(),
)
print(
    "gcd_lcm",
    torch.gcd(torch.tensor([12, 18]), torch.tensor([8, 27])).tolist(),
    torch.lcm(torch.tensor([4, 6]), torch.tensor([6, 4])).tolist(),
)
print(
    "bitwise",
    torch.bitwise_left_shift(torch.tensor([1, 2]), 3).tolist(),
    (torch.tensor([12]) >> 2).tolist(),
    torch.bitwise_xor(torch.tensor([5]), torch.tensor([3])).tolist(),
)
print(
    "int_div",
    torch.div(torch.tensor([-7, 7]), 2, rounding_mode="floor").tolist(),
    torch.div(torch.tensor([-7, 7]), 2, rounding_mode="trunc").tolist(),
    (torch.tensor([-7, 7]) // 2).tolist(),
    torch.fmod(torch.tensor([-7.0]), 2).item(),
    torch.remainder(torch.tensor([-7]), 3).item(),
)
print(
    "true_div_int", torch.tensor([3]) / torch.tensor([2]), torch.tensor([1, 2]).true_divide(2).dtype
)
print(
    "round_decimals",
    torch.round(torch.tensor([1.2345, 2.5, 3.5]), decimals=2).tolist(),
    torch.round(torch.tensor([2.5, 3.5, -0.5])).tolist(),
)
print("repr_int64", torch.tensor([1, -20, 300]), torch.tensor([True, False]))
print(
    "repr_fp16",
    torch.tensor([1.5, 2.25], dtype=torch.float16),
    torch.tensor([1.0, 2.0], dtype=torch.bfloat16),
)
print("repr_big", torch.arange(2000.0).reshape(2, 1000) / 7)
print("repr_empty", torch.empty(0, 3), torch.zeros(2, 0, dtype=torch.int64))
print(
    "repr_scalar", torch.tensor(3.5), torch.tensor(7), torch.tensor(1e-8), torch.tensor([1e10, 1.0])
)
print("repr_grad", torch.tensor([1.0, 2.0], requires_grad=True) * 2)
