"""DTensor factories, experimental.local_map / implicit_replication and parallel.loss_parallel in
2 real processes, against single-process references (and torch, with EMBER_TEST_AGAINST=torch)."""

from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
exp = import_module(M.__name__ + ".distributed.tensor.experimental")
par = import_module(M.__name__ + ".distributed.tensor.parallel")
dm = import_module(M.__name__ + ".distributed.device_mesh")
F = import_module(M.__name__ + ".nn.functional")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))

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


def test_dtensor_factories_local_map_loss_parallel(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 2, timeout=120):
        assert "OK" in out, out
