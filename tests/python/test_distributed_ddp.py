"""DistributedDataParallel and DistributedSampler in two real processes: gradients equal the
single-process gradients of the concatenated batch, no_sync accumulates, gradient_as_bucket_view,
find_unused_parameters, the error for an unused parameter, parameters broadcast at construction
and kept equal by training, state_dict keys. One spawned pair runs every case."""

from _dist_util import run_workers

BODY = """
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
nn = M.nn
from importlib import import_module
DDP = nn.parallel.DistributedDataParallel
DistributedSampler = import_module(M.__name__ + ".utils.data").DistributedSampler

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc1 = nn.Linear(4 * 6 * 6, 32)
        self.fc2 = nn.Linear(32, 5)
        self.extra = nn.Linear(5, 5)     # skipped when asked
    def forward(self, x, use_extra=True):
        h = M.relu(self.conv(x)).flatten(1)
        y = self.fc2(M.relu(self.fc1(h)))
        return self.extra(y) if use_extra else y

def grads(m):
    return [None if p.grad is None else p.grad.detach().clone() for p in m.parameters()]

def close(a, b, what):
    for x, y in zip(a, b):
        assert (x is None) == (y is None), what
        if x is not None:
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-4, atol=1e-6, err_msg=what)

M.manual_seed(0)
X = M.randn(16, 1, 8, 8)
Y = M.randint(0, 5, (16,))
lossf = nn.CrossEntropyLoss()
mine = slice(RANK * 8, RANK * 8 + 8)

def reference(batches, use_extra=True):
    M.manual_seed(1)
    ref = Net()
    for xs, ys in batches:
        lossf(ref(xs, use_extra), ys).backward()
    return ref, grads(ref)

CASES = [dict(), dict(bucket_cap_mb=0.001), dict(gradient_as_bucket_view=True, bucket_cap_mb=0.001)]
for kwargs in CASES:
    M.manual_seed(1 if RANK == 0 else 99)   # rank 1 starts different: DDP broadcasts rank 0's
    net = Net()
    model = DDP(net, **kwargs)
    assert model.module is net
    assert all(k.startswith("module.") for k in model.state_dict())
    lossf(model(X[mine]), Y[mine]).backward()
    ref, want = reference([(X, Y)])
    close(grads(net), want, f"grads {kwargs}")
    for p, q in zip(net.parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    if kwargs.get("gradient_as_bucket_view") and not AGAINST_TORCH:
        g = net.fc2.weight.grad       # the gradient is a view into its bucket
        assert any(g.data_ptr() == v.data_ptr() for b in model._buckets for v in b.views)
    # no_sync: the first micro-batch stays local, the second syncs the sum
    for p in net.parameters():
        p.grad = None
    X2, Y2 = X.flip(0), Y.flip(0)
    with model.no_sync():
        lossf(model(X[mine]), Y[mine]).backward()
    local = grads(net)
    _, local_ref = (lambda r: (r, grads(r)))(reference([(X[mine], Y[mine])])[0])
    close(local, local_ref, "no_sync keeps local gradients")
    lossf(model(X2[mine]), Y2[mine]).backward()
    _, want2 = reference([(X, Y), (X2, Y2)])
    close(grads(net), want2, f"no_sync accumulation {kwargs}")

# training keeps the replicas equal
M.manual_seed(5 + RANK)
net = Net()
model = DDP(net, bucket_cap_mb=0.001)
opt = M.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sampler = DistributedSampler(range(16), shuffle=True, seed=3)
assert sampler.num_replicas == WORLD and sampler.rank == RANK
for epoch in range(2):
    sampler.set_epoch(epoch)
    idx = M.tensor(list(sampler))
    for step in range(2):
        sel = idx[step * 4 : step * 4 + 4]
        opt.zero_grad()
        lossf(model(X[sel]), Y[sel]).backward()
        opt.step()
sums = [None] * WORLD
dist.all_gather_object(sums, [float(p.detach().double().sum()) for p in net.parameters()])
assert sums[0] == sums[1], sums

# find_unused_parameters: rank 0 uses `extra`, rank 1 does not
M.manual_seed(1)
net = Net()
model = DDP(net, find_unused_parameters=True)
for it in range(2):
    for p in net.parameters():
        p.grad = None
    lossf(model(X[mine], use_extra=(RANK == 0)), Y[mine]).backward()
g = [None] * WORLD
dist.all_gather_object(g, net.extra.weight.grad.sum().item())
assert g[0] == g[1]                           # both ranks hold the averaged gradient
model2 = DDP(Net(), find_unused_parameters=True)
lossf(model2(X[mine], False), Y[mine]).backward()  # extra unused everywhere: its grad stays None
assert model2.module.extra.weight.grad is None
assert model2.module.fc2.weight.grad is not None

# without find_unused_parameters, an unused parameter makes the next iteration raise
model3 = DDP(Net())
lossf(model3(X[mine], False), Y[mine]).backward()
try:
    model3(X[mine])
    raise AssertionError("no error for the unfinished reduction")
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e), e
dist.barrier()
print("OK")
"""


def test_ddp(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 2, timeout=240):
        assert "OK" in out, out
