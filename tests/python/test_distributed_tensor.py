"""DTensor basics over 4 real processes: distribute_tensor, to_local/full_tensor, from_local and
redistribute between Shard, Replicate and Partial on a 1-d and a 2-d mesh, uneven shards
included."""

from _dist_util import run_workers

BODY = """
from importlib import import_module
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
Shard, Replicate, Partial = dt.Shard, dt.Replicate, dt.Partial
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))
x = M.arange(30.0).reshape(10, 3)

def chunk(t, dim, n, i):
    pieces = list(M.chunk(t, n, dim))
    return pieces[i] if i < len(pieces) else t.narrow(dim, 0, 0)

d = dt.distribute_tensor(x, mesh, [Shard(0)])
assert tuple(d.shape) == (10, 3) and d.placements == (Shard(0),)
np.testing.assert_array_equal(d.to_local().numpy(), chunk(x, 0, WORLD, RANK).numpy())
np.testing.assert_array_equal(d.full_tensor().numpy(), x.numpy())
d1 = d.redistribute(mesh, [Shard(1)])            # 3 columns over 4 ranks: the last gets none
np.testing.assert_array_equal(d1.to_local().numpy(), chunk(x, 1, WORLD, RANK).numpy())
np.testing.assert_array_equal(d1.full_tensor().numpy(), x.numpy())
r = d1.redistribute(mesh, [Replicate()])
np.testing.assert_array_equal(r.to_local().numpy(), x.numpy())

p = dt.DTensor.from_local(x * (RANK + 1), mesh, [Partial()])
np.testing.assert_array_equal(p.full_tensor().numpy(), (x * sum(range(1, WORLD + 1))).numpy())
ps = p.redistribute(mesh, [Shard(0)])
want = chunk(x * sum(range(1, WORLD + 1)), 0, WORLD, RANK)
np.testing.assert_array_equal(ps.to_local().numpy(), want.numpy())

if not AGAINST_TORCH:  # ember infers the global shape from shards of different lengths
    u = dt.DTensor.from_local(M.full((RANK + 1, 2), float(RANK)), mesh, [Shard(0)])
    assert tuple(u.shape) == (sum(range(1, WORLD + 1)), 2)

mesh2 = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
y = M.arange(24.0).reshape(4, 6)
d2 = dt.distribute_tensor(y, mesh2, [Shard(0), Shard(1)])
row, col = divmod(RANK, 2)
mine = y[2 * row : 2 * row + 2, 3 * col : 3 * col + 3]
np.testing.assert_array_equal(d2.to_local().numpy(), mine.numpy())
np.testing.assert_array_equal(d2.full_tensor().numpy(), y.numpy())
d3 = d2.redistribute(mesh2, [Replicate(), Shard(0)])
np.testing.assert_array_equal(d3.to_local().numpy(), y[2 * col : 2 * col + 2].numpy())
print("OK")
"""


def test_dtensor_basics(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 4, timeout=180):
        assert "OK" in out, out
