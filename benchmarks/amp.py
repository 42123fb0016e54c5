"""bfloat16 autocast: ember vs torch 2.13 side by side in one run, same thread count.

Times one bf16-autocast training step (forward under autocast, float32 loss, backward, SGD on
float32 parameters) of an MLP 1024 -> 2048 -> 1024 at batch 256 and of the Fashion-MNIST CNN
(examples/fashion_mnist.py's model) at batch 128, each next to its float32 step; then the bf16
GEMM's throughput against float32's. The libraries run alternately (best of R), so load changes
on a shared machine hit both alike.

Usage: python benchmarks/amp.py [--threads N] [--repeat R]
"""

import argparse
import os
import sys

import numpy as np
from _compare import best_times, frameworks

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from fashion_mnist import build_model  # noqa: E402


def mlp(nn):
    return nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 1024))


def train_step(lib, model, x, y, amp, classify):
    opt = lib.optim.SGD(model.parameters(), lr=1e-3)
    F = lib.nn.functional
    xs, ys = lib.tensor(x), lib.tensor(y)

    def run():
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=amp):
            out = model(xs)
            loss = F.cross_entropy(out, ys) if classify else F.mse_loss(out, ys)
        loss.backward()
        opt.step()

    return run


def gemm(lib, n, dtype):
    a = lib.tensor(np.random.RandomState(0).randn(n, n).astype(np.float32)).to(dtype)
    b = lib.tensor(np.random.RandomState(1).randn(n, n).astype(np.float32)).to(dtype)

    def run():
        with lib.no_grad():
            lib.mm(a, b)

    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    libs = frameworks(args.threads)
    names = list(libs)
    rng = np.random.RandomState(0)
    print(f"threads: {libs['ember'].get_num_threads()}; best of {args.repeat}; ms per call")
    print(f"{'workload':34s}" + "".join(f"{n:>10s}" for n in names) + "   ember/torch")

    def row(label, fns, repeat=args.repeat):
        times = best_times(fns, repeat)
        ratio = f"{times[0] / times[1]:9.2f}x" if len(times) > 1 else ""
        print(f"{label:34s}" + "".join(f"{t * 1e3:10.2f}" for t in times) + "   " + ratio)
        return times

    x, y = rng.randn(256, 1024).astype(np.float32), rng.randn(256, 1024).astype(np.float32)
    xc = rng.randn(128, 1, 28, 28).astype(np.float32)
    yc = rng.randint(0, 10, 128).astype(np.int64)
    results = {}
    for amp in (False, True):
        tag = "bf16 autocast" if amp else "float32"
        fns = []
        for n in names:
            libs[n].manual_seed(0)
            fns.append(train_step(libs[n], mlp(libs[n].nn), x, y, amp, False))
        results["mlp", amp] = row(f"MLP train step, {tag}", fns)
        fns = []
        for n in names:
            libs[n].manual_seed(0)
            fns.append(train_step(libs[n], build_model(libs[n].nn), xc, yc, amp, True))
        results["cnn", amp] = row(f"CNN train step, {tag}", fns)
    for size in (1024, 2048):
        flops = 2.0 * size**3
        t32 = row(f"mm {size}^3 float32", [gemm(libs[n], size, libs[n].float32) for n in names], 5)
        t16 = row(
            f"mm {size}^3 bfloat16", [gemm(libs[n], size, libs[n].bfloat16) for n in names], 5
        )
        print(
            "  GFLOP/s float32 / bf16: "
            + ", ".join(
                f"{n} {flops / a / 1e9:.0f} / {flops / b / 1e9:.0f}"
                for n, a, b in zip(names, t32, t16)
            )
            + f"; ember bf16 vs ember float32: {t32[0] / t16[0]:.2f}x"
        )
    e = 0
    print(
        "ember speed-up of bf16 autocast over float32: "
        f"MLP {results['mlp', False][e] / results['mlp', True][e]:.2f}x, "
        f"CNN {results['cnn', False][e] / results['cnn', True][e]:.2f}x"
    )


if __name__ == "__main__":
    main()
