"""Reproducibility patterns from real training code: a seed_everything helper, per-purpose
torch.Generator objects (data split, shuffling, augmentation, initialisation with the
nn.init functions' generator= keyword), fork_rng around an evaluation that must not disturb the
stream, get_rng_state / set_rng_state for resuming, generator-driven samplers (poisson,
binomial, multinomial, bernoulli_, random_ with bounds), and seed range checks. Draws differ
between frameworks (rng_ keys); the reproducibility facts are compared."""

import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    g = torch.manual_seed(seed)
    return g


def init_model(seed):
    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.kaiming_uniform_(m.weight, a=5**0.5, generator=g)
            nn.init.trunc_normal_(m.bias, std=0.02, a=-0.04, b=0.04, generator=g)
    return model


def augment(x, g):
    noise = torch.randn(x.shape, generator=g) * 0.05
    keep = torch.empty(x.shape[0], 1).bernoulli_(0.9, generator=g)
    return x * keep + noise


def main():
    g = seed_everything(1234)
    print("seed_returns", type(g).__name__, g is torch.default_generator, torch.initial_seed())
    first = torch.rand(3)
    torch.manual_seed(1234)
    print("same_after_reseed", torch.equal(first, torch.rand(3)))
    print("rng_first", [round(v, 4) for v in first.tolist()])

    a, b = init_model(7), init_model(7)
    print(
        "init_reproducible", all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    )
    print("init_differs", not torch.equal(init_model(8)[0].weight, a[0].weight))
    print("bias_in_bounds", bool(a[0].bias.abs().max() <= 0.04))

    x = torch.linspace(-1, 1, 40).view(10, 4)
    y = (x.sum(1) > 0).long()
    ds = TensorDataset(x, y)
    split = lambda: random_split(ds, [0.8, 0.2], generator=torch.Generator().manual_seed(42))  # noqa: E731
    (tr1, va1), (tr2, _) = split(), split()
    print("split_sizes", len(tr1), len(va1), "split_same", tr1.indices == tr2.indices)
    print("split_disjoint", sorted(tr1.indices + va1.indices) == list(range(10)))

    def order(seed):
        loader = DataLoader(
            tr1, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(seed)
        )
        return [yb.tolist() for _, yb in loader], [xb.shape[0] for xb, _ in loader]

    print("loader_same", order(3)[0] == order(3)[0], "batches", order(3)[1])
    epoch1, epoch2 = [], []
    loader = DataLoader(tr1, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(5))
    for _, yb in loader:
        epoch1.append(yb.sum().item())
    for _, yb in loader:
        epoch2.append(yb.sum().item())
    print("epochs_total_same", sum(epoch1) == sum(epoch2))

    # the evaluation draws inside fork_rng leave the training stream as it was
    torch.manual_seed(0)
    expected = torch.rand(2)
    torch.manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(99)
        _ = torch.randn(100)
    print("fork_rng_restores", torch.equal(torch.rand(2), expected))

    # resuming: save state, draw, restore, draw again
    state = torch.get_rng_state()
    g_aug = torch.Generator().manual_seed(11)
    aug_state = g_aug.get_state()
    d1, a1 = torch.randn(4), augment(x[:3], g_aug)
    torch.set_rng_state(state)
    g_aug.set_state(aug_state)
    d2, a2 = torch.randn(4), augment(x[:3], g_aug)
    print("resume_same", torch.equal(d1, d2), torch.equal(a1, a2), tuple(a1.shape))

    g2 = torch.Generator().manual_seed(21)
    counts = torch.poisson(torch.tensor([0.5, 4.0, 30.0]), generator=g2)
    trials = torch.binomial(torch.tensor([10.0, 100.0]), torch.tensor([0.2, 0.7]), generator=g2)
    picks = torch.multinomial(torch.tensor([0.0, 1.0, 3.0]), 6, replacement=True, generator=g2)
    ints = torch.empty(6, dtype=torch.int64).random_(2, 5, generator=g2)
    g2.manual_seed(21)
    again = torch.poisson(torch.tensor([0.5, 4.0, 30.0]), generator=g2)
    print("poisson_repro", torch.equal(counts, again), counts.dtype)
    print("rng_counts", counts.tolist(), trials.tolist())
    print(
        "multinomial_support",
        sorted(set(picks.tolist())) <= [1, 2],
        "ints_range",
        ints.min().item() >= 2,
        ints.max().item() <= 4,
    )
    print("randint_kw", tuple(torch.randint(len(x), size=(1,), generator=g2).shape))
    perm = torch.randperm(6, generator=torch.Generator().manual_seed(0))
    print("randperm_is_perm", sorted(perm.tolist()) == list(range(6)))

    for s in (2**64 - 1, -(2**63)):
        print("seed_range", s, torch.manual_seed(s).initial_seed())
    try:
        torch.manual_seed(2**64)
    except ValueError as e:
        print("seed_overflow", e)
    print(
        "np_random", round(float(np.random.rand()), 6) >= 0.0, "py_random", random.random() >= 0.0
    )


if __name__ == "__main__":
    main()
