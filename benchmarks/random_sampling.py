"""Sampling ops, ember beside torch: both draw torch's CPU random stream (mt19937), serially.

Usage: .venv/bin/python benchmarks/random_sampling.py [--threads N] [--repeat N]
Prints the best wall and CPU milliseconds per call of each sampler (1M elements, as a 1024x1024
activation for dropout) for each library, calls alternating, and ember/torch of each (lower is
better). The values themselves are equal: tests/python/test_random_torch_stream.py checks that.
"""

import argparse
import time

from _compare import frameworks

N = 1 << 20

WORKLOADS = {
    "rand": lambda lib, x: lib.rand(N),
    "randn": lambda lib, x: lib.randn(N),
    "randn float64": lambda lib, x: lib.randn(N, dtype=lib.float64),
    "randint": lambda lib, x: lib.randint(0, 1000, (N,)),
    "randperm": lambda lib, x: lib.randperm(N),
    "bernoulli_(0.3)": lambda lib, x: x.bernoulli_(0.3),
    "dropout(0.1)": lambda lib, x: lib.nn.functional.dropout(x.view(1024, 1024), 0.1),
    "_standard_gamma": lambda lib, x: lib._standard_gamma(x.fill_(2.5)),
}


def best(fn, repeat):
    """(best wall, best CPU) seconds of `repeat` calls."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    libs = frameworks(args.threads)
    bufs = {key: lib.empty(N) for key, lib in libs.items()}
    print(f"{N:,} elements; best ms per call over {args.repeat} calls, alternating")
    head = "".join(f"{k + ' wall':>12}{k + ' cpu':>12}" for k in libs)
    print(f"{'sampler':<18}{head}  ember/torch wall, cpu")
    for name, work in WORKLOADS.items():
        times = {key: (float("inf"), float("inf")) for key in libs}
        for _ in range(3):  # rounds alternate the libraries so load hits both alike
            for key, lib in libs.items():
                w, c = best(lambda: work(lib, bufs[key]), args.repeat)
                times[key] = (min(times[key][0], w), min(times[key][1], c))
        row = "".join(f"{w * 1e3:12.2f}{c * 1e3:12.2f}" for w, c in times.values())
        if "torch" in times:
            (ew, ec), (tw, tc) = times["ember"], times["torch"]
            row += f"  {ew / tw:.2f}, {ec / tc:.2f}"
        print(f"{name:<18}{row}")


if __name__ == "__main__":
    main()
