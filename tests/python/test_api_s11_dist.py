"""torch.distributed's smaller names (issue 16, drop-in running): object lists point to point,
the coalesced collectives, subgroups, the error classes and debug level, get_pg_count and
get_node_local_rank; the multi-process parts run in real processes over gloo."""

import pytest
from _dist_util import run_workers


def _ember():
    # imported in the tests that need it: under EMBER_TEST_AGAINST=torch the test process hosts
    # torch's store, and the workers' test below must not load ember beside it
    import ember
    import ember.distributed

    return ember, ember.distributed


def test_error_classes_and_names():
    ember, dist = _ember()
    for cls in (dist.DistBackendError, dist.DistStoreError, dist.DistNetworkError):
        assert issubclass(cls, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)
    assert dist.DeviceMesh is ember.distributed.device_mesh.DeviceMesh
    assert dist.init_device_mesh is ember.distributed.device_mesh.init_device_mesh
    assert dist.ProcessGroupGloo is ember._C._distributed.ProcessGroupGloo
    assert dist.get_pg_count() == 0


def test_debug_level(monkeypatch):
    ember, dist = _ember()
    before = dist.get_debug_level()
    try:
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        assert dist.get_debug_level() == dist.DebugLevel.DETAIL
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "info")
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() == dist.DebugLevel.INFO
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "bogus")
        with pytest.raises(ValueError, match="must be OFF, INFO, or DETAIL"):
            dist.set_debug_level_from_env()
        with pytest.raises(TypeError):
            dist.set_debug_level("INFO")
    finally:
        dist.set_debug_level(before)
    assert [m.name for m in dist.DebugLevel] == ["OFF", "INFO", "DETAIL"]


def test_node_local_rank(monkeypatch):
    ember, dist = _ember()
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert dist.get_node_local_rank() == 3
    monkeypatch.delenv("LOCAL_RANK")
    assert dist.get_node_local_rank(fallback_rank=1) == 1
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()


def test_breakpoint_skips_without_stopping():
    ember, dist = _ember()
    # skip > 0: the first `skip` calls from one place return at once (no pdb, no barrier)
    for _ in range(2):
        assert dist.breakpoint(skip=5) is None


BODY = """
dist.init_process_group("gloo")
assert dist.get_pg_count() == 1
# objects point to point
if RANK == 0:
    dist.send_object_list([{"a": 1}, "two", [3.0]], dst=1)
elif RANK == 1:
    got = [None, None, None]
    sender = dist.recv_object_list(got, src=0)
    assert got == [{"a": 1}, "two", [3.0]], got
    assert sender == 0
# all_reduce_coalesced: several tensors as one buffer
a, b = M.full((2,), float(RANK)), M.full((3, 1), float(RANK + 1))
dist.all_reduce_coalesced([a, b])
total = sum(range(WORLD))
assert a.tolist() == [total, total] and b.reshape(-1).tolist() == [total + WORLD] * 3
# all_gather_coalesced
outs = [[M.zeros(2), M.zeros(1)] for _ in range(WORLD)]
work = dist.all_gather_coalesced(outs, [M.full((2,), float(RANK)), M.full((1,), -float(RANK))],
                                 async_op=True)
work.wait()
assert [o[0].tolist() for o in outs] == [[float(r)] * 2 for r in range(WORLD)]
assert [o[1].tolist() for o in outs] == [[-float(r)] for r in range(WORLD)]
# subgroups of 2
mine, subs = dist.new_subgroups(2)
first = RANK // 2 * 2
assert len(subs) == WORLD // 2 and dist.get_process_group_ranks(mine) == [first, first + 1]
t = M.ones(1)
dist.all_reduce(t, group=mine)
assert t.item() == 2
assert dist.get_pg_count() == 1 + WORLD // 2
try:
    dist.new_subgroups_by_enumeration([[0, 1], [1, 2]])
    raise SystemExit("expected ValueError")
except ValueError as e:
    assert "has appeared in both subgroup" in str(e)
mine, subs = dist.new_subgroups_by_enumeration([[0, 3], [1, 2]])
assert dist.get_process_group_ranks(mine) == ([0, 3] if RANK in (0, 3) else [1, 2])
try:
    dist.new_subgroups(3)
    raise SystemExit("expected ValueError")
except ValueError as e:
    assert "divisible" in str(e)
dist.destroy_process_group()
print("OK")
"""


def test_object_lists_coalesced_and_subgroups(tmp_path):
    for _, out in run_workers(tmp_path, BODY, 4, timeout=120):
        assert "OK" in out, out
