"""DTensor factories, experimental.local_map / implicit_replication, parallel.loss_parallel, and
the sharding of the operators that join, split, select or rearrange elements and of the
reductions whose result is Partial, norms (_NormPartial), embedding over a row-sharded table
(_MaskPartial) and __setitem__, in 2 real processes (one spawn), against single-process
references (and torch, with EMBER_TEST_AGAINST=torch)."""

from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
exp = import_module(M.__name__ + ".distributed.tensor.experimental")
par = import_module(M.__name__ + ".distributed.tensor.parallel")
dm = import_module(M.__name__ + ".distributed.device_mesh")
F = import_module(M.__name__ + ".nn.functional")
# references kept before any DeviceMesh exists, when no routing is installed yet: ember's
# guards hand a call with a DTensor to the DTensor mode (checked below)
early_exp, early_sum, early_linear, early_gelu = M.exp, M.Tensor.sum, F.linear, F.gelu
early_losses = {n: getattr(F, n) for n in ("mse_loss", "l1_loss", "huber_loss", "soft_margin_loss",
                                           "binary_cross_entropy", "kl_div", "cross_entropy")}
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))

# F.relu is looked up before its argument, the program's first DTensor, exists: still routed
first = F.relu(dt.distribute_tensor(M.arange(-2.0, 2.0), mesh, [dt.Shard(0)]))
assert isinstance(first, dt.DTensor) and first.placements == (dt.Shard(0),), type(first)
try:
    first.tolist()
    raise AssertionError("tolist of a DTensor")
except RuntimeError as e:
    assert ".tolist() is not supported for tensor subclasses, got DTensor" in str(e), e

early_in = dt.distribute_tensor(M.arange(-2.0, 2.0), mesh, [dt.Shard(0)])
got = early_exp(early_in)
assert isinstance(got, dt.DTensor) and got.placements == (dt.Shard(0),), type(got)
np.testing.assert_allclose(got.full_tensor().numpy(), np.exp(np.arange(-2.0, 2.0)), rtol=1e-6)
got = early_sum(early_in)
assert got.placements == (dt.Partial(),) and got.full_tensor().item() == -2.0, got
got = early_gelu(early_in)  # a Python function: its kernel is guarded once a DTensor exists
assert isinstance(got, dt.DTensor) and got.placements == (dt.Shard(0),), type(got)
np.testing.assert_allclose(got.full_tensor().numpy(), F.gelu(M.arange(-2.0, 2.0)).numpy())
w_lin = dt.distribute_tensor(M.ones(3, 4), mesh, [dt.Shard(0)])
got = early_linear(dt.distribute_tensor(M.ones(2, 4), mesh, [dt.Replicate()]), w_lin)
assert got.placements == (dt.Shard(1),) and got.full_tensor().tolist() == [[4.0] * 3] * 2, got

# losses kept before the mesh: Partial as torch's (the pointwise ones Partial(avg)), the
# single-process value
M.manual_seed(0)  # the same values on every rank
pa, pb = M.rand(4, 3), M.rand(4, 3)
labels = M.tensor([0, 2, 1, 2])
da, db = (dt.distribute_tensor(t, mesh, [dt.Shard(0)]) for t in (pa, pb))
dl = dt.distribute_tensor(labels, mesh, [dt.Shard(0)])
for n, fn in early_losses.items():
    args, plain = ((da, db), (pa, pb))
    if n == "kl_div":
        args, plain = (da.log(), db), (pa.log(), pb)
    elif n == "cross_entropy":
        args, plain = (da, dl), (pa, labels)
    kw = {"reduction": "batchmean"} if n == "kl_div" else {}
    got = fn(*args, **kw)
    assert isinstance(got, dt.DTensor) and got.placements[0].is_partial(), (n, type(got))
    if n not in ("kl_div", "cross_entropy"):
        assert got.placements == (dt.Partial("avg"),), (n, got.placements)
    np.testing.assert_allclose(got.full_tensor().item(), getattr(F, n)(*plain, **kw).item(),
                               rtol=1e-5, err_msg=n)

# a thread that never built a DTensor computes on one as the main thread does
import threading
res = {}
th = threading.Thread(target=lambda: res.update(out=first * 2))
th.start()
th.join()
assert isinstance(res["out"], dt.DTensor) and res["out"].placements == (dt.Shard(0),), res
np.testing.assert_array_equal(res["out"].full_tensor().numpy(), [0.0, 0.0, 0.0, 2.0])

