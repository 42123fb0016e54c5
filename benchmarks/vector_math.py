"""The vector-math library (csrc/ember/cpu/vmath.h) against SLEEF and torch.

Usage: .venv/bin/python benchmarks/vector_math.py [--n N] [--repeat R]
Builds _vector_math.cpp (and, where Debian's libsleef-dev is installed, _vector_math_sleef.cpp
at AVX2 and AVX-512) with g++, then prints, for exp, log, tanh, sigmoid and erf over N float32s
on one thread: nanoseconds per element and the maximum error in ULPs against a float64 reference,
for ember's own functions at AVX-512 and AVX2, SLEEF's u10 functions at the same widths, and
torch's and ember's ops (which include allocating the output) as references.
"""

import argparse
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(HERE, "..", "csrc")
RANGES = {
    "exp": (-87.0, 88.0),
    "log": (1e-30, 1e30),
    "tanh": (-10.0, 10.0),
    "sigmoid": (-20.0, 20.0),
    "erf": (-4.5, 4.5),
}


def sleef_available():
    return os.path.exists("/usr/include/x86_64-linux-gnu/sleef.h") or os.path.exists(
        "/usr/include/sleef.h"
    )


def build(tmp):
    cxx = ["g++", "-O2", "-std=c++20"]
    objs, defs = [], []
    if sleef_available():
        src = os.path.join(HERE, "_vector_math_sleef.cpp")
        for w, flags in (
            (16, ["-mavx512f", "-mavx512dq", "-mavx2", "-mfma"]),
            (8, ["-mavx2", "-mfma"]),
        ):
            obj = os.path.join(tmp, f"sleef{w}.o")
            subprocess.run(cxx + flags + [f"-DW={w}", "-c", src, "-o", obj], check=True)
            objs.append(obj)
        defs = ["-DHAVE_SLEEF"]
    exe = os.path.join(tmp, "vector_math")
    subprocess.run(
        cxx
        + ["-I", CSRC]
        + defs
        + [os.path.join(HERE, "_vector_math.cpp")]
        + objs
        + ["-o", exe]
        + (["-lsleef"] if defs else []),
        check=True,
    )
    return exe


def inputs(name, n):
    rng = np.random.default_rng(0)
    lo, hi = RANGES[name]
    if name == "log":
        return np.exp(rng.uniform(np.log(lo), np.log(hi), n)).astype(np.float32)
    return rng.uniform(lo, hi, n).astype(np.float32)


def max_ulp(got, x, ref_fn):
    ref = ref_fn(x.astype(np.float64))
    r32 = ref.astype(np.float32)
    spacing = np.spacing(np.abs(r32)).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - ref) / spacing))


def op_rows(n, repeat):
    """torch's and ember's ops on one thread (ember only where it is installed)."""
    rows = []
    libs = []
    try:
        import torch

        torch.set_num_threads(1)
        libs.append(("torch", torch, lambda a: torch.from_numpy(a), {"erf": torch.special.erf}))
    except ImportError:
        pass
    try:
        import ember

        ember.set_num_threads(1)
        libs.append(("ember-op", ember, lambda a: ember.tensor(a), {}))
    except ImportError:
        pass
    import torch as ref_lib  # the float64 reference

    def ref(name):
        fn = ref_lib.special.erf if name == "erf" else getattr(ref_lib, name)
        return lambda a: fn(ref_lib.from_numpy(a)).numpy()

    for name in RANGES:
        x = inputs(name, n)
        for label, lib, wrap, special in libs:
            fn = special.get(name, getattr(lib, name))
            t = wrap(x)
            fn(t)
            best = min(_timed(lambda: fn(t)) for _ in range(repeat))
            err = max_ulp(fn(t).numpy(), x, ref(name))
            rows.append((name, label, best * 1e9 / n, err))
    return rows


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 22)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    if shutil.which("g++") is None:
        raise SystemExit("vector_math: needs g++")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [build(tmp), str(args.n), str(args.repeat)], check=True, capture_output=True, text=True
        ).stdout
    for line in out.split("\n"):
        if line:
            name, impl, ns, ulp = line.split()
            rows.append((name, impl, float(ns), float(ulp)))
    rows += op_rows(args.n, args.repeat)
    if not sleef_available():
        print("(libsleef-dev not installed: no SLEEF rows; apt-get install libsleef-dev)")
    print(f"{args.n} float32s, one thread; ns per element (best of {args.repeat}), max ULP error")
    print(f"{'function':8s} {'implementation':14s} {'ns/elem':>8s} {'max ulp':>8s}")
    for name in RANGES:
        for r in rows:
            if r[0] == name:
                print(f"{r[0]:8s} {r[1]:14s} {r[2]:8.3f} {r[3]:8.2f}")


if __name__ == "__main__":
    main()
