"""DeviceMesh over 4 real processes: a 2x2 mesh's groups along each named dimension, slicing by
name (one or several dims of a 3-d mesh), _flatten, and a 1-d mesh."""

from _dist_util import run_workers

BODY = """
dm = __import__(M.__name__ + ".distributed.device_mesh", fromlist=["init_device_mesh"])
mesh = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
assert mesh.shape == (2, 2) and mesh.size() == 4 and mesh.size(1) == 2
assert mesh.mesh.tolist() == [[0, 1], [2, 3]]
row, col = divmod(RANK, 2)
assert tuple(mesh.get_coordinate()) == (row, col)
assert mesh.get_local_rank("dp") == row and mesh.get_local_rank("tp") == col
t = M.full((1,), float(RANK))
dist.all_reduce(t, group=mesh.get_group("tp"))      # sums the ranks of this rank's row
assert t.item() == 2 * row + 2 * row + 1, t
t = M.full((1,), float(RANK))
dist.all_reduce(t, group=mesh["dp"].get_group())    # sums the ranks of this rank's column
assert t.item() == col + col + 2, t
tp = mesh["tp"]
assert tp.mesh.tolist() == [2 * row, 2 * row + 1] and tp.mesh_dim_names == ("tp",)
assert dist.get_process_group_ranks(tp.get_group()) == [2 * row, 2 * row + 1]
# slicing several named dims (in the mesh's order) and _flatten, as torch's
import warnings
m3 = dm.init_device_mesh("cpu", (2, 2, 1), mesh_dim_names=("dp", "cp", "tp"))
sub = m3["dp", "cp"]
assert sub.mesh.tolist() == [[0, 1], [2, 3]] and sub.mesh_dim_names == ("dp", "cp")
assert m3["cp", "tp"].mesh.tolist() == [[2 * row], [2 * row + 1]]
assert m3["tp", "dp"].mesh.tolist() == [[col, col + 2]]  # tp, of size 1, may come first
try:
    m3["cp", "dp"]
    raise AssertionError("a slice out of the mesh's order was accepted")
except KeyError as e:
    assert "Mesh dim indices should be in ascending order." in str(e), e
dp_cp = sub._flatten()
assert dp_cp.mesh.tolist() == [0, 1, 2, 3] and dp_cp.mesh_dim_names == ("dp_cp",)
t = M.full((1,), float(RANK))
dist.all_reduce(t, group=dp_cp.get_group())
assert t.item() == 6, t
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert m3["dp_cp"].mesh.tolist() == [0, 1, 2, 3]
assert "Slicing a flattened dim from root mesh" in str(caught[0].message), caught
sp = m3["cp", "tp"]._flatten("sp")
assert sp.mesh.tolist() == [2 * row, 2 * row + 1] and sp.get_local_rank() == col
assert mesh._flatten().mesh.tolist() == [0, 1, 2, 3]  # the whole 2x2 mesh
flat = dm.init_device_mesh("cpu", (WORLD,))
t = M.ones(1)
dist.all_reduce(t, group=flat.get_group())
assert t.item() == WORLD
print("OK")
"""


def test_device_mesh_2d(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 4, timeout=120):
        assert "OK" in out, out