# factories: each rank holds its piece
z = dt.zeros(5, 4, device_mesh=mesh, placements=[dt.Shard(0)])
assert tuple(z.shape) == (5, 4) and z.placements == (dt.Shard(0),)
assert tuple(z.to_local().shape) == (len(M.arange(5).chunk(WORLD)[RANK]), 4)
o = dt.ones((3, 6), device_mesh=mesh, placements=[dt.Shard(1)], requires_grad=True)
assert o.requires_grad and tuple(o.to_local().shape) == (3, 6 // WORLD)
np.testing.assert_array_equal(o.full_tensor().detach().numpy(), np.ones((3, 6)))
f = dt.full((2, 2), 7.0, device_mesh=mesh)
assert f.placements == (dt.Replicate(),) and bool((f.to_local() == 7).all())
assert tuple(dt.empty(4, device_mesh=mesh, placements=[dt.Shard(0)]).shape) == (4,)
if not AGAINST_TORCH:  # torch's DTensor RNG needs an accelerator; ember draws the whole tensor
    M.manual_seed(3)
    r = dt.randn(6, 2, device_mesh=mesh, placements=[dt.Shard(0)]).full_tensor()
    M.manual_seed(3)
    np.testing.assert_array_equal(r.numpy(), M.randn(6, 2).numpy())
    got = [M.zeros(6, 2) for _ in range(WORLD)]
    dist.all_gather(got, r)
    np.testing.assert_array_equal(got[0].numpy(), got[-1].numpy())  # the same on every rank

# implicit_replication
x = dt.distribute_tensor(M.arange(8.0).reshape(4, 2), mesh, [dt.Shard(0)])
try:
    x + M.ones(2)
    raise AssertionError("a plain tensor was accepted")
except RuntimeError:
    pass
with exp.implicit_replication():
    y = x + M.ones(2)
np.testing.assert_allclose(y.full_tensor().numpy(), np.arange(8.0).reshape(4, 2) + 1)

# local_map: a per-piece function, its output declared Shard(0)
def scale_rows(t, s):
    return t * s

rows = ([dt.Shard(0)], None)
mapped = exp.local_map(scale_rows, out_placements=[dt.Shard(0)], in_placements=rows)
out = mapped(x, 2.0)
assert isinstance(out, dt.DTensor) and out.placements == (dt.Shard(0),)
np.testing.assert_allclose(out.full_tensor().numpy(), np.arange(8.0).reshape(4, 2) * 2)
one = exp.local_map(scale_rows, out_placements=([dt.Shard(0)],), in_placements=rows)(x, 2.0)
assert one.placements == (dt.Shard(0),)   # a one-output spec list names the single output
rep = dt.distribute_tensor(M.arange(8.0).reshape(4, 2), mesh, [dt.Replicate()])
try:
    mapped(rep, 2.0)
    raise AssertionError("mismatched placements were accepted")
except ValueError:
    pass
again = exp.local_map(scale_rows, out_placements=[dt.Shard(0)], in_placements=rows,
                      redistribute_inputs=True)(rep, 3.0)
np.testing.assert_allclose(again.full_tensor().numpy(), np.arange(8.0).reshape(4, 2) * 3)

# loss_parallel: class-sharded logits, plain targets, torch's results and gradients
M.manual_seed(0)
logits = M.randn(6, 10)
target = M.tensor([0, 9, 4, 5, -100, 2])
for reduction in ("mean", "sum", "none"):
    ref = logits.clone().requires_grad_()
    want = F.cross_entropy(ref, target, reduction=reduction)
    want.sum().backward()
    d = dt.distribute_tensor(logits.clone(), mesh, [dt.Shard(1)]).requires_grad_()
    with par.loss_parallel():
        loss = F.cross_entropy(d, target, reduction=reduction)
        loss.sum().backward() if reduction == "none" else loss.backward()
    full = loss.full_tensor() if isinstance(loss, dt.DTensor) else loss
    np.testing.assert_allclose(full.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=reduction)
    assert d.grad.placements == (dt.Shard(1),)
    np.testing.assert_allclose(d.grad.full_tensor().numpy(), ref.grad.numpy(), rtol=1e-5,
                               atol=1e-6, err_msg=reduction)
if not AGAINST_TORCH:  # the vocabulary-parallel path ran (the general rule gathers the logits)
    assert import_module("ember.distributed.tensor.parallel._loss")._FN
print("OK")
"""


# torch 2.13's placements: a Shard of a dim the operator leaves whole stays (moved to where the
# dim lands), a Shard of a touched dim is gathered, Partial stays Partial. The values are
# checked against the operator on the whole tensor, the gradients against single-process ones.
SHAPES = """
Shard, Replicate, Partial, DTensor = dt.Shard, dt.Replicate, dt.Partial, dt.DTensor
M.manual_seed(0)
x = M.randn(5, 6, 4)  # dim 0 in pieces of 3 and 2
idx = M.tensor([0, 2, 1])

def D(t, *pl):
    return dt.distribute_tensor(t, mesh, list(pl))

def check(what, got, want, placements):
    gots = got if isinstance(got, (tuple, list)) else [got]
    wants = want if isinstance(want, (tuple, list)) else [want]
    assert len(gots) == len(wants), what
    for g, w in zip(gots, wants):
        assert g.placements == placements, (what, g.placements)
        assert tuple(g.shape) == tuple(w.shape), (what, g.shape)
        np.testing.assert_allclose(g.full_tensor().detach().numpy(), w.detach().numpy(),
                                   rtol=1e-6, atol=1e-6, err_msg=what)

S0, S1, S2, R = Shard(0), Shard(1), Shard(2), Replicate()
xs0, xs1, xs2 = D(x, S0), D(x, S1), D(x, S2)
check("cat other dim", M.cat([xs0, xs0], 1), M.cat([x, x], 1), (S0,))
check("cat sharded dim", M.cat([xs0, xs0], 0), M.cat([x, x], 0), (R,))
check("cat R+S", M.cat([D(x, R), xs0], 2), M.cat([x, x], 2), (S0,))
check("cat S0+S1 (first wins)", M.cat([xs0, xs1], 2), M.cat([x, x], 2), (S0,))
check("stack", M.stack([xs1, xs1], 1), M.stack([x, x], 1), (S2,))
check("stack end", M.stack([xs0, xs0], -1), M.stack([x, x], -1), (S0,))
check("split", M.split(xs0, 2, 1), M.split(x, 2, 1), (S0,))
check("split sharded", xs1.split([2, 4], 1), x.split([2, 4], 1), (R,))
check("chunk", M.chunk(xs2, 2, 1), M.chunk(x, 2, 1), (S2,))
check("tensor_split", xs0.tensor_split(3, 2), x.tensor_split(3, 2), (S0,))
check("unbind", M.unbind(xs2, 0), M.unbind(x, 0), (S1,))
try:
    M.unbind(xs1, 1)
    raise AssertionError("unbind along the sharded dim was accepted")
except RuntimeError as e:
    assert "Attempted to unbind along the sharded dimension 1" in str(e), e
check("narrow", xs0.narrow(1, 1, 3), x.narrow(1, 1, 3), (S0,))
check("select", xs1.select(0, 4), x.select(0, 4), (S0,))
check("expand", xs0[:, :1].expand(5, 3, 4), x[:, :1].expand(5, 3, 4), (S0,))
check("expand new dims", xs1.expand(2, -1, -1, -1), x.expand(2, -1, -1, -1), (S2,))
check("expand_as", xs2[:, :1].expand_as(xs2), x[:, :1].expand_as(x), (S2,))
check("repeat", xs0.repeat(1, 2, 1), x.repeat(1, 2, 1), (S0,))
check("repeat sharded", xs0.repeat(2, 1, 1), x.repeat(2, 1, 1), (R,))
check("squeeze", xs2[:, :1].squeeze(1), x[:, :1].squeeze(1), (S1,))
check("flip", xs0.flip(1), x.flip(1), (S0,))
check("flip sharded", xs0.flip([0, 2]), x.flip([0, 2]), (R,))
check("roll", xs2.roll(1, 1), x.roll(1, 1), (S2,))
check("index_select", xs0.index_select(1, D(idx, R)), x.index_select(1, idx), (S0,))
check("index_select sharded", xs1.index_select(1, D(idx, R)), x.index_select(1, idx), (R,))
gi = M.randint(0, 6, (5, 3, 4))
check("gather", M.gather(xs0, 1, D(gi, R)), M.gather(x, 1, gi), (S0,))
check("gather sharded", M.gather(xs1, 1, D(gi, R)), M.gather(x, 1, gi), (R,))
check("getitem int", xs1[2], x[2], (S0,))
check("getitem slice", xs0[:, 1:3], x[:, 1:3], (S0,))
check("getitem sliced shard", xs0[1:4], x[1:4], (R,))
check("getitem none", xs0[None, ..., 1], x[None, ..., 1], (S1,))
check("getitem tensor", xs0[:, D(idx, R)], x[:, idx], (S0,))
check("getitem two tensors", xs0[:, D(idx, R), D(idx, R)], x[:, idx, idx], (S0,))
if not AGAINST_TORCH:  # torch's sharding propagation refuses a mask; ember takes whole tensors
    check("getitem bool", xs0[xs0 > 0], x[x > 0], (R,))
p = DTensor.from_local(x * (RANK + 1), mesh, [Partial()])
tot = sum(range(1, WORLD + 1))
check("partial split", p.split(3, 1), (x * tot).split(3, 1), (Partial(),))
check("partial getitem", p[1, :, None], (x * tot)[1, :, None], (Partial(),))
check("partial cat R", M.cat([p, D(x, R)], 1), M.cat([x * tot, x], 1), (Partial(),))
check("partial gather", M.gather(p, 1, D(gi, R)), M.gather(x * tot, 1, gi), (S0,))

# reductions over the sharded dim leave a Partial of the reduction's kind
b = x > 0
bs = D(b, S0)
check("prod", xs0.prod(0), x.prod(0), (Partial("product"),))
check("prod all", xs1.prod(), x.prod(), (Partial("product"),))
check("prod other dim", xs0.prod(2), x.prod(2), (S0,))
check("amax", xs0.amax(0), x.amax(0), (Partial("max"),))
check("amin", xs1.amin(1), x.amin(1), (Partial("min"),))
check("max all", xs2.max(), x.max(), (Partial("max"),))
check("any", bs.any(0), b.any(0), (Partial("sum"),))
check("all", bs.all(), b.all(), (Partial("product"),))
check("prod partial", p.prod(0), (x * tot).prod(0), (R,))
assert bool(bs.any().full_tensor()) and bool(bs.any().redistribute(mesh, [R]).to_local())

# gradients through the rules, laid out as the inputs, against single-process ones (torch
# 2.13's own backward of this graph refuses: "aten.cat.default got mixed torch.Tensor and
# DTensor")
leaf = D(x, S0).requires_grad_()
ref = x.clone().requires_grad_()

def f(t, g, i):
    parts = M.split(t, 2, 1)
    joined = M.cat([parts[2], parts[0]], 1).flip(2)
    picked = M.gather(joined, 1, g)[:, None].expand(5, 2, 3, 4)
    return (
        (picked.sum(1) * t[:, :3]).sum()
        + t.index_select(2, i).prod(0).sum()
        + (t.amax(0) * t[0]).sum()
    )

g4 = M.randint(0, 4, (5, 3, 4))
if not AGAINST_TORCH:
    f(leaf, D(g4, R), D(idx, R)).backward()
    f(ref, g4, idx).backward()
    assert leaf.grad.placements == (S0,)
    np.testing.assert_allclose(leaf.grad.full_tensor().numpy(), ref.grad.numpy(), rtol=1e-5,
                               atol=1e-5)
print("SHAPES OK")
"""


# norms over a sharded dim leave torch's _NormPartial(p) (its pieces' norms, reduced as p-th
# powers summed then the root); embedding over a row-sharded table leaves _MaskPartial;
# __setitem__ writes each rank's piece; zeros_like & co. keep the layout
NORMS = """
la = import_module(M.__name__ + ".linalg")
inf = float("inf")
xn = M.randn(5, 4)
xn0 = D(xn, S0)
for what, got, want, pl in [
    ("vector_norm", la.vector_norm(xn0, 2, 0), la.vector_norm(xn, 2, 0), "_NormPartial(2)"),
    ("vector_norm all", la.vector_norm(xn0), la.vector_norm(xn), "_NormPartial(2)"),
    ("norm", xn0.norm(), xn.norm(), "_NormPartial(2)"),
    ("norm p1", xn0.norm(1), xn.norm(1), "_NormPartial(1)"),
    ("norm p3 keepdim", M.norm(xn0, 3, 0, True), M.norm(xn, 3, 0, True), "_NormPartial(3)"),
    ("norm inf", xn0.norm(inf), xn.norm(inf), "Partial(max)"),
    ("norm -inf", xn0.norm(-inf), xn.norm(-inf), "Partial(min)"),
    ("norm 0", xn0.norm(0), xn.norm(0), "Partial(sum)"),
    ("linalg.norm", la.norm(xn0), la.norm(xn), "_NormPartial(2.0)"),
    ("linalg.norm fro", la.norm(xn0, "fro"), la.norm(xn, "fro"), "_NormPartial(2)"),
    ("other dim", xn0.norm(dim=1), xn.norm(dim=1), "Shard(dim=0)"),
]:
    assert repr(got.placements[0]) == pl, (what, got.placements)
    np.testing.assert_allclose(got.full_tensor().numpy(), want.numpy(), rtol=1e-5, err_msg=what)
npart = la.vector_norm(xn0, 3, dim=0)
assert npart.placements[0] == npart.placements[0].__class__(3) != Partial()
check("norm partial to shard", npart.redistribute(mesh, [S0]), la.vector_norm(xn, 3, dim=0), (S0,))
check("norm partial stack", M.stack([npart, npart]), M.stack([la.vector_norm(xn, 3, dim=0)] * 2),
      (npart.placements[0],))
check("norm partial * 2", npart * 2, la.vector_norm(xn, 3, dim=0) * 2, (R,))
check("normalize", F.normalize(xn0, dim=0), F.normalize(xn, dim=0), (S0,))
check("normalize other dim", F.normalize(xn0, p=3, dim=1), F.normalize(xn, p=3, dim=1), (S0,))
check("dist", M.dist(xn0, xn0 * 0, 3), M.dist(xn, xn * 0, 3), (npart.placements[0],))

# zeros_like and its kin keep the layout (a Partial input gives Replicate); isclose is
# elementwise; count_nonzero reduces like sum
check("zeros_like", M.zeros_like(xn0), M.zeros_like(xn), (S0,))
check("full_like", M.full_like(xn0, 3, dtype=M.int64), M.full_like(xn, 3, dtype=M.int64), (S0,))
check("ones_like partial", M.ones_like(p), M.ones_like(x), (R,))
assert M.empty_like(xn0).placements == (S0,)
assert M.empty_like(xn0).to_local().shape == xn0.to_local().shape
check("isclose", M.isclose(xn0, xn0 + 1e-9), M.isclose(xn, xn + 1e-9), (S0,))
check("count_nonzero", M.count_nonzero(xn0 > 0), M.count_nonzero(xn > 0), (Partial(),))
check("count_nonzero dim", M.count_nonzero(xn0 > 0, dim=-1), M.count_nonzero(xn > 0, dim=-1),
      (S0,))
if not AGAINST_TORCH:  # torch 2.13 keeps _NormPartial through sum and gets the wrong value
    check("norm partial sum", npart.sum(), la.vector_norm(xn, 3, dim=0).sum(), (R,))

# gradients of norms equal the single-process ones (torch 2.13's inf-norm gradient is NaN)
wts = M.arange(4.0)
for p in (2, 3, 1, inf) if not AGAINST_TORCH else (2, 3, 1):
    leaf = D(xn, S0).requires_grad_()
    ref = xn.clone().requires_grad_()
    (la.vector_norm(leaf, p, dim=0) * D(wts, R)).sum().backward()
    (la.vector_norm(ref, p, dim=0) * wts).sum().backward()
    assert leaf.grad.placements == (S0,)
    np.testing.assert_allclose(leaf.grad.full_tensor().numpy(), ref.grad.numpy(), rtol=1e-5,
                               atol=1e-6, err_msg=str(p))
leaf = D(xn, S0).requires_grad_()
ref = xn.clone().requires_grad_()
wn = M.arange(20.0).reshape(5, 4)
(F.normalize(leaf, dim=0) * D(wn, S0)).sum().backward()
(F.normalize(ref, dim=0) * wn).sum().backward()
np.testing.assert_allclose(leaf.grad.full_tensor().numpy(), ref.grad.numpy(), rtol=1e-5,
                           atol=1e-5)

# clip_grad_norm_ over sharded and replicated gradients, as on the whole tensors
nn = import_module(M.__name__ + ".nn")
for norm_type in (2.0, inf):
    w = nn.Parameter(D(xn, S0))
    b = nn.Parameter(D(M.ones(3), R))
    w.grad, b.grad = D(xn * 3, S0), D(M.ones(3), R)
    wr, br = nn.Parameter(xn.clone()), nn.Parameter(M.ones(3))
    wr.grad, br.grad = xn * 3, M.ones(3)
    total = nn.utils.clip_grad_norm_([w, b], 1.0, norm_type)
    want = nn.utils.clip_grad_norm_([wr, br], 1.0, norm_type)
    assert isinstance(total, DTensor)
    np.testing.assert_allclose(total.full_tensor().numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.full_tensor().numpy(), wr.grad.numpy(), rtol=1e-5)
    w.grad, b.grad = D(xn * 3, S0), D(M.ones(3), R)  # the per-tensor path gives the same
    wr.grad, br.grad = xn * 3, M.ones(3)
    nn.utils.clip_grad_norm_([wr, br], 1.0, norm_type)
    total = nn.utils.clip_grad_norm_([w, b], 1.0, norm_type, foreach=False)
    np.testing.assert_allclose(total.full_tensor().numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.full_tensor().numpy(), wr.grad.numpy(), rtol=1e-5)

# the _foreach_ functions over DTensors (what clip_grad_norm_ and optimizers call), as torch's
# foreach strategies: a norm stays partial over a sharded dim, pointwise ops keep each position's
# layout; a position whose operands differ in layout goes through the per-tensor rules
g1, g2 = D(xn * 2, S0), D(M.arange(3.0), R)
n1, n2 = M._foreach_norm([g1, g2])
assert repr(n1.placements) == "(_NormPartial(2),)" and n2.placements == (R,), (n1, n2)
np.testing.assert_allclose(n1.full_tensor().numpy(), la.vector_norm(xn * 2).numpy(), rtol=1e-5)
np.testing.assert_allclose(n2.full_tensor().numpy(), la.vector_norm(M.arange(3.0)).numpy())
ninf = M._foreach_norm([g1], inf)[0]
assert ninf.placements == (Partial("max"),), ninf.placements
np.testing.assert_allclose(ninf.full_tensor().numpy(), (xn * 2).abs().max().numpy())
sums = M._foreach_add([g1, g2], [g1, g2], alpha=2)
assert [t.placements for t in sums] == [(S0,), (R,)], sums
np.testing.assert_allclose(sums[0].full_tensor().numpy(), (xn * 6).numpy(), rtol=1e-6)
with M.no_grad():
    M._foreach_mul_([g1, g2], M.tensor(0.5))
np.testing.assert_allclose(g1.full_tensor().numpy(), xn.numpy(), rtol=1e-6)
np.testing.assert_allclose(g2.full_tensor().numpy(), [0.0, 0.5, 1.0])
mixed = M._foreach_sub([g1], [D(xn, R)])[0]
np.testing.assert_allclose(mixed.full_tensor().numpy(), np.zeros((5, 4)), atol=1e-6)
if not AGAINST_TORCH:  # torch's strategy follows the first operand, ember's elementwise rule
    assert mixed.placements == (S0,), mixed.placements
leaf = D(xn, S0).requires_grad_()
M._foreach_norm([leaf])[0].full_tensor().backward()  # the norm's gradient, through _NormGrad
np.testing.assert_allclose(leaf.grad.full_tensor().numpy(), (xn / la.vector_norm(xn)).numpy(),
                           rtol=1e-5)

# embedding over a row-sharded table: masked lookups, summed
ids = M.tensor([[0, 3], [4, 1]])
table = D(xn, S0).requires_grad_()
emb = F.embedding(D(ids, R), table)
assert repr(emb.placements[0]) == (
    "_MaskPartial(reduce_op=sum, offset_shape=torch.Size([5, 4]), offset_dim=0)"
), emb.placements
np.testing.assert_allclose(emb.full_tensor().detach().numpy(), F.embedding(ids, xn).numpy())
if not AGAINST_TORCH:  # torch 2.13 asserts on these and gives the table's gradient as Replicate
    check("embedding sum", emb.sum(), F.embedding(ids, xn).sum(), (emb.placements[0],))
    check("embedding to shard", emb.redistribute(mesh, [S0]), F.embedding(ids, xn), (S0,))
    (emb * D(M.arange(16.0).reshape(2, 2, 4), R)).sum().backward()
    ref = xn.clone().requires_grad_()
    (F.embedding(ids, ref) * M.arange(16.0).reshape(2, 2, 4)).sum().backward()
    assert table.grad.placements == (S0,)
    np.testing.assert_allclose(table.grad.full_tensor().numpy(), ref.grad.numpy())

# __setitem__ (torch 2.13 hangs on a write into one rank's rows)
if not AGAINST_TORCH:
    xi = M.arange(20.0).reshape(5, 4)
    for pl, key, val in [
        (S0, (0, 0), 5.0), (S0, 4, 5.0), (S0, (slice(None), 1), 5.0), (S0, slice(1, 4), 5.0),
        (S0, slice(0, 5, 2), -3.0), (S0, (slice(1, None, 3), None, 2), 7.0),
        (S0, (Ellipsis, 3), 1.0), (S1, (slice(None), slice(1, 3)), -1.0),
        (S0, (slice(None), 1), D(M.arange(5.0) + 100, R)),
        (S0, (slice(None), 1), D(M.arange(5.0) + 100, S0)),
        (S0, slice(1, 5, 2), D(M.arange(4.0) - 50, R)), (S0, -1, D(M.ones(1, 4) * 9, R)),
        (S0, xi > 10, 0.0), (S0, D(M.tensor([0, 4]), R), 1.0),
    ]:
        d = D(xi, pl)
        ref = xi.clone()
        if isinstance(key, M.Tensor) and key.dtype == M.bool:
            key = D(key, pl)
        d[key] = val
        k = key.full_tensor() if isinstance(key, DTensor) else key
        ref[k] = val.full_tensor() if isinstance(val, DTensor) else val
        assert d.placements == (pl,), key
        np.testing.assert_array_equal(d.full_tensor().numpy(), ref.numpy(), err_msg=str(key))
    leaf = D(xi, S0).requires_grad_()
    v = D(M.arange(5.0), R).requires_grad_()
    y = leaf * 2
    y[:, 1] = v * 3
    (y * D(wn, S0)).sum().backward()
    xr, vr = xi.clone().requires_grad_(), M.arange(5.0).requires_grad_()
    yr = xr * 2
    yr[:, 1] = vr * 3
    (yr * wn).sum().backward()
    np.testing.assert_array_equal(leaf.grad.full_tensor().numpy(), xr.grad.numpy())
    np.testing.assert_array_equal(v.grad.full_tensor().numpy(), vr.grad.numpy())
    try:
        leaf[0] = 1.0  # every rank raises, also the one whose rows the key misses
        raise AssertionError("an in-place write into a leaf was accepted")
    except RuntimeError as e:
        assert "leaf Variable that requires grad" in str(e), e
print("NORMS OK")
"""


# pointwise losses, cosine_similarity, pairwise_distance and einsum keep the shards (Partial
# where a sharded dim is summed away): values and gradients equal the single-process ones
LOSSES = """
ya, yb, yc, yd = M.randn(5, 6), M.randn(5, 6), M.randn(6, 3), M.randn(5, 3, 4)
bad = []


# torch_ok: False where torch 2.13 is wrong, "placement" where only its placement is right
def run(what, fn, ins, pls, want_pl, torch_ok=True):
    leaves = [D(t, p).requires_grad_() for t, p in zip(ins, pls)]
    refs = [t.clone().requires_grad_() for t in ins]
    out, want = fn(*leaves), fn(*refs)
    if AGAINST_TORCH and not torch_ok:
        return
    if repr(out.placements[0]) != want_pl:
        bad.append((what, out.placements))
    if AGAINST_TORCH and torch_ok == "placement":
        return
    up = M.arange(float(want.numel())).reshape(want.shape) / 7 + 1  # a non-uniform gradient
    (out.full_tensor() * up).sum().backward()
    (want * up).sum().backward()
    np.testing.assert_allclose(out.full_tensor().detach().numpy(), want.detach().numpy(),
                               rtol=1e-5, atol=1e-6, err_msg=what)
    for leaf, ref in zip(leaves, refs):
        if ref.grad is None:  # an input fn detaches (torch refuses a weight that needs grad)
            assert leaf.grad is None, what
            continue
        # ember lays each gradient out as its DTensor (torch may leave a Replicate input's
        # gradient sharded as the output)
        assert AGAINST_TORCH or leaf.grad.placements == leaf.placements, (what, leaf.grad)
        np.testing.assert_allclose(leaf.grad.full_tensor().numpy(), ref.grad.numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=what)


ab = (ya, yb)
# torch 2.13's Partial(avg) losses: right placement and value, but the gradient through
# full_tensor() comes out multiplied by the number of pieces
run("mse mean", F.mse_loss, ab, (S1, S1), "Partial(avg)", torch_ok="placement")
# 5 rows in pieces of 3 and 2: torch 2.13's Partial(avg) averages the two local means (wrong)
run("mse mean uneven", F.mse_loss, ab, (S0, R), "Partial(sum)", torch_ok=False)
run("mse sum", lambda a, b: F.mse_loss(a, b, reduction="sum"), ab, (S0, S0), "Partial(sum)")
run("mse none", lambda a, b: F.mse_loss(a, b, reduction="none"), ab, (S0, R), "Shard(dim=0)")
run("l1 mean", F.l1_loss, ab, (R, S1), "Partial(avg)", torch_ok="placement")
run("smooth_l1 none", lambda a, b: F.smooth_l1_loss(a, b, reduction="none", beta=0.5), ab,
    (S1, S1), "Shard(dim=1)")
run("huber sum", lambda a, b: F.huber_loss(a, b, "sum", 0.7), ab, (S1, R), "Partial(sum)")
run("cosine", F.cosine_similarity, ab, (S0, S0), "Shard(dim=0)")
run("cosine sharded dim", F.cosine_similarity, ab, (S1, R), "Partial(sum)")
run("cosine dim 0", lambda a, b: F.cosine_similarity(a, b, 0), ab, (S0, S0), "Partial(sum)")
run("pairwise", F.pairwise_distance, ab, (S0, R), "Shard(dim=0)")
run("pairwise sharded dim", lambda a, b: F.pairwise_distance(a, b, 3), ab, (S1, S1),
    "_NormPartial(3.0)")
run("einsum mm rows", lambda a, c: M.einsum("ij,jk->ik", a, c), (ya, yc), (S0, R),
    "Shard(dim=0)")
run("einsum mm inner", lambda a, c: M.einsum("ij,jk->ik", a, c), (ya, yc), (S1, S0),
    "Partial(sum)")
run("einsum mm cols", lambda a, c: M.einsum("ij,jk->ik", a, c), (ya, yc), (R, S1),
    "Shard(dim=1)")
run("einsum dot", lambda a, b: M.einsum("ij,ij->", a, b), ab, (S1, S1), "Partial(sum)")
run("einsum implicit", lambda a, b: M.einsum("ji,ki", [a, b]), ab, (S1, S1), "Partial(sum)")
run("einsum batch", lambda a, d: M.einsum("bi,bjk->bkj", a[:, :3], d), (ya, yd), (R, S0),
    "Shard(dim=0)")
sig = M.sigmoid
w56, w6 = M.rand(5, 6) + 0.5, M.rand(6) + 0.5
run("bce none", lambda a, b: F.binary_cross_entropy(sig(a), sig(b), reduction="none"), ab,
    (S0, S0), "Shard(dim=0)")
run("bce weight sum", lambda a, b, w: F.binary_cross_entropy(sig(a), sig(b), w.detach(),
    reduction="sum"), (ya, yb, w56), (S1, R, S1), "Partial(sum)")
run("bce logits pos_weight sum", lambda a, b, w, pw: F.binary_cross_entropy_with_logits(
    a, sig(b), w.detach(), reduction="sum", pos_weight=pw.detach()), (ya, yb, w56, w6),
    (S0, S0, R, R), "Partial(sum)")
run("bce logits none", lambda a, b: F.binary_cross_entropy_with_logits(a, sig(b),
    reduction="none"), ab, (S1, R), "Shard(dim=1)")
run("kl_div batchmean", lambda a, b: F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1),
    reduction="batchmean"), ab, (S0, S0), "Partial(sum)")
