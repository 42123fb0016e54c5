"""Forward versus reverse mode: func.jacfwd and func.jacrev on functions with few inputs and many
outputs (and the reverse shape), plus jvp and hessian, ember beside torch in one run.

Usage: .venv/bin/python benchmarks/func_ad.py [--budget SECONDS] [--threads N]
Prints the median milliseconds per call of each transform, the jacfwd/jacrev ratio in each
library (forward mode should win when inputs are few) and ember/torch for each transform.
"""

import argparse

from _compare import frameworks, median_time


def workloads(lib):
    lib.manual_seed(0)
    w_many = lib.randn(1000, 4, dtype=lib.float64)
    w_few = lib.randn(4, 256, dtype=lib.float64)
    x4 = lib.randn(4, dtype=lib.float64)
    x256 = lib.randn(256, dtype=lib.float64)

    def wide(x):  # R^4 -> R^1000
        return lib.tanh(w_many @ x.sin()) * x.sum()

    def narrow(x):  # R^256 -> R^4
        return lib.tanh(w_few @ x.sin()) * x.sum()

    def scalar(x):  # R^16 -> R
        return (x.sin() * x.exp()).sum() * x.sum()

    x16 = lib.randn(16, dtype=lib.float64)
    v4 = lib.randn(4, dtype=lib.float64)
    f = lib.func
    return {
        "jacfwd R^4->R^1000": lambda: f.jacfwd(wide)(x4),
        "jacrev R^4->R^1000": lambda: f.jacrev(wide)(x4),
        "jacfwd R^256->R^4": lambda: f.jacfwd(narrow)(x256),
        "jacrev R^256->R^4": lambda: f.jacrev(narrow)(x256),
        "jvp R^4->R^1000": lambda: f.jvp(wide, (x4,), (v4,)),
        "hessian R^16->R": lambda: f.hessian(scalar)(x16),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of samples per case")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per library")
    args = parser.parse_args()
    libs = frameworks(args.threads)
    times = {}
    for name, lib in libs.items():
        for case, fn in workloads(lib).items():
            times[(name, case)] = median_time(fn, args.budget) * 1e3
    cases = list(workloads(libs["ember"]))
    header = f"{'case':<22}" + "".join(f"{n + ' ms':>12}" for n in libs)
    if "torch" in libs:
        header += f"{'ember/torch':>13}"
    print(header)
    for case in cases:
        row = f"{case:<22}" + "".join(f"{times[(n, case)]:>12.3f}" for n in libs)
        if "torch" in libs:
            row += f"{times[('ember', case)] / times[('torch', case)]:>13.2f}"
        print(row)
    for n in libs:
        for shape in ("R^4->R^1000", "R^256->R^4"):
            ratio = times[(n, f"jacfwd {shape}")] / times[(n, f"jacrev {shape}")]
            print(f"{n}: jacfwd/jacrev on {shape} = {ratio:.3f}")


if __name__ == "__main__":
    main()
