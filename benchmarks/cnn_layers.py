"""The Fashion-MNIST CNN's layers at its shapes (batch 128): ember vs torch, same thread count.

Times conv2d forward, conv2d forward+backward, max_pool2d forward+backward, the BatchNorm2d ->
ReLU -> MaxPool2d(2) block forward+backward (training mode: ember fuses it, Note [Fused
BatchNorm, ReLU and max-pool]) and one whole training step (forward, cross-entropy, backward,
Adam) of examples/fashion_mnist.py's model. The two libraries run alternately in one process, so
load changes on a shared machine hit both alike.

Usage: python benchmarks/cnn_layers.py [--threads N] [--repeat R] [--batch B]
"""

import argparse

import numpy as np
from _compare import best_times

import ember


def conv_fwd(lib, x, w):
    xs, ws = lib.tensor(x), lib.tensor(w)
    F = lib.nn.functional

    def run():
        with lib.no_grad():
            F.conv2d(xs, ws, padding=1)

    return run


def conv_fwd_bwd(lib, x, w, input_grad):
    xs = lib.tensor(x, requires_grad=input_grad)
    ws = lib.tensor(w, requires_grad=True)
    F = lib.nn.functional

    def run():
        F.conv2d(xs, ws, padding=1).sum().backward()
        xs.grad = ws.grad = None

    return run


def pool_fwd(lib, x):
    xs = lib.tensor(x)
    F = lib.nn.functional

    def run():
        with lib.no_grad():
            F.max_pool2d(xs, 2)

    return run


def pool_fwd_bwd(lib, x):
    xs = lib.tensor(x, requires_grad=True)
    F = lib.nn.functional

    def run():
        F.max_pool2d(xs, 2).sum().backward()
        xs.grad = None

    return run


def block_fwd_bwd(lib, x):
    nn = lib.nn
    block = nn.Sequential(nn.BatchNorm2d(x.shape[1]), nn.ReLU(), nn.MaxPool2d(2))
    xs = lib.tensor(x, requires_grad=True)

    def run():
        block(xs).sum().backward()
        xs.grad = None

    return run


def train_step(lib, x, y):
    """One step of examples/fashion_mnist.py's model and optimizer on a fixed batch."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 7 * 7, 128),
        nn.ReLU(),
        nn.Dropout(0.25),
        nn.Linear(128, 10),
    )
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = lib.tensor(x), lib.tensor(y)

    def run():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        loss.item()

    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n = args.batch

    def randn(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    x1, w1 = randn(n, 1, 28, 28), randn(32, 1, 3, 3)
    x2, w2 = randn(n, 32, 14, 14), randn(64, 32, 3, 3)
    p1, p2 = randn(n, 32, 28, 28), randn(n, 64, 14, 14)
    labels = rng.integers(0, 10, n)
    cases = [
        ("conv1 fwd (N,1,28,28)x(32,1,3,3)", lambda lib: conv_fwd(lib, x1, w1)),
        ("conv1 fwd+bwd (weight grad only)", lambda lib: conv_fwd_bwd(lib, x1, w1, False)),
        ("conv2 fwd (N,32,14,14)x(64,32,3,3)", lambda lib: conv_fwd(lib, x2, w2)),
        ("conv2 fwd+bwd", lambda lib: conv_fwd_bwd(lib, x2, w2, True)),
        ("max_pool2d fwd (N,32,28,28)", lambda lib: pool_fwd(lib, p1)),
        ("max_pool2d fwd+bwd (N,32,28,28)", lambda lib: pool_fwd_bwd(lib, p1)),
        ("max_pool2d fwd (N,64,14,14)", lambda lib: pool_fwd(lib, p2)),
        ("max_pool2d fwd+bwd (N,64,14,14)", lambda lib: pool_fwd_bwd(lib, p2)),
        ("BN+ReLU+pool fwd+bwd (N,32,28,28)", lambda lib: block_fwd_bwd(lib, p1)),
        ("BN+ReLU+pool fwd+bwd (N,64,14,14)", lambda lib: block_fwd_bwd(lib, p2)),
        ("training step (fwd+bwd+Adam)", lambda lib: train_step(lib, x1, labels)),
    ]
    print(f"batch {n}, threads={args.threads}, best of {args.repeat}")
    print(f"{'case':38s} {'ember ms':>9s} {'torch ms':>9s} {'ratio':>6s}")
    for name, make in cases:
        te, tt = (t * 1e3 for t in best_times([make(ember), make(torch)], args.repeat))
        print(f"{name:38s} {te:9.2f} {tt:9.2f} {te / tt:6.2f}", flush=True)


if __name__ == "__main__":
    main()
