"""FSDP1 (FullyShardedDataParallel) over real processes on Gloo: a few training steps of a small
transformer-ish model under FULL_SHARD, SHARD_GRAD_OP and NO_SHARD (2 ranks) and HYBRID_SHARD (4
ranks, a 2x2 mesh), with use_orig_params False and True and nested units from an auto-wrap
policy, give the losses and parameters of single-process training on the whole batch; names
(`_fsdp_wrapped_module`, `_flat_param`) and state-dict keys are torch's; full and sharded state
dicts (through distributed checkpoint) and optimizer state dicts round-trip; mixed precision;
no_sync accumulation; clip_grad_norm_ over all ranks; summon_full_params with writeback; a killed
rank makes the others raise. Run with EMBER_TEST_AGAINST=torch, the same workers check the
expectations against torch's FSDP1."""

import pytest
from _dist_util import run_workers

PRELUDE = """
import copy, datetime
from importlib import import_module
fsdp = import_module(M.__name__ + ".distributed.fsdp")
wrap = import_module(M.__name__ + ".distributed.fsdp.wrap")
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
dcp = import_module(M.__name__ + ".distributed.checkpoint")
nn = import_module(M.__name__ + ".nn")
F = import_module(M.__name__ + ".nn.functional")
FSDP = fsdp.FullyShardedDataParallel
SS = fsdp.ShardingStrategy
timeout = datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "60")))
dist.init_process_group("gloo", timeout=timeout)

class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 3 * d)
        self.down = nn.Linear(3 * d, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(5, 8)
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.head = nn.Linear(8, 3)   # 3 rows: unequal pieces
        self.register_buffer("scale", M.ones(3))

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x) * self.scale

def arr(t):
    # tolist, not numpy(): torch's FSDP1 cannot free a storage numpy() has seen
    return np.asarray(t.detach().tolist() if hasattr(t, "detach") else t)

def close(a, b, msg="", rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(arr(a), arr(b), rtol=rtol, atol=atol, err_msg=msg)

def shard(model, **kw):
    kw.setdefault("auto_wrap_policy", wrap.ModuleWrapPolicy({Block}))
    kw.setdefault("device_id", M.device("cpu"))  # torch's FSDP1 runs on the CPU when told so
    return FSDP(model, **kw)

def train(strategy, orig, steps=3, B=2, mesh=None, clip=None, **kw):
    # `steps` AdamW steps of FSDP on this rank's slice and of the model on the whole batch
    M.manual_seed(0)
    ref = Net()
    model = shard(copy.deepcopy(ref), sharding_strategy=strategy, use_orig_params=orig,
                  device_mesh=mesh, **kw)
    # each rank holds its share of the parameters (and a few rows of padding)
    total = sum(p.numel() for p in ref.parameters())
    mine = sum(p.numel() for p in model.parameters())
    shards = 1 if strategy == SS.NO_SHARD else mesh.size(1) if mesh is not None else WORLD
    assert abs(mine - total / shards) <= 32, (strategy, total, mine)
    opt_ref = M.optim.AdamW(ref.parameters(), lr=1e-2)
    opt = M.optim.AdamW(model.parameters(), lr=1e-2)
    M.manual_seed(1)
    for step in range(steps):
        x, y = M.randn(B * WORLD, 5), M.randint(0, 3, (B * WORLD,))
        loss_ref = F.cross_entropy(ref(x), y)
        opt_ref.zero_grad()
        loss_ref.backward()
        loss = F.cross_entropy(model(x[B * RANK : B * RANK + B]), y[B * RANK : B * RANK + B])
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            n_ref = nn.utils.clip_grad_norm_(ref.parameters(), clip)
            n = model.clip_grad_norm_(clip)
            close(n.item(), n_ref.item(), f"{strategy} clip norm", rtol=1e-4)
        opt_ref.step()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        close(mean.item() / WORLD, loss_ref.item(), f"{strategy} {orig} loss {step}")
    with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT):
        sd = model.state_dict()
    assert list(sd) == list(ref.state_dict()), (list(sd), list(ref.state_dict()))
    for k, v in ref.state_dict().items():
        close(sd[k], v, f"{strategy} {orig} {k}", rtol=1e-4, atol=1e-5)
    return ref, model, opt_ref, opt
"""

