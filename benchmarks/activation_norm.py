"""Activations and normalization: ember beside torch in one run.

Usage: .venv/bin/python benchmarks/activation_norm.py [--repeat N] [--threads T]
Prints the median time per call (milliseconds) for each library and the ratio ember/torch
(lower is better), with the same intra-op thread count for both.
"""

import argparse
import statistics
import timeit

import numpy as np
from _compare import frameworks


def workloads(lib):
    rng = np.random.default_rng(0)
    big = lib.tensor(rng.standard_normal((4096, 1024), dtype=np.float32))
    img = lib.tensor(rng.standard_normal((64, 32, 28, 28), dtype=np.float32)).requires_grad_()
    w = lib.ones(32, requires_grad=True)
    b = lib.zeros(32, requires_grad=True)
    rm, rv = lib.zeros(32), lib.ones(32)
    rows = lib.tensor(rng.standard_normal((4096, 1024), dtype=np.float32)).requires_grad_()
    lw = lib.ones(1024, requires_grad=True)
    lb = lib.zeros(1024, requires_grad=True)
    f = lib.nn.functional

    def bn_train():
        f.batch_norm(img, rm, rv, w, b, training=True).sum().backward()

    def ln_fwd_bwd():
        f.layer_norm(rows, (1024,), lw, lb).sum().backward()

    def gelu_fwd_bwd():
        f.gelu(img).sum().backward()

    with lib.no_grad():
        return {
            "gelu (4096x1024)": lambda: f.gelu(big),
            "gelu tanh (4096x1024)": lambda: f.gelu(big, approximate="tanh"),
            "silu (4096x1024)": lambda: f.silu(big),
            "gelu fwd+bwd (64,32,28,28)": gelu_fwd_bwd,
            "batch_norm train fwd (64,32,28,28)": lambda: f.batch_norm(
                img.detach(), rm, rv, w.detach(), b.detach(), training=True
            ),
            "batch_norm train fwd+bwd (64,32,28,28)": bn_train,
            "layer_norm fwd (4096,1024)": lambda: f.layer_norm(
                big, (1024,), lw.detach(), lb.detach()
            ),
            "layer_norm fwd+bwd (4096,1024)": ln_fwd_bwd,
        }


def measure(fn, repeat, number):
    fn()  # warm-up
    times = timeit.repeat(fn, repeat=repeat, number=number)
    return statistics.median(times) / number * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0: library default")
    args = parser.parse_args()

    libs = frameworks(args.threads)
    results = {}
    for name, lib in libs.items():
        for op, fn in workloads(lib).items():
            results.setdefault(op, {})[name] = measure(fn, args.repeat, args.number)
    print(f"{'op':42s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for op, r in results.items():
        t = r.get("torch")
        ratio = f"{r['ember'] / t:7.2f}" if t else "      -"
        print(f"{op:42s} {r['ember']:10.3f} {t if t else float('nan'):10.3f} {ratio}")


if __name__ == "__main__":
    main()
