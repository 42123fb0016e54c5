"""Session 14 of ember.distributed: the elastic launcher's later rounds (a node that comes after
the rendezvous closed joins the next round, which the running node starts; --max-restarts starts
a round with it too), DCP's per-chunk reads and the Metadata a custom create_global_plan
returns, and torch's smaller behaviours found by the docs probe (the default store is a
PrefixStore, deprecation warnings of renamed collectives, `mean` over a sharded dim is
Partial(avg)). The multi-rank checks share one spawned group; with EMBER_TEST_AGAINST=torch the
same programs run on torch."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from _dist_util import module_name, run_workers

# -- the launcher: a node that joins after the elastic rendezvous closed

LATE_SCRIPT = """
import os, sys, time, importlib
world = int(os.environ["WORLD_SIZE"])
print("ROUND world", world, flush=True)
if world == 1:
    open(os.environ["MARK"] + ".alone", "w").close()
    time.sleep(120)          # the launcher restarts this worker when the late node waits
    sys.exit(2)
if os.environ.get("FAIL_ONCE") == "1":
    try:                     # the first worker of the 2-node rounds fails, once
        os.close(os.open(os.environ["MARK"] + ".failed", os.O_CREAT | os.O_EXCL))
        time.sleep(3)        # (after the other worker has started)
        sys.exit(3)
    except FileExistsError:
        pass
