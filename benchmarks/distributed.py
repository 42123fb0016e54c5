"""Collectives and DDP over Gloo: ember beside torch's gloo backend in one run, 2 processes on
localhost.

Usage: .venv/bin/python benchmarks/distributed.py [--world-size 2] [--threads 1] [--quick]

Prints, for each library:
- all_reduce (float32, SUM) from 4 KB to 64 MB: median time per call and bus bandwidth
  (2 (n-1)/n x bytes / time, the NCCL-tests convention);
- a DDP training step (zero_grad, forward, cross-entropy, backward, SGD step) of the
  Fashion-MNIST CNN (examples/fashion_mnist.py) and of an MLP, beside the same step without DDP
  and a lone all_reduce of all the gradients: when communication overlaps backward, the DDP step
  costs less than step + all_reduce ("overlap" is the share of the all_reduce hidden).
Ratios are ember/torch (lower is better for times, higher for bandwidth).
"""

import argparse
import importlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]


def _models(lib):
    nn = lib.nn
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
    from fashion_mnist import build_model

    cnn = build_model(nn)
    mlp = nn.Sequential(
        nn.Flatten(),
        nn.Linear(784, 1024),
        nn.ReLU(),
        nn.Linear(1024, 1024),
        nn.ReLU(),
        nn.Linear(1024, 10),
    )
    return {"CNN (batch 64/rank)": (cnn, 64), "MLP 784-1024-1024-10 (batch 128/rank)": (mlp, 128)}


def worker(lib_name, quick):
    lib = importlib.import_module(lib_name)
    dist = importlib.import_module(lib_name + ".distributed")
    lib.set_num_threads(int(os.environ["BENCH_THREADS"]))
    dist.init_process_group("gloo")
    min_time = 0.1 if quick else 0.4
    res = {"all_reduce": {}, "ddp": {}}

    for nbytes in SIZES[: 5 if quick else None]:
        t = lib.ones(nbytes // 4)
        n = 20 if nbytes <= (1 << 20) else 5

        def calls(t=t, n=n):
            for _ in range(n):
                dist.all_reduce(t)

        sec = _fixed(lib, dist, calls, min_time) / n
        res["all_reduce"][nbytes] = sec

    lib.manual_seed(0)
    for name, (model, batch) in _models(lib).items():
        x = lib.randn(batch, 1, 28, 28)
        y = lib.randint(0, 10, (batch,))
        ddp = lib.nn.parallel.DistributedDataParallel(model)
        out = {}
        for label, m in (("local", model), ("ddp", ddp)):
            opt = lib.optim.SGD(m.parameters(), lr=0.01)

            def step(m=m, opt=opt):
                opt.zero_grad()
                lib.nn.functional.cross_entropy(m(x), y).backward()
                opt.step()

            out[label] = _fixed(lib, dist, step, min_time * 3)
        grads = lib.zeros(sum(p.numel() for p in model.parameters()))
        out["all_reduce_grads"] = _fixed(lib, dist, lambda g=grads: dist.all_reduce(g), min_time)
        res["ddp"][name] = out
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(res))
    dist.destroy_process_group()


def _fixed(lib, dist, fn, min_time):
    """Median seconds of fn over a repetition count rank 0 picks (every rank runs it as often,
    as collectives need)."""
    fn()
    dist.barrier()
    t0 = time.perf_counter()
    fn()
    probe = lib.tensor([time.perf_counter() - t0], dtype=lib.float64)
    dist.broadcast(probe, src=0)
    reps = max(5, min(500, int(min_time / max(probe.item(), 1e-6))))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    med = lib.tensor([statistics.median(times)], dtype=lib.float64)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    return med.item()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(lib_name, world, threads, quick):
    port = _free_port()
    procs = []
    for r in range(world):
        env = dict(
            os.environ,
            RANK=str(r),
            WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            BENCH_THREADS=str(threads),
            OMP_NUM_THREADS=str(threads),
        )
        cmd = [sys.executable, __file__, "--worker", lib_name] + (["--quick"] if quick else [])
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=900)[0] for p in procs]
    for p, o in zip(procs, outs):
        if p.returncode:
            raise SystemExit(f"{lib_name} worker failed ({p.returncode}):\n{o}")
    line = [x for x in outs[0].splitlines() if x.startswith("RESULT ")][0]
    return json.loads(line[len("RESULT ") :])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="intra-op threads per process")
    p.add_argument("--quick", action="store_true", help="fewer sizes, shorter timings")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.quick)
    n = args.world_size
    results = {lib: run(lib, n, args.threads, args.quick) for lib in ("ember", "torch")}
    e, t = results["ember"], results["torch"]
    print(f"all_reduce float32 SUM, {n} processes on localhost, Gloo (ember vs torch)")
    print(
        f"{'size':>8} {'ember us':>10} {'torch us':>10} {'ember GB/s':>11} {'torch GB/s':>11}"
        f" {'ember/torch time':>17}"
    )
    for size, es in e["all_reduce"].items():
        ts = t["all_reduce"][size]
        nbytes = int(size)
        bus = 2 * (n - 1) / n * nbytes
        label = f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"
        print(
            f"{label:>8} {es * 1e6:10.1f} {ts * 1e6:10.1f} {bus / es / 1e9:11.3f}"
            f" {bus / ts / 1e9:11.3f} {es / ts:17.2f}"
        )
    print(f"\nDDP training step, {n} processes, {args.threads} thread(s) each (ms)")
    print(f"{'model':<40} {'lib':<6} {'local':>7} {'DDP':>7} {'allreduce':>10} {'overlap':>8}")
    for name in e["ddp"]:
        for lib, r in (("ember", e), ("torch", t)):
            d = r["ddp"][name]
            hidden = d["local"] + d["all_reduce_grads"] - d["ddp"]
            overlap = max(0.0, min(1.0, hidden / d["all_reduce_grads"]))
            print(
                f"{name:<40} {lib:<6} {d['local'] * 1e3:7.2f} {d['ddp'] * 1e3:7.2f}"
                f" {d['all_reduce_grads'] * 1e3:10.2f} {overlap:8.0%}"
            )
        ratio = e["ddp"][name]["ddp"] / t["ddp"][name]["ddp"]
        print(f"{'':<40} DDP step ember/torch: {ratio:.2f}")


if __name__ == "__main__":
    main()
