"""Session 15's distributed checks, as torch 2.13's (the same tests pass with
EMBER_TEST_AGAINST=torch): the stores' queues (queue_push/queue_pop/queue_len), multi_get's
timeout, a PrefixStore's own timeout and distributed_c10d's names after its split, in this
process (threads stand in for the ranks); FSDP2's reshard_after_forward=False attributes, in a
one-rank subprocess."""

import datetime
import importlib
import os
import subprocess
import sys
import textwrap
import threading

import pytest
from _dist_util import module_name

T = datetime.timedelta


def _dist():
    if module_name() == "torch":
        import torch.distributed as d
    else:
        import ember.distributed as d
    return d


def _tcp(d):
    return d.TCPStore("127.0.0.1", 0, None, True, T(seconds=10), wait_for_workers=False)


def _stores():
    d = _dist()
    tcp = _tcp(d)
    return {
        "hash": d.HashStore(),
        "tcp": tcp,
        "prefix_hash": d.PrefixStore("p", d.HashStore()),
        "prefix_tcp": d.PrefixStore("p", tcp),
    }


@pytest.mark.parametrize("kind", ["hash", "tcp", "prefix_hash", "prefix_tcp"])
def test_queue_methods(kind):
    d = _dist()
    store = _stores()[kind]
    base = store.num_keys()
    assert store.queue_len("q") == 0
    assert not store.check(["q"])
    store.queue_push("q", "a")
    store.queue_push("q", b"\x00b")
    assert store.queue_len("q") == 2
    # check answers for a queue that holds values, as for a key (torch's)
    assert store.check(["q"]) and not store.check(["q", "nokey"])
    assert store.num_keys() == base  # queues are not keys
    assert store.queue_pop("q") == b"a"  # oldest first
    assert store.queue_pop("q", False) == b"\x00b"
    assert store.queue_len("q") == 0 and not store.check(["q"])
    with pytest.raises(d.QueueEmptyError, match="^queue is empty$"):
        store.queue_pop("q", block=False)
    assert issubclass(d.QueueEmptyError, d.DistStoreError)
    store.set_timeout(T(milliseconds=200))
    with pytest.raises(d.DistStoreError) as err:
        store.queue_pop("q")
    assert not isinstance(err.value, d.QueueEmptyError)
    if kind == "tcp":  # torch's TCPStore text, naming the queue
        assert str(err.value) == "wait timeout after 200ms, keys: /q"
    if kind == "hash":  # torch's HashStore text
        assert str(err.value) == "Wait timeout"
    # a queue and a key of the same name are unrelated
    store.set("k", "v")
    assert store.queue_len("k") == 0
    store.queue_push("k", "x")
    assert store.get("k") == b"v" and store.queue_pop("k") == b"x"
    assert store.num_keys() == base + 1


def test_queue_between_threads():
    """Blocked poppers wake for pushes from other clients; each value goes to one popper."""
    d = _dist()
    server = _tcp(d)
    got, lock = [], threading.Lock()

    def pop_some():
        client = d.TCPStore("127.0.0.1", server.port, None, False, T(seconds=10))
        for _ in range(5):
            v = client.queue_pop("jobs")
            with lock:
                got.append(v)

    poppers = [threading.Thread(target=pop_some) for _ in range(2)]
    for t in poppers:
        t.start()
    pusher = d.TCPStore("127.0.0.1", server.port, None, False, T(seconds=10))
    for i in range(10):
        pusher.queue_push("jobs", str(i))
    for t in poppers:
        t.join(30)
    assert sorted(got) == sorted(str(i).encode() for i in range(10))
    assert server.queue_len("jobs") == 0


def test_file_store_has_no_queues(tmp_path):
    d = _dist()
    for store in (
        d.FileStore(str(tmp_path / "s"), 1),
        d.PrefixStore("p", d.FileStore(str(tmp_path / "t"), 1)),
    ):
        for call in (
            lambda: store.queue_push("q", "a"),
            lambda: store.queue_pop("q", False),
            lambda: store.queue_len("q"),
        ):
            with pytest.raises(NotImplementedError, match="^queue support is not implemented.$"):
                call()


