"""How much of an in-memory dataset each forked DataLoader worker copies over one epoch.

A map-style dataset held in Python objects (a list of per-sample tensors or arrays, or of
(image, label) tuples) is shared with forked workers copy-on-write; any write to a page of the
dataset - a reference count, the cycle collector's bookkeeping in an object's header - gives the
writer a private copy of that page. Each worker's growth of Private_Dirty (from
/proc/<pid>/smaps_rollup: pages only it holds, the honest measure of what it copied) between its
start (worker_init_fn) and the end of one epoch is reported as a fraction of the dataset's data
bytes. Each backend runs in its own fresh process. Usage:
    python benchmarks/loader_memory.py [--backend ember|torch|both] [--mb 500]
        [--kind tuples|tensors|arrays] [--source native|numpy] [--shape 3,32,32] [--workers 2]
        [--batch 64]
"""

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, os, sys, tempfile, time
import numpy as np
name, kind, mb, shape, workers, batch, source = sys.argv[1:8]
lib = __import__(name)
from importlib import import_module
data = import_module(name + ".utils.data")
shape = tuple(int(s) for s in shape.split(","))
workers, batch = int(workers), int(batch)

def smaps(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out

item_bytes = int(np.prod(shape)) * 4
n = int(mb) * 2**20 // item_bytes
rng = np.random.default_rng(0)
t0 = time.perf_counter()
items = []
for i in range(n):
    a = rng.standard_normal(shape, dtype=np.float32)
    if kind == "arrays":
        items.append(a)
    else:
        t = lib.from_numpy(a)  # "numpy": the tensor shares the array's memory
        if source == "native":  # made by the library, as a transform's output is
            t = t.clone()
        items.append((t, i % 10) if kind == "tuples" else t)
build_s = time.perf_counter() - t0

class ListDataset(data.Dataset):
    def __init__(self, items):
        self.items = items
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        return self.items[i]

stamp_dir = tempfile.mkdtemp()
def init_fn(worker_id):
    with open(os.path.join(stamp_dir, str(os.getpid())), "w") as f:
        json.dump(smaps("self"), f)

loader = data.DataLoader(ListDataset(items), batch_size=batch, shuffle=True, num_workers=workers,
                         persistent_workers=True, worker_init_fn=init_fn)
parent_before = smaps("self")
t0 = time.perf_counter()
count = 0
for b in loader:
    count += 1
epoch_s = time.perf_counter() - t0
rows = []
for pid in sorted(os.listdir(stamp_dir)):
    with open(os.path.join(stamp_dir, pid)) as f:
        start = json.load(f)
    end = smaps(pid)
    rows.append({k: end[k] - start[k] for k in ("Private_Dirty", "Pss", "Rss")})
parent_after = smaps("self")
print(json.dumps({"backend": name, "kind": kind, "items": n, "data_bytes": n * item_bytes,
                  "batches": count, "build_s": build_s, "epoch_s": epoch_s, "workers": rows,
                  "parent_private_dirty_growth": parent_after["Private_Dirty"]
                  - parent_before["Private_Dirty"]}))
"""


def run(backend, args):
    cmd = [sys.executable, "-c", _CHILD, backend, args.kind, str(args.mb), args.shape]
    cmd += [str(args.workers), str(args.batch), args.source]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{backend}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="both", choices=["ember", "torch", "both"])
    p.add_argument("--kind", default="tuples", choices=["tuples", "tensors", "arrays"])
    p.add_argument(
        "--source",
        default="native",
        choices=["native", "numpy"],
        help="tensors allocated by the library (a transform's output) or sharing numpy arrays",
    )
    p.add_argument("--mb", type=int, default=500, help="data bytes of the dataset, in MiB")
    p.add_argument("--shape", default="3,32,32", help="shape of one float32 sample")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--json", action="store_true", help="print the raw results")
    args = p.parse_args()
    backends = ["ember", "torch"] if args.backend == "both" else [args.backend]
    print(f"dataset: {args.mb} MiB of float32 samples {args.shape} as {args.kind} ({args.source})")
    print(f"{args.workers} workers, batch {args.batch}, one shuffled epoch")
    print(
        f"{'backend':8} {'worker':>6} {'private dirty':>14} {'% of data':>9} {'pss':>9} "
        f"{'epoch s':>8}"
    )
    for b in backends:
        r = run(b, args)
        if args.json:
            print(json.dumps(r))
        for i, w in enumerate(r["workers"]):
            pd = w["Private_Dirty"]
            print(
                f"{b:8} {i:>6} {pd / 2**20:>11.1f} MiB {100 * pd / r['data_bytes']:>8.1f}% "
                f"{w['Pss'] / 2**20:>5.1f} MiB {r['epoch_s']:>8.2f}"
            )


if __name__ == "__main__":
    main()