BODY = (
    PRELUDE
    + """
trained = {}
for strategy in (SS.FULL_SHARD, SS.SHARD_GRAD_OP, SS.NO_SHARD):
    for orig in (False, True):
        ref, model, opt_ref, opt = train(strategy, orig, clip=0.5 if orig else None)
        trained[strategy, orig] = model
        names = [n for n, _ in model.named_parameters()]
        if orig:
            assert names == ["_fsdp_wrapped_module." + n for n, _ in
                             [(k.replace("blocks.0.", "blocks.0._fsdp_wrapped_module.")
                               .replace("blocks.1.", "blocks.1._fsdp_wrapped_module."), 0)
                              for k, _ in ref.named_parameters()]], names
        else:
            assert names == [
                "_fsdp_wrapped_module._flat_param",
                "_fsdp_wrapped_module.blocks.0._fsdp_wrapped_module._flat_param",
                "_fsdp_wrapped_module.blocks.1._fsdp_wrapped_module._flat_param",
            ], names
# the all-gathers started early (forward_prefetch, BACKWARD_POST) change nothing in the math
_, pf, _, _ = train(SS.FULL_SHARD, False, steps=2, forward_prefetch=True,
                    backward_prefetch=fsdp.BackwardPrefetch.BACKWARD_POST)
if not AGAINST_TORCH:  # the root's first forward chained each unit to the next one
    assert pf._fsdp_state.group.forward_prefetch == [pf.blocks[0]._fsdp_state.group]
    assert pf.blocks[1]._fsdp_state.group.backward_prefetch == [pf.blocks[0]._fsdp_state.group]
print("TRAINED")

# a root that owns no parameter of its own has no flat parameter
M.manual_seed(0)
plain = nn.Sequential(Block(), Block())
seq = shard(copy.deepcopy(plain))
names = [n for n, _ in seq.named_parameters()]
want = [f"_fsdp_wrapped_module.{i}._fsdp_wrapped_module._flat_param" for i in (0, 1)]
assert names == want, names
x = M.randn(2, 8)
close(seq(x), plain(x), "sequential")
with FSDP.state_dict_type(seq, fsdp.StateDictType.FULL_STATE_DICT):
    assert list(seq.state_dict()) == list(plain.state_dict())

# sync_module_states: every rank starts from rank 0's parameters and buffers (torch's FSDP1
# wants them on a GPU for that)
if not AGAINST_TORCH:
    M.manual_seed(RANK)
    net = Net()
    net.scale.fill_(RANK + 1.0)
    synced = shard(net, sync_module_states=True)
    with FSDP.state_dict_type(synced, fsdp.StateDictType.FULL_STATE_DICT):
        for k, v in synced.state_dict().items():
            t = v.clone()
            dist.broadcast(t, 0)
            close(v, t, k, rtol=0, atol=0)

M.manual_seed(0)
model = shard(Net())
# full state dict on rank 0 only, loaded into a fresh model
# (torch's FSDP1 on the CPU frees the tensors offload_to_cpu "moved" to the CPU)
cfg = fsdp.FullStateDictConfig(offload_to_cpu=not AGAINST_TORCH, rank0_only=True)
with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT, cfg):
    sd0 = model.state_dict()
assert (len(sd0) > 0) == (RANK == 0)
with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT):
    sd = model.state_dict()
M.manual_seed(5)
fresh = shard(Net(), sharding_strategy=SS.NO_SHARD)
with FSDP.state_dict_type(fresh, fsdp.StateDictType.FULL_STATE_DICT):
    fresh.load_state_dict(sd)
    for k, v in fresh.state_dict().items():
        close(v, sd[k], k)

# sharded state dict: DTensors under the same keys, saved and loaded by distributed checkpoint
mesh1 = dm.init_device_mesh("cpu", (WORLD,))  # torch's FSDP1 makes DTensors over a given mesh
M.manual_seed(0)
model = shard(Net(), use_orig_params=False, device_mesh=mesh1)
opt = M.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(2):
    opt.zero_grad()
    model(M.randn(3, 5)).sum().backward()
    opt.step()
SHARDED = (fsdp.StateDictType.SHARDED_STATE_DICT, fsdp.ShardedStateDictConfig(_use_dtensor=True),
           fsdp.ShardedOptimStateDictConfig(_use_dtensor=True))
with FSDP.state_dict_type(model, *SHARDED):
    ssd = model.state_dict()
    osd = FSDP.optim_state_dict(model, opt)
assert list(ssd) == list(Net().state_dict()), list(ssd)
w = ssd["blocks.0.up.weight"]
assert isinstance(w, dt.DTensor) and tuple(w.shape) == (24, 8), type(w)
assert w.to_local().shape[0] == 24 // WORLD
ckpt = os.environ["CKPT"]
dcp.save({"model": ssd, "optim": osd}, checkpoint_id=ckpt)
with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT):
    want = model.state_dict()
    want_osd = FSDP.optim_state_dict(model, opt)
assert set(want_osd["state"]) == set(want) - {"scale"}, sorted(want_osd["state"])
assert sorted(want_osd["param_groups"][0]["params"]) == sorted(k for k in want if k != "scale")
assert tuple(want_osd["state"]["blocks.1.up.weight"]["exp_avg"].shape) == (24, 8)

M.manual_seed(9)
other = shard(Net(), use_orig_params=False, device_mesh=mesh1)
opt2 = M.optim.Adam(other.parameters(), lr=1e-2)
opt2.zero_grad()
other(M.randn(3, 5)).sum().backward()
opt2.step()
with FSDP.state_dict_type(other, *SHARDED):
    state = {"model": other.state_dict(), "optim": FSDP.optim_state_dict(other, opt2)}
    dcp.load(state, checkpoint_id=ckpt)
    other.load_state_dict(state["model"])
    opt2.load_state_dict(FSDP.optim_state_dict_to_load(other, opt2, state["optim"]))
with FSDP.state_dict_type(other, fsdp.StateDictType.FULL_STATE_DICT):
    got = other.state_dict()
    got_osd = FSDP.optim_state_dict(other, opt2)
for k, v in want.items():
    close(got[k], v, k)
for k, st in want_osd["state"].items():
    for key in ("exp_avg", "exp_avg_sq"):
        close(got_osd["state"][k][key], st[key], f"{k} {key}")

# a full optimizer state dict loads back: the next steps match the model it came from
opt3 = M.optim.Adam(other.parameters(), lr=1e-2)
opt3.load_state_dict(FSDP.optim_state_dict_to_load(other, opt3, want_osd))
x = M.randn(4, 5)
for m, o in ((model, opt), (other, opt3)):
    o.zero_grad()
    m(x).sum().backward()
    o.step()
with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT):
    a, b = model.state_dict(), other.state_dict()
for k in a:
    close(b[k], a[k], k)

# the same through checkpoint.state_dict's get_state_dict / set_state_dict
sdm = import_module(M.__name__ + ".distributed.checkpoint.state_dict")
full_opts = sdm.StateDictOptions(full_state_dict=True)
msd, osd_full = sdm.get_state_dict(model, opt, options=full_opts)
assert list(msd) == list(a), list(msd)
for k in a:
    close(msd[k], a[k], k)
with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT):
    want_osd = FSDP.optim_state_dict(model, opt)
assert sorted(osd_full["state"]) == sorted(want_osd["state"])
msd, osd = sdm.get_state_dict(model, opt)
M.manual_seed(11)
third = shard(Net(), use_orig_params=False, device_mesh=mesh1)
opt4 = M.optim.Adam(third.parameters(), lr=1e-2)
sdm.set_state_dict(third, opt4, model_state_dict=msd, optim_state_dict=osd)
with FSDP.state_dict_type(third, fsdp.StateDictType.FULL_STATE_DICT):
    got, got_osd = third.state_dict(), FSDP.optim_state_dict(third, opt4)
for k in a:
    close(got[k], a[k], k)
for k, st in want_osd["state"].items():
    close(got_osd["state"][k]["exp_avg"], st["exp_avg"], k)
print("STATE OK")

# no_sync: the first micro-batch accumulates locally, the second reduces both
M.manual_seed(0)
ref = Net()
model = shard(copy.deepcopy(ref), use_orig_params=True)
B = 2
x, y = M.randn(2 * B * WORLD, 5), M.randint(0, 3, (2 * B * WORLD,))
F.cross_entropy(ref(x), y).backward()
for i in range(2):
    lo = (2 * RANK + i) * B
    loss = F.cross_entropy(model(x[lo : lo + B]), y[lo : lo + B]) / 2
    if i == 0:
        with model.no_sync():
            loss.backward()
    else:
        loss.backward()
grads = {n.replace("_fsdp_wrapped_module.", ""): p.grad for n, p in model.named_parameters()}
for n, p in ref.named_parameters():
    g = grads[n]
    rows = M.chunk(p.grad, WORLD)[RANK] if not AGAINST_TORCH else None
    if rows is not None:
        close(g, rows, n, rtol=1e-4)

# mixed precision: the forward computes in bfloat16, the gradients reach the float32 shards
M.manual_seed(0)
half = shard(Net(), mixed_precision=fsdp.MixedPrecision(
    param_dtype=M.bfloat16, reduce_dtype=M.float32, buffer_dtype=M.bfloat16))
out = half(M.randn(B, 5))
assert out.dtype == M.bfloat16, out.dtype
out.float().sum().backward()
for n, p in half.named_parameters():
    assert p.dtype == M.float32 and p.grad is not None and p.grad.dtype == M.float32, n
with FSDP.state_dict_type(half, fsdp.StateDictType.FULL_STATE_DICT):
    sd = half.state_dict()
assert sd["scale"].dtype == M.float32 and sd["inp.weight"].dtype == M.float32

# FSDP.fsdp_modules, summon_full_params (clean names, whole tensors, writeback)
model = trained[SS.FULL_SHARD, False]
units = FSDP.fsdp_modules(model)
assert len(units) == 3 and units[0] is model and len(FSDP.fsdp_modules(model, root_only=True)) == 1
with FSDP.summon_full_params(model):
    full = dict(model.named_parameters())
    assert list(full) == [n for n, _ in ref.named_parameters()], list(full)
    assert tuple(full["blocks.0.up.weight"].shape) == (24, 8)
    with M.no_grad():
        full["head.bias"].fill_(0.5)
with FSDP.summon_full_params(model, writeback=False):
    b = dict(model.named_parameters())["head.bias"]
    close(b, [0.5] * 3)
    with M.no_grad():
        b.fill_(7.0)
with FSDP.state_dict_type(model, fsdp.StateDictType.FULL_STATE_DICT):
    close(model.state_dict()["head.bias"], [0.5] * 3)
print("OK")
"""
)

