"""FSDP2 with reshard_after_forward keeps the gathered parameters out of the autograd graph
through saved-tensor hooks: after the forward the saved weights are handles, the backward
gathers each group again once, and the gradients equal single-process training's."""

import pytest
from _dist_util import run_workers

BODY = """
import copy
from importlib import import_module
if AGAINST_TORCH:
    print("OK")  # the checks below read ember's FSDP internals
    sys.exit(0)
fsdp = import_module("ember.distributed.fsdp")
nn = M.nn
dist.init_process_group("gloo")
M.manual_seed(0)
ref = nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 4))
model = copy.deepcopy(ref)
for layer in (model[0], model[2]):
    fsdp.fully_shard(layer)
fsdp.fully_shard(model)
groups = [model[0]._fsdp_state.group, model[2]._fsdp_state.group]
gathers = []
for g in groups:
    orig = g.gather
    g.gather = lambda shards, g=g, orig=orig: (gathers.append(g), orig(shards))[1]
packed = []
orig_pack = type(groups[0]).pack
type(groups[0]).pack = lambda self, outer, t: (
    lambda r: (packed.append(type(r).__name__), r)[1])(orig_pack(self, outer, t))
x = M.randn(5, 6, requires_grad=True)  # so the first weight is saved too
loss = model(x).square().sum()
assert all(g.unsharded is None and g.regathered is None for g in groups)
assert packed.count("tuple") == 2, packed  # each Linear's saved weight is a handle
assert len(gathers) == 2
loss.backward()
assert len(gathers) == 4  # gathered again once per group in backward
assert all(g.regathered is None for g in groups)  # and dropped after the group's backward
ref(x).square().sum().backward()
for p, r in zip(model.parameters(), ref.parameters()):
    full = p.grad.full_tensor()
    assert M.allclose(full, r.grad, atol=1e-5), (full, r.grad)
type(groups[0]).pack = orig_pack

# A checkpoint around an FSDP module: its activations go to the checkpoint's hooks, its
# parameters to FSDP's, and the recomputation (which gathers again) fills the checkpoint's.
ck = import_module("ember.utils.checkpoint")
calls = []
def region(t):
    calls.append(1)
    return model[2](model[1](model[0](t)))
for p in list(model.parameters()) + list(ref.parameters()):
    p.grad = None
out = ck.checkpoint(region, x, use_reentrant=False)
out.square().sum().backward()
assert len(calls) == 2
ref(x).square().sum().backward()
for p, r in zip(model.parameters(), ref.parameters()):
    assert M.allclose(p.grad.full_tensor(), r.grad, atol=1e-5)
print("OK")
"""


@pytest.mark.parametrize("world", [1, 2])
def test_gathered_parameters_are_resharded_after_forward(tmp_path, world):
    for _, out in run_workers(tmp_path, BODY, world, timeout=120):
        assert "OK" in out, out
