"""Session 12 of ember.distributed: store and network failures raise torch's DistError family
(DistStoreError, DistNetworkError; all RuntimeErrors); the Store and c10d names torch's docs
use (append, multi_get/multi_set, barrier; all_gather_single, reduce_scatter_single,
record_comm, ...); and FSDP1's remaining pieces over one
spawned group of 4 ranks: LOCAL_STATE_DICT, torch's refusal of 0-d parameters,
summon_full_params(with_grads=True), HYBRID_SHARD from a (shard group, replicate group) pair and
the full optimizer state dict functions (full_optim_state_dict, shard_/scatter_full_optim_state_
dict, rekey_optim_state_dict), each against single-process training on the whole batch. With
EMBER_TEST_AGAINST=torch the same checks run against torch."""

import datetime
import socket

import pytest
from _dist_util import module_name, run_workers


def _dist():
    return __import__(module_name() + ".distributed", fromlist=["_"])


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dist_error_classes_subclass_as_torch():
    d = _dist()
    assert issubclass(d.DistError, RuntimeError)
    for name in ("DistBackendError", "DistStoreError", "DistNetworkError"):
        cls = getattr(d, name)
        assert cls.__bases__ == (d.DistError,), (name, cls.__mro__)
        assert cls.__module__ == module_name() + ".distributed", cls.__module__


def test_store_timeouts_raise_dist_store_error(tmp_path):
    d = _dist()
    second = datetime.timedelta(seconds=0.3)
    server = d.TCPStore("127.0.0.1", 0, 1, True, second, wait_for_workers=False)
    with pytest.raises(d.DistStoreError, match=r"wait timeout after 300ms, keys: .*missing"):
        server.get("missing")
    with pytest.raises(d.DistStoreError, match=r"wait timeout after 300ms, keys: .*a, .*b"):
        server.wait(["a", "b"], second)
    hash_store = d.HashStore()
    hash_store.set_timeout(second)
    prefix = d.PrefixStore("pre", hash_store)
    file_store = d.FileStore(str(tmp_path / "fs"), 1)
    file_store.set_timeout(second)
    for store in (hash_store, prefix):  # torch's HashStore texts
        with pytest.raises(d.DistStoreError, match="^Wait timeout$"):
            store.get("x")
        with pytest.raises(d.DistStoreError, match="^Wait timeout$"):
            store.wait(["x", "y"], datetime.timedelta(milliseconds=50))
    # torch's FileStore raises plain RuntimeErrors
    with pytest.raises(RuntimeError) as e:
        file_store.get("x")
    assert type(e.value) is RuntimeError
    assert str(e.value) == "Timeout waiting for key: x after 300 ms"
    with pytest.raises(RuntimeError) as e:
        file_store.wait(["x"], datetime.timedelta(milliseconds=50))
    assert type(e.value) is RuntimeError and str(e.value) == "Wait timeout"


def test_network_failures_raise_dist_network_error():
    d = _dist()
    second = datetime.timedelta(seconds=0.5)
    port = _closed_port()
    with pytest.raises(d.DistNetworkError) as e:
        d.TCPStore("127.0.0.1", port, 1, False, second)
    want = "The client socket has timed out after 500ms while trying to connect to (127.0.0.1, "
    assert want + f"{port})" in str(e.value), e.value
    server = d.TCPStore("127.0.0.1", 0, 1, True, second, wait_for_workers=False)
    client = d.TCPStore("127.0.0.1", server.port, 1, False, second)
    client.set("k", "v")
    del server  # the server goes away under a connected client
    with pytest.raises(d.DistNetworkError, match="Did the remote server shutdown or crash"):
        client.get("k")


