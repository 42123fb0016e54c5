"""The flows torch's distributed tutorials show, in one 2-rank run: FSDP2's meta-device init
loaded with load_state_dict(sharded_sd, assign=True) then trained (the FSDP2 tutorial), and
nll_loss over batch-sharded log-probabilities (the tensor-parallel tutorial's loss on DTensor
logits), each against single-process references."""

from _dist_util import run_workers

BODY = """
import copy
from importlib import import_module
fsdp = import_module(M.__name__ + ".distributed.fsdp")
dt = import_module(M.__name__ + ".distributed.tensor")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
dist.init_process_group("gloo")

def close(a, b, what):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=what)

# FSDP2 tutorial: shard a meta-device model, load the full weights as DTensors with assign=True
def net():
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))

with M.device("meta"):
    model = net()
for layer in (model[0], model[2]):
    fsdp.fully_shard(layer)
fsdp.fully_shard(model)
M.manual_seed(0)
ref = net()
meta_sd = model.state_dict()
sharded = {}
for k, full in ref.state_dict().items():
    meta = meta_sd[k]
    sharded[k] = nn.Parameter(dt.distribute_tensor(full, meta.device_mesh, meta.placements))
model.load_state_dict(sharded, assign=True)
assert all(not p.is_meta for p in model.parameters())
opt = M.optim.SGD(model.parameters(), lr=0.1)
opt_ref = M.optim.SGD(ref.parameters(), lr=0.1)
x = M.linspace(-1, 1, 16).reshape(4, 4)
for step in range(3):
    mine = x[RANK * 2 : RANK * 2 + 2] + step
    model(mine).sum().backward()
    opt.step()
    opt.zero_grad()
    (ref(x + step).sum() / WORLD).backward()
    opt_ref.step()
    opt_ref.zero_grad()
for p, q in zip(model.parameters(), ref.parameters()):
    close(p.full_tensor(), q, "fsdp2 after assign-load")

# nll_loss on batch-sharded log-probabilities keeps the shards (no gather of the logits)
mesh = import_module(M.__name__ + ".distributed.device_mesh").init_device_mesh("cpu", (WORLD,))
logits = M.arange(40.0).reshape(8, 5).sin()
target = M.tensor([0, 1, 2, 3, 4, 0, 1, 2])
weight = M.tensor([1.0, 2.0, 3.0, 1.0, 0.5])
cases = [{}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": weight, "reduction": "sum"}]
if not AGAINST_TORCH:  # torch averages the ranks' own means, which weights and ignored targets bias
    cases += [{"weight": weight}, {"ignore_index": 2}]
for kw in cases:
    ref_x = logits.clone().requires_grad_()
    want = F.nll_loss(F.log_softmax(ref_x, 1), target, **kw)
    want.sum().backward()
    xd = dt.distribute_tensor(logits, mesh, [dt.Shard(0)]).requires_grad_()
    dkw = dict(kw)
    if "weight" in kw:
        dkw["weight"] = dt.distribute_tensor(weight, mesh, [dt.Replicate()])
    got = F.nll_loss(F.log_softmax(xd, 1), dt.distribute_tensor(target, mesh, [dt.Shard(0)]),
                     **dkw)
    kind = "Shard" if kw.get("reduction") == "none" else "Partial"
    assert type(got.placements[0]).__name__ == kind, (kw, got.placements)
    close(got.full_tensor(), want, str(kw))
    got.sum().backward()
    assert xd.grad.placements == (dt.Shard(0),)
    close(xd.grad.full_tensor(), ref_x.grad, f"grad {kw}")
print("ok", RANK)
"""


def test_tutorial_flows(tmp_path):
    outs = run_workers(tmp_path, BODY, 2, timeout=120)
    assert all(f"ok {r}" in out for r, (_, out) in enumerate(outs))
