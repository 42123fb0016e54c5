"""Session 16's distributed checks, as torch 2.13's (the same tests pass with
EMBER_TEST_AGAINST=torch): DTensor ops along one dim (sort, topk, cumsum, median, max(dim),
argmax, var, norm, ...)
keep the shards of the other dims, with the global shape; redistribute's errors and its
forward_dtype / backward_dtype; FSDP2's unsharded parameters are nn.Parameters. One 2-rank run
holds them all, each value compared with the same op on the whole tensor."""

from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
fsdp = import_module(M.__name__ + ".distributed.fsdp")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))
S, R, P = dt.Shard, dt.Replicate, dt.Partial
x = M.tensor(np.random.default_rng(0).standard_normal((5, 6, 3)).astype(np.float32))

def values(out):
    return out.values if hasattr(out, "values") and not callable(out.values) else out

ops = {  # name -> (op, the dim it works along)
    "sort": (lambda t: t.sort(1).values, 1),
    "sort_indices": (lambda t: M.sort(t, dim=1, descending=True).indices, 1),
    "argsort": (lambda t: t.argsort(), 2),
    "cumsum": (lambda t: t.cumsum(1), 1),
    "cummax": (lambda t: t.cummax(2).values, 2),
    "logcumsumexp": (lambda t: t.logcumsumexp(0), 0),
    "topk": (lambda t: t.topk(2, dim=1).values, 1),
    "topk_indices": (lambda t: t.topk(2).indices, 2),
    "kthvalue": (lambda t: t.kthvalue(2, 1).values, 1),
    "kthvalue_keepdim": (lambda t: t.kthvalue(2, 1, keepdim=True).indices, 1),
    "median": (lambda t: t.median(1).values, 1),
    "median_keepdim": (lambda t: t.median(dim=2, keepdim=True).values, 2),
    "mode": (lambda t: t.mode(0).values, 0),
    "max": (lambda t: t.max(1).values, 1),
    "min_keepdim": (lambda t: t.min(2, keepdim=True).indices, 2),
    "argmax": (lambda t: t.argmax(1), 1),
    "var_keepdim": (lambda t: t.var(2, keepdim=True), 2),
    "std": (lambda t: M.std(t, 0), 0),
    "logsumexp": (lambda t: t.logsumexp(1), 1),
    "norm": (lambda t: t.norm(dim=2), 2),
    "any": (lambda t: (t > 0).any(1), 1),
}
for sdim in (0, 1, 2):  # dim 0 splits unevenly (3 + 2)
    a = dt.distribute_tensor(x, mesh, [S(sdim)])
    for name, (op, dim) in ops.items():
        got, want = op(a), op(x)
        assert tuple(got.shape) == tuple(want.shape), (name, sdim, got.shape)
        np.testing.assert_allclose(got.full_tensor().numpy(), want.numpy(), rtol=1e-6, err_msg=name)
        if sdim == dim:  # the op's own dim is gathered (torch leaves some reductions Partial)
            assert isinstance(got.placements[0], (R, P)), (name, sdim, got.placements)
        else:  # the other shards stay where they are (a reduced dim before them shifts them)
            reduced = got.ndim < x.ndim
            assert got.placements == (S(sdim - (reduced and sdim > dim)),), (name, sdim)
            piece = want.tensor_split(WORLD, got.placements[0].dim)[RANK]
            np.testing.assert_allclose(got.to_local().numpy(), piece.numpy(), rtol=1e-6)

# autograd through topk of a row-sharded parameter: the gradient of the whole-tensor op
w0 = M.tensor(np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32))
w = dt.distribute_tensor(w0, mesh, [S(0)]).requires_grad_()
(w.topk(3, dim=1).values * 2).sum().backward()
ref = w0.clone().requires_grad_()
(ref.topk(3, dim=1).values * 2).sum().backward()
np.testing.assert_allclose(w.grad.full_tensor().numpy(), ref.grad.numpy())

# redistribute: to Partial is refused (torch's text), placements are required
r = dt.distribute_tensor(x, mesh, [R()])
try:
    r.redistribute(mesh, [P()])
    raise AssertionError("redistributed to Partial")
except RuntimeError as e:
    assert str(e) == ("Can not redistribute from R to P(sum), "
                      "redistributing to Partial is for internal use only!"), str(e)
try:
    r.redistribute(mesh)
    raise AssertionError("redistributed without placements")
except RuntimeError as e:
    assert str(e) == "placements is needed for redistribute!", str(e)

# forward_dtype / backward_dtype: the move in float64, the gradient back in the input's dtype
s = dt.distribute_tensor(x, mesh, [S(0)]).requires_grad_()
full = s.redistribute(mesh, [R()], forward_dtype=M.float64, backward_dtype=M.float16)
assert full.dtype == M.float64 and full.placements == (R(),)
np.testing.assert_array_equal(full.to_local().detach().numpy(), x.double().numpy())
(full * 3).sum().backward()
assert s.grad.dtype == M.float32
np.testing.assert_array_equal(s.grad.full_tensor().numpy(), np.full((5, 6, 3), 3.0))

# FSDP2: while unsharded, the module's parameters are nn.Parameters (torch's)
lin = M.nn.Linear(4, 2)
fsdp.fully_shard(lin, reshard_after_forward=False)
out = lin(M.ones(3, 4))
assert all(type(p) is M.nn.Parameter for p in lin.parameters()), [type(p) for p in lin.parameters()]
assert tuple(lin.weight.shape) == (2, 4) and lin.weight.requires_grad
out.sum().backward()
assert all(isinstance(p, dt.DTensor) for p in lin.parameters())
lin.unshard()
assert type(lin.weight) is M.nn.Parameter and tuple(lin.weight.shape) == (2, 4)
lin.reshard()
dist.destroy_process_group()
print("OK")
"""


def test_dtensor_along_dim_redistribute_fsdp_parameters(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 2, timeout=120):
        assert "OK" in out, out