FSDP_BODY = """
import copy, warnings
warnings.filterwarnings("ignore")
from importlib import import_module
fsdp = import_module(M.__name__ + ".distributed.fsdp")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
FSDP = fsdp.FullyShardedDataParallel
SS = fsdp.ShardingStrategy
SDT = fsdp.StateDictType
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
CPU = M.device("cpu")

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(5, 6)
        self.b = nn.Linear(6, 3)   # 3 rows over 2 or 4 ranks: unequal and empty pieces
        self.register_buffer("scale", M.ones(3))

    def forward(self, x):
        return self.b(F.relu(self.a(x))) * self.scale

def arr(t):
    return np.asarray(t.detach().tolist() if hasattr(t, "detach") else t)

def close(a, b, msg=""):
    np.testing.assert_allclose(arr(a), arr(b), rtol=1e-4, atol=1e-6, err_msg=msg)

def batch(seed, n):
    g = M.Generator().manual_seed(seed)
    return M.randn(n * WORLD, 5, generator=g), M.randint(0, 3, (n * WORLD,), generator=g)

def step(model, opt, x, y, part, n):
    loss = F.cross_entropy(model(x[n * part : n * part + n]), y[n * part : n * part + n])
    opt.zero_grad()
    loss.backward()
    opt.step()

# -- torch.distributed's newer names, run as the examples of its docs do
ex = M.zeros(WORLD * 2, dtype=M.int64)
dist.all_gather_single(ex, M.arange(2) + 2 * RANK)
assert ex.tolist() == list(range(2 * WORLD)), ex
rs = M.zeros(2, dtype=M.int64)
dist.reduce_scatter_single(rs, M.arange(2 * WORLD))
assert rs.tolist() == [WORLD * (2 * RANK), WORLD * (2 * RANK + 1)], rs
with dist.record_comm("named all_reduce"):
    one = M.ones(1)
    dist.all_reduce(one)
assert one.item() == WORLD
objs = ["foo", 12, {1: 2}, None, None]          # longer than the world: the rest is kept
out = [None] * (WORLD + 1)
dist.all_gather_object(out, objs[RANK])
assert out == objs[:WORLD] + [None], out
assert dist.get_backend_config() == "cpu:gloo,cuda:gloo", dist.get_backend_config()
g_dev = dist.new_group(list(range(WORLD)), backend="cpu:gloo")  # a backend per device type
assert dist.get_backend(g_dev) == "cpu:gloo" and dist.get_backend_config(g_dev) == "cpu:gloo"
assert dist.get_backend() == "gloo"
assert dist.get_default_backend_for_device("cpu") == "gloo"
assert not dist.supports_complex(dist.ReduceOp.MAX) and dist.supports_complex(dist.ReduceOp.SUM)
assert not dist.is_xccl_available()
assert issubclass(dist.QueueEmptyError, dist.DistStoreError)
try:  # the docs' 4-rank all_to_all example on another world size: torch's RuntimeError
    dist.all_to_all([M.zeros(1) for _ in range(WORLD + 1)], [M.ones(1)] * (WORLD + 1))
    raise AssertionError("all_to_all with too many tensors returned")
except RuntimeError as e:
    assert f"tensor list size {WORLD + 1} does not match world size {WORLD}" in str(e), e

# -- 0-d parameters: torch's FSDP1 refuses them
holder = nn.Module()
holder.w = nn.Parameter(M.tensor(2.0))
try:
    FSDP(holder, device_id=CPU)
    raise AssertionError("a 0-d parameter was accepted")
except ValueError as e:
    assert "FSDP doesn't support scalar parameters. Change w to a 1D tensor" in str(e), e

# -- training against one process on the whole batch (Adam, 2 steps)
M.manual_seed(0)
ref = Net()
model = FSDP(copy.deepcopy(ref), use_orig_params=True, device_id=CPU)
opt_ref = M.optim.Adam(ref.parameters(), lr=1e-2)
opt = M.optim.Adam(model.parameters(), lr=1e-2)
for s in range(2):
    x, y = batch(s, 2)
    step(ref, opt_ref, x, y, 0, 2 * WORLD)
    step(model, opt, x, y, RANK, 2)

# summon_full_params(with_grads=True): whole parameters and whole (averaged) gradients
with FSDP.summon_full_params(model, with_grads=True):
    got = {n: (p.detach().clone(), p.grad.clone()) for n, p in model.named_parameters()}
for n, p in ref.named_parameters():
    close(got[n][0], p, "summoned " + n)
    close(got[n][1], p.grad, "summoned grad " + n)
plain = FSDP(copy.deepcopy(ref), device_id=CPU)   # use_orig_params=False: torch refuses
try:
    with FSDP.summon_full_params(plain, with_grads=True):
        pass
    raise AssertionError("with_grads on flat parameters was accepted")
except NotImplementedError as e:
    assert "with_grads=True, use_orig_params=False" in str(e), e

# full_optim_state_dict: whole tensors by name (on rank 0), as the single process's state
names = [n for n, _ in ref.named_parameters()]
want = copy.deepcopy(opt_ref.state_dict())   # (load_state_dict may keep the tensors it gets)
full = FSDP.full_optim_state_dict(model, opt)
if RANK == 0:
    assert sorted(full["state"]) == sorted(names), list(full["state"])
    assert full["param_groups"][0]["params"] == names, full["param_groups"]
    for j, n in enumerate(names):
        # torch 2.13's CPU full_optim_state_dict returns exp_avg equal to exp_avg_sq (its
        # gathered buffers alias), so exp_avg is compared on ember only
        for k in ("exp_avg_sq", "step") if AGAINST_TORCH else ("exp_avg", "exp_avg_sq", "step"):
            close(full["state"][n][k], want["state"][j][k], f"full {n} {k}")
else:
    assert full == {}, full
everywhere = FSDP.full_optim_state_dict(model, opt, rank0_only=False)
assert sorted(everywhere["state"]) == sorted(names)

# rekey: names -> ids of the unwrapped model, and back
by_id = FSDP.rekey_optim_state_dict(everywhere, fsdp.OptimStateKeyType.PARAM_ID, ref)
assert sorted(by_id["state"]) == list(range(len(names))), list(by_id["state"])
assert by_id["param_groups"][0]["params"] == list(range(len(names)))
for j in range(len(names)):
    close(by_id["state"][j]["exp_avg_sq"], want["state"][j]["exp_avg_sq"], f"rekeyed {j}")
by_name = FSDP.rekey_optim_state_dict(want, fsdp.OptimStateKeyType.PARAM_NAME, ref)
assert sorted(by_name["state"]) == sorted(names)
assert sorted(by_name["param_groups"][0]["params"]) == sorted(names)  # torch sorts them

# shard_/scatter_full_optim_state_dict of the single process's state (by name): a fresh FSDP
# model and optimizer carry on training as the single process does

for how in ("shard", "scatter"):
    again = FSDP(copy.deepcopy(ref), use_orig_params=True, device_id=CPU)
    opt2 = M.optim.Adam(again.parameters(), lr=1e-2)
    if how == "shard":
        osd = FSDP.shard_full_optim_state_dict(copy.deepcopy(by_name), again)
    else:
        osd = FSDP.scatter_full_optim_state_dict(
            copy.deepcopy(by_name) if RANK == 0 else None, again)
    mine = opt.state_dict()["state"]   # the FSDP optimizer trained alongside: the same state
    assert sorted(osd["state"]) == sorted(mine), (sorted(osd["state"]), sorted(mine))
    for j in mine:
        for k in mine[j]:
            close(osd["state"][j][k], mine[j][k], f"{how} {j} {k}")
    opt2.load_state_dict(osd)
    ref2 = copy.deepcopy(ref)
    opt_ref2 = M.optim.Adam(ref2.parameters(), lr=1e-2)
    opt_ref2.load_state_dict(copy.deepcopy(want))
    x, y = batch(7, 2)
    step(ref2, opt_ref2, x, y, 0, 2 * WORLD)
    step(again, opt2, x, y, RANK, 2)
    with FSDP.state_dict_type(again, SDT.FULL_STATE_DICT):
        sd = again.state_dict()
    for n, v in ref2.state_dict().items():
        close(sd[n], v, f"{how} then step {n}")

# LOCAL_STATE_DICT: the flat shard under `_flat_param`, the buffers by name; it loads into
# another model of the same layout
M.manual_seed(5)
other = FSDP(Net(), device_id=CPU)
with FSDP.state_dict_type(plain, SDT.LOCAL_STATE_DICT):
    local = plain.state_dict()
    assert list(local) == ["_flat_param", "scale"], list(local)
    flat = local["_flat_param"]
    assert type(flat).__name__ in ("DTensor", "ShardedTensor"), type(flat)
with FSDP.state_dict_type(other, SDT.LOCAL_STATE_DICT):
    other.load_state_dict(local)
with FSDP.state_dict_type(other, SDT.FULL_STATE_DICT):
    for n, v in other.state_dict().items():
        close(v, ref.state_dict()[n], "local round trip " + n)

# HYBRID_SHARD from (shard group, replicate group): rows {0,1} {2,3} shard, columns replicate
if WORLD == 4:
    rows = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    cols = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    pair = (rows[RANK // 2], cols[RANK % 2])
    M.manual_seed(0)
    ref = Net()
    hsdp = FSDP(copy.deepcopy(ref), process_group=pair, sharding_strategy=SS.HYBRID_SHARD,
                use_orig_params=True, device_id=CPU)
    mine = sum(p.numel() for p in hsdp.parameters())
    total = sum(p.numel() for p in ref.parameters())
    assert mine < total, (mine, total)   # sharded over the 2 ranks of the row
    opt_ref = M.optim.Adam(ref.parameters(), lr=1e-2)
    opt = M.optim.Adam(hsdp.parameters(), lr=1e-2)
    for s in range(2):
        x, y = batch(10 + s, 2)
        step(ref, opt_ref, x, y, 0, 2 * WORLD)
        step(hsdp, opt, x, y, RANK, 2)
    with FSDP.state_dict_type(hsdp, SDT.FULL_STATE_DICT):
        sd = hsdp.state_dict()
    for n, v in ref.state_dict().items():
        close(sd[n], v, "hybrid pair " + n)
print("OK")
"""


