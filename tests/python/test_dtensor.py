"""DTensor over real processes (4 ranks, one spawn for every case): operators follow sharding
rules (the placements of the result are checked, its value against the same computation on
whole tensors), autograd through DTensor operators gives the single-process gradients laid out
as the DTensors, redistribute/from_local/to_local are differentiable, uneven shards, printing,
and a 2-d mesh."""

from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
F = import_module(M.__name__ + ".nn.functional")
Shard, Replicate, Partial, DTensor = dt.Shard, dt.Replicate, dt.Partial, dt.DTensor
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))
M.manual_seed(0)

def close(a, b, what, tol=1e-5):
    a = a.full_tensor() if isinstance(a, DTensor) else a
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol,
                               err_msg=what)

def leaf(t):
    return t.detach().clone().requires_grad_()

x = M.randn(10, 6)          # 10 rows over 4 ranks: pieces of 3, 3, 3, 1
b = M.randn(6)
w = M.randn(5, 6)

# elementwise with broadcasting: the sharded operand's layout wins, the other is replicated
xs = dt.distribute_tensor(x, mesh, [Shard(0)])
br = dt.distribute_tensor(b, mesh, [Replicate()])
y = xs * 2 + br
assert y.placements == (Shard(0),) and tuple(y.shape) == (10, 6), y.placements
close(y, x * 2 + b, "elementwise")
z = M.relu(xs) - dt.distribute_tensor(b, mesh, [Replicate()])
assert z.placements == (Shard(0),)
close(z, M.relu(x) - b, "relu-sub")
col = dt.distribute_tensor(x, mesh, [Shard(1)])
close(xs + col, x + x, "shard(0)+shard(1)")

# partial sums add as partial sums; a nonlinear op reduces them first
p = DTensor.from_local(x * (RANK + 1), mesh, [Partial()])
total = sum(range(1, WORLD + 1))
q = p + p
assert q.placements == (Partial(),)
close(q, x * 2 * total, "partial+partial")
close(p * 3, x * 3 * total, "partial*scalar")
close(M.exp(p), M.exp(x * total), "exp(partial)", 1e-4)
p8 = DTensor.from_local(x[:8, :4] * (RANK + 1), mesh, [Partial()])  # pieces of equal size
for d in (0, 1):
    moved = p8.redistribute(mesh, [Shard(d)])
    assert moved.to_local().shape[d] == (8 if d == 0 else 4) // WORLD
    close(moved, x[:8, :4] * total, f"partial -> shard({d})")

# reductions
s0 = xs.sum(0)
assert s0.placements == (Partial(),), s0.placements
close(s0, x.sum(0), "sum over the sharded dim")
s1 = xs.sum(1)
assert s1.placements == (Shard(0),)
close(s1, x.sum(1), "sum over another dim")
close(xs.mean(), x.mean(), "mean, uneven shards")
close(xs.mean(0, keepdim=True), x.mean(0, keepdim=True), "mean keepdim")
close(xs.amax(0), x.amax(0), "amax")
close(xs.sum(), x.sum(), "sum all")

# matmul family: Shard x Replicate -> Shard, Shard(k) x Shard(k) -> Partial
ws = dt.distribute_tensor(w, mesh, [Shard(0)])
out = F.linear(dt.distribute_tensor(x, mesh, [Replicate()]), ws)
assert out.placements == (Shard(1),), out.placements
close(out, F.linear(x, w), "colwise linear")
xk = dt.distribute_tensor(x, mesh, [Shard(1)])
wk = dt.distribute_tensor(w, mesh, [Shard(1)])
out = F.linear(xk, wk, dt.distribute_tensor(b[:5], mesh, [Replicate()]))
assert out.placements == (Partial(),), out.placements
close(out, F.linear(x, w, b[:5]), "rowwise linear with bias", 1e-4)
mm = M.mm(xs, dt.distribute_tensor(w.t().contiguous(), mesh, [Replicate()]))
assert mm.placements == (Shard(0),)
close(mm, x @ w.t(), "mm")
close(xk @ dt.distribute_tensor(w.t().contiguous(), mesh, [Shard(0)]), x @ w.t(), "matmul k", 1e-4)
bias5 = dt.distribute_tensor(b[:5], mesh, [Replicate()])
close(M.addmm(bias5, xs, dt.distribute_tensor(w.t().contiguous(), mesh, [Replicate()])),
      M.addmm(b[:5], x, w.t()), "addmm")

