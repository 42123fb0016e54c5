"""Session 13 of ember.distributed: TCPStore's num_keys and error texts as torch 2.13's (its
internal "init/" key counted, keys named under "/", the send and recv failures of a store whose
server has gone), the launcher's elastic `--nnodes MIN:MAX`, and the fixes found by running
programs from torch.distributed's documentation under both libraries. Each comparison with torch
runs the same calls on both libraries in this process; the multi-rank checks share one spawned
group per test."""

import datetime
import importlib
import os
import socket
import subprocess
import sys
import tempfile
import textwrap

import pytest
from _dist_util import module_name

LIBS = ["ember"]
try:
    import torch.distributed  # noqa: F401

    LIBS.append("torch")
except ImportError:
    pass


def _dist(lib):
    return importlib.import_module(lib + ".distributed")


def _store_trace(lib):
    """num_keys after each of a sequence of calls, and the timeout errors' texts."""
    d = _dist(lib)
    t = datetime.timedelta(seconds=0.3)
    out = []
    server = d.TCPStore("127.0.0.1", 0, 1, True, t, wait_for_workers=False)
    out.append(server.num_keys())  # nobody waited for workers: no init key
    server.set("a", "1")
    server.add("c", 1)
    out.append(server.num_keys())
    server.delete_key("a")
    client = d.TCPStore("127.0.0.1", server.port, 1, False, t)  # waits: torch's "init/"
    out.append(client.num_keys())
    client.delete_key("init/")  # a user's "init/" is another key than the internal one
    out.append(client.num_keys())
    client.set("init/", "x")
    prefix = d.PrefixStore("pre", client)
    prefix.set("k", "v")
    out.append((client.num_keys(), prefix.num_keys(), client.get("init/")))
    for call in (
        lambda: server.get("missing"),
        lambda: client.wait(["x", "y"], datetime.timedelta(seconds=0.2)),
        lambda: prefix.get("q"),
        lambda: client.get(""),
    ):
        with pytest.raises(d.DistStoreError) as e:
            call()
        out.append(str(e.value))
    waiting = d.TCPStore("127.0.0.1", 0, 1, True, t)  # the server waited for one worker
    out.append(waiting.num_keys())
    with tempfile.TemporaryDirectory() as tmp:
        f = d.FileStore(os.path.join(tmp, "fs"), 1)  # the count of the file's users is a key
        out.append(f.num_keys())
        f.set("a", "b")
        out.append(f.num_keys())
        del f
    h = d.HashStore()
    h.set("a", "b")
    out.append(h.num_keys())
    return out


def test_store_num_keys_and_timeout_keys_as_torch():
    got = _store_trace("ember")
    assert got[:5] == [0, 2, 2, 2, (4, 4, b"x")], got
    assert got[5] == "wait timeout after 300ms, keys: /missing", got[5]
    assert got[6] == "wait timeout after 200ms, keys: /x, /y", got[6]
    assert got[7] == "wait timeout after 300ms, keys: /pre/q", got[7]
    assert got[8] == "wait timeout after 300ms, keys: /", got[8]
    assert got[9:] == [1, 1, 2, 1], got
    if "torch" in LIBS:
        assert got == _store_trace("torch")


def _server_gone(lib):
    d = _dist(lib)
    t = datetime.timedelta(seconds=2)
    server = d.TCPStore("127.0.0.1", 0, 1, True, t, wait_for_workers=False)
    client = d.TCPStore("127.0.0.1", server.port, 1, False, t, wait_for_workers=False)
    client.set("k", "v")
    assert client.get("k") == b"v"  # the server has read every request: it closes cleanly
    del server  # the server goes away under a connected client
    out = []
    for call in (lambda: client.get("k"), lambda: client.set("z", "1"), client.num_keys):
        with pytest.raises(d.DistNetworkError) as e:
            call()
        out.append(str(e.value))
    return out