def test_store_extended_api():
    d = _dist()
    store = d.HashStore()
    assert store.has_extended_api()
    store.append("k", "po")
    store.append("k", "tato")
    assert store.get("k") == b"potato"
    store.multi_set(["a", "b"], ["1", "2"])
    assert store.multi_get(["a", "b"]) == [b"1", b"2"]
    store.barrier("bar", 1)  # a barrier of one passes at once


def test_elastic_record_writes_the_error_file(tmp_path, monkeypatch):
    # torchrun's docs: a worker's entry point decorated with @record
    import importlib
    import json

    errors = importlib.import_module(module_name() + ".distributed.elastic.multiprocessing.errors")

    @errors.record
    def main(x):
        return x + 1

    assert main(1) == 2
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(tmp_path / "error.json"))

    @errors.record
    def bad():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        bad()
    written = json.loads((tmp_path / "error.json").read_text())["message"]
    assert written["message"] == "ValueError: boom", written
    assert "boom" in written["extraInfo"]["py_callstack"]

    # an exit is not an exception to report: no error file (torch's record), exit 0 returns
    (tmp_path / "error.json").unlink()

    @errors.record
    def leave(code):
        raise SystemExit(code)

    assert leave(0) is None
    with pytest.raises(SystemExit):
        leave(3)
    assert not (tmp_path / "error.json").exists()

    # the launcher's report: torch's table, the earliest failure as the root cause with the
    # traceback of its error file, the others after "Failures:"
    child = tmp_path / "child.json"
    child.write_text(
        json.dumps(
            {
                "message": {
                    "message": "ValueError: boom",
                    "extraInfo": {"py_callstack": "Traceback\nValueError: boom", "timestamp": "5"},
                }
            }
        )
    )
    root = errors.ProcessFailure(local_rank=1, pid=11, exitcode=1, error_file=str(child))
    killed = errors.ProcessFailure(local_rank=0, pid=10, exitcode=-15, error_file="/nonexistent")
    assert root.timestamp == 5 and killed.error_file == "<N/A>"
    assert killed.signal_name() == "SIGTERM"
    e = errors.ChildFailedError("train.py", {0: killed, 1: root})
    assert e.get_first_failure() == (1, root)
    text = str(e)
    head, cause = text.split("Root Cause (first observed failure):\n")
    assert head.startswith("\n" + "=" * 60 + "\ntrain.py FAILED\n" + "-" * 60 + "\nFailures:\n")
    assert "  rank      : 0 (local_rank: 0)\n  exitcode  : -15 (pid: 10)  (SIGTERM)\n" in head
    assert "  traceback : Signal 15 (SIGTERM) received by PID 10\n" in head
    assert cause.startswith("[1]:\n  time      : ")
    assert "  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 11) \n" in cause
    assert f"  error_file: {child}\n  traceback : Traceback\n  ValueError: boom\n" in cause
    assert cause.endswith("=" * 60)

    # a nested launcher's record passes the root cause's error file up as its own
    @errors.record
    def nested():
        raise e

    with pytest.raises(errors.ChildFailedError):
        nested()
    passed = json.loads((tmp_path / "error.json").read_text())["message"]
    assert passed["message"] == "ValueError: boom" and passed["errorCode"] == 1, passed


def test_fsdp1_local_state_dict_optim_dicts_with_grads_and_hybrid_pair(tmp_path):
    for _, out in run_workers(tmp_path, FSDP_BODY, 4, timeout=120):
        assert "OK" in out, out
