"""Loading a ~100 MB state_dict written by torch.save: ember.load against torch.load.

Each load runs in a fresh process (so peak RSS is that load's own), the file warm in the page
cache; prints the median wall time of the load call and the growth of peak RSS (VmHWM) over the
process's state just before it, side by side.

    .venv/bin/python benchmarks/checkpoint_load.py [--mb 100] [--repeat 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PROBE = r"""
import re, sys, time
lib, path, mmap = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
mod = __import__(lib)
hwm = lambda: int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read())[1]) * 1024
before = hwm()
t0 = time.perf_counter()
sd = mod.load(path, map_location="cpu", weights_only=True, mmap=mmap)
dt = time.perf_counter() - t0
total = sum(v.numel() * v.element_size() for v in sd.values())
if mmap:  # touch every page, as using the weights would
    total = sum(float(v.float().sum()) * 0 + v.numel() * v.element_size() for v in sd.values())
print(dt, hwm() - before, total)
"""


def _make(path, mb):
    import torch

    torch.manual_seed(0)
    sd, left, i = {}, mb * 2**20 // 4, 0
    while left > 0:  # a transformer-like mix: big matrices, biases, norms
        for name, shape in (
            ("qkv", (768 * 3, 768)),
            ("qkv_bias", (768 * 3,)),
            ("proj", (768, 768)),
            ("norm", (768,)),
            ("fc1", (3072, 768)),
            ("fc2", (768, 3072)),
            ("fc_bias", (3072,)),
        ):
            n = min(left, shape[0] * (shape[1] if len(shape) > 1 else 1))
            if n <= 0:
                break
            t = torch.randn(shape) if n == torch.Size(shape).numel() else torch.randn(n)
            sd[f"layer{i}.{name}"] = t
            left -= n
        i += 1
    torch.save(sd, path)
    return len(sd)


def _run(lib, path, mmap, repeat):
    times, peaks = [], []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", PROBE, lib, path, "1" if mmap else "0"],
            capture_output=True,
            text=True,
            check=True,
        )
        dt, peak, total = out.stdout.split()
        times.append(float(dt))
        peaks.append(int(peak))
    return statistics.median(times), max(peaks), int(float(total))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sd.pt")
        n = _make(path, args.mb)
        with open(path, "rb") as f:
            f.read()  # warm the page cache
        print(f"state_dict: {n} tensors, file {os.path.getsize(path) / 2**20:.1f} MiB")
        print(f"{'':14}{'load time (ms)':>16}{'peak RSS growth (MiB)':>24}{'x data':>8}")
        for mmap in (False, True):
            for lib in ("torch", "ember"):
                t, peak, total = _run(lib, path, mmap, args.repeat)
                label = f"{lib}{' mmap' if mmap else ''}"
                print(f"{label:14}{t * 1e3:16.1f}{peak / 2**20:24.1f}{peak / total:8.2f}")


if __name__ == "__main__":
    main()