HYBRID = (
    PRELUDE
    + """
mesh = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("replicate", "shard"))
for orig in (False, True):
    ref, model, _, _ = train(SS.HYBRID_SHARD, orig, steps=2, mesh=mesh, clip=0.3)
with FSDP.state_dict_type(model, fsdp.StateDictType.SHARDED_STATE_DICT):
    w = model.state_dict()["blocks.0.up.weight"]
assert w.to_local().shape[0] == 12, w.to_local().shape
print("OK")
"""
)

KILLED = (
    PRELUDE
    + """
import time
M.manual_seed(0)
model = shard(Net())
opt = M.optim.SGD(model.parameters(), lr=0.1)
model(M.randn(2, 5)).sum().backward()
dist.barrier()
if RANK == 1:
    os._exit(3)
start = time.monotonic()
try:
    for _ in range(3):
        model(M.randn(2, 5)).sum().backward()
    raise AssertionError("FSDP with a dead peer trained on")
except RuntimeError as e:
    print("RAISED", type(e).__name__, f"after {time.monotonic() - start:.1f}s")
os._exit(0)
"""
)


def test_fsdp1_strategies_state_dicts_and_options(tmp_path):
    env = {"CKPT": str(tmp_path / "ckpt")}
    for _, out in run_workers(tmp_path, BODY, 2, timeout=400, env=env):
        assert "OK" in out, out


