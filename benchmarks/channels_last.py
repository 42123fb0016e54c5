"""channels_last against NCHW: ember vs torch 2.13 side by side in one run, same thread count.

Times conv2d forward (3x3, 64 -> 64 channels, 56 x 56, batch 8) and a conv + batch norm + ReLU
training step on NCHW input and on the same input converted to channels_last. ember computes
its spatial kernels in NCHW and converts a channels-last input and result (Note
[Channels-last kernels]), so the second column measures what that costs; torch runs NHWC
kernels. Best of R, the libraries alternating.

Usage: python benchmarks/channels_last.py [--threads N] [--repeat R]
"""

import argparse

import numpy as np
from _compare import best_times, frameworks


def cases(lib, fmt):
    F = lib.nn.functional
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((8, 64, 56, 56), dtype=np.float32))
    w = lib.tensor(rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05)
    x = x.contiguous(memory_format=fmt(lib))
    w = w.contiguous(memory_format=fmt(lib))
    wg = w.clone().requires_grad_()
    bw, bb = lib.ones(64, requires_grad=True), lib.zeros(64, requires_grad=True)

    def forward():
        with lib.no_grad():
            F.conv2d(x, w, padding=1)

    def step():
        y = F.relu(F.batch_norm(F.conv2d(x, wg, padding=1), None, None, bw, bb, training=True))
        y.sum().backward()
        wg.grad = bw.grad = bb.grad = None

    return {"conv2d forward": forward, "conv+bn+relu step": step}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    libs = frameworks(a.threads)
    formats = {
        "nchw": lambda lib: lib.contiguous_format,
        "channels_last": lambda lib: lib.channels_last,
    }
    fns = {}
    for name, lib in libs.items():
        for fname, fmt in formats.items():
            for case, fn in cases(lib, fmt).items():
                fns[(case, fname, name)] = fn
    keys = list(fns)
    times = dict(zip(keys, best_times([fns[k] for k in keys], a.repeat)))
    for case in ("conv2d forward", "conv+bn+relu step"):
        row = [f"{case:20s}"]
        for fname in formats:
            for name in libs:
                row.append(f"{name} {fname} {times[(case, fname, name)] * 1e3:7.2f} ms")
        print("  ".join(row))


if __name__ == "__main__":
    main()