# views where the sharded dim allows it
h = M.randn(4, 3, 8)
hs = dt.distribute_tensor(h, mesh, [Shard(2)])
v = hs.view(4, 3, 4, 2)
assert v.placements == (Shard(2),), v.placements
close(v, h.view(4, 3, 4, 2), "split the sharded dim")
t = v.transpose(1, 2)
assert t.placements == (Shard(1),)
close(t, h.view(4, 3, 4, 2).transpose(1, 2), "transpose")
r = dt.distribute_tensor(h, mesh, [Shard(0)]).reshape(12, 8)
close(r, h.reshape(12, 8), "merge dims")
close(hs.permute(2, 0, 1), h.permute(2, 0, 1), "permute")
close(hs.unsqueeze(0), h.unsqueeze(0), "unsqueeze")
close(hs.flatten(1), h.flatten(1), "flatten over the sharded dim")

# softmax on a whole dim stays sharded; on the sharded dim it is gathered first
sm = F.softmax(xs, dim=1)
assert sm.placements == (Shard(0),)
close(sm, F.softmax(x, dim=1), "softmax")
close(F.log_softmax(xs, dim=0), F.log_softmax(x, dim=0), "log_softmax over the sharded dim")

# cross_entropy on batch-sharded logits: the loss and its gradient are the whole batch's
# (ember also takes pieces of unequal size, which torch refuses)
rows = 10 if not AGAINST_TORCH else 8
tgt = M.randint(0, 6, (rows,))
if not AGAINST_TORCH:  # torch averages per piece, which an ignored target biases
    tgt[2] = -100
xl = leaf(x[:rows])
loss_ref = F.cross_entropy(xl, tgt)
loss_ref.backward()
xd = dt.distribute_tensor(x[:rows], mesh, [Shard(0)]).requires_grad_()
loss = F.cross_entropy(xd, dt.distribute_tensor(tgt, mesh, [Shard(0)]))
close(loss, loss_ref, "cross_entropy")
loss.backward()
assert xd.grad.placements == (Shard(0),)
close(xd.grad, xl.grad, "cross_entropy grad")

# embedding: vocabulary-sharded (partial sums) and dim-sharded weights
table = M.randn(9 if not AGAINST_TORCH else 12, 4)  # 9 rows: the last rank's piece is empty
idx = M.tensor([[0, 8, 4], [3, 3, 7]])
for pl, want in ((Shard(0), Partial()), (Shard(1), Shard(2))):
    e = F.embedding(dt.distribute_tensor(idx, mesh, [Replicate()]),
                    dt.distribute_tensor(table, mesh, [pl]))
    got = e.placements[0]
    assert got.is_partial() if want.is_partial() else got == want, (pl, e.placements)
    close(e, F.embedding(idx, table), f"embedding {pl}")

# layer_norm on row-sharded input: the replicated weight's gradient is summed over ranks
lw, lb = leaf(M.randn(6)), leaf(M.randn(6))
xr = leaf(x)
F.layer_norm(xr, (6,), lw, lb).pow(2).sum().backward()
lwd = dt.distribute_tensor(lw.detach(), mesh, [Replicate()]).requires_grad_()
lbd = dt.distribute_tensor(lb.detach(), mesh, [Replicate()]).requires_grad_()
xd = dt.distribute_tensor(x, mesh, [Shard(0)]).requires_grad_()
ln = F.layer_norm(xd, (6,), lwd, lbd)
assert ln.placements == (Shard(0),)
ln.pow(2).sum().backward()
if not AGAINST_TORCH:  # torch leaves it Partial until something reads it
    assert lwd.grad.placements == (Replicate(),)
close(lwd.grad, lw.grad, "layer_norm weight grad", 1e-4)
close(lbd.grad, lb.grad, "layer_norm bias grad", 1e-4)
close(xd.grad, xr.grad, "layer_norm input grad", 1e-4)

