"""ember.distributed.checkpoint (torch.distributed.checkpoint): nested state dicts with plain
values, Stateful objects, missing keys, async_save and format_utils in one process; over 2 real
processes, DTensors saved Shard(0) and loaded as Shard(1), Replicate and plain tensors in one
process (resharding), replicated data written once, and FSDP2 training state saved and loaded
into a fresh model and optimizer whose next step is identical. With EMBER_TEST_AGAINST=torch the
same bodies run on torch (checks of ember's file layout are skipped there)."""

import importlib
import json
import os

import numpy as np
import pytest
from _dist_util import module_name, run_workers


@pytest.fixture
def M():
    return importlib.import_module(module_name())


def _dcp(M):
    return importlib.import_module(M.__name__ + ".distributed.checkpoint")


def test_nested_state_round_trip_in_one_process(M, tmp_path):
    dcp = _dcp(M)
    M.manual_seed(0)
    model = M.nn.Sequential(M.nn.Linear(3, 4), M.nn.ReLU(), M.nn.Linear(4, 2))
    opt = M.optim.AdamW(model.parameters(), lr=0.01)
    model(M.randn(5, 3)).sum().backward()
    opt.step()
    state = {
        "model": model.state_dict(),
        "optim": opt.state_dict(),
        "extra": {"step": 7, "lr": 0.5, "name": "run-1", "hist": [1, 2.5, "x"], "none": None},
        "half": M.arange(6, dtype=M.float32).to(M.bfloat16).reshape(2, 3),
        "ints": M.arange(4),
    }
    path = str(tmp_path / "ckpt")
    dcp.save(state, checkpoint_id=path, no_dist=True)
    if module_name() == "ember":  # ember's layout: JSON metadata, files renamed into place
        assert sorted(os.listdir(path)) == [".metadata", "__0_0.distcp"]
        meta = json.loads(open(os.path.join(path, ".metadata")).read())
        assert meta["state_dict_metadata"]["extra.step"]["value"] == 7

    M.manual_seed(1)
    fresh = M.nn.Sequential(M.nn.Linear(3, 4), M.nn.ReLU(), M.nn.Linear(4, 2))
    fopt = M.optim.AdamW(fresh.parameters(), lr=0.01)
    fresh(M.randn(5, 3)).sum().backward()
    fopt.step()
    w = fresh[0].weight
    target = {
        "model": fresh.state_dict(),
        "optim": fopt.state_dict(),
        "extra": {"step": 0, "lr": 0.0, "name": "", "hist": [], "none": 3},
        "half": M.zeros(2, 3, dtype=M.bfloat16),
        "ints": M.zeros(4, dtype=M.int64),
    }
    dcp.load(target, checkpoint_id=path, no_dist=True)
    assert target["extra"] == {
        "step": 7,
        "lr": 0.5,
        "name": "run-1",
        "hist": [1, 2.5, "x"],
        "none": None,
    }
    assert M.equal(w, model[0].weight)  # in place: the parameter itself received the data
    assert M.equal(target["half"], state["half"]) and target["ints"].tolist() == [0, 1, 2, 3]
    fopt.load_state_dict(target["optim"])
    for a, b in zip(opt.state_dict()["state"].values(), fopt.state_dict()["state"].values()):
        np.testing.assert_array_equal(a["exp_avg"].numpy(), b["exp_avg"].numpy())

    # a key the checkpoint lacks fails on every rank, as torch
    with pytest.raises(dcp.api.CheckpointException if hasattr(dcp, "api") else BaseException) as e:
        dcp.load({"missing": M.zeros(2)}, checkpoint_id=path, no_dist=True)
    assert "Missing key in checkpoint state_dict: missing." in str(e.value)
    with pytest.raises(BaseException) as e:
        dcp.load({"ints": M.zeros(5, dtype=M.int64)}, checkpoint_id=path, no_dist=True)
    assert "Size mismatch" in str(e.value)
    with pytest.raises(RuntimeError, match="`checkpoint_id` must be specified"):
        dcp.load({"ints": M.zeros(4, dtype=M.int64)})
    # a FileSystemReader given explicitly
    got = {"ints": M.zeros(4, dtype=M.int64)}
    dcp.load(got, storage_reader=dcp.FileSystemReader(path), no_dist=True)
    assert got["ints"].tolist() == [0, 1, 2, 3]
    # allow_partial_load skips it
    part = {"missing": M.zeros(2), "ints": M.zeros(4, dtype=M.int64)}
    planner = _dcp(M).DefaultLoadPlanner(allow_partial_load=True)
    dcp.load(part, checkpoint_id=path, planner=planner, no_dist=True)
    assert part["ints"].tolist() == [0, 1, 2, 3]

    # the former names (torch 2.0's tutorials): FutureWarning, a storage given, save's Metadata
    old_path = str(tmp_path / "old")
    with pytest.warns(FutureWarning, match="`save_state_dict` is deprecated"):
        meta = dcp.save_state_dict(
            {"ints": state["ints"]}, dcp.FileSystemWriter(old_path), no_dist=True
        )
    assert isinstance(meta, dcp.Metadata) and "ints" in meta.state_dict_metadata
    got = {"ints": M.zeros(4, dtype=M.int64)}
    with pytest.warns(FutureWarning, match="`load_state_dict` is deprecated"):
        dcp.load_state_dict(got, dcp.FileSystemReader(old_path), no_dist=True)
    assert got["ints"].tolist() == [0, 1, 2, 3]


