"""The launcher (python -m ember.distributed.run, torchrun's flags) with real worker processes:
the environment each worker gets, rank-prefixed output, a failing worker stopping the job, and
--max-restarts. Under EMBER_TEST_AGAINST=torch the same runs go through torchrun."""

import os
import subprocess
import sys
import textwrap

import pytest
from _dist_util import module_name

LAUNCHER = "torch.distributed.run" if module_name() == "torch" else "ember.distributed.run"
M = module_name()


def _port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(tmp_path, script, *flags, timeout=90):
    path = tmp_path / "worker.py"
    path.write_text(textwrap.dedent(script))
    port = "0" if M == "ember" else str(_port())
    cmd = [sys.executable, "-m", LAUNCHER, "--master-port", port, *flags, str(path)]
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"launcher still running after {timeout}s: {e.stdout}\n{e.stderr}")
    return p


ENV_SCRIPT = f"""
import os
import {M}.distributed as dist
dist.init_process_group("gloo")
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "OMP_NUM_THREADS", "TORCHELASTIC_RUN_ID"]
print("ENV", " ".join(f"{{k}}={{os.environ.get(k)}}" for k in keys))
assert dist.get_rank() == int(os.environ["RANK"]) and dist.is_torchelastic_launched()
dist.destroy_process_group()
"""


def test_environment_and_prefixes(tmp_path):
    p = launch(tmp_path, ENV_SCRIPT, "--nproc-per-node", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [line for line in p.stdout.splitlines() if "ENV" in line]
    assert len(lines) == 2, p.stdout
    for r in range(2):
        (line,) = [x for x in lines if f"RANK={r} LOCAL_RANK={r}" in x]
        assert "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1" in line, line
        assert "OMP_NUM_THREADS=None" not in line  # each worker gets its share of the CPUs
        if M == "ember":
            assert line.startswith(f"[rank{r}]:ENV"), line


FAIL_SCRIPT = f"""
import os, sys, time
import {M}.distributed as dist
from {M}.distributed.elastic.multiprocessing.errors import record

@record
def main():
    dist.init_process_group("gloo")
    if dist.get_rank() == 1:
        print("rank 1 fails", flush=True)
        raise ValueError("rank 1 fails")
    time.sleep(120)                    # the launcher must stop this one

main()
"""


def test_failing_worker_stops_the_job(tmp_path):
    """The launcher stops the other workers and raises torch's ChildFailedError: its table
    names the failed rank, its exit code, its error file and the traceback @record wrote there
    as the root cause, and lists the stopped workers (SIGTERM) as the other failures."""
    p = launch(tmp_path, FAIL_SCRIPT, "--nproc-per-node", "3")
    assert p.returncode == 1, p.stderr
    err = p.stderr
    assert "ChildFailedError" in err and f"{tmp_path / 'worker.py'} FAILED" in err, err
    others, root = err.split("Root Cause (first observed failure):")
    assert "rank      : 1 (local_rank: 1)" in root and "exitcode  : 1 (pid: " in root, err
    error_file = root.split("error_file: ")[1].split("\n")[0]
    assert error_file.endswith("error.json"), err
    assert 'raise ValueError("rank 1 fails")' in root and "ValueError: rank 1 fails" in root, err
    for r in (0, 2):
        assert f"rank      : {r} (local_rank: {r})" in others.split("Failures:")[1], err
    assert "exitcode  : -15 (pid: " in others and "(SIGTERM)" in others, err
    if M == "ember":
        assert "[rank1]:rank 1 fails" in p.stdout, p.stdout


RESTART_SCRIPT = f"""
import os, sys
import {M}
import {M}.distributed as dist
dist.init_process_group("gloo")
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
if attempt == 0 and dist.get_rank() == 1:
    sys.exit(5)
t = {M}.ones(1)
dist.all_reduce(t)
print("attempt", attempt, "sum", t.item())
"""


def test_max_restarts(tmp_path):
    if M != "ember":
        pytest.skip("torchrun's static rendezvous reuses the first attempt's addresses")
    p = launch(tmp_path, RESTART_SCRIPT, "--nproc-per-node", "2", "--max-restarts", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("attempt 1 sum 2.0") == 2, p.stdout


def test_console_script_is_declared():
    from importlib import metadata

    if M != "ember":
        pytest.skip("checks ember's own console script")
    names = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    assert names.get("emberrun") == "ember.distributed.run:main"


def test_fashion_mnist_ddp_under_the_launcher(tmp_path):
    """The main job with --ddp: two processes, only rank 0 reports and writes files."""
    if M != "ember" or not os.path.exists("/usr/share/datasets/fashion-mnist"):
        pytest.skip("ember's launcher on the Fashion-MNIST data set")
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "fashion_mnist.py")
    out_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", LAUNCHER, "--nproc-per-node", "2", "--master-port", "0"]
    cmd += [example, "--ddp", "--epochs", "1", "--max-steps", "4", "--train-limit", "2048"]
    cmd += ["--out-dir", str(out_dir)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "DDP over 2 processes" in p.stdout and "test accuracy" in p.stdout, p.stdout
    assert "[rank1]:" not in p.stdout, p.stdout  # rank 1 trains silently
    assert sorted(os.listdir(out_dir)) == ["checkpoint_ember.pt", "curves_ember.png"]
