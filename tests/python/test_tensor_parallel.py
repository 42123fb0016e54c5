"""Tensor parallelism over real processes (2 and 4 ranks): distribute_module, and
parallelize_module with
ColwiseParallel/RowwiseParallel on an MLP and on a transformer block (attention heads and the
feed-forward split over the ranks), and the block again with SequenceParallel norms and
sequence-sharded activations, each giving the single-process loss and gradients."""

import pytest
from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
tp = import_module(M.__name__ + ".distributed.tensor.parallel")
dm = import_module(M.__name__ + ".distributed.device_mesh")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
Shard, Replicate, DTensor = dt.Shard, dt.Replicate, dt.DTensor
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))

class MLP(nn.Module):
    def __init__(self, d=8, h=16):
        super().__init__()
        self.up = nn.Linear(d, h)
        self.down = nn.Linear(h, d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))

class Block(nn.Module):
    # heads are counted from q's width, so the local pieces of q/k/v carry the local heads
    def __init__(self, d=16, head_dim=4):
        super().__init__()
        self.hd = head_dim
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ff = MLP(d, 4 * d)

    def forward(self, x):
        y = self.norm1(x)
        q, k, v = self.q(y), self.k(y), self.v(y)
        B, S = q.shape[0], q.shape[1]
        heads = [t.view(B, S, -1, self.hd).transpose(1, 2) for t in (q, k, v)]
        a = F.scaled_dot_product_attention(*heads, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, S, -1))
        return x + self.ff(self.norm2(x))

def full(t):
    return t.full_tensor() if isinstance(t, DTensor) else t

def compare(make, plan, x, what, shard_input=None):
    M.manual_seed(0)
    ref = make()
    M.manual_seed(0)
    par = make()
    tp.parallelize_module(par, mesh, plan)
    loss_ref = ref(x).pow(2).mean()
    loss_ref.backward()
    if shard_input is None:
        out = full(par(x))
    else:  # each rank feeds its piece of the sequence and gets its piece back
        piece = dt.distribute_tensor(x, mesh, [Shard(shard_input)]).to_local()
        out = DTensor.from_local(par(piece), mesh, [Shard(shard_input)]).full_tensor()
    loss = out.pow(2).mean()
    loss.backward()
    np.testing.assert_allclose(loss.item(), loss_ref.item(), rtol=1e-5, err_msg=what)
    sharded = 0
    for (name, p), (_, q) in zip(ref.named_parameters(), par.named_parameters()):
        sharded += isinstance(q, DTensor) and any(pl.is_shard() for pl in q.placements)
        np.testing.assert_allclose(full(q.grad).numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=what + " " + name)
    assert sharded, what

M.manual_seed(1)
x = M.randn(3, 8)
compare(MLP, {"up": tp.ColwiseParallel(), "down": tp.RowwiseParallel()}, x, "mlp")
# the whole MLP with use_local_output=False and an explicit output layout
M.manual_seed(0)
m = MLP()
tp.parallelize_module(m, mesh, {"up": tp.ColwiseParallel(use_local_output=False),
                                "down": tp.RowwiseParallel(output_layouts=Shard(0),
                                                           use_local_output=False)})
o = m(x)
assert isinstance(o, DTensor) and o.placements == (Shard(0),), o

xb = M.randn(2, 8, 16)
plan = {name: tp.ColwiseParallel() for name in ("q", "k", "v", "ff.up")}
plan.update({"o": tp.RowwiseParallel(), "ff.down": tp.RowwiseParallel()})
compare(Block, plan, xb, "transformer block")

sp = {"norm1": tp.SequenceParallel(), "norm2": tp.SequenceParallel()}
sp.update({n: tp.ColwiseParallel(input_layouts=Shard(1)) for n in ("q", "k", "v", "ff.up")})
sp.update({n: tp.RowwiseParallel(output_layouts=Shard(1)) for n in ("o", "ff.down")})
compare(Block, sp, xb, "sequence parallel block", shard_input=1)

# PrepareModuleInput / PrepareModuleOutput around a plain module
class Id(nn.Module):
    def forward(self, a, b=None):
        return a * 2, b
m = Id()
tp.parallelize_module(m, mesh, tp.PrepareModuleInput(
    input_layouts=(Shard(0),), desired_input_layouts=(Replicate(),)))
piece = dt.distribute_tensor(xb, mesh, [Shard(0)]).to_local() if WORLD <= 2 else None
if piece is not None:
    got, _ = m(piece)
    assert isinstance(got, DTensor) and got.placements == (Replicate(),)
    np.testing.assert_allclose(got.to_local().numpy(), (xb * 2).numpy())
m2 = Id()
tp.parallelize_module(m2, mesh, tp.PrepareModuleOutput(
    output_layouts=(Replicate(), None), desired_output_layouts=(Shard(1), None)))
got, none = m2(xb)
assert none is None and not isinstance(got, DTensor)
want = dt.distribute_tensor(xb * 2, mesh, [Shard(1)]).to_local()
np.testing.assert_allclose(got.numpy(), want.numpy())

# distribute_module: a partition_fn shards one parameter, the rest is replicated
M.manual_seed(0)
lin = nn.Linear(8, 6)
want = lin(x)

def partition(name, mod, mesh):
    if isinstance(mod, nn.Linear):
        w = dt.distribute_tensor(mod.weight.detach(), mesh, [Shard(0)])
        mod.register_parameter("weight", nn.Parameter(w))

dmod = dt.distribute_module(
    lin,
    mesh,
    partition,
    input_fn=lambda m, inputs, mesh: tuple(
        DTensor.from_local(t, mesh, [Replicate()]) for t in inputs
    ),
    output_fn=lambda m, out, mesh: out.full_tensor(),
)
assert isinstance(lin.bias, DTensor) and lin.bias.placements == (Replicate(),)
assert lin.weight.placements == (Shard(0),)
np.testing.assert_allclose(dmod(x).detach().numpy(), want.detach().numpy(), rtol=1e-5)
print("OK")
"""


@pytest.mark.parametrize("world", [2, 4])
def test_tensor_parallel_matches_single_process(tmp_path, world):
    for _, out in run_workers(tmp_path, BODY, world, timeout=240):
        assert "OK" in out, out