def test_stateful_async_save_and_format_utils(M, tmp_path):
    dcp = _dcp(M)

    class App(dcp.stateful.Stateful):
        def __init__(self, model, n):
            self.model, self.n, self.loaded = model, n, None

        def state_dict(self):
            return {"model": self.model.state_dict(), "n": self.n}

        def load_state_dict(self, sd):
            self.model.load_state_dict(sd["model"])
            self.n = sd["n"]
            self.loaded = True

    M.manual_seed(0)
    src = App(M.nn.Linear(4, 3), 11)
    w0 = src.model.weight.detach().clone()
    fut = dcp.async_save({"app": src}, checkpoint_id=str(tmp_path / "a"), no_dist=True)
    with M.no_grad():  # staged before async_save returned: this change is not saved
        src.model.weight.add_(1.0)
    fut.result()
    dst = App(M.nn.Linear(4, 3), 0)
    dcp.load({"app": dst}, checkpoint_id=str(tmp_path / "a"), no_dist=True)
    assert dst.loaded and dst.n == 11 and M.equal(dst.model.weight.detach(), w0)

    fu = importlib.import_module(M.__name__ + ".distributed.checkpoint.format_utils")
    fu.dcp_to_torch_save(str(tmp_path / "a"), str(tmp_path / "one.pt"))
    one = M.load(str(tmp_path / "one.pt"), weights_only=True)
    assert M.equal(one["app"]["model"]["weight"], w0) and one["app"]["n"] == 11
    M.save({"w": w0, "k": {"b": M.ones(2)}}, str(tmp_path / "two.pt"))
    fu.torch_save_to_dcp(str(tmp_path / "two.pt"), str(tmp_path / "b"))
    back = {"w": M.zeros(3, 4), "k": {"b": M.zeros(2)}}
    dcp.load(back, checkpoint_id=str(tmp_path / "b"), no_dist=True)
    assert M.equal(back["w"], w0) and back["k"]["b"].tolist() == [1.0, 1.0]


