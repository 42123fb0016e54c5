"""ember vs torch: softmax, log_softmax and cross_entropy (forward + backward) on CPU.

Prints the best time of each side over interleaved runs (so a busy machine slows both alike) and
the ratio ember / torch (below 1 means ember is faster).
Run: PYTHONPATH=python python benchmarks/softmax_loss.py [--threads N]
"""

import argparse

import numpy as np
import torch
from _compare import best_times

import ember
import ember.nn.functional as F


def _cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    e, t = ember.tensor(x), torch.tensor(x)
    yield "softmax (4096,1024) dim=-1", lambda: F.softmax(e, -1), lambda: torch.softmax(t, -1), 30
    yield (
        "log_softmax (4096,1024) dim=-1",
        lambda: F.log_softmax(e, -1),
        lambda: torch.log_softmax(t, -1),
        30,
    )
    for n, c, repeat in ((256, 10, 2000), (4096, 1000, 30)):
        logits = rng.standard_normal((n, c), dtype=np.float32)
        target = rng.integers(0, c, n)
        ex, tx = ember.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        et, tt = ember.tensor(target), torch.tensor(target)

        def run_ember(ex=ex, et=et):
            F.cross_entropy(ex, et).backward()

        def run_torch(tx=tx, tt=tt):
            torch.nn.functional.cross_entropy(tx, tt).backward()

        yield f"cross_entropy fwd+bwd ({n},{c})", run_ember, run_torch, repeat


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=None, help="threads for both libraries")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        ember.set_num_threads(args.threads)
    print(f"threads: ember {ember.get_num_threads()}, torch {torch.get_num_threads()}")
    print(f"{'case':40s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for name, fe, ft, repeat in _cases():
        te, tt = best_times((fe, ft), repeat, warmup=3)
        print(f"{name:40s} {te * 1e3:10.3f} {tt * 1e3:10.3f} {te / tt:7.2f}")


if __name__ == "__main__":
    main()
