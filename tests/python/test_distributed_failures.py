"""What goes wrong between processes fails loudly and in bounded time: a killed rank, a rank that
never arrives, collectives whose shapes disagree, a wrong MASTER_PORT, an unreachable master, a
missing environment variable, a rank that misses a monitored_barrier."""

import datetime
import socket

import pytest
from _dist_util import module_name, run_workers


def _dist():
    if module_name() == "torch":
        import torch.distributed as d
    else:
        import ember.distributed as d
    return d


FAILURES = """
import time
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
case = os.environ["CASE"]
if case == "killed":
    dist.barrier()                            # every rank finished connecting
    if RANK == 1:
        os._exit(3)                           # dies without a word
    start = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(M.ones(1000))
        raise AssertionError("all_reduce with a dead peer returned")
    except RuntimeError as e:
        print("RAISED", type(e).__name__, str(e)[:200], f"after {time.monotonic() - start:.1f}s")
elif case == "absent":                        # alive but never calls: the op's timeout applies
    g = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=2))
    if RANK == 1:
        time.sleep(6)
        os._exit(0)
    try:
        dist.all_reduce(M.ones(10), group=g)
        raise AssertionError("all_reduce without its peer returned")
    except RuntimeError as e:
        print("RAISED", str(e)[:300])
elif case == "mismatch":
    t = M.ones(RANK + 2)
    try:
        dist.all_reduce(t)
        raise AssertionError("mismatched all_reduce returned")
    except RuntimeError as e:
        print("RAISED", str(e))
    if not AGAINST_TORCH:                     # nothing moved: the group still works
        u = M.ones(3)
        dist.all_reduce(u)
        assert u.tolist() == [2.0, 2.0, 2.0]
        try:
            dist.broadcast(M.ones(2), src=0) if RANK == 0 else dist.all_reduce(M.ones(2))
            raise AssertionError("different collectives returned")
        except RuntimeError as e:
            print("RAISED", str(e))
elif case == "monitored":
    if RANK == 1:
        time.sleep(5)
        os._exit(0)
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=1))
        raise AssertionError("monitored_barrier returned")
    except RuntimeError as e:
        print("RAISED", str(e))
os._exit(0)
"""


def _run(tmp_path, case, world_size=2):
    return run_workers(
        tmp_path, FAILURES, world_size, timeout=60, env={"CASE": case}, expect_ok=False
    )


def test_killed_rank_makes_the_others_raise(tmp_path):
    (code0, out0), (code1, _) = _run(tmp_path, "killed")
    assert code1 == 3
    assert code0 == 0 and "RAISED RuntimeError" in out0, out0


def test_absent_rank_times_out(tmp_path):
    (code0, out0), _ = _run(tmp_path, "absent")
    assert code0 == 0 and "RAISED" in out0, out0
    if module_name() == "ember":
        assert "Timed out" in out0 or "timed out" in out0, out0


def test_mismatched_shapes_raise(tmp_path):
    if module_name() == "torch":
        pytest.skip("torch's gloo does not compare shapes (one rank returns, the other aborts)")
    results = _run(tmp_path, "mismatch")
    for code, out in results:
        assert code == 0 and "RAISED" in out, out
    if module_name() == "ember":
        for code, out in results:
            assert "shape [2]" in out and "shape [3]" in out, out
            assert "called broadcast" in out and "called all_reduce" in out, out


def test_monitored_barrier_names_the_missing_rank(tmp_path):
    (code0, out0), _ = _run(tmp_path, "monitored")
    assert code0 == 0 and "Rank 1 failed to pass monitoredBarrier" in out0, out0


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def test_wrong_master_port_names_address_and_timeout(monkeypatch):
    dist = _dist()
    port = _closed_port()
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("TORCHELASTIC_USE_AGENT_STORE", raising=False)
    with pytest.raises(RuntimeError) as e:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=1))
    assert not dist.is_initialized()
    if module_name() == "ember":
        assert "127.0.0.1" in str(e.value) and str(port) in str(e.value), e.value
        assert "1000ms" in str(e.value), e.value


def test_unreachable_master_fails_within_timeout(monkeypatch):
    dist = _dist()
    monkeypatch.setenv("MASTER_ADDR", "10.255.255.1")  # a non-routable address: SYNs go nowhere
    monkeypatch.setenv("MASTER_PORT", "29555")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("TORCHELASTIC_USE_AGENT_STORE", raising=False)
    with pytest.raises(RuntimeError) as e:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=1))
    if module_name() == "ember":
        assert "10.255.255.1" in str(e.value), e.value  # (some sandboxes answer any address)


def test_missing_env_var_is_named(monkeypatch):
    dist = _dist()
    for v in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(ValueError, match="RANK expected, but not set"):
        dist.init_process_group("gloo")