def test_loading_never_runs_code(tmp_path):
    """The metadata is JSON with tagged containers: a checkpoint cannot make load call anything."""
    if module_name() != "ember":
        pytest.skip("ember's format")
    import ember
    import ember.distributed.checkpoint as dcp

    value = (1, 2.0, "a", {1: b"\x00\xff"}, 1 + 2j, float("inf"), ember.float16, 2**70)
    dcp.save({"v": value}, checkpoint_id=str(tmp_path / "c"), no_dist=True)
    back = {"v": None}
    dcp.load(back, checkpoint_id=str(tmp_path / "c"), no_dist=True)
    assert back["v"] == value and isinstance(back["v"], tuple)
    with pytest.raises(dcp.CheckpointException, match="cannot be stored"):
        dcp.save({"o": object()}, checkpoint_id=str(tmp_path / "d"), no_dist=True)
    meta = tmp_path / "c" / ".metadata"
    doc = json.loads(meta.read_text())
    doc["state_dict_metadata"]["v"]["value"] = {"__import__": "os.system"}
    meta.write_text(json.dumps(doc))
    with pytest.raises(BaseException, match="unknown tag"):
        dcp.load({"v": None}, checkpoint_id=str(tmp_path / "c"), no_dist=True)


RESHARD = """
from importlib import import_module
dcp = import_module(M.__name__ + ".distributed.checkpoint")
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (WORLD,))
path = os.environ["CKPT"]
full = M.arange(35, dtype=M.float32).reshape(5, 7)
rep = M.arange(4, dtype=M.float64)
state = {
    "w": dt.distribute_tensor(full, mesh, [dt.Shard(0)]),
    "r": dt.distribute_tensor(rep, mesh, [dt.Replicate()]),
    "plain": M.full((3,), 2.0),
    "meta": {"epoch": 3, "tag": "x"},
}
dcp.save(state, checkpoint_id=path)
if not AGAINST_TORCH:  # rank 1 wrote its rows of w and plain (torch's dedup: the rank with the
    # fewest bytes planned so far), r once, by its owner rank 0
    import json
    meta = json.loads(open(os.path.join(path, ".metadata")).read())["state_dict_metadata"]
    files = {(c["file"], tuple(c["offsets"])) for c in meta["w"]["chunks"]}
    assert files == {("__0_0.distcp", (0, 0)), ("__1_0.distcp", (3, 0))}, files
    assert len(meta["r"]["chunks"]) == 1 and meta["r"]["chunks"][0]["file"] == "__0_0.distcp"
    assert [c["file"] for c in meta["plain"]["chunks"]] == ["__1_0.distcp"], meta["plain"]
    assert os.path.getsize(os.path.join(path, "__1_0.distcp")) == 2 * 7 * 4 + 3 * 4
dist.barrier()
for placement in (dt.Shard(1), dt.Replicate(), dt.Shard(0)):
    tgt = {
        "w": dt.distribute_tensor(M.zeros(5, 7), mesh, [placement]),
        "r": dt.distribute_tensor(M.zeros(4, dtype=M.float64), mesh, [dt.Shard(0)]),
        "plain": M.zeros(3),
        "meta": {"epoch": 0, "tag": ""},
    }
    dcp.load(tgt, checkpoint_id=path)
    assert tgt["w"].placements == (placement,)
    np.testing.assert_array_equal(tgt["w"].full_tensor().numpy(), full.numpy())
    np.testing.assert_array_equal(tgt["r"].to_local().numpy(),
                                  M.chunk(rep, WORLD)[RANK].numpy())
    assert tgt["plain"].tolist() == [2.0] * 3 and tgt["meta"] == {"epoch": 3, "tag": "x"}

# a Partial DTensor is refused on every rank, as torch
part = {"p": dt.DTensor.from_local(M.ones(3) * (RANK + 1), mesh, [dt.Partial()])}
try:
    dcp.save(part, checkpoint_id=path + "-partial")
    raise SystemExit("saved a Partial DTensor")
except dcp.CheckpointException as e:
    assert "DTensor with partial placements" in str(e) and sorted(e.failures) == [0, 1]

# async_save: staged before it returns (the change below is not saved), written in background
fut = dcp.async_save(state, checkpoint_id=path + "-async")
with M.no_grad():
    state["w"].to_local().add_(100.0)
fut.result()
dist.barrier()
tgt = {"w": dt.distribute_tensor(M.zeros(5, 7), mesh, [dt.Replicate()])}
dcp.load(tgt, checkpoint_id=path + "-async")
np.testing.assert_array_equal(tgt["w"].to_local().numpy(), full.numpy())
print("OK")
"""


