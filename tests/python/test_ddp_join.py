"""Uneven inputs with the join context manager, in 3 real processes (rank r has 3 + 2r inputs):
DDP.join() matches the single-process computation of what each iteration averages (over the
initial world size, or over the ranks still training), every rank ends with the last joiner's
model, a buffer (BatchNorm) is kept in sync, Join([ddp, ZeroRedundancyOptimizer]) as in torch's
documentation, and throw_on_early_termination raises on every rank."""

import pytest
from _dist_util import run_workers

BODY = """
from importlib import import_module
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
DDP = import_module(M.__name__ + ".nn.parallel").DistributedDataParallel
ZeRO = import_module(M.__name__ + ".distributed.optim").ZeroRedundancyOptimizer
Join = import_module(M.__name__ + ".distributed.algorithms.join").Join
dist.init_process_group("gloo")
M.manual_seed(0)
DATA = [[M.randn(4, 3) for _ in range(3 + 2 * r)] for r in range(WORLD)]
LR = 0.1

def net():
    M.manual_seed(1)
    return nn.Linear(3, 2)

def expected(divide_by_initial):
    ref = net()
    for i in range(max(len(d) for d in DATA)):
        active = [d[i] for d in DATA if i < len(d)]
        grads = []
        for x in active:
            ref.zero_grad()
            ref(x).square().sum().backward()
            grads.append([p.grad.clone() for p in ref.parameters()])
        n = WORLD if divide_by_initial else len(active)
        with M.no_grad():
            for j, p in enumerate(ref.parameters()):
                p -= LR * sum(g[j] for g in grads) / n
    return ref

for divide in (True, False):
    model = DDP(net())
    opt = M.optim.SGD(model.parameters(), lr=LR)
    with model.join(divide_by_initial_world_size=divide):
        for x in DATA[RANK]:
            opt.zero_grad()
            model(x).square().sum().backward()
            opt.step()
    for p, q in zip(expected(divide).parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"divide_by_initial_world_size={divide}")

# buffers: a BatchNorm's running statistics are broadcast in every forward
M.manual_seed(2)
bn = DDP(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
opt = M.optim.SGD(bn.parameters(), lr=LR)
with bn.join():
    for x in DATA[RANK]:
        opt.zero_grad()
        bn(x).sum().backward()
        opt.step()
mean = bn.module[1].running_mean.clone()
means = [M.zeros(4) for _ in range(WORLD)]
dist.all_gather(means, mean)
for m in means:
    np.testing.assert_allclose(m.numpy(), mean.numpy())

# torch's documented example: DDP with ZeroRedundancyOptimizer, one joinable each
model = DDP(net())
zero = ZeRO(model.parameters(), M.optim.Adam, lr=0.01)
with Join([model, zero]):
    for x in DATA[RANK]:
        model(x).sum().backward()
        zero.step()
params = [p.detach().clone() for p in model.parameters()]
for p in params:
    got = [M.zeros_like(p) for _ in range(WORLD)]
    dist.all_gather(got, p)
    for g in got:
        np.testing.assert_allclose(g.numpy(), p.numpy())

# a communication hook and find_unused_parameters are shadowed too
hooks = import_module(M.__name__ + ".distributed.algorithms.ddp_comm_hooks")

class Partly(nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = net(), nn.Linear(3, 2)

    def forward(self, x):
        return self.used(x)

model = DDP(Partly(), find_unused_parameters=True)
model.register_comm_hook(None, hooks.default_hooks.allreduce_hook)
opt = M.optim.SGD(model.parameters(), lr=LR)
with model.join():
    for x in DATA[RANK]:
        opt.zero_grad()
        model(x).square().sum().backward()
        opt.step()
for p, q in zip(expected(True).parameters(), model.module.used.parameters()):
    np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6)

# throw_on_early_termination: every rank raises once one ran out
model = DDP(net())
raised = False
try:
    with model.join(throw_on_early_termination=True):
        for x in DATA[RANK]:
            model(x).sum().backward()
except RuntimeError as e:
    raised = True
    assert "exhausted" in str(e), e
assert raised
print("OK")
"""


@pytest.mark.parametrize("world", [3])
def test_ddp_join_uneven_inputs(tmp_path, world):
    for _, out in run_workers(tmp_path, BODY, world, timeout=120):
        assert "OK" in out, out
