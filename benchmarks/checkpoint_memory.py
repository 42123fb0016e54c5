"""Peak memory of one training step of a deep MLP, plain and with activation checkpointing
(non-reentrant: built on saved-tensor hooks, see docs/ARCHITECTURE.md).

Each configuration runs in a fresh process, which resets its peak-RSS counter (VmHWM, through
/proc/self/clear_refs) after building the model and reports the growth of the peak during one
forward + backward + SGD step. Usage:
    python benchmarks/checkpoint_memory.py [--torch] [--depth 32] [--width 1024] [--batch 1024]
"""

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, sys
lib = __import__(sys.argv[1])
mode, depth, width, batch = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
from importlib import import_module
ck = import_module(sys.argv[1] + ".utils.checkpoint")
nn = lib.nn

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

lib.manual_seed(0)
layers = []
for _ in range(depth):
    layers += [nn.Linear(width, width), nn.ReLU()]
model = nn.Sequential(*layers)
opt = lib.optim.SGD(model.parameters(), lr=1e-3)
x = lib.randn(batch, width)
for p in model.parameters():  # the gradients exist before the measured step
    p.grad = lib.zeros_like(p)
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS:")
if mode == "plain":
    out = model(x)
elif mode.startswith("sequential"):
    out = ck.checkpoint_sequential(model, int(mode.split(":")[1]), x, use_reentrant=False)
else:
    out = ck.checkpoint(model, x, use_reentrant=False)
out.square().mean().backward()
opt.step()
peak = status("VmHWM:")
print(json.dumps({"mode": mode, "peak_growth_bytes": peak - before}))
"""


def measure(lib, mode, depth, width, batch):
    """The growth of the peak RSS (bytes) over one training step, in a fresh process."""
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, lib, mode, str(depth), str(width), str(batch)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])["peak_growth_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch", action="store_true", help="measure torch as well")
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--child", help="measure only this mode of ember, printing JSON")
    a = ap.parse_args()
    if a.child:
        growth = measure("ember", a.child, a.depth, a.width, a.batch)
        print(json.dumps({"mode": a.child, "peak_growth_bytes": growth}))
        return
    act = a.batch * a.width * 4
    print(
        f"MLP {a.depth} x (Linear({a.width}, {a.width}) + ReLU), batch {a.batch}: "
        f"one activation is {act / 2**20:.1f} MiB"
    )
    for lib in ["ember"] + (["torch"] if a.torch else []):
        for mode in ["plain", "sequential:2", "sequential:4", "sequential:8"]:
            growth = measure(lib, mode, a.depth, a.width, a.batch)
            print(f"{lib:6s} {mode:13s} peak growth {growth / 2**20:8.1f} MiB")


if __name__ == "__main__":
    main()