def test_store_server_gone_send_and_recv_wording():
    # the first request's bytes leave before the server's close is seen: its answer never
    # comes (recv); the next ones cannot be sent (EPIPE). ember names the call and the server
    # after torch's text.
    got = _server_gone("ember")
    recv = "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server "
    recv += "shutdown or crash?"
    assert got[0].startswith(recv) and "TCPStore.get to (127.0.0.1, " in got[0], got[0]
    assert got[1].startswith("Broken pipe") and "TCPStore.set to (127.0.0.1, " in got[1], got[1]
    assert got[2].startswith("Broken pipe") and "TCPStore.num_keys" in got[2], got[2]
    if "torch" in LIBS:
        want = _server_gone("torch")
        assert [g[: len(w)] for g, w in zip(got, want)] == want, (got, want)


# -- the launcher's elastic --nnodes MIN:MAX

ENV_SCRIPT = """
import os, sys
M = __import__(os.environ["DIST_TEST_MODULE"])
import importlib
dist = importlib.import_module(M.__name__ + ".distributed")
dist.init_process_group("gloo")
t = M.ones(1)
dist.all_reduce(t)
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "LOCAL_WORLD_SIZE"]
print("ENV", " ".join(f"{k}={os.environ[k]}" for k in keys), "SUM", int(t.item()), flush=True)
dist.destroy_process_group()
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(lib, script, flags, nodes=1, timeout=90):
    launcher = "torch.distributed.run" if lib == "torch" else "ember.distributed.run"
    env = dict(os.environ, DIST_TEST_MODULE=lib, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", launcher, *flags, str(script)]
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(nodes)
    ]
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail(f"launcher still running after {timeout}s")
        outs.append((p.returncode, out, err))
    return outs


def _envs(outs):
    lines = []
    for code, out, err in outs:
        assert code == 0, out + err
        for line in out.splitlines():
            if "ENV " in line:
                lines.append(line[line.index("ENV ") :])
    return sorted(lines)


def test_launcher_elastic_nnodes(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(ENV_SCRIPT))
    libs = ["ember"] + (["torch"] if "torch" in LIBS and module_name() == "torch" else [])
    for lib in libs:
        # one node of 1:2: the rendezvous waits last_call_timeout for a second, then runs alone
        port = _free_port()
        flags = ["--nnodes", "1:2", "--nproc-per-node", "2", "--rdzv-backend", "c10d"]
        flags += ["--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-conf", "last_call_timeout=1"]
        got = _envs(_launch(lib, script, flags))
        want = "WORLD_SIZE=2 GROUP_RANK=0 GROUP_WORLD_SIZE=1 LOCAL_WORLD_SIZE=2 SUM 2"
        assert got == [f"ENV RANK={r} LOCAL_RANK={r} {want}" for r in range(2)], (lib, got)
        # two nodes of 1:2 on one endpoint: MAX joined, so it closes with both
        port = _free_port()
        flags = ["--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-backend", "c10d"]
        flags += ["--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-conf", "last_call_timeout=20"]
        got = _envs(_launch(lib, script, flags, nodes=2))
        want = "WORLD_SIZE=2 GROUP_RANK={0} GROUP_WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 SUM 2"
        assert got == [f"ENV RANK={r} LOCAL_RANK=0 " + want.format(r) for r in range(2)], got


def test_launcher_nnodes_refuses_a_bad_range(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text("print('never')\n")
    ((code, out, err),) = _launch("ember", script, ["--nnodes", "2:1"], timeout=60)
    assert code != 0 and "--nnodes must be N or MIN:MAX" in err, err


# -- the documentation probe's fixes, on one spawned group of 2 ranks (also under torch with
# EMBER_TEST_AGAINST=torch)

PROBE_FIXES = """
import copy, io, warnings
warnings.filterwarnings("ignore")
from importlib import import_module
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
imp = lambda name: import_module(M.__name__ + "." + name)

