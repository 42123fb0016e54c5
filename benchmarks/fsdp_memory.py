"""Peak memory per rank of one FSDP2 training step (2 ranks on localhost, gloo).

An MLP of --layers x Linear(--width, --width), each layer fully_shard'ed and the root too,
trained one step on a small batch, so the parameters dominate memory. Each rank resets its
peak-RSS counter (VmHWM, through /proc/self/clear_refs) after sharding the model and reports
the growth of the peak over forward + backward + SGD step, next to the full and the per-rank
parameter bytes. Run it with two installs to compare them (e.g. main's venv and a branch's):
    python benchmarks/fsdp_memory.py [--layers 16] [--width 1024] [--batch 8] [--no-reshard]
"""

import argparse
import json
import os
import socket
import subprocess
import sys

_WORKER = r"""
import json, os, sys
import ember
import ember.distributed as dist
from ember.distributed.fsdp import fully_shard
layers, width, batch, reshard = (int(a) for a in sys.argv[1:5])

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

dist.init_process_group("gloo")
ember.manual_seed(0)
nn = ember.nn
model = nn.Sequential(*[nn.Linear(width, width) for _ in range(layers)])
full = sum(p.numel() * p.element_size() for p in model.parameters())
for layer in model:
    fully_shard(layer, reshard_after_forward=bool(reshard))
fully_shard(model, reshard_after_forward=bool(reshard))
mine = sum(p.to_local().numel() * p.element_size() for p in model.parameters())
opt = ember.optim.SGD(model.parameters(), lr=1e-3)
x = ember.randn(batch, width)
dist.barrier()
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS:")
model(x).square().mean().backward()
opt.step()
peak = status("VmHWM:")
dist.barrier()
print(json.dumps({"rank": dist.get_rank(), "peak_growth": peak - before, "full": full,
                  "mine": mine}))
dist.destroy_process_group()
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--no-reshard", action="store_true", help="reshard_after_forward=False")
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank))
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        args = [str(a.layers), str(a.width), str(a.batch), str(int(not a.no_reshard))]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, *args], env=env, stdout=subprocess.PIPE, text=True
            )
        )
    rows = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        if p.returncode:
            sys.exit(f"a worker failed (exit {p.returncode})")
        rows.append(json.loads(out.strip().splitlines()[-1]))
    mib = 2**20
    print(
        f"FSDP2, 2 ranks, {a.layers} x Linear({a.width}, {a.width}), batch {a.batch}, "
        f"reshard_after_forward={not a.no_reshard}: parameters {rows[0]['full'] / mib:.1f} MiB, "
        f"{rows[0]['mine'] / mib:.1f} MiB per rank"
    )
    for r in sorted(rows, key=lambda r: r["rank"]):
        print(f"rank {r['rank']}: peak growth over one step {r['peak_growth'] / mib:8.1f} MiB")


if __name__ == "__main__":
    main()
