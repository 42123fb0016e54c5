"""What the profiler costs a small op, ember beside torch: one add(a, b, alpha=2) of 8 floats with
no profile, inside a profile, and inside a profile with record_shapes (which records the inputs'
types, strides and scalar values).

Usage: .venv/bin/python benchmarks/profiler_overhead.py [--number N] [--repeat N]
Prints the best CPU nanoseconds per call of each case for each library and ember/torch.
"""

import argparse
import contextlib
import time

from _compare import frameworks


def per_call(lib, ctx, number, repeat):
    a, b = lib.ones(8), lib.ones(8)
    best = float("inf")
    for _ in range(repeat):
        with ctx():
            t = time.process_time()
            for _ in range(number):
                lib.add(a, b, alpha=2)
            best = min(best, time.process_time() - t)
    return best / number * 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    libs = frameworks(1)
    cases = {
        "no profile": lambda lib: contextlib.nullcontext,
        "profile": lambda lib: lambda: lib.profiler.profile(),
        "profile, record_shapes": lambda lib: lambda: lib.profiler.profile(record_shapes=True),
    }
    for lib in libs.values():  # first calls: allocations, op lookups
        per_call(lib, contextlib.nullcontext, args.number, 1)
    print(f"best CPU ns per add over {args.repeat} x {args.number} calls, libraries alternating")
    print(f"{'case':<24}" + "".join(f"{k:>10}" for k in libs) + "  ember/torch")
    for name, make in cases.items():
        ns = {key: float("inf") for key in libs}
        for _ in range(3):
            for key, lib in libs.items():
                ns[key] = min(ns[key], per_call(lib, make(lib), args.number, args.repeat))
        row = "".join(f"{v:10.0f}" for v in ns.values())
        if "torch" in ns:
            row += f"  {ns['ember'] / ns['torch']:.2f}"
        print(f"{name:<24}{row}")


if __name__ == "__main__":
    main()
