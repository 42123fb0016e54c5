"""HSDP: fully_shard over a 2-d DeviceMesh (replicate x shard) in 4 real processes. Parameters
are (Replicate(), Shard(0)) DTensors sharded over the mesh's second dimension; training matches
single-process training on the whole batch step by step (gradients averaged over every rank); a
mesh of other rank or without dim names is refused as torch refuses it.

In the same run, 2-d parallelism as torch's tutorial: parallelize_module on the "tp" slice of a
("dp", "tp") mesh, then fully_shard on the "dp" slice. Colwise parameters become
(_StridedShard(0, sf=2), Shard(0)) DTensors on the 2-d mesh; gradients, parameters after AdamW
steps, the sharded state dict through dcp.save/load and get_state_dict's full state dict equal
single-process training's."""

from _dist_util import run_workers

BODY = """
import copy
from importlib import import_module
fsdp = import_module(M.__name__ + ".distributed.fsdp")
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("replicate", "shard"))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(5, 16)
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(2)])
        self.head = nn.Linear(16, 3)   # 3 rows: unequal pieces over the shard dimension

    def forward(self, x):
        x = F.gelu(self.inp(x))
        for b in self.blocks:
            x = x + F.gelu(b(x))
        return self.head(x)

M.manual_seed(0)
ref = Net()
model = copy.deepcopy(ref)
for b in model.blocks:
    fsdp.fully_shard(b, mesh=mesh)
fsdp.fully_shard(model, mesh=mesh)
w = model.blocks[0].weight
assert w.placements == (dt.Replicate(), dt.Shard(0)), w.placements
shard_rank = mesh.get_local_rank("shard")
assert w.to_local().shape[0] == len(M.chunk(M.arange(16), 2)[shard_rank])
assert model.head.weight.to_local().shape[0] == (2, 1)[shard_rank]

opt_ref = M.optim.AdamW(ref.parameters(), lr=1e-2)
opt = M.optim.AdamW(model.parameters(), lr=1e-2)
M.manual_seed(1)
B = 3
for step in range(3):
    x, y = M.randn(B * WORLD, 5), M.randint(0, 3, (B * WORLD,))
    opt_ref.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    opt.zero_grad()
    F.cross_entropy(model(x[B * RANK : B * RANK + B]), y[B * RANK : B * RANK + B]).backward()
    for (name, p), q in zip(ref.named_parameters(), model.parameters()):
        assert q.grad.placements == (dt.Replicate(), dt.Shard(0))
        np.testing.assert_allclose(q.grad.full_tensor().numpy(), p.grad.numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=f"{step} {name}")
    opt_ref.step()
    opt.step()
for (name, p), q in zip(ref.named_parameters(), model.parameters()):
    np.testing.assert_allclose(q.full_tensor().detach().numpy(), p.detach().numpy(), rtol=1e-4,
                               atol=1e-5, err_msg=name)

try:
    fsdp.fully_shard(nn.Linear(2, 2), mesh=dm.init_device_mesh("cpu", (2, 2)))
    raise RuntimeError("a 2-d mesh without names was accepted")
except AssertionError as e:
    assert "mesh_dim_names" in str(e), e
try:
    fsdp.fully_shard(nn.Linear(2, 2), mesh=dm.init_device_mesh("cpu", (1, 2, 2),
                                                               mesh_dim_names=("a", "b", "c")))
    raise RuntimeError("a 3-d mesh was accepted")
except ValueError as e:
    assert "1D or 2D" in str(e), e

# --- 2-d: tensor parallel over "tp", FSDP over "dp" ---
tpar = import_module(M.__name__ + ".distributed.tensor.parallel")
dcp = import_module(M.__name__ + ".distributed.checkpoint")
sdm = import_module(M.__name__ + ".distributed.checkpoint.state_dict")
_StridedShard = import_module(M.__name__ + ".distributed.tensor.placement_types")._StridedShard
mesh2 = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(6, 10)   # 5 rows per tp rank: 3 and 2 per dp rank
        self.down = nn.Linear(10, 6)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))

class Net2(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([MLP() for _ in range(2)])
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x)
        return self.head(x)

M.manual_seed(0)
ref = Net2()
model = copy.deepcopy(ref)
plan = {"up": tpar.ColwiseParallel(), "down": tpar.RowwiseParallel()}
for b in model.blocks:
    tpar.parallelize_module(b, mesh2["tp"], plan)
    fsdp.fully_shard(b, mesh=mesh2["dp"])
fsdp.fully_shard(model, mesh=mesh2["dp"])
S, R = dt.Shard, dt.Replicate
strided = (_StridedShard(0, split_factor=2), S(0))
want = {"up.weight": strided, "up.bias": strided, "down.weight": (S(0), S(1)),
        "down.bias": (S(0), R())}
dp_rank, tp_rank = mesh2.get_local_rank("dp"), mesh2.get_local_rank("tp")
for name, p in model.named_parameters():
    if name.startswith("blocks."):
        assert p.placements == want[name[9:]], (name, p.placements)
        assert p.device_mesh.ndim == 2
    else:
        assert p.placements == (S(0),), (name, p.placements)
up = model.blocks[0].up.weight.to_local()
assert tuple(up.shape) == ((3, 2)[dp_rank], 6), up.shape
start = 5 * tp_rank + (0, 3)[dp_rank]
rows = ref.blocks[0].up.weight.detach()[start:start + up.shape[0]]
np.testing.assert_array_equal(up.detach().numpy(), rows.numpy())
# distribute_tensor with the strided placement (torch's needs even pieces): dp cuts tp's piece
t = M.arange(24.0).reshape(8, 3)
d = dt.distribute_tensor(t, mesh2, want["up.weight"])
mine = M.chunk(M.chunk(t, 2)[tp_rank], 2)[dp_rank]
np.testing.assert_array_equal(d.to_local().numpy(), mine.numpy())
tp_piece = d.redistribute(mesh2, (R(), S(0))).to_local()
np.testing.assert_array_equal(tp_piece.numpy(), M.chunk(t, 2)[tp_rank].numpy())
np.testing.assert_array_equal(d.full_tensor().numpy(), t.numpy())

opt_ref = M.optim.AdamW(ref.parameters(), lr=1e-2)
opt = M.optim.AdamW(model.parameters(), lr=1e-2)
M.manual_seed(1)
for step in range(2):
    x, y = M.randn(8, 6), M.randint(0, 3, (8,))
    opt_ref.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    opt.zero_grad()
    mine = slice(4 * dp_rank, 4 * dp_rank + 4)
    F.cross_entropy(model(x[mine]), y[mine]).backward()
    for (name, p), q in zip(ref.named_parameters(), model.parameters()):
        assert q.grad.placements == q.placements, (name, q.grad.placements)
        np.testing.assert_allclose(q.grad.full_tensor().numpy(), p.grad.numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=f"2-d {step} {name}")
    opt_ref.step()
    opt.step()
for (name, p), q in zip(ref.named_parameters(), model.parameters()):
    np.testing.assert_allclose(q.full_tensor().detach().numpy(), p.detach().numpy(), rtol=1e-4,
                               atol=1e-5, err_msg=name)
full_sd, _ = sdm.get_state_dict(model, opt, options=sdm.StateDictOptions(full_state_dict=True))
for name, p in ref.named_parameters():
    np.testing.assert_allclose(full_sd[name].numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5)
ckpt = os.path.join(os.getcwd(), "ckpt2d")  # the same directory on every rank
saved = {k: v.full_tensor().clone() for k, v in model.state_dict().items()}
dcp.save(model.state_dict(), checkpoint_id=ckpt)
with M.no_grad():
    for p in model.parameters():
        p.zero_()
sd = model.state_dict()
dcp.load(sd, checkpoint_id=ckpt)
model.load_state_dict(sd)
for k, v in model.state_dict().items():
    assert v.placements == sd[k].placements
    np.testing.assert_array_equal(v.full_tensor().numpy(), saved[k].numpy(), err_msg=k)
# the chunks sit at their global offsets: plain whole tensors load from them
whole = {k: M.zeros(v.shape) for k, v in saved.items()}
dcp.load(whole, checkpoint_id=ckpt)
for k, v in whole.items():
    np.testing.assert_array_equal(v.numpy(), saved[k].numpy(), err_msg=k)

# the tutorial's transformer recipe: embedding rowwise into sequence shards, SequenceParallel
# norms, a colwise output under loss_parallel, per-block fully_shard, clip_grad_norm_
class FF(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = nn.Linear(8, 16, bias=False), nn.Linear(16, 8, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))

class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.ff = nn.RMSNorm(8), FF()

    def forward(self, x):
        return x + self.ff(self.norm(x))

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.layers = nn.Embedding(12, 8), nn.ModuleList([Layer(), Layer()])
        self.norm, self.out = nn.RMSNorm(8), nn.Linear(8, 12, bias=False)

    def forward(self, x):
        h = self.tok(x)
        for layer in self.layers:
            h = layer(h)
        return self.out(self.norm(h))

M.manual_seed(0)
ref = LM()
model = copy.deepcopy(ref)
tpar.parallelize_module(model, mesh2["tp"], {
    "tok": tpar.RowwiseParallel(input_layouts=R(), output_layouts=S(1)),
    "norm": tpar.SequenceParallel(),
    "out": tpar.ColwiseParallel(input_layouts=S(1), output_layouts=S(-1), use_local_output=False),
})
for layer in model.layers:
    tpar.parallelize_module(layer, mesh2["tp"], {
        "norm": tpar.SequenceParallel(),
        "ff": tpar.PrepareModuleInput(input_layouts=(S(1),), desired_input_layouts=(R(),)),
        "ff.w1": tpar.ColwiseParallel(),
        "ff.w2": tpar.RowwiseParallel(output_layouts=S(1)),
    })
    fsdp.fully_shard(layer, mesh=mesh2["dp"])
fsdp.fully_shard(model, mesh=mesh2["dp"])
assert model.tok.weight.placements == strided and model.norm.weight.placements == (S(0), R())
x, y = M.tensor([[1, 5, 7, 2, 11, 0]] * 4) % 12, M.tensor([[3, 1, 4, 1, 5, 9]] * 4)
x[1:] = (x[1:] * 7 + 3) % 12
F.cross_entropy(ref(x).flatten(0, 1), y.flatten()).backward()
ref_norm = M.nn.utils.clip_grad_norm_(ref.parameters(), 0.5)
with tpar.loss_parallel():
    mine = slice(2 * dp_rank, 2 * dp_rank + 2)
    F.cross_entropy(model(x[mine]).flatten(0, 1), y[mine].flatten()).backward()
norm = M.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
np.testing.assert_allclose(norm.full_tensor().item(), ref_norm.item(), rtol=1e-5)
for (name, p), q in zip(ref.named_parameters(), model.parameters()):
    np.testing.assert_allclose(q.grad.full_tensor().numpy(), p.grad.numpy(), rtol=1e-4,
                               atol=1e-6, err_msg=f"lm {name}")
print("OK")
"""


def test_hsdp_matches_single_process(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 4, timeout=240):
        assert "OK" in out, out
