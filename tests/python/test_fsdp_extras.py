"""FSDP2's finer controls in 2 real processes: explicit forward/backward prefetching (training
unchanged, the next block's all-gather started early), unshard(async_op=True), a gradient divide
factor, CPUOffloadPolicy, register_fsdp_forward_method, and a prefetch made stale by an optimizer
step (never used)."""

from _dist_util import run_workers

BODY = """
import copy
from importlib import import_module
fsdp = import_module(M.__name__ + ".distributed.fsdp")
dt = import_module(M.__name__ + ".distributed.tensor")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
dist.init_process_group("gloo")

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        for b in self.blocks:
            x = F.gelu(b(x))
        return self.head(x)

    def features(self, x):   # runs the blocks without forward()
        return self.blocks[0](x)

def shard(model, **kw):
    for b in model.blocks:
        fsdp.fully_shard(b, **kw)
    return fsdp.fully_shard(model, **kw)

M.manual_seed(0)
ref = Net()
model = shard(copy.deepcopy(ref), offload_policy=fsdp.CPUOffloadPolicy(pin_memory=False))
blocks = list(model.blocks)
for a, b in zip(blocks, blocks[1:]):
    a.set_modules_to_forward_prefetch([b])
    b.set_modules_to_backward_prefetch([a])
started = []
if not AGAINST_TORCH:   # ember's own record of the early all-gather
    blocks[0].register_forward_hook(
        lambda *_: started.append(blocks[1]._fsdp_state.group.prefetched is not None))

opt_ref = M.optim.SGD(ref.parameters(), lr=0.1)
opt = M.optim.SGD(model.parameters(), lr=0.1)
M.manual_seed(1)
for step in range(3):
    x, y = M.randn(4 * WORLD, 8), M.randint(0, 3, (4 * WORLD,))
    opt_ref.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    opt_ref.step()
    opt.zero_grad()
    F.cross_entropy(model(x[4 * RANK : 4 * RANK + 4]), y[4 * RANK : 4 * RANK + 4]).backward()
    opt.step()
    for (name, p), q in zip(ref.named_parameters(), model.parameters()):
        np.testing.assert_allclose(q.full_tensor().detach().numpy(), p.detach().numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=f"{step} {name}")
assert AGAINST_TORCH or started == [True] * 3, started

# unshard(async_op=True): the handle finishes the gather; a step in between makes it stale
handle = blocks[2].unshard(async_op=True)
handle.wait()
if not AGAINST_TORCH:
    assert not isinstance(blocks[2].weight, dt.DTensor)   # the whole tensor until reshard()
blocks[2].reshard()
if not AGAINST_TORCH:  # ember discards a prefetch whose shards changed (torch would use it)
    blocks[1]._fsdp_state.group.prefetch()
    with M.no_grad():
        blocks[1].weight.to_local().add_(1.0)
        ref.blocks[1].weight.add_(1.0)
    x = M.randn(2, 8)
    with M.no_grad():
        np.testing.assert_allclose(model(x).numpy(), ref(x).numpy(), rtol=1e-5, atol=1e-6)

# a divide factor of 1: gradients are sums over the ranks (torch's gloo lacks the PREMUL_SUM
# reduction torch uses for it)
if not AGAINST_TORCH:
    model.set_gradient_divide_factor(1.0)
    for b in blocks:
        b.set_gradient_divide_factor(1.0)
    x, y = M.randn(4 * WORLD, 8), M.randint(0, 3, (4 * WORLD,))
    opt_ref.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    opt.zero_grad()
    F.cross_entropy(model(x[4 * RANK : 4 * RANK + 4]), y[4 * RANK : 4 * RANK + 4]).backward()
    for (name, p), q in zip(ref.named_parameters(), model.parameters()):
        np.testing.assert_allclose(q.grad.full_tensor().numpy(), WORLD * p.grad.numpy(),
                                   rtol=1e-4, atol=1e-6, err_msg=name)
x = M.randn(4, 8)

# a method other than forward, registered: it gathers and reshards like forward
fsdp.register_fsdp_forward_method(model, "features")
with M.no_grad():
    got = model.features(x)
np.testing.assert_allclose(got.numpy(), ref.blocks[0](x).detach().numpy(), rtol=1e-5, atol=1e-6)
fsdp.register_fsdp_forward_method(nn.Linear(2, 2), "forward")   # not FSDP: nothing to do
try:
    fsdp.register_fsdp_forward_method(model, "no_such_method")
    raise AssertionError("a missing method was accepted")
except ValueError as e:
    assert "no_such_method" in str(e), e
# shard_placement_fn: 2-d weights sharded on their columns, training unchanged
M.manual_seed(0)
ref = Net()
cols = shard(copy.deepcopy(ref), shard_placement_fn=lambda p: dt.Shard(1) if p.dim() == 2 else None)
w = cols.blocks[0].weight
assert w.placements == (dt.Shard(1),) and tuple(w.to_local().shape) == (8, 8 // WORLD)
assert cols.blocks[0].bias.placements == (dt.Shard(0),)
opt_ref = M.optim.AdamW(ref.parameters(), lr=0.01)
opt = M.optim.AdamW(cols.parameters(), lr=0.01)
for step in range(2):
    x, y = M.randn(4 * WORLD, 8), M.randint(0, 3, (4 * WORLD,))
    opt_ref.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    opt_ref.step()
    opt.zero_grad()
    F.cross_entropy(cols(x[4 * RANK : 4 * RANK + 4]), y[4 * RANK : 4 * RANK + 4]).backward()
    opt.step()
for (name, p), q in zip(ref.named_parameters(), cols.parameters()):
    np.testing.assert_allclose(q.full_tensor().detach().numpy(), p.detach().numpy(), rtol=1e-5,
                               atol=1e-6, err_msg=name)
print("OK")
"""


def test_fsdp_prefetch_and_controls(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 2, timeout=120):
        assert "OK" in out, out
