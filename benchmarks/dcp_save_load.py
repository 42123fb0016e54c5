"""Time of distributed checkpoint save and load (2 ranks on localhost, gloo, local disk).

--tensors DTensors of --mib MiB in all, Shard(0) over 2 ranks, saved with
distributed.checkpoint.save, then loaded into Shard(0) (the same layout) and into Shard(1)
(resharded: each rank reads a column slice of every saved chunk). Each time is the slower
rank's, the best of --repeat runs. The same script runs on torch for comparison:
    python benchmarks/dcp_save_load.py [--backend ember|torch] [--mib 64] [--tensors 8]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

_WORKER = r"""
import json, os, sys, time
from importlib import import_module
M = import_module(sys.argv[1])
mib, n, repeat, path = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
dist = import_module(M.__name__ + ".distributed")
dcp = import_module(M.__name__ + ".distributed.checkpoint")
dt = import_module(M.__name__ + ".distributed.tensor")
dm = import_module(M.__name__ + ".distributed.device_mesh")
dist.init_process_group("gloo")
mesh = dm.init_device_mesh("cpu", (2,))
rows = mib * 2**20 // 4 // 1024 // n
state = {f"t{i}": dt.distribute_tensor(M.randn(rows, 1024), mesh, [dt.Shard(0)]) for i in range(n)}

def timed(fn):
    best = None
    for r in range(repeat):
        dist.barrier()
        t0 = time.perf_counter()
        fn()
        dist.barrier()
        dt_ = time.perf_counter() - t0
        best = dt_ if best is None else min(best, dt_)
    return best

out = {"save": timed(lambda: dcp.save(state, checkpoint_id=path))}
for name, pl in (("load_same", dt.Shard(0)), ("load_reshard", dt.Shard(1))):
    tgt = {k: dt.distribute_tensor(M.zeros(rows, 1024), mesh, [pl]) for k in state}
    out[name] = timed(lambda: dcp.load(tgt, checkpoint_id=path))
    assert all(M.equal(tgt[k].full_tensor(), state[k].full_tensor()) for k in state)
if dist.get_rank() == 0:
    print(json.dumps(out))
dist.destroy_process_group()
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", choices=["ember", "torch"], default="ember")
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--tensors", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for rank in range(2):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank))
            env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
            args = [a.backend, str(a.mib), str(a.tensors), str(a.repeat), tmp + "/ckpt"]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _WORKER, *args],
                    env=env,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        outs = []
        for p in procs:
            out, _ = p.communicate(timeout=600)
            if p.returncode:
                sys.exit(f"a worker failed (exit {p.returncode})")
            outs.append(out)
    res = json.loads(outs[0].strip().splitlines()[-1])
    print(
        f"{a.backend}: {a.mib} MiB in {a.tensors} Shard(0) DTensors, 2 ranks: save "
        f"{res['save'] * 1e3:.0f} ms, load {res['load_same'] * 1e3:.0f} ms, load as Shard(1) "
        f"{res['load_reshard'] * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