def test_multi_get_waits_for_every_key_and_prefix_timeout():
    d = _dist()
    store = _tcp(d)
    store.multi_set(["m1", "m2"], ["1", b"2"])
    assert store.multi_get(["m1", "m2"]) == [b"1", b"2"]
    store.set_timeout(T(milliseconds=200))
    with pytest.raises(d.DistStoreError, match="^wait timeout after 200ms, keys: /m1, /nope$"):
        store.multi_get(["m1", "nope"])
    # a PrefixStore's own timeout bounds its get, whatever its store's
    slow = d.HashStore()
    slow.set_timeout(T(seconds=60))
    prefixed = d.PrefixStore("p", slow)
    prefixed.set_timeout(T(milliseconds=100))
    with pytest.raises(d.DistStoreError):
        prefixed.get("missing")
    with pytest.raises(d.DistStoreError):
        prefixed.multi_get(["missing"])


def test_distributed_c10d_keeps_torch_names():
    """distributed_c10d is split by family; its public names stay where torch has them."""
    if module_name() == "torch":
        import torch.distributed as d
        import torch.distributed.distributed_c10d as c10d
    else:
        import ember.distributed as d
        import ember.distributed.distributed_c10d as c10d
    names = [
        "all_reduce", "all_gather_object", "broadcast_object_list", "scatter_object_list",
        "gather_object", "init_process_group", "new_group", "get_rank", "get_global_rank",
        "batch_isend_irecv", "P2POp", "ProcessGroup", "GroupMember", "Backend", "ReduceOp",
        "Store", "PrefixStore", "monitored_barrier", "default_pg_timeout", "is_initialized",
        "destroy_process_group", "all_gather_single", "reduce_scatter_single",
    ]  # fmt: skip
    for name in names:
        assert getattr(c10d, name) is getattr(d, name), name
    constants = importlib.import_module(d.__name__ + ".constants")  # as torch's
    assert constants.default_pg_timeout is d.default_pg_timeout
    assert constants.default_pg_timeout == datetime.timedelta(minutes=30)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        c10d._get_default_store()


_FSDP_PROGRAM = textwrap.dedent(
    """
    import sys
    if sys.argv[1] == "torch":
        import torch
        import torch.distributed as d
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.tensor import DTensor
    else:
        import ember as torch
        import ember.distributed as d
        from ember.distributed.fsdp import fully_shard
        from ember.distributed.tensor import DTensor
    d.init_process_group("gloo", init_method="file://" + sys.argv[2], rank=0, world_size=1)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    for layer in m:
        fully_shard(layer, reshard_after_forward=False)
    fully_shard(m, reshard_after_forward=False)

    def show(tag):
        kinds = ["DTensor" if isinstance(p, DTensor) else type(p).__name__ for p in m.parameters()]
        print(tag, kinds, tuple(m[0].weight.shape))

    show("init")
    out = m(torch.ones(3, 4))
    show("forward")
    out.sum().backward()
    show("backward")
    print("grad", type(m[0].weight.grad).__name__, tuple(m[0].weight.grad.shape))
    with torch.no_grad():
        m(torch.ones(3, 4))
    show("no_grad forward")
    m.reshard()  # the root's own parameters only: its children stay gathered
    show("root reshard")
    m(torch.ones(3, 4)).sum().backward()
    show("second step")
    d.destroy_process_group()
    """
)


def _run_fsdp_program(lib, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run(
        [sys.executable, "-c", _FSDP_PROGRAM, lib, str(tmp_path / f"store_{lib}")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_fsdp2_no_reshard_after_forward_keeps_gathered_parameters(tmp_path):
    """With reshard_after_forward=False the gathered parameters (nn.Parameters) are the
    module's attributes from the forward until its backward (torch's); a forward without grad
    leaves them too."""
    out = _run_fsdp_program(module_name(), tmp_path)
    d, f = "'DTensor'", "'Parameter'"  # torch's unsharded parameters are nn.Parameters
    assert out.splitlines() == [
        f"init [{d}, {d}, {d}, {d}] (4, 4)",
        f"forward [{f}, {f}, {f}, {f}] (4, 4)",
        f"backward [{d}, {d}, {d}, {d}] (4, 4)",
        "grad DTensor (4, 4)",
        f"no_grad forward [{f}, {f}, {f}, {f}] (4, 4)",
        f"root reshard [{f}, {f}, {f}, {f}] (4, 4)",
        f"second step [{d}, {d}, {d}, {d}] (4, 4)",
    ]
