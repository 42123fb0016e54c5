"""HSDP: fully_shard over a 2-d DeviceMesh (replicate x shard) in 4 real processes. Parameters
are (Replicate(), Shard(0)) DTensors sharded over the mesh's second dimension; training matches
single-process training on the whole batch step by step (gradients averaged over every rank); a
mesh of other rank or without dim names is refused as torch refuses it."""

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
print("OK")
"""


def test_hsdp_matches_single_process(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 4, timeout=240):
        assert "OK" in out, out
