"""conv2d forward+backward and max_pool2d: ember vs torch, same shapes and thread count.

Usage: python benchmarks/conv_pool.py [--threads N] [--repeat R]
"""

import argparse

import numpy as np
from _compare import best_times

import ember


def conv_case(lib, x, w, b):
    xs = lib.tensor(x, requires_grad=True)
    ws = lib.tensor(w, requires_grad=True)
    bs = lib.tensor(b, requires_grad=True)
    F = lib.nn.functional

    def run():
        out = F.conv2d(xs, ws, bs, padding=1)
        out.sum().backward()
        xs.grad = ws.grad = bs.grad = None

    return run


def pool_case(lib, x):
    xs = lib.tensor(x, requires_grad=True)
    F = lib.nn.functional

    def run():
        out = F.max_pool2d(xs, 2)
        out.sum().backward()
        xs.grad = None

    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    f32 = np.float32
    cases = [
        (
            "conv2d fwd+bwd (64,32,28,28)x(64,32,3,3)",
            lambda lib: conv_case(
                lib,
                rng.standard_normal((64, 32, 28, 28), dtype=f32),
                rng.standard_normal((64, 32, 3, 3), dtype=f32),
                rng.standard_normal(64, dtype=f32),
            ),
        ),
        (
            "conv2d fwd+bwd (64,1,28,28)x(32,1,3,3)",
            lambda lib: conv_case(
                lib,
                rng.standard_normal((64, 1, 28, 28), dtype=f32),
                rng.standard_normal((32, 1, 3, 3), dtype=f32),
                rng.standard_normal(32, dtype=f32),
            ),
        ),
        (
            "max_pool2d 2x2 fwd+bwd (64,32,28,28)",
            lambda lib: pool_case(lib, rng.standard_normal((64, 32, 28, 28), dtype=f32)),
        ),
    ]
    print(f"threads={args.threads}, best of {args.repeat}")
    print(f"{'case':45s} {'ember ms':>9s} {'torch ms':>9s} {'ratio':>6s}")
    for name, make in cases:
        te, tt = (t * 1e3 for t in best_times([make(ember), make(torch)], args.repeat))
        print(f"{name:45s} {te:9.2f} {tt:9.2f} {te / tt:6.2f}")


if __name__ == "__main__":
    main()
