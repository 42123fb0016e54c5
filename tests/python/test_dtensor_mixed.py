"""A plain tensor beside DTensors: refused as torch refuses it (RuntimeError naming the op), except
a one-element tensor, which acts as a replicated scalar (2 real processes)."""

from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))
x = dt.distribute_tensor(M.arange(8.0).reshape(4, 2), mesh, [dt.Shard(0)])
for call in (lambda: x + M.ones(4, 2), lambda: M.mul(M.ones(2), x), lambda: x @ M.ones(2, 3)):
    try:
        call()
        raise AssertionError("a plain tensor beside a DTensor was accepted")
    except RuntimeError as e:
        assert "mixed torch.Tensor and DTensor" in str(e), e
y = x * M.tensor(2.0)            # a 0-d tensor is a scalar
np.testing.assert_allclose(y.full_tensor().numpy(), np.arange(8.0).reshape(4, 2) * 2)
print("OK")
"""


def test_plain_tensor_beside_dtensor(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 2, timeout=120):
        assert "OK" in out, out
