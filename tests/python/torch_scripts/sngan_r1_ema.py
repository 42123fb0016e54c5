# ruff: noqa: E501
"""A small GAN on 2-D points: a discriminator under the parametrization form of spectral_norm
(its power-iteration vectors set by hand), hinge losses, an R1 gradient penalty through
autograd.grad(create_graph=True), separate Adam betas for G and D, an EMA copy of the
generator updated with torch._foreach ops, and requires_grad toggling between phases."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import spectral_norm


def det_init(module, seed):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.917 + seed + i) * 0.4).view_as(p))


def set_power_vectors(module):
    for i, m in enumerate(module.modules()):
        if hasattr(m, "parametrizations"):
            sn = m.parametrizations.weight[0]
            with torch.no_grad():
                u = torch.cos(torch.arange(sn._u.numel(), dtype=torch.float32) + i)
                v = torch.sin(torch.arange(sn._v.numel(), dtype=torch.float32) + i)
                sn._u.copy_(F.normalize(u, dim=0))
                sn._v.copy_(F.normalize(v, dim=0))


def real_batch(step, n=32):
    t = torch.linspace(0, 6.283, n) + 0.1 * step
    return torch.stack([torch.cos(t) * 2.0, torch.sin(t) * 2.0], dim=1)


def noise(step, n=32):
    k = torch.arange(n * 4, dtype=torch.float32).view(n, 4)
    return torch.sin(k * 1.3 + step * 0.7)


def main():
    G = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
    D = nn.Sequential(
        spectral_norm(nn.Linear(2, 32)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(32, 1))
    )
    det_init(G, 0.0)
    det_init(D, 1.0)
    set_power_vectors(D)
    names = [n for n, _ in D.named_parameters()]
    print(f"d_params {names}")
    print(f"d_buffers {[n for n, _ in D.named_buffers()]}")
    w = D[0].weight
    sigma = torch.linalg.matrix_norm(w, ord=2).item()
    print(
        f"sn_sigma {sigma:.4f} orig_sigma {torch.linalg.matrix_norm(D[0].parametrizations.weight.original, ord=2).item():.4f}"
    )
    G_ema = copy.deepcopy(G)
    for p in G_ema.parameters():
        p.requires_grad_(False)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
    opt_d = torch.optim.Adam(D.parameters(), lr=4e-3, betas=(0.0, 0.99))
    ema_params = list(G_ema.parameters())
    for step in range(40):
        real = real_batch(step).requires_grad_(True)
        for p in D.parameters():
            p.requires_grad_(True)
        fake = G(noise(step)).detach()
        d_real, d_fake = D(real), D(fake)
        loss_d = F.relu(1.0 - d_real).mean() + F.relu(1.0 + d_fake).mean()
        (grad_real,) = torch.autograd.grad(d_real.sum(), real, create_graph=True)
        r1 = grad_real.pow(2).sum(1).mean()
        opt_d.zero_grad()
        (loss_d + 0.5 * r1).backward()
        opt_d.step()

        for p in D.parameters():
            p.requires_grad_(False)
        loss_g = -D(G(noise(step + 100))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        with torch.no_grad():
            torch._foreach_mul_(ema_params, 0.9)
            torch._foreach_add_(ema_params, list(G.parameters()), alpha=0.1)
        if step % 10 == 9:
            print(f"step{step} d {loss_d.item():.4f} r1 {r1.item():.4f} g {loss_g.item():.4f}")
    D.eval()
    with torch.no_grad():
        sample = G_ema(noise(999, 8))
        radius = sample.norm(dim=1)
        print(f"ema_radius {radius.mean().item():.4f} {radius.std().item():.4f}")
        print(f"sn_sigma_after {torch.linalg.matrix_norm(D[0].weight, ord=2).item():.4f}")
        print(f"d_grad_none {[p.grad is None for p in D.parameters()]}")
    sd = D.state_dict()
    print(f"d_state {sorted(sd)}")
    D2 = nn.Sequential(
        spectral_norm(nn.Linear(2, 32)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(32, 1))
    )
    D2.load_state_dict(sd)
    D2.eval()
    pts = real_batch(3, 5)
    print(f"reload_same {torch.allclose(D2(pts), D(pts), atol=1e-6)}")
    print(
        f"ema_vs_g {sum((a - b).abs().sum().item() for a, b in zip(G_ema.parameters(), G.parameters())):.4f}"
    )


if __name__ == "__main__":
    main()