# autograd through a small network: gradients are DTensors with the parameters' placements
w1, w2 = leaf(M.randn(8, 6)), leaf(M.randn(3, 8))
xr = leaf(x)
ref = F.linear(F.gelu(F.linear(xr, w1)), w2).sum()
ref.backward()
w1d = dt.distribute_tensor(w1.detach(), mesh, [Shard(0)]).requires_grad_()
w2d = dt.distribute_tensor(w2.detach(), mesh, [Shard(1)]).requires_grad_()
xd = dt.distribute_tensor(x, mesh, [Replicate()]).requires_grad_()
got = F.linear(F.gelu(F.linear(xd, w1d)), w2d).sum()
close(got, ref, "mlp forward", 1e-4)
got.backward()
assert w1d.grad.placements == (Shard(0),) and w2d.grad.placements == (Shard(1),)
if not AGAINST_TORCH:  # torch leaves the input's gradient Partial
    assert xd.grad.placements == (Replicate(),)
close(w1d.grad, w1.grad, "w1 grad", 1e-4)
close(w2d.grad, w2.grad, "w2 grad", 1e-4)
close(xd.grad, xr.grad, "x grad", 1e-4)

# redistribute, from_local and to_local are differentiable
a = leaf(x)
d = dt.distribute_tensor(a.detach(), mesh, [Shard(0)]).requires_grad_()
(d.redistribute(mesh, [Replicate()]).to_local() * a.detach()).sum().backward()
close(d.grad, a.detach(), "grad through Shard -> Replicate")
loc = leaf(xs.to_local())
whole = DTensor.from_local(loc, mesh, [Shard(0)], shape=(10, 6), stride=(6, 1)).full_tensor()
(whole**2).sum().backward()
np.testing.assert_allclose(loc.grad.numpy(), (2 * xs.to_local()).numpy(), rtol=1e-6)
pp = DTensor.from_local(leaf(x), mesh, [Partial()])
pp.redistribute(mesh, [Shard(1)]).to_local().sum().backward()

# uneven pieces (torch.chunk's: 3, 3, 3, 1 rows): the global shape comes from them
if not AGAINST_TORCH:
    rows = [len(c) for c in M.chunk(M.arange(10), WORLD)] + [0] * WORLD
    u = DTensor.from_local(M.full((rows[RANK], 2), float(RANK)), mesh, [Shard(0)])
    assert tuple(u.shape) == (10, 2)
    want = sum(r * float(i) for i, r in enumerate(rows[:WORLD]))
    np.testing.assert_allclose(u.sum(0).full_tensor().numpy(), [want, want])
given = DTensor.from_local(xs.to_local(), mesh, [Shard(0)], shape=(10, 6), stride=(6, 1))
assert tuple(given.shape) == (10, 6) and given.stride() == (6, 1)
assert xs.to_local().shape[0] == (1 if RANK == WORLD - 1 else 3)

# dropout: every rank draws the same mask for the whole tensor and keeps its piece
if not AGAINST_TORCH:
    M.manual_seed(5)
    want = F.dropout(M.ones(10, 6), 0.5, True) * x
    M.manual_seed(5)
    dd = F.dropout(xs, 0.5, True)
    assert dd.placements == (Shard(0),)
    close(dd, want, "dropout")

# printing and metadata
text = repr(xs)
assert text.startswith("DTensor(local_tensor=") and "Shard(dim=0)" in text, text
assert xs.device_mesh == mesh and xs.placements == (Shard(0),) and xs.size(1) == 6
assert xs.dim() == 2 and xs.numel() == 60

# a 2-d mesh: rows over "dp", weight rows over "tp"
mesh2 = dm.init_device_mesh("cpu", (2, WORLD // 2), mesh_dim_names=("dp", "tp"))
x2 = dt.distribute_tensor(x, mesh2, [Shard(0), Replicate()])
w2d = dt.distribute_tensor(w, mesh2, [Replicate(), Shard(0)])
o = F.linear(x2, w2d)
assert o.placements == (Shard(0), Shard(1)), o.placements
close(o, F.linear(x, w), "2-d mesh linear")
close(o.sum(), F.linear(x, w).sum(), "2-d mesh sum", 1e-4)
print("OK")
"""


def test_dtensor_operators_and_autograd(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 4, timeout=240):
        assert "OK" in out, out
