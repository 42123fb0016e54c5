"""Elementwise ops and simple reductions: ember beside torch in one run.

Usage: .venv/bin/python benchmarks/elementwise.py [--repeat N] [--number N] [--threads T]
Prints the median time per call (milliseconds) for each library and the ratio ember/torch
(lower is better), with the same intra-op thread count for both. The two libraries are
measured alternately, repeat by repeat, so machine noise hits both alike.
"""

import argparse
import statistics
import timeit

import numpy as np
from _compare import frameworks

SHAPE = (128, 32, 28, 28)


def workloads(lib):
    """Named zero-argument callables over a (128, 32, 28, 28) float32 activation tensor."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(SHAPE, dtype=np.float32))
    y = lib.tensor(rng.standard_normal(SHAPE, dtype=np.float32))
    g = lib.tensor(rng.standard_normal(SHAPE, dtype=np.float32))
    xt = x.transpose(1, 3)
    leaf = x.clone().requires_grad_()
    f = lib.nn.functional

    def relu_fwd_bwd():
        f.relu(leaf).backward(g)
        leaf.grad = None

    return {
        "relu": lambda: lib.relu(x),
        "abs": lambda: lib.abs(x),
        "neg": lambda: lib.neg(x),
        "exp": lambda: lib.exp(x),
        "sigmoid": lambda: lib.sigmoid(x),
        "tanh": lambda: lib.tanh(x),
        "add": lambda: lib.add(x, y),
        "mul": lambda: lib.mul(x, y),
        "mul by float": lambda: x * 0.5,
        "clamp(min=0)": lambda: lib.clamp(x, min=0),
        "gt 0": lambda: x > 0,
        "sum()": lambda: x.sum(),
        "clone": lambda: x.clone(),
        "relu transposed": lambda: lib.relu(xt),
        "add transposed": lambda: xt + 1.0,
        "relu fwd+bwd": relu_fwd_bwd,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="0: library default")
    args = parser.parse_args()

    libs = frameworks(args.threads)
    fns = {name: workloads(lib) for name, lib in libs.items()}
    print(f"shape {SHAPE} float32, threads {args.threads or 'default'}")
    print(f"{'op':20s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for op in fns["ember"]:
        times = {name: [] for name in libs}
        for name in libs:
            fns[name][op]()  # warm-up
        for _ in range(args.repeat):
            for name in libs:
                times[name].append(timeit.timeit(fns[name][op], number=args.number) / args.number)
        ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
        t = ms.get("torch")
        ratio = f"{ms['ember'] / t:7.2f}" if t else "      -"
        print(f"{op:20s} {ms['ember']:10.3f} {t if t else float('nan'):10.3f} {ratio}")


if __name__ == "__main__":
    main()
