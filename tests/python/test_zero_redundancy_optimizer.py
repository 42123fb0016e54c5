"""ZeroRedundancyOptimizer in 2 real processes: with DDP it trains exactly like a plain
optimizer on the whole batch, each rank keeps the state of about half the parameters, the
consolidated state_dict equals the plain optimizer's, loading it resumes identically, an LR
scheduler drives it (also with parameters_as_bucket_view), and state_dict() before
consolidation raises torch's error."""

import pytest
from _dist_util import run_workers

BODY = """
from importlib import import_module
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
DDP = import_module(M.__name__ + ".nn.parallel").DistributedDataParallel
ZeRO = import_module(M.__name__ + ".distributed.optim").ZeroRedundancyOptimizer
dist.init_process_group("gloo")

def net():
    M.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 16), nn.Tanh(),
                         nn.Linear(16, 4))

ref = net()
opt_ref = M.optim.Adam(ref.parameters(), lr=1e-2)
sched_ref = M.optim.lr_scheduler.StepLR(opt_ref, 1, gamma=0.5)
model = DDP(net())
opt = ZeRO(model.parameters(), optimizer_class=M.optim.Adam, lr=1e-2,
           parameters_as_bucket_view=BUCKET_VIEW)
sched = M.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

def train(steps, seed):
    M.manual_seed(seed)
    for _ in range(steps):
        X, Y = M.randn(8, 6), M.randn(8, 4)
        opt_ref.zero_grad()
        F.mse_loss(ref(X), Y).backward()
        opt_ref.step()
        sched_ref.step()
        opt.zero_grad()
        F.mse_loss(model(X[4 * RANK : 4 * RANK + 4]), Y[4 * RANK : 4 * RANK + 4]).backward()
        opt.step()
        sched.step()
    for p, q in zip(ref.parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6)

train(3, 1)
assert opt.param_groups[0]["lr"] == opt_ref.param_groups[0]["lr"]
# the state is split: this rank holds some parameters' state, both ranks all of it
mine = sum(p.numel() for p in opt.optim.state)
total = sum(p.numel() for p in ref.parameters())
counts = [None, None]
dist.all_gather_object(counts, mine)
assert sum(counts) == total and 0 < mine < total, counts
if BUCKET_VIEW:  # this rank's parameters are views of one flat tensor
    owned = [p for g in opt.optim.param_groups for p in g["params"]]
    assert len({p.untyped_storage().data_ptr() for p in owned}) == 1

try:
    opt.state_dict()
    raise AssertionError("state_dict() before consolidate_state_dict() was accepted")
except RuntimeError as e:
    assert "consolidate_state_dict" in str(e), e
opt.consolidate_state_dict(to=0)
if RANK == 0:
    sd, want = opt.state_dict(), opt_ref.state_dict()
    assert sorted(sd["state"]) == sorted(want["state"])
    for i in want["state"]:
        for k, v in want["state"][i].items():
            np.testing.assert_allclose(np.asarray(sd["state"][i][k]), np.asarray(v), rtol=1e-5,
                                       atol=1e-7, err_msg=f"{i} {k}")
    assert sd["param_groups"][0]["lr"] == want["param_groups"][0]["lr"]
    obj = [sd]
else:
    obj = [None]
dist.broadcast_object_list(obj, src=0)

# a fresh optimizer loads the consolidated state and continues exactly like the reference
opt = ZeRO(model.parameters(), optimizer_class=M.optim.Adam, lr=1e-2,
           parameters_as_bucket_view=BUCKET_VIEW)
opt.load_state_dict(obj[0])
sched = M.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
sched.load_state_dict(sched_ref.state_dict())
train(2, 2)
print("OK")
"""


@pytest.mark.parametrize("bucket_view", [False, True])
def test_zero_redundancy_optimizer(tmp_path, bucket_view):
    body = f"BUCKET_VIEW = {bucket_view}\n" + BODY
    for _, out in run_workers(tmp_path, body, 2, timeout=120):
        assert "OK" in out, out
