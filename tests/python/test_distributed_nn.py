"""ember.distributed.nn.functional in 2 real processes: each differentiable collective gives the
collective's values, and backward gives the adjoint collective's gradients, checked against
gradients computed by hand from every rank's inputs."""

from _dist_util import run_workers

BODY = """
import warnings
from importlib import import_module
fn = import_module(M.__name__ + ".distributed.nn.functional")
dist.init_process_group("gloo")
warnings.simplefilter("ignore", FutureWarning)   # torch deprecates several of them

def leaf(r):
    M.manual_seed(r)
    return M.randn(3).requires_grad_()

X = [leaf(r).detach() for r in range(WORLD)]
w = float(RANK + 1)   # each rank weighs its outputs differently
W = [float(r + 1) for r in range(WORLD)]

x = leaf(RANK)
y = fn.all_reduce(x)
np.testing.assert_allclose(y.detach().numpy(), sum(X).numpy(), rtol=1e-6)
(y * w).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), np.full(3, sum(W)))

x = leaf(RANK)
outs = fn.all_gather(x)
for r in range(WORLD):
    np.testing.assert_allclose(outs[r].detach().numpy(), X[r].numpy())
sum((o * (i + 1) * w) for i, o in enumerate(outs)).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), np.full(3, (RANK + 1) * sum(W)))

x = leaf(RANK)
y = fn.broadcast(x, src=0)
np.testing.assert_allclose(y.detach().numpy(), X[0].numpy())
(y * w).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), np.full(3, sum(W) if RANK == 0 else 0.0))

x = leaf(RANK)
y = fn.reduce(x, dst=1)
if RANK == 1:
    np.testing.assert_allclose(y.detach().numpy(), sum(X).numpy(), rtol=1e-6)
(y * w).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), np.full(3, W[1]))   # rank 1's weight, broadcast

x = leaf(RANK)
parts = fn.gather(x, dst=0)
if RANK == 0:
    for r in range(WORLD):
        np.testing.assert_allclose(parts[r].detach().numpy(), X[r].numpy())
sum(p * (i + 1) for i, p in enumerate(parts)).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), np.full(3, RANK + 1.0))  # rank 0's weights

xs = [leaf(10 * RANK + r) for r in range(WORLD)]
y = fn.scatter(xs, src=1)
np.testing.assert_allclose(y.detach().numpy(), leaf(10 + RANK).detach().numpy())
(y * w).sum().backward()
for r in range(WORLD):
    want = np.full(3, W[r]) if RANK == 1 else np.zeros(3)
    got = xs[r].grad.numpy() if xs[r].grad is not None else np.zeros(3)
    np.testing.assert_allclose(got, want)

x = M.arange(2.0 * WORLD).add(10 * RANK).requires_grad_()
y = fn.all_to_all_single(M.empty(2 * WORLD), x)
want = np.concatenate([np.arange(2 * RANK, 2 * RANK + 2) + 10 * r for r in range(WORLD)])
np.testing.assert_allclose(y.detach().numpy(), want)
(y * w).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), np.repeat(W, 2))
print("OK")
"""


def test_differentiable_collectives(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 2, timeout=120):
        assert "OK" in out, out