run("kl_div log_target sum", lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True),
    ab, (S1, S1), "Partial(sum)")
run("poisson_nll sum", lambda a, b: F.poisson_nll_loss(a, b.abs() * 3, reduction="sum"), ab,
    (S0, R), "Partial(sum)")
run("poisson_nll full none", lambda a, b: F.poisson_nll_loss(sig(a), b.abs() * 3, False,
    True, reduction="none"), ab, (S1, S1), "Shard(dim=1)")
assert not bad, bad

# cross_entropy with class weights keeps the batch shards: Partial(sum) of weighted sums. torch
# 2.13 is wrong for the weighted mean: over even pieces its Partial(avg) averages the local
# weighted means (0.054 off here), over uneven ones it refuses ("cannot be evenly sharded")
tgt = M.tensor([0, 5, 2, 2, 1])
for rows, red in ((5, "sum"), (4, "mean"), (5, "mean")):
    if AGAINST_TORCH and red == "mean":
        continue
    xl, xr = D(ya[:rows], S0).requires_grad_(), ya[:rows].clone().requires_grad_()
    out = F.cross_entropy(xl, D(tgt[:rows], S0), weight=D(w6, R), reduction=red)
    want = F.cross_entropy(xr, tgt[:rows], weight=w6, reduction=red)
    assert repr(out.placements) == "(Partial(sum),)", (red, out.placements)
    np.testing.assert_allclose(out.full_tensor().detach().numpy(), want.detach().numpy(),
                               rtol=1e-5, atol=1e-6, err_msg=red)
    out.full_tensor().backward()
    want.backward()
    np.testing.assert_allclose(xl.grad.full_tensor().numpy(), xr.grad.numpy(), rtol=1e-5,
                               atol=1e-6, err_msg=red)

# item() of a Partial is this rank's own piece, as torch's (_local_scalar_dense runs locally)
s = D(ya, S0).sum()
assert s.placements == (Partial(),)
own = s.to_local().item()
assert s.item() == own and float(s) == own, (s.item(), float(s), own)
si = D(M.tensor([[1, 2, 3], [-4, 0, -4]]), S0).sum()  # pieces 6 and -8: whole -2
assert si.to_local().item() == (6, -8)[RANK]
assert int(si) == si.to_local().item() and bool(si) and si.__index__() == int(si)
zero = D(M.tensor([[1.0], [-1.0]]), S0).sum()  # pieces 1 and -1: whole 0
assert bool(zero) and float(zero) == zero.to_local().item()
print("LOSSES OK")
"""


def test_dtensor_factories_local_map_loss_parallel(tmp_path):
    for _, out in run_workers(tmp_path, BODY + SHAPES + NORMS + LOSSES, 2, timeout=120):
        assert "NORMS OK" in out, out
        assert "LOSSES OK" in out, out
        assert "SHAPES OK" in out, out
        assert "OK" in out, out