# non-contiguous tensors in the collectives (torch's gloo reduces a contiguous copy and copies
# the result back); all_to_all_single refuses them with torch's ValueError
nc = lambda: (M.arange(6.0).reshape(2, 3) * (RANK + 1)).t()
t = nc()
dist.all_reduce(t)
assert t.tolist() == (M.arange(6.0).reshape(2, 3) * 3).t().tolist(), t
t = nc()
dist.broadcast(t, src=1)
assert t.tolist() == (M.arange(6.0).reshape(2, 3) * 2).t().tolist(), t
outs = [nc() for _ in range(WORLD)]
dist.all_gather(outs, M.ones(3, 2) * RANK)
assert [o.tolist() for o in outs] == [[[float(r)] * 2] * 3 for r in range(WORLD)], outs
big = M.zeros(2, 3 * WORLD).t()
dist.all_gather_into_tensor(big, M.ones(3, 2).t().contiguous().t() * RANK)
assert big.tolist() == [[float(r)] * 2 for r in range(WORLD) for _ in range(3)], big
try:
    dist.all_to_all_single(M.zeros(3, 2), nc())
    raise AssertionError("a non-contiguous all_to_all_single was accepted")
except ValueError as e:
    assert "Tensors must be contiguous" in str(e), e

# complex sums; other reductions refuse them as torch does
z = M.tensor([1 + 2j, 3 - 1j]) * (RANK + 1)
dist.all_reduce(z)
assert z.tolist() == [3 + 6j, 9 - 3j], z
zs = M.zeros(1, dtype=M.complex64)
dist.reduce_scatter_tensor(zs, M.tensor([1j, 2.0 + 0j]) * (RANK + 1))
assert zs.tolist() == [[3j, 6 + 0j][RANK]], zs
try:
    dist.all_reduce(M.tensor([1j]), op=dist.ReduceOp.MAX)
    raise AssertionError("MAX of complex tensors was accepted")
except ValueError as e:
    assert "all_reduce does not support RedOpType.MAX on complex tensors" in str(e), e

# the default group's store
store = dist.distributed_c10d._get_default_store()
store.set(f"k{RANK}", str(RANK))
dist.barrier()
assert store.get(f"k{1 - RANK}") == str(1 - RANK).encode()

# placements print as torch's (S(0), R, P(sum)), repr unchanged
T = imp("distributed.tensor")
assert [str(p) for p in (T.Shard(0), T.Replicate(), T.Partial())] == ["S(0)", "R", "P(sum)"]
assert repr(T.Shard(1)) == "Shard(dim=1)" and repr(T.Replicate()) == "Replicate()"

