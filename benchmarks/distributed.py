"""Collectives and DDP over Gloo: ember beside torch's gloo backend in one run, 2 processes on
localhost.

Usage: .venv/bin/python benchmarks/distributed.py [--world-size 2] [--threads 1] [--quick]

Prints, for each library:
- all_reduce (float32, SUM) from 4 KB to 64 MB: median time per call and bus bandwidth
  (2 (n-1)/n x bytes / time, the NCCL-tests convention), and reduce_scatter_tensor of the same
  inputs;
- a DDP training step (zero_grad, forward, cross-entropy, backward, SGD step) of the
  Fashion-MNIST CNN (examples/fashion_mnist.py) and of an MLP, beside the same step without DDP
  and a lone all_reduce of all the gradients: when communication overlaps backward, the DDP step
  costs less than step + all_reduce ("overlap" is the share of the all_reduce hidden).
- an FSDP2 (fully_shard) training step of a small transformer (4 blocks, d=256, AdamW) and
  its per-rank parameter bytes (the local shards) and peak RSS, beside the same model unsharded,
  and clip_grad_norm_ of its sharded gradients;
- a tensor-parallel step (ColwiseParallel + RowwiseParallel) of an MLP 1024-4096-1024.
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


def _transformer(lib, d=256, heads=4, layers=4):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, S, _ = x.shape
            q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
            q, k, v = (t.view(B, S, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(B, S, d))
            return x + self.down(F.gelu(self.up(self.n2(x))))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.head = nn.Linear(d, 16)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x)

    return Net()


def _peak_rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_sharded(lib, dist, min_time):
    """FSDP2 and tensor-parallel steps."""
    fsdp = importlib.import_module(lib.__name__ + ".distributed.fsdp")
    tp = importlib.import_module(lib.__name__ + ".distributed.tensor.parallel")
    dm = importlib.import_module(lib.__name__ + ".distributed.device_mesh")
    F = lib.nn.functional
    res = {}
    lib.manual_seed(0)
    x = lib.randn(8, 64, 256)
    y = lib.randint(0, 16, (8 * 64,))
    for label in ("local", "fsdp"):
        model = _transformer(lib)
        full_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        if label == "fsdp":
            for b in model.blocks:
                fsdp.fully_shard(b)
            fsdp.fully_shard(model)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)

        def step(model=model, opt=opt):
            opt.zero_grad()
            F.cross_entropy(model(x).reshape(-1, 16), y).backward()
            opt.step()

        res[label] = _fixed(lib, dist, step, min_time * 3)
        if label == "fsdp":
            # the DTensor gradients' total norm (each shard's norm partial, reduced once)
            params = list(model.parameters())
            res["clip"] = _fixed(
                lib, dist, lambda: lib.nn.utils.clip_grad_norm_(params, 1.0), min_time
            )
            local = [p.to_local() for p in model.parameters()]
            res["param_bytes"] = sum(t.numel() * t.element_size() for t in local)
            res["full_param_bytes"] = full_bytes
            del model, opt, step
    res["peak_rss_mb"] = _peak_rss_mb()
    mesh = dm.init_device_mesh("cpu", (dist.get_world_size(),))
    nn = lib.nn
    mlp = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
    tp.parallelize_module(mlp, mesh, {"0": tp.ColwiseParallel(), "2": tp.RowwiseParallel()})
    opt = lib.optim.SGD(mlp.parameters(), lr=1e-3)
    xt = lib.randn(64, 1024)

    def tp_step():
        opt.zero_grad()
        mlp(xt).pow(2).mean().backward()
        opt.step()

    res["tp"] = _fixed(lib, dist, tp_step, min_time * 3)
    return res


def worker(lib_name, quick, part="all"):
    lib = importlib.import_module(lib_name)
    dist = importlib.import_module(lib_name + ".distributed")
    lib.set_num_threads(int(os.environ["BENCH_THREADS"]))
    dist.init_process_group("gloo")
    min_time = 0.1 if quick else 0.4
    res = {"all_reduce": {}, "reduce_scatter": {}, "ddp": {}}
    if part == "sharded":
        res["sharded"] = worker_sharded(lib, dist, min_time)
        if dist.get_rank() == 0:
            print("RESULT " + json.dumps(res))
        dist.destroy_process_group()
        return

    for nbytes in SIZES[: 5 if quick else None]:
        t = lib.ones(nbytes // 4)
        n = 20 if nbytes <= (1 << 20) else 5

        def calls(t=t, n=n):
            for _ in range(n):
                dist.all_reduce(t)

        sec = _fixed(lib, dist, calls, min_time) / n
        res["all_reduce"][nbytes] = sec
        chunk = lib.empty(nbytes // 4 // dist.get_world_size())

        def rs_calls(t=t, n=n, chunk=chunk):
            for _ in range(n):
                dist.reduce_scatter_tensor(chunk, t)

        try:
            res["reduce_scatter"][nbytes] = _fixed(lib, dist, rs_calls, min_time) / n
        except RuntimeError:  # a backend without reduce_scatter_tensor
            res["reduce_scatter"][nbytes] = None

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
    if part == "all":
        res["sharded"] = worker_sharded(lib, dist, min_time)
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


def run(lib_name, world, threads, quick, part):
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
        cmd = [sys.executable, __file__, "--worker", lib_name, "--part", part]
        cmd += ["--quick"] if quick else []
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
    p.add_argument(
        "--part", default="all", choices=("all", "sharded"), help="sharded: FSDP2 and TP only"
    )
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.quick, args.part)
    n = args.world_size
    results = {lib: run(lib, n, args.threads, args.quick, args.part) for lib in ("ember", "torch")}
    e, t = results["ember"], results["torch"]
    _print_sharded(e, t, n, args.threads)
    if args.part == "sharded":
        return
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
    print(f"\nreduce_scatter_tensor float32 SUM, {n} processes (ember vs torch)")
    print(f"{'size':>8} {'ember us':>10} {'torch us':>10} {'ember/torch time':>17}")
    for size, es in e["reduce_scatter"].items():
        ts = t["reduce_scatter"].get(size)
        nbytes = int(size)
        label = f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"
        tcol = f"{ts * 1e6:10.1f}" if ts else f"{'n/a':>10}"
        ratio = f"{es / ts:17.2f}" if ts else f"{'':>17}"
        print(f"{label:>8} {es * 1e6:10.1f} {tcol} {ratio}")
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


def _print_sharded(e, t, n, threads):
    es, ts = e["sharded"], t["sharded"]
    print(f"FSDP2 / tensor parallel, {n} processes, {threads} thread(s) each (ms)")
    print(f"{'':<44} {'ember':>9} {'torch':>9} {'ember/torch':>12}")
    rows = [
        ("transformer step, unsharded (per rank)", "local", 1e3),
        ("transformer step, fully_shard", "fsdp", 1e3),
        ("clip_grad_norm_ of the fully_shard grads", "clip", 1e3),
        ("TP MLP 1024-4096-1024 step", "tp", 1e3),
    ]
    for label, key, scale in rows:
        a, b = es[key] * scale, ts[key] * scale
        print(f"{label:<44} {a:9.2f} {b:9.2f} {a / b:12.2f}")
    mb = 1 << 20
    print(
        f"{'parameter MB per rank (full model)':<44} {es['param_bytes'] / mb:9.2f}"
        f" {ts['param_bytes'] / mb:9.2f}   ({es['full_param_bytes'] / mb:.2f} unsharded)"
    )
    print(f"{'peak RSS MB, rank 0':<44} {es['peak_rss_mb']:9.0f} {ts['peak_rss_mb']:9.0f}")
    print()


if __name__ == "__main__":
    main()
