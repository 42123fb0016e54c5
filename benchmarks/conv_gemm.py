"""float32 convolution (forward, input gradient, weight gradient) and GEMM, ember vs torch.

Each row times one kernel call on both sides, alternately in one process (load changes on a
shared machine hit both alike), and prints the best times and ember / torch. The convolutions are
ResNet-like 3x3, 1x1, strided, depthwise, grouped, dilated, 1-D and 3-D shapes; the GEMMs square
64..4096, skinny (M or N <= 64, a Linear layer at a small batch) and transposed.

Usage: python benchmarks/conv_gemm.py [--threads N] [--repeat R] [--only REGEX] [--no-onednn]
       [--own] [--cpu-time]
(--no-onednn runs ember's own convolution kernels: EMBER_ONEDNN_CONV=0)
"""

import argparse
import os
import re
import time

import numpy as np
from _compare import frameworks

# (name, N, C, O, spatial, kernel, stride, padding, dilation, groups); spatial and the rest are
# tuples of 1, 2 or 3 entries (1-D, 2-D, 3-D).
CONVS = [
    ("3x3 64->64 56 N8", 8, 64, 64, (56, 56), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ("3x3 128->128 28 N8", 8, 128, 128, (28, 28), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ("3x3 256->256 14 N8", 8, 256, 256, (14, 14), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ("1x1 256->64 56 N8", 8, 256, 64, (56, 56), (1, 1), (1, 1), (0, 0), (1, 1), 1),
    ("1x1 256->256 14 N8", 8, 256, 256, (14, 14), (1, 1), (1, 1), (0, 0), (1, 1), 1),
    ("3x3 s2 64->128 56 N8", 8, 64, 128, (56, 56), (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ("7x7 s2 3->64 112 N4", 4, 3, 64, (112, 112), (7, 7), (2, 2), (3, 3), (1, 1), 1),
    ("dw3x3 128 56 N8", 8, 128, 128, (56, 56), (3, 3), (1, 1), (1, 1), (1, 1), 128),
    ("g8 3x3 128->128 28 N8", 8, 128, 128, (28, 28), (3, 3), (1, 1), (1, 1), (1, 1), 8),
    ("dil2 3x3 64->64 28 N8", 8, 64, 64, (28, 28), (3, 3), (1, 1), (2, 2), (2, 2), 1),
    ("fmnist 3x3 1->32 28 N128", 128, 1, 32, (28, 28), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ("fmnist 3x3 32->64 14 N128", 128, 32, 64, (14, 14), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ("1d k3 128->128 L512 N16", 16, 128, 128, (512,), (3,), (1,), (1,), (1,), 1),
    ("1d k5 s2 64->128 L1024 N8", 8, 64, 128, (1024,), (5,), (2,), (2,), (1,), 1),
    (
        "3d 3x3x3 32->32 16 N2",
        2,
        32,
        32,
        (16, 16, 16),
        (3, 3, 3),
        (1, 1, 1),
        (1, 1, 1),
        (1, 1, 1),
        1,
    ),
    (
        "3d 3x3x3 s2 32->64 16 N4",
        4,
        32,
        64,
        (16, 16, 16),
        (3, 3, 3),
        (2, 2, 2),
        (1, 1, 1),
        (1, 1, 1),
        1,
    ),
]

# (name, M, N, K, transpose a, transpose b)
GEMMS = [(f"{n}^3", n, n, n, False, False) for n in (64, 128, 256, 512, 1024, 2048, 4096)]
GEMMS += [
    ("1024^3 a^T", 1024, 1024, 1024, True, False),
    ("1024^3 b^T", 1024, 1024, 1024, False, True),
    ("M16 N1024 K1024", 16, 1024, 1024, False, False),
    ("M32 N4096 K1024 b^T", 32, 4096, 1024, False, True),  # Linear(1024, 4096) at batch 32
    ("M64 N1024 K1024 b^T", 64, 1024, 1024, False, True),
    ("M1024 N16 K1024", 1024, 16, 1024, False, False),
    ("M2048 N64 K512", 2048, 64, 512, False, False),
    ("M4096 N32 K256 a^T", 4096, 32, 256, True, False),
    ("M64 N64 K4096", 64, 64, 4096, False, False),
    ("M1024 N1024 K64 b^T", 1024, 1024, 64, False, True),  # a Linear weight gradient shape
]


def conv_fns(lib, name, case):
    _, n, c, o, sp, k, s, p, d, g = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, *sp), dtype=np.float32)
    w = rng.standard_normal((o, c // g, *k), dtype=np.float32) * 0.1
    F = lib.nn.functional
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(sp)]
    xs, ws = lib.tensor(x), lib.tensor(w)
    with lib.no_grad():
        y = conv(xs, ws, None, s, p, d, g)
    gy = lib.tensor(rng.standard_normal(tuple(y.shape), dtype=np.float32))

    def fwd():
        with lib.no_grad():
            conv(xs, ws, None, s, p, d, g)

    def backward(mask):
        if name == "torch":
            aten = lib.ops.aten.convolution_backward

            def run():
                aten(gy, xs, ws, None, s, p, d, False, [0] * len(sp), g, mask)

            return run
        back = lib._C._nn.convolution_backward
        if len(sp) == 1:  # conv1d is conv2d over a height of 1
            x4, w4, g4 = xs.unsqueeze(2), ws.unsqueeze(2), gy.unsqueeze(2)
            s4, p4, d4 = [1, s[0]], [0, p[0]], [1, d[0]]
        else:
            x4, w4, g4, s4, p4, d4 = xs, ws, gy, list(s), list(p), list(d)

        def run2():
            back(g4, x4, w4, s4, p4, d4, g, mask)

        return run2

    return {
        "fwd": fwd,
        "dgrad": backward([True, False, False]),
        "wgrad": backward([False, True, False]),
    }


def gemm_fns(lib, case):
    _, m, n, k, ta, tb = case
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32))
    b = lib.tensor(rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32))
    a = a.t() if ta else a
    b = b.t() if tb else b
    return lambda: lib.mm(a, b)


CLOCK = time.perf_counter


def block_times(fns, rounds, budget=0.15):
    """Best seconds per call of each function. Each round runs every function for `budget`
    seconds after one warm-up call (so the other library's threads have gone quiet), in turn."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            fn()
            start = time.perf_counter()
            while time.perf_counter() - start < budget:
                t0 = CLOCK()
                fn()
                best[i] = min(best[i], CLOCK() - t0)
    return best


def _own(fn):
    """fn with ember's own convolution kernels (oneDNN switched off for the call)."""

    def run():
        os.environ["EMBER_ONEDNN_CONV"] = "0"
        try:
            fn()
        finally:
            del os.environ["EMBER_ONEDNN_CONV"]

    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3, help="rounds")
    ap.add_argument("--only", default="")
    ap.add_argument("--no-onednn", action="store_true")
    ap.add_argument(
        "--own",
        action="store_true",
        help="also time ember's own convolution kernels (EMBER_ONEDNN_CONV=0) in a third column",
    )
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time the calling thread's CPU time instead of wall time (with --threads 1 all the "
        "work runs there): steadier than wall time on a loaded machine",
    )
    args = ap.parse_args()
    if args.cpu_time:
        if args.threads != 1:
            ap.error("--cpu-time needs --threads 1")
        global CLOCK
        CLOCK = time.thread_time
    libs = frameworks(args.threads)
    if args.no_onednn:
        os.environ["EMBER_ONEDNN_CONV"] = "0"
    names = list(libs)
    only = re.compile(args.only)
    print(
        f"threads={libs['ember'].get_num_threads()}  best call of {args.repeat} rounds, ms;"
        " ratio = ember/torch"
    )
    ratios = []
    for case in CONVS:
        fns = {lib: conv_fns(libs[lib], lib, case) for lib in names}
        if args.own:
            fns["own"] = {k: _own(f) for k, f in conv_fns(libs["ember"], "ember", case).items()}
        for kind in ("fwd", "dgrad", "wgrad"):
            row = f"conv {case[0]} {kind}"
            if not only.search(row):
                continue
            t = block_times([fns[lib][kind] for lib in fns], args.repeat)
            r = t[0] / t[1] if len(t) > 1 else float("nan")
            ratios.append(r)
            own = f"  own/torch {t[2] / t[1]:6.2f}" if args.own else ""
            print(f"{row:42s} " + "  ".join(f"{x * 1e3:9.3f}" for x in t) + f"  {r:6.2f}" + own)
    for case in GEMMS:
        row = f"gemm {case[0]}"
        if not only.search(row):
            continue
        t = block_times([gemm_fns(libs[lib], case) for lib in names], args.repeat)
        r = t[0] / t[1] if len(t) > 1 else float("nan")
        ratios.append(r)
        gf = 2 * case[1] * case[2] * case[3] / min(t) / 1e9
        print(
            f"{row:42s} "
            + "  ".join(f"{x * 1e3:9.3f}" for x in t)
            + f"  {r:6.2f}  ({gf:.0f} GF/s best)"
        )
    if ratios:
        print(f"geometric mean ember/torch: {float(np.exp(np.mean(np.log(ratios)))):.3f}")


if __name__ == "__main__":
    main()
