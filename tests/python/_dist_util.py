"""Runs a worker script in N real processes on localhost, for the ember.distributed tests.

The test process hosts the TCPStore server on a port the kernel picks (so no two tests race for
a port) and the workers join it as clients (TORCHELASTIC_USE_AGENT_STORE, as under a launcher).
Every run is bounded: workers still alive at the deadline are killed and the test fails with
their output. With EMBER_TEST_AGAINST=torch the workers import torch instead of ember, which
checks the tests' expectations against PyTorch's gloo backend.
"""

import datetime
import os
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.abspath(__file__))

# Worker scripts start with `M = <module>` (ember, or torch under EMBER_TEST_AGAINST=torch).
PRELUDE = """\
import os, sys, datetime
import numpy as np
M = __import__(os.environ.get("DIST_TEST_MODULE", "ember"))
import importlib
dist = importlib.import_module(M.__name__ + ".distributed")
RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
AGAINST_TORCH = M.__name__ == "torch"
"""


def module_name():
    return "torch" if os.environ.get("EMBER_TEST_AGAINST") == "torch" else "ember"


def worker_env(rank, world_size, port, extra=None):
    env = dict(os.environ)
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        TORCHELASTIC_USE_AGENT_STORE="True",
        DIST_TEST_MODULE=module_name(),
        OMP_NUM_THREADS="1",
        EMBER_NUM_THREADS="1",
    )
    env.update(extra or {})
    return env


def store_server(timeout=60):
    """A TCPStore server in this process on a free port (the workers' rendezvous)."""
    if module_name() == "torch":
        import torch.distributed as d
    else:
        import ember.distributed as d
    return d.TCPStore(
        "127.0.0.1", 0, None, True, datetime.timedelta(seconds=timeout), wait_for_workers=False
    )


def run_workers(tmp_path, body, world_size, timeout=90, env=None, expect_ok=True):
    """Runs PRELUDE + body in world_size processes; returns [(returncode, output)] by rank.
    With expect_ok, a worker that fails ends the run at once: the others get a few seconds to
    report their own error, then are killed, and the test fails with every output (a dead
    rank never makes the test wait for its timeout)."""
    script = tmp_path / "worker.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    store = store_server(timeout)
    procs, logs = [], []
    for r in range(world_size):
        extra = env(r) if callable(env) else env
        log = open(tmp_path / f"rank{r}.log", "w+")
        logs.append(log)
        procs.append(
            subprocess.Popen(
                [sys.executable, str(script)],
                env=worker_env(r, world_size, store.port, extra),
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=str(tmp_path),
            )
        )
    deadline = time.monotonic() + timeout
    failed_at = None
    while any(p.poll() is None for p in procs):
        now = time.monotonic()
        if expect_ok and failed_at is None and any(p.poll() for p in procs):
            failed_at = now
        if now > deadline or (failed_at is not None and now - failed_at > 5):
            break
        time.sleep(0.02)
    late = [p for p in procs if p.poll() is None]
    for p in late:
        p.kill()
    results = []
    for p, log in zip(procs, logs):
        p.wait()
        log.seek(0)
        results.append((p.returncode, log.read()))
        log.close()
    del store
    if late and failed_at is None:
        pytest.fail(f"workers still running after {timeout}s:\n" + "\n".join(o for _, o in results))
    if expect_ok:
        bad = [
            f"rank {r} exited with {code}:\n{out}" for r, (code, out) in enumerate(results) if code
        ]
        assert not bad, "\n".join(bad)
    return results