def test_reshard_across_ranks_and_placements(M, tmp_path):
    path = str(tmp_path / "ckpt")
    for _, out in run_workers(tmp_path, RESHARD, 2, timeout=120, env={"CKPT": path}):
        assert "OK" in out, out
    # the 2-rank checkpoint in one process, as plain tensors
    dcp = _dcp(M)
    tgt = {"w": M.zeros(5, 7), "r": M.zeros(4, dtype=M.float64)}
    dcp.load(tgt, checkpoint_id=path, no_dist=True)
    assert tgt["w"].tolist() == M.arange(35.0).reshape(5, 7).tolist()
    assert tgt["r"].tolist() == [0.0, 1.0, 2.0, 3.0]


FSDP = """
import copy
from importlib import import_module
dcp = import_module(M.__name__ + ".distributed.checkpoint")
sdm = import_module(M.__name__ + ".distributed.checkpoint.state_dict")
fsdp = import_module(M.__name__ + ".distributed.fsdp")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
dist.init_process_group("gloo")
path = os.environ["CKPT"]

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(5, 16)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16))
                                     for _ in range(2)])
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = x + b(x)
        return self.head(x)

def build(seed):
    M.manual_seed(seed)
    model = Net()
    for b in model.blocks:
        fsdp.fully_shard(b)
    fsdp.fully_shard(model)
    return model, M.optim.AdamW(model.parameters(), lr=1e-2)

def step(model, opt, seed):
    M.manual_seed(100 + seed)
    x, y = M.randn(8, 5), M.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x[4 * RANK : 4 * RANK + 4]), y[4 * RANK : 4 * RANK + 4])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()

model, opt = build(0)
for s in range(3):
    step(model, opt, s)
msd, osd = sdm.get_state_dict(model, opt)
DTensor = import_module(M.__name__ + ".distributed.tensor").DTensor
assert isinstance(osd["state"]["blocks.0.1.weight"]["exp_avg"], DTensor)
dcp.save({"model": msd, "optim": osd, "step": 3}, checkpoint_id=path)
full = sdm.get_model_state_dict(model, options=sdm.StateDictOptions(full_state_dict=True))

fresh, fopt = build(1)
fmsd, fosd = sdm.get_state_dict(fresh, fopt)
state = {"model": fmsd, "optim": fosd, "step": 0}
dcp.load(state, checkpoint_id=path)
sdm.set_state_dict(fresh, fopt, model_state_dict=state["model"], optim_state_dict=state["optim"])
assert state["step"] == 3
a, b = step(model, opt, 3), step(fresh, fopt, 3)
assert a == b, (a, b)
for (n, p), q in zip(model.named_parameters(), fresh.parameters()):
    np.testing.assert_array_equal(
        p.full_tensor().detach().numpy(), q.full_tensor().detach().numpy(), err_msg=n
    )

# the 2-rank FSDP2 checkpoint into one process's plain model, by rank 0 alone
if RANK == 0:
    M.manual_seed(5)
    plain = Net()
    psd = plain.state_dict()
    dcp.load({"model": psd}, checkpoint_id=path, no_dist=True)
    for k, v in psd.items():
        np.testing.assert_array_equal(v.numpy(), full[k].detach().numpy(), err_msg=k)
print("OK")
"""


def test_fsdp2_train_save_load_next_step_identical(tmp_path):
    path = str(tmp_path / "ckpt")
    for _, out in run_workers(tmp_path, FSDP, 2, timeout=180, env={"CKPT": path}):
        assert "OK" in out, out


