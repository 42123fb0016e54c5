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