M = __import__(os.environ["DIST_TEST_MODULE"])
dist = importlib.import_module(M.__name__ + ".distributed")
dist.init_process_group("gloo")
t = M.ones(1)
dist.all_reduce(t)
print("DONE world", world, "sum", int(t.item()), flush=True)
dist.destroy_process_group()
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _late_node_run(lib, tmp_path, fail_once):
    script = tmp_path / "late.py"
    script.write_text(textwrap.dedent(LATE_SCRIPT))
    mark = str(tmp_path / f"mark_{lib}_{fail_once}")
    launcher = "torch.distributed.run" if lib == "torch" else "ember.distributed.run"
    env = dict(
        os.environ,
        DIST_TEST_MODULE=lib,
        OMP_NUM_THREADS="1",
        MARK=mark,
        FAIL_ONCE="1" if fail_once else "0",
        # torch 2.13's agent, rank 0 again in a later round over its shared store, never
        # publishes that round's MASTER_ADDR (the other node times out); its own store per
        # round avoids that
        TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1",
    )
    flags = ["--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-backend", "c10d"]
    flags += ["--rdzv-endpoint", f"127.0.0.1:{_free_port()}", "--monitor-interval", "0.1"]
    flags += ["--rdzv-conf", "last_call_timeout=3", "--max-restarts", "1" if fail_once else "0"]
    cmd = [sys.executable, "-m", launcher, *flags, str(script)]
    pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = subprocess.Popen(cmd, env=env, **pipes)
    procs = [first]
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(mark + ".alone"):  # the first node runs alone
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first node never started its worker"
            time.sleep(0.1)
        procs.append(subprocess.Popen(cmd, env=env, **pipes))
        return [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


def _rounds(out):
    return [
        line[line.index("ROUND ") :] if "ROUND " in line else line[line.index("DONE ") :]
        for line in out.splitlines()
        if "ROUND " in line or "DONE " in line
    ]


@pytest.mark.parametrize("fail_once", [False, True], ids=["membership", "max_restarts"])
def test_launcher_late_node_joins_the_next_round(tmp_path, fail_once):
    """The first node of --nnodes 1:2 runs alone; a second launcher started later waits, the
    first restarts its worker (not counted as a restart), and both run a 2-node round. With
    --max-restarts 1 a worker of that round fails once and the restart forms a round with both
    nodes again."""
    libs = ["ember"] + (["torch"] if module_name() == "torch" else [])
    for lib in libs:
        (out0, err0, code0), (out1, err1, code1) = _late_node_run(lib, tmp_path, fail_once)
        assert code0 == 0 and code1 == 0, (lib, out0, err0, out1, err1)
        two = ["ROUND world 2"] * (1 + fail_once) + ["DONE world 2 sum 2"]
        got = [_rounds(out0), _rounds(out1)]
        assert got == [["ROUND world 1"] + two, two], (lib, got, err0, err1)


DEAD_SCRIPT = """
import os, sys, time, importlib
world = int(os.environ["WORLD_SIZE"])
M = __import__(os.environ["DIST_TEST_MODULE"])
dist = importlib.import_module(M.__name__ + ".distributed")
if world == 1 and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
    time.sleep(120)            # alone before the other node came: restarted when it waits
if world == 1:
    print("DONE world 1", flush=True)
    sys.exit(0)
dist.init_process_group("gloo")
with open(os.environ["MARK"] + f".{dist.get_rank()}", "w") as f:
    f.write(f"{os.getpid()} {os.getppid()}")
while not os.path.exists(os.environ["MARK"] + ".killed"):
    time.sleep(0.05)
dist.barrier()                 # the other node is gone: this raises, the launcher restarts
"""


def test_launcher_next_round_without_a_killed_node(tmp_path):
    """--nnodes 1:2 with two launchers; the one that does not host the store is killed with its
    worker (it cannot leave the round). The survivor's worker fails, and its restart forms a
    round alone once the killed node's heartbeat is stale, instead of waiting for it to leave
    until the join timeout."""
    script = tmp_path / "dead.py"
    script.write_text(textwrap.dedent(DEAD_SCRIPT))
    mark = str(tmp_path / "mark")
    env = dict(os.environ, DIST_TEST_MODULE="ember", OMP_NUM_THREADS="1", MARK=mark)
    port = _free_port()
    flags = ["--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-backend", "c10d"]
    flags += ["--rdzv-endpoint", f"127.0.0.1:{port}", "--monitor-interval", "0.1"]
    flags += ["--rdzv-conf", "last_call_timeout=2,keep_alive_interval=0.2,keep_alive_max_attempt=3"]
    cmd = [sys.executable, "-m", "ember.distributed.run", *flags, "--max-restarts", "1"]
    pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    host = subprocess.Popen([*cmd, str(script)], env=env, **pipes)
    procs = [host]
    try:
        deadline = time.monotonic() + 30
        while True:  # the first launcher hosts the store once its port listens
            assert host.poll() is None and time.monotonic() < deadline, host.communicate()
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        other = subprocess.Popen([*cmd, str(script)], env=env, **pipes)
        procs.append(other)
        while not all(os.path.exists(f"{mark}.{r}") for r in (0, 1)):
            assert host.poll() is None and time.monotonic() < deadline, host.communicate()
            time.sleep(0.05)
        time.sleep(0.2)  # both pid files are whole
        for r in (0, 1):
            pid, ppid = map(int, open(f"{mark}.{r}").read().split())
            if ppid == other.pid:
                os.kill(pid, signal.SIGKILL)
        other.kill()
        other.communicate()
        open(mark + ".killed", "w").close()
        out, err = host.communicate(timeout=60)
        assert host.returncode == 0, (out, err)
        assert "DONE world 1" in out, (out, err)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


# -- one group of 2 ranks: DCP, the default store, deprecations, mean over a sharded dim

GROUP = """
import warnings, dataclasses
from importlib import import_module
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
imp = lambda name: import_module(M.__name__ + "." + name)
T, C = imp("distributed.tensor"), imp("distributed.checkpoint")
mesh = imp("distributed.device_mesh").init_device_mesh("cpu", (WORLD,))
ck = os.environ["CKPT_DIR"]

# DCP: a load plans one ReadItem per saved chunk it overlaps, offsets in the target's piece and
# in the saved chunk
w = M.arange(32.0).reshape(8, 4)
C.save({"w": T.distribute_tensor(w, mesh, [T.Shard(0)])}, checkpoint_id=ck + "/a")

class Seen(C.DefaultLoadPlanner):
    def create_local_plan(self):
        plan = super().create_local_plan()
        self.reads = [(tuple(i.dest_offsets), tuple(i.storage_index.offset),
                       tuple(i.storage_offsets), tuple(i.lengths)) for i in plan.items]
        return plan

seen = Seen()
got = {"w": T.distribute_tensor(M.zeros(8, 4), mesh, [T.Shard(1)])}
C.load(got, checkpoint_id=ck + "/a", planner=seen)
assert seen.reads == [((0, 0), (0, 0), (0, 2 * RANK), (4, 2)),
                      ((4, 0), (4, 0), (0, 2 * RANK), (4, 2))], seen.reads
assert got["w"].full_tensor().tolist() == w.tolist()
plain = {"w": M.zeros(8, 4)}
seen = Seen()
C.load(plain, checkpoint_id=ck + "/a", planner=seen)
assert seen.reads == [((0, 0), (0, 0), (0, 0), (4, 4)), ((4, 0), (4, 0), (0, 0), (4, 4))]
assert plain["w"].tolist() == w.tolist()

# the Metadata a custom create_global_plan returns is what the checkpoint records
class Extra(C.DefaultSavePlanner):
    def create_local_plan(self):
        return dataclasses.replace(super().create_local_plan(), planner_data=f"from {RANK}")
    def create_global_plan(self, all_plans):
        plans, md = super().create_global_plan(all_plans)
        sdm = {k: v for k, v in md.state_dict_metadata.items() if k != "skip"}
        return plans, dataclasses.replace(
            md, state_dict_metadata=sdm, planner_data=[p.planner_data for p in all_plans])

C.save({"a": M.ones(2), "skip": M.zeros(1), "n": 5}, checkpoint_id=ck + "/b",
       planner=Extra(flatten_state_dict=False))
md = C.FileSystemReader(ck + "/b").read_metadata()
assert md.planner_data == [f"from {r}" for r in range(WORLD)], md.planner_data
assert sorted(md.state_dict_metadata) == ["a", "n"], md.state_dict_metadata
# the default planner records its flattening paths as planner data, as torch's
C.save({"m": {"x": M.ones(1)}}, checkpoint_id=ck + "/c")
assert C.FileSystemReader(ck + "/c").read_metadata().planner_data == {"m.x": ("m", "x")}

# the default group's store is torch's PrefixStore ("0/" under "default_pg")
store = dist.distributed_c10d._get_default_store()
assert type(store).__name__ == "PrefixStore", type(store)
store.set(f"k{RANK}", "v")
dist.barrier()
raw = store.underlying_store.underlying_store
assert raw.get(f"default_pg/0//k{1 - RANK}") == b"v"

# renamed collectives warn as torch 2.13; the new names and ember's own callers do not
out = M.zeros(2 * WORLD)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.all_gather_into_tensor(out, M.ones(2) * RANK)
    dist.reduce_scatter_tensor(M.zeros(2), M.ones(2 * WORLD))
    dist.all_gather_single(out, M.ones(2) * RANK)
    dist.reduce_scatter_single(M.zeros(2), M.ones(2 * WORLD))
    T.distribute_tensor(M.ones(4, 2), mesh, [T.Shard(0)]).full_tensor()
texts = [(c.category.__name__, str(c.message)) for c in caught if "distributed" in str(c.message)]
assert texts == [
    ("FutureWarning", "`torch.distributed.all_gather_into_tensor` is deprecated. "
                      "Please use `torch.distributed.all_gather_single` instead."),
    ("FutureWarning", "`torch.distributed.reduce_scatter_tensor` is deprecated. "
                      "Please use `torch.distributed.reduce_scatter_single` instead."),
], texts
assert out.tolist() == [float(r) for r in range(WORLD) for _ in range(2)]

# mean over a sharded dim: Partial(avg) of the local means, as torch; the gradient of every
# element is 1/(global count)
x = M.arange(16.0).reshape(8, 2)
dx = T.distribute_tensor(x, mesh, [T.Shard(0)]).requires_grad_()
m = dx.mean()
assert m.placements == (T.Partial("avg"),), m.placements
assert abs(m.full_tensor().item() - 7.5) < 1e-6
m.full_tensor().backward()
assert dx.grad.full_tensor().tolist() == [[1 / 16] * 2] * 8, dx.grad.full_tensor()
m0 = T.distribute_tensor(x, mesh, [T.Shard(0)]).mean(0)
assert m0.placements == (T.Partial("avg"),) and m0.full_tensor().tolist() == [7.0, 8.0]
if not AGAINST_TORCH:  # unequal pieces: ember keeps the exact Partial(sum) of divided pieces
    u = T.distribute_tensor(M.arange(6.0).reshape(3, 2), mesh, [T.Shard(0)]).mean()
    assert u.placements == (T.Partial("sum"),) and abs(u.full_tensor().item() - 2.5) < 1e-6

# a write several ranks plan goes to the rank with the fewest bytes planned (torch's dedup)
class Plans(C.DefaultSavePlanner):
    def create_global_plan(self, all_plans):
        plans, md = super().create_global_plan(all_plans)
        self.kept = [sorted(i.index.fqn for i in p.items) for p in plans]
        return plans, md

planner = Plans()
sd = {"w": T.distribute_tensor(M.ones(4, 4), mesh, [T.Shard(0)]), "r": M.ones(3), "v": 1.5}
C.save(sd, checkpoint_id=ck + "/d", planner=planner)
if RANK == 0:
    assert planner.kept == [["w"], ["r", "v", "w"]], planner.kept

# the default group's ranks are global ranks, unchecked (torch's identity); the old name warns
W = dist.group.WORLD
assert dist.get_global_rank(W, 9) == 9 and dist.get_group_rank(W, 9) == 9
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert dist.distributed_c10d._get_global_rank(dist.group.WORLD, 1) == 1
assert [c.category for c in caught] == [FutureWarning], caught

# DeviceMesh prints as torch's; a wrong name raises torch's KeyError
m2 = imp("distributed.device_mesh").init_device_mesh("cpu", (1, WORLD), mesh_dim_names=("a", "b"))
assert repr(m2) == "DeviceMesh((a=1, b=2), 'cpu', stride=((), 1))", repr(m2)
assert repr(mesh) == "DeviceMesh((2,), 'cpu', stride=(1,))", repr(mesh)
try:
    m2["zz"]
    raise AssertionError("an unknown mesh dim name was accepted")
except KeyError as e:
    want = "Invalid mesh_dim_names ('zz',) specified. Valid mesh_dim_names are ['a', 'b']."
    assert want in str(e), e

# FSDP2: unshard() of a module whose parameters all belong to its children gathers nothing
F = imp("distributed.fsdp")
seq = M.nn.Sequential(M.nn.Linear(2, 2), M.nn.Linear(2, 2))
for layer in seq:
    F.fully_shard(layer)
F.fully_shard(seq)
seq.unshard()
seq.reshard()
assert type(seq[0].weight).__name__ == "DTensor"

# DDP refuses the bf16 hooks on the CPU, as torch
H = imp("distributed.algorithms.ddp_comm_hooks.default_hooks")
ddp = M.nn.parallel.DistributedDataParallel(M.nn.Linear(2, 2))
for hook in (H.bf16_compress_hook, H.bf16_compress_wrapper(H.allreduce_hook)):
    try:
        ddp.register_comm_hook(None, hook)
        raise AssertionError("a bf16 hook was accepted")
    except TypeError as e:
        assert "BF16 all reduce communication hook required" in str(e), e

# DDPCommHookType names the hooks and register_ddp_comm_hook puts one on a DDP model: the
# gradient is still the mean over the ranks (PowerSGD compresses only from its 1000th step)
K = imp("distributed.algorithms.ddp_comm_hooks")
assert [t.name for t in K.DDPCommHookType][:3] == ["ALLREDUCE", "FP16_COMPRESS", "BF16_COMPRESS"]
for kind in ("ALLREDUCE", "FP16_COMPRESS", "POWER_SGD", "BATCHED_POWER_SGD_RANK2"):
    lin = M.nn.Linear(2, 1)
    ddp = M.nn.parallel.DistributedDataParallel(lin)
    K.register_ddp_comm_hook(K.DDPCommHookType[kind], ddp, None)
    ddp(M.ones(1, 2) * (RANK + 1)).sum().backward()
    assert lin.weight.grad.tolist() == [[1.5, 1.5]], (kind, lin.weight.grad)
print("OK", flush=True)
"""


def test_group_dcp_store_deprecations_mean(tmp_path):
    for code, out in run_workers(tmp_path, GROUP, 2, timeout=120, env={"CKPT_DIR": str(tmp_path)}):
        assert "OK" in out, out


# -- killed ranks: the test fails fast instead of waiting for the others' timeout

DIES = """
import time
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
if RANK == 1:
    sys.exit(7)
time.sleep(300)
"""


def test_a_failed_rank_ends_the_run_at_once(tmp_path):
    """Rank 0 would sleep for 300 s: the run ends as soon as rank 1 failed, naming it (not
    with the 240 s timeout's "still running")."""
    with pytest.raises(AssertionError, match="rank 1 exited with 7") as e:
        run_workers(tmp_path, DIES, 2, timeout=240)
    assert "rank 0 exited with -9" in str(e.value), e.value