def test_fsdp1_hybrid_shard(tmp_path):
    for _, out in run_workers(tmp_path, HYBRID, 4, timeout=300):
        assert "OK" in out, out


def test_fsdp1_killed_rank_makes_the_others_raise(tmp_path):
    res = run_workers(tmp_path, KILLED, 2, timeout=90, env={"PG_TIMEOUT": "10"}, expect_ok=False)
    assert res[1][0] == 3, res[1][1]
    assert res[0][0] == 0 and "RAISED RuntimeError" in res[0][1], res[0][1]


@pytest.mark.parametrize("policy", ["size", "lambda", "transformer"])
def test_fsdp1_auto_wrap_policies(policy):
    # the policies alone (no process group): which modules they would wrap
    import functools

    from _dist_util import module_name

    mod = __import__(module_name())
    nn = mod.nn
    from importlib import import_module

    wrap = import_module(module_name() + ".distributed.fsdp.wrap")
    net = nn.Sequential(nn.Linear(4, 100), nn.ModuleList([nn.Linear(100, 2)]), nn.ReLU())
    if policy == "size":
        fn = functools.partial(wrap.size_based_auto_wrap_policy, min_num_params=300)
        want = [True, False, True]  # ModuleList is never wrapped
    elif policy == "lambda":
        fn = functools.partial(wrap.lambda_auto_wrap_policy, lambda_fn=lambda m: m is net[2])
        want = [False, False, True]
    else:
        fn = functools.partial(wrap.transformer_auto_wrap_policy, transformer_layer_cls={nn.Linear})
        want = [True, False, False]
    got = [fn(module=m, recurse=False, nonwrapped_numel=500) for m in net]
    assert got == want
    assert fn(module=net, recurse=True, nonwrapped_numel=500)
    assert not wrap.size_based_auto_wrap_policy(
        nn.MultiheadAttention(4, 2), recurse=True, nonwrapped_numel=10
    )
