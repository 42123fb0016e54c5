"""Per-op overhead on tiny tensors, ember beside torch in one run.

Usage: .venv/bin/python benchmarks/overhead.py [--repeat N]
Prints median time per call (microseconds) for each library and the ratio ember/torch
(lower is better). Both run with one intra-op thread so the numbers measure dispatch overhead.
"""

import argparse
import statistics
import timeit

from _compare import frameworks


def workloads(lib):
    a = lib.ones(4)
    b = lib.ones(4)
    x = lib.ones(4, 4)
    w = lib.ones(4, requires_grad=True)
    idx = lib.tensor([0, 2])
    o = lib.empty(4)

    def fwd_bwd():
        (w * a).sum().backward()

    # autograd.grad wrt one of two inputs: the engine computes mm's gradient for xm only
    # (Note [Engine pruning]); a backward that computed wm's too does twice the work.
    xm = lib.ones(64, 64, requires_grad=True)
    wm = lib.ones(64, 64, requires_grad=True)
    mm_loss = (xm @ wm).sum()

    return {
        "add (4 elements)": lambda: a + b,
        "mul + scalar": lambda: a * 2.0,
        "exp (4 elements)": lambda: a.exp(),
        "exp(a, out=o)": lambda: lib.exp(a, out=o),
        "add(a, b, out=o)": lambda: lib.add(a, b, out=o),
        "mul(a, 0.5, out=o)": lambda: lib.mul(a, 0.5, out=o),
        "sum": lambda: x.sum(),
        "sum(dim=1)": lambda: x.sum(1),
        "prod(dim=1)": lambda: x.prod(1),
        "amax(dim=1)": lambda: x.amax(1),
        "max(dim=1)": lambda: x.max(1),
        "argmax()": lambda: x.argmax(),
        "var_mean(dim=1)": lambda: lib.var_mean(x, 1),
        "any()": lambda: x.any(),
        "cumsum(dim=1)": lambda: x.cumsum(1),
        "view + transpose": lambda: x.view(16).view(4, 4).t(),
        "forward+backward (mul, sum)": fwd_bwd,
        "record + save output (w.exp())": lambda: w.exp(),
        "basic index x[1, 2:]": lambda: x[1, 2:],
        "advanced index x[idx]": lambda: x[idx],
        "grad wrt 1 of 2 (64x64 mm)": lambda: lib.autograd.grad(mm_loss, [xm], retain_graph=True),
    }


def measure(fn, repeat, number):
    times = timeit.repeat(fn, repeat=repeat, number=number)
    return statistics.median(times) / number * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()

    libs = frameworks(threads=1)

    results = {name: {} for name in libs}
    for name, lib in libs.items():
        for wname, fn in workloads(lib).items():
            fn()  # warm up
            results[name][wname] = measure(fn, args.repeat, args.number)

    header = f"{'workload':32s} {'ember us':>10s}"
    if "torch" in libs:
        header += f" {'torch us':>10s} {'ember/torch':>12s}"
    print(header)
    ratios = []
    for wname in results["ember"]:
        e = results["ember"][wname]
        line = f"{wname:32s} {e:10.2f}"
        if "torch" in libs:
            t = results["torch"][wname]
            ratios.append(e / t)
            line += f" {t:10.2f} {e / t:12.2f}"
        print(line)
    if ratios:
        print(f"{'geometric mean ratio':32s} {statistics.geometric_mean(ratios):>34.2f}")


if __name__ == "__main__":
    main()
