# ruff: noqa: E501
"""A WGAN-GP step as its papers' code writes it: a critic and a generator as Sequential MLPs,
the gradient penalty from autograd.grad(create_graph=True) at interpolates, Adam with betas
(0.5, 0.9), n_critic critic steps per generator step, requires_grad toggled per phase, and the
numpy bridge refusing a tensor that still requires grad."""

import numpy as np
import torch
import torch.nn as nn
from torch import autograd


def det_init(model, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i) * scale
                ).view_as(p)
            )


G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(
    nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)
)
det_init(G)
det_init(D, 0.25)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))
real_all = torch.stack([torch.linspace(-1, 1, 32).cos(), torch.linspace(-1, 1, 32).sin()], 1)


def noise(step, n=8):
    return torch.sin(torch.arange(n * 4, dtype=torch.float32).reshape(n, 4) * (0.3 + 0.1 * step))


def gradient_penalty(critic, real, fake, alpha):
    inter = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(inter)
    grads = autograd.grad(
        outputs=out,
        inputs=inter,
        grad_outputs=torch.ones_like(out),
        create_graph=True,
        retain_graph=True,
    )[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for step in range(3):
    for p in D.parameters():
        p.requires_grad = True
    for c in range(2):
        real = real_all[(step * 2 + c) * 4 % 32 :][:8]
        fake = G(noise(step * 2 + c)).detach()
        alpha = torch.linspace(0, 1, real.size(0)).unsqueeze(1)
        gp = gradient_penalty(D, real, fake, alpha)
        d_loss = D(fake).mean() - D(real).mean() + 10.0 * gp
        opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        opt_d.step()
        print(f"step{step}_c{c} d_loss {d_loss.item():.5f} gp {gp.item():.5f}")
    for p in D.parameters():
        p.requires_grad = False
    g_loss = -D(G(noise(100 + step))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    print(
        f"step{step} g_loss {g_loss.item():.5f} d_grads_none {all(p.grad is None for p in D.parameters())}"
    )

sample = G(noise(7))
try:
    np.asarray(sample)
except RuntimeError as e:
    print("numpy_refused", str(e).split(".")[0])
try:
    sample.numpy()
except RuntimeError as e:
    print("numpy_method_refused", type(e).__name__)
arr = sample.detach().numpy()
print("sample", arr.shape, arr.dtype, np.round(arr[:2], 4).tolist())
print("grad_norm_g", round(float(sum(p.grad.norm() ** 2 for p in G.parameters()) ** 0.5), 5))