# parallelize_module: the plan key "" is the module itself
P = imp("distributed.tensor.parallel")
mesh = imp("distributed.device_mesh").init_device_mesh("cpu", (WORLD,))
class Blk(M.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = M.nn.Linear(4, 4)
    def forward(self, x):
        return self.l(x)
blk = Blk()
with M.no_grad():
    blk.l.weight.copy_(M.arange(16.0).reshape(4, 4) / 10)
    blk.l.bias.zero_()
P.parallelize_module(blk, mesh, {
    "": P.PrepareModuleInput(input_layouts=(T.Shard(0),), desired_input_layouts=(T.Replicate(),)),
    "l": P.ColwiseParallel(),
})
x = M.arange(8.0).reshape(2, 4) + RANK       # this rank's rows of the whole batch
y = blk(x)
whole = M.cat([M.arange(8.0).reshape(2, 4) + r for r in range(WORLD)])
want = whole @ (M.arange(16.0).reshape(4, 4) / 10).t()
got = y.to_local() if hasattr(y, "to_local") else y
mine = np.array(want.tolist())[:, 2 * RANK : 2 * RANK + 2]   # ColwiseParallel: my columns
np.testing.assert_allclose(np.array(got.tolist()), mine, rtol=1e-5)

# DeviceMesh.from_group: the mesh of an existing group, no new group made
dm = imp("distributed.device_mesh")
gm = dm.DeviceMesh.from_group(dist.group.WORLD, "cpu")
assert gm.size() == WORLD and gm.get_local_rank() == RANK and gm.mesh.tolist() == list(range(WORLD))
assert gm.get_group() is dist.group.WORLD

# clip_grad_norm_ of DTensor gradients returns the norm as a replicated DTensor, as torch's
F = imp("distributed.fsdp")
net = M.nn.Linear(4, 4)
with M.no_grad():
    net.weight.copy_(M.arange(16.0).reshape(4, 4) / 10)
    net.bias.fill_(0.5)
F.fully_shard(net)
net(M.ones(2, 4)).sum().backward()
norm = M.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
assert type(norm).__name__ == "DTensor" and norm.placements == (T.Replicate(),), norm
full = np.sqrt(20 * 2.0**2)   # every gradient element is 2 (the batch of two ones)
np.testing.assert_allclose(norm.full_tensor().item(), full, rtol=1e-5)
after = sum(float((p.grad.full_tensor() ** 2).sum()) for p in net.parameters()) ** 0.5
np.testing.assert_allclose(after, 1.0, rtol=1e-4)

# ZeroRedundancyOptimizer(overlap_with_ddp=True) constructs; the DDP hooks that would step it
# refuse Gloo, as torch's
Z = imp("distributed.optim").ZeroRedundancyOptimizer
hz = imp("distributed.algorithms.ddp_comm_hooks.ddp_zero_hook")
dh = imp("distributed.algorithms.ddp_comm_hooks.default_hooks")
ddp = M.nn.parallel.DistributedDataParallel(M.nn.Linear(2, 2))
zero = Z(ddp.parameters(), optimizer_class=M.optim.SGD, overlap_with_ddp=True, lr=0.1)
for fn in (hz.hook_with_zero_step, hz.hook_with_zero_step_interleaved):
    try:
        fn(dh.allreduce_hook, ddp, zero)
        raise AssertionError("the ZeRO hook accepted Gloo")
    except RuntimeError as e:
        assert "Gloo backend using Overlapping DDP with ZeRO may meet hangs" in str(e), e
plain = Z(ddp.parameters(), optimizer_class=M.optim.SGD, lr=0.1)
try:
    hz.hook_with_zero_step(dh.allreduce_hook, ddp, plain)
    raise AssertionError("the ZeRO hook accepted an optimizer without overlap_with_ddp")
except ValueError as e:
    assert "overlap_with_ddp=True" in str(e), e

# distributed checkpoint: planners subclassed as torch's docs show
C = imp("distributed.checkpoint")
WIT = imp("distributed.checkpoint.planner").WriteItemType
ck = os.path.join(os.environ["CKPT_DIR"], "ck")

class Renamer(C.DefaultSavePlanner):          # rewrites the state dict's keys
    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        super().set_up_planner({"foo_" + k: v for k, v in state_dict.items()}, storage_meta,
                               is_coordinator)

class Half(C.DefaultSavePlanner):             # changes the plan and the data together
    def create_local_plan(self):
        plan = super().create_local_plan()
        for item in plan.items:
            if item.tensor_data is not None:
                item.tensor_data.properties.dtype = M.float16
        return plan
    def resolve_data(self, write_item):
        data = super().resolve_data(write_item)
        return data if write_item.type == WIT.BYTE_IO else data.to(M.float16)

class Extra(C.DefaultSavePlanner):            # planner data through the global step
    def create_local_plan(self):
        return dataclasses.replace(super().create_local_plan(), planner_data=f"rank{RANK}")
    def create_global_plan(self, all_plans):
        plans, md = super().create_global_plan(all_plans)
        Extra.merged = [p.planner_data for p in plans]
        return plans, md

import dataclasses
w = T.distribute_tensor(M.arange(12.0).reshape(4, 3), mesh, [T.Shard(0)])
C.save({"w": w, "step": 3}, checkpoint_id=ck + "1", planner=Renamer())
md = C.FileSystemReader(ck + "1").read_metadata()
assert sorted(md.state_dict_metadata) == ["foo_step", "foo_w"], md.state_dict_metadata
tm = md.state_dict_metadata["foo_w"]
assert list(tm.size) == [4, 3] and tm.properties.dtype == M.float32, tm
assert sorted(list(c.offsets) for c in tm.chunks) == [[0, 0], [2, 0]], tm.chunks
back = {"foo_w": T.distribute_tensor(M.zeros(4, 3), mesh, [T.Shard(1)]), "foo_step": 0}
C.load(back, checkpoint_id=ck + "1")
assert back["foo_w"].full_tensor().tolist() == M.arange(12.0).reshape(4, 3).tolist()
assert back["foo_step"] == 3, back

C.save({"a": M.arange(3.0) / 3}, checkpoint_id=ck + "2", planner=Half())
md = C.FileSystemReader(ck + "2").read_metadata()
assert md.state_dict_metadata["a"].properties.dtype == M.float16
half = {"a": M.zeros(3, dtype=M.float16)}
C.load(half, checkpoint_id=ck + "2")
assert half["a"].tolist() == (M.arange(3.0) / 3).to(M.float16).tolist(), half

# (torch's default planner keeps its key mappings in planner_data when it flattens)
C.save({"a": M.ones(2)}, checkpoint_id=ck + "3", planner=Extra(flatten_state_dict=False))
if RANK == 0:
    assert Extra.merged == [f"rank{r}" for r in range(WORLD)], Extra.merged

class LoadRenamer(C.DefaultLoadPlanner):      # loads foo_<k> into <k>, values via load_bytes
    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        self.original_state_dict = state_dict
        self.state_dict = {"foo_" + k: v for k, v in state_dict.items()}
        self.mappings = {k: (self.state_dict, k) for k in self.state_dict}
        self.metadata = metadata
        self.is_coordinator = is_coordinator
        self.seen = sorted(metadata.state_dict_metadata)
    def load_bytes(self, read_item, value):
        self.original_state_dict[read_item.dest_index.fqn[4:]] = M.load(value, weights_only=False)

class Fresh(C.DefaultLoadPlanner):            # reads into new tensors, then keeps them
    def resolve_tensor(self, read_item):
        return M.empty_like(super().resolve_tensor(read_item))
    def commit_tensor(self, read_item, tensor):
        self.state_dict[read_item.dest_index.fqn] = tensor

lr = LoadRenamer()
got = {"w": T.distribute_tensor(M.zeros(4, 3), mesh, [T.Shard(0)]), "step": 0}
C.load(got, checkpoint_id=ck + "1", planner=lr)
assert lr.seen == ["foo_step", "foo_w"] and got["step"] == 3, (lr.seen, got)
assert got["w"].full_tensor().tolist() == M.arange(12.0).reshape(4, 3).tolist()
fresh = Fresh()
keep = M.zeros(2)
C.load({"a": keep}, checkpoint_id=ck + "3", planner=fresh)
assert keep.tolist() == [0.0, 0.0] and fresh.state_dict["a"].tolist() == [1.0, 1.0]
print("OK")
"""


def test_docs_probe_fixes(tmp_path):
    from _dist_util import run_workers

    for _, out in run_workers(
        tmp_path, PROBE_FIXES, 2, timeout=120, env={"CKPT_DIR": str(tmp_path)}
    ):
        assert "OK" in out, out


# -- a rank killed mid-step: the others raise (never hang), in FSDP2's backward and in a DCP save

KILLED = """
import signal, time
from importlib import import_module
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
nn = M.nn
def die(*_):
    if RANK == 1:
        os.kill(os.getpid(), signal.SIGKILL)
try:
    if os.environ["WHERE"] == "fsdp2":
        F = import_module(M.__name__ + ".distributed.fsdp")
        m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        F.fully_shard(m[0])
        F.fully_shard(m)
        out = m(M.ones(2, 8))
        out.register_hook(die)        # rank 1 dies inside backward, the others are in collectives
        out.sum().backward()
    else:
        C = import_module(M.__name__ + ".distributed.checkpoint")
        class Dies(C.DefaultSavePlanner):   # rank 1 dies while writing its data (its own key)
            def resolve_data(self, write_item):
                die()
                return super().resolve_data(write_item)
        C.save({f"w{RANK}": M.ones(4)}, checkpoint_id=os.environ["CKPT_DIR"] + "/k", planner=Dies())
    print("NO ERROR", flush=True)
except RuntimeError as e:
    print("RAISED", type(e).__name__, str(e).splitlines()[0][:200], flush=True)
"""


@pytest.mark.parametrize("where", ["fsdp2", "dcp"])
def test_killed_rank_mid_step_makes_the_others_raise(tmp_path, where):
    from _dist_util import run_workers

    env = {"WHERE": where, "CKPT_DIR": str(tmp_path)}
    results = run_workers(tmp_path, KILLED, 3, timeout=90, env=env, expect_ok=False)
    assert results[1][0] == -9, results[1]
    for rank in (0, 2):
        code, out = results[rank]
        assert "RAISED" in out and "NO ERROR" not in out, (rank, out)
