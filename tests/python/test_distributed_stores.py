"""The rendezvous stores (TCPStore, FileStore, HashStore, PrefixStore) in this process and across
threads, and the tcp:// and file:// init methods in two real processes."""

import datetime
import threading
import time

import pytest
from _dist_util import module_name, run_workers

T = datetime.timedelta


def _dist():
    if module_name() == "torch":
        import torch.distributed as d
    else:
        import ember.distributed as d
    return d


def _exercise(store):
    store.set("a", "1")
    assert store.get("a") == b"1"
    store.set("b", b"\x00\xff")
    assert store.get("b") == b"\x00\xff"
    assert store.add("n", 2) == 2 and store.add("n", 5) == 7
    assert store.get("n") == b"7"
    assert store.check(["a", "n"]) and not store.check(["a", "missing"])
    assert store.compare_set("a", "1", "2") == b"2"
    assert store.compare_set("a", "1", "3") == b"2"
    assert store.delete_key("a")
    if module_name() == "ember" or not isinstance(store, _dist().FileStore):
        assert not store.delete_key("a")  # (torch's FileStore answers True again)
    store.wait(["b", "n"])
    with pytest.raises(RuntimeError):
        store.wait(["never"], T(milliseconds=100))


def test_hash_store():
    _exercise(_dist().HashStore())


def test_file_store(tmp_path):
    d = _dist()
    path = str(tmp_path / "store")
    s = d.FileStore(path, 2)
    _exercise(s)
    other = d.FileStore(path, 2)
    assert other.get("n") == b"7"


def test_tcp_store_server_and_clients():
    d = _dist()
    server = d.TCPStore("127.0.0.1", 0, None, True, T(seconds=10), wait_for_workers=False)
    assert server.port > 0
    _exercise(server)
    clients = [d.TCPStore("127.0.0.1", server.port, None, False, T(seconds=10)) for _ in range(3)]
    results = []

    def waiter(c):
        results.append(c.get("late"))  # blocks until another client sets it

    threads = [threading.Thread(target=waiter, args=(c,)) for c in clients[:2]]
    for t in threads:
        t.start()
    time.sleep(0.05)
    clients[2].set("late", "here")
    for t in threads:
        t.join(10)
    assert results == [b"here", b"here"]
    counts = []
    adders = [threading.Thread(target=lambda c=c: counts.append(c.add("ctr", 1))) for c in clients]
    for t in adders:
        t.start()
    for t in adders:
        t.join(10)
    assert sorted(counts) == [1, 2, 3]
    with pytest.raises(RuntimeError):
        clients[0].get("never-set") if False else clients[0].wait(["never"], T(milliseconds=50))
    assert clients[0].get("late") == b"here"  # the client still works after a timeout


def test_prefix_store():
    d = _dist()
    base = d.HashStore()
    p = d.PrefixStore("grp", base)
    p.set("k", "v")
    assert base.get("grp/k") == b"v" and p.get("k") == b"v"
    assert p.add("c", 3) == 3 and base.get("grp/c") == b"3"
    assert p.check(["k"]) and not base.check(["k"])


INIT = """
method = os.environ["METHOD"]
if method == "tcp":
    url = f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}"
else:
    url = "file://" + os.environ["STORE_FILE"]
dist.init_process_group("gloo", init_method=url, rank=RANK, world_size=WORLD,
                        timeout=datetime.timedelta(seconds=30))
t = M.full((3,), float(RANK + 1))
dist.all_reduce(t)
assert t.tolist() == [3.0, 3.0, 3.0], t
dist.destroy_process_group()
print("OK")
"""


@pytest.mark.parametrize("method", ["tcp", "file"])
def test_init_methods(tmp_path, method):
    env = {"METHOD": method, "STORE_FILE": str(tmp_path / "rdzv")}
    for _, out in run_workers(tmp_path, INIT, 2, timeout=60, env=env):
        assert "OK" in out