STATEFUL = """
from importlib import import_module
dcp = import_module(M.__name__ + ".distributed.checkpoint")
fsdp = import_module(M.__name__ + ".distributed.fsdp")
nn = import_module(M.__name__ + ".nn")
dist.init_process_group("gloo")
path = os.environ["CKPT"]
M.manual_seed(0)
m = fsdp.fully_shard(nn.Linear(6, 5))
opt = M.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
m(M.randn(3, 6)).sum().backward()
opt.step()
dcp.save({"model": m, "optim": opt}, checkpoint_id=path)
M.manual_seed(1)
m2 = fsdp.fully_shard(nn.Linear(6, 5))
opt2 = M.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)
m2(M.randn(3, 6)).sum().backward()
opt2.step()
dcp.load({"model": m2, "optim": opt2}, checkpoint_id=path)
np.testing.assert_array_equal(
    m2.weight.full_tensor().detach().numpy(), m.weight.full_tensor().detach().numpy()
)
def local(t):  # ember's SGD keeps the local piece as the momentum buffer of a DTensor
    return t.to_local() if hasattr(t, "to_local") else t
b1 = opt.state_dict()["state"][0]["momentum_buffer"]
b2 = opt2.state_dict()["state"][0]["momentum_buffer"]
np.testing.assert_array_equal(local(b1).numpy(), local(b2).numpy())
# a key only rank 1 asks for: every rank raises
try:
    dcp.load({"model": m2, **({"extra": M.zeros(1)} if RANK == 1 else {})}, checkpoint_id=path)
    raise SystemExit("no error")
except dcp.CheckpointException as e:
    assert "Missing key in checkpoint state_dict: extra." in str(e), str(e)
    assert list(e.failures) == [1], e.failures
print("OK")
"""


def test_modules_and_optimizers_as_stateful_and_errors_on_every_rank(tmp_path):
    """A fully_shard'ed module and its optimizer saved and loaded as Stateful values; a key only
    rank 1 asks for makes load raise on both ranks, naming rank 1."""
    path = str(tmp_path / "ckpt")
    for _, out in run_workers(tmp_path, STATEFUL, 2, timeout=120, env={"CKPT": path}):
        assert "OK" in out, out


MESH2D = """
from importlib import import_module
dcp = import_module(M.__name__ + ".distributed.checkpoint")
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
path = os.environ["CKPT"]
a = M.arange(54, dtype=M.float32).reshape(9, 6)
b = M.arange(20, dtype=M.int32).reshape(4, 5)
state = {
    "a": dt.distribute_tensor(a, mesh, [dt.Replicate(), dt.Shard(0)]),  # HSDP-like
    "b": dt.distribute_tensor(b, mesh, [dt.Shard(0), dt.Shard(1)]),
}
dcp.save(state, checkpoint_id=path)
if not AGAINST_TORCH:  # a's replicas along "dp" are written once: 2 chunks, by dp coordinate 0
    import json
    meta = json.loads(open(os.path.join(path, ".metadata")).read())["state_dict_metadata"]
    assert sorted(c["file"] for c in meta["a"]["chunks"]) == ["__0_0.distcp", "__1_0.distcp"]
    assert len(meta["b"]["chunks"]) == 4
dist.barrier()
tgt = {
    "a": dt.distribute_tensor(M.zeros(9, 6), mesh, [dt.Shard(1), dt.Shard(0)]),
    "b": dt.distribute_tensor(M.zeros(4, 5, dtype=M.int32), mesh, [dt.Replicate(), dt.Shard(0)]),
}
dcp.load(tgt, checkpoint_id=path)
np.testing.assert_array_equal(tgt["a"].full_tensor().numpy(), a.numpy())
np.testing.assert_array_equal(tgt["b"].full_tensor().numpy(), b.numpy())
dist.barrier()
dist.destroy_process_group()
print("OK")
"""


def test_two_dimensional_mesh_on_four_ranks(M, tmp_path):
    path = str(tmp_path / "ckpt")
    for _, out in run_workers(tmp_path, MESH2D, 4, timeout=180, env={"CKPT": path}):
        assert "OK" in out, out
    tgt = {"a": M.zeros(9, 6), "b": M.zeros(4, 5, dtype=M.int32)}
    _dcp(M).load(tgt, checkpoint_id=path, no_dist=True)
    assert tgt["a"].tolist() == M.arange(54.0).reshape(9, 6).tolist()
    assert tgt["b"].tolist() == M.arange(20).reshape(4, 5).tolist()
