# ruff: noqa: E501
"""A convolutional VAE as probabilistic-modelling code writes it with torch.distributions: an
encoder giving loc and softplus scale, Independent(Normal) posterior and prior,
kl_divergence against the prior with a linear beta warm-up, rsample through a fixed noise via a
reparameterized transform, a Bernoulli(logits=...) likelihood over ConvTranspose2d output,
gradient accumulation over two micro-batches, and an importance-weighted log-likelihood bound
with logsumexp."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence


def det_init(model, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.23 + 0.9 * i) * scale
                ).view_as(p)
            )


class VAE(nn.Module):
    def __init__(self, z=3):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2, padding=1),
            nn.SiLU(),
            nn.Flatten(),
            nn.Linear(4 * 4 * 4, 2 * z),
        )
        self.dec_in = nn.Linear(z, 4 * 4 * 4)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(4, 4, 4, stride=2, padding=1),
            nn.SiLU(),
            nn.Conv2d(4, 1, 3, padding=1),
        )
        self.z = z

    def posterior(self, x):
        loc, raw = self.enc(x).chunk(2, dim=-1)
        return Independent(Normal(loc, F.softplus(raw) + 1e-4), 1)

    def likelihood(self, z):
        logits = self.dec(self.dec_in(z).view(-1, 4, 4, 4))
        return Independent(Bernoulli(logits=logits), 3)


def noise(shape, k):
    return torch.sin(torch.arange(math.prod(shape), dtype=torch.float32) * 1.7 + k).view(shape)


x = (torch.sin(torch.arange(4 * 64, dtype=torch.float32).view(4, 1, 8, 8) * 0.31) > 0).float()
model = VAE()
det_init(model)
prior = Independent(Normal(torch.zeros(3), torch.ones(3)), 1)
print(
    "shapes",
    tuple(prior.event_shape),
    tuple(model.posterior(x).batch_shape),
    tuple(model.posterior(x).event_shape),
)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(4):
    beta = min(1.0, step / 3)
    opt.zero_grad()
    total = 0.0
    for k, xb in enumerate(x.split(2)):
        q = model.posterior(xb)
        z = q.base_dist.loc + q.base_dist.scale * noise(q.base_dist.loc.shape, step + k)
        rec = model.likelihood(z).log_prob(xb)
        kl = kl_divergence(q, prior)
        loss = -(rec - beta * kl).mean() / 2
        loss.backward()
        total += loss.item()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
    print(
        f"step{step} beta {beta:.3f} loss {total:.5f} kl {kl.mean().item():.5f} grad_norm {gn.item():.5f}"
    )

with torch.no_grad():
    q = model.posterior(x)
    K = 5
    eps = noise((K, 4, 3), 11)
    zs = q.base_dist.loc + q.base_dist.scale * eps
    log_w = (
        model.likelihood(zs.view(-1, 3)).log_prob(x.repeat(K, 1, 1, 1)).view(K, 4)
        + prior.log_prob(zs)
        - q.log_prob(zs)
    )
    iwae = (torch.logsumexp(log_w, 0) - math.log(K)).mean()
    print("iwae", round(iwae.item(), 4), "elbo", round(log_w.mean().item(), 4))
    print("entropy", [round(v, 4) for v in q.entropy().tolist()])
    mean_img = model.likelihood(q.mean).mean
    print(
        "recon",
        tuple(mean_img.shape),
        round(mean_img.sum().item(), 4),
        round(F.binary_cross_entropy(mean_img, x).item(), 5),
    )
    print(
        "rsample_grad", model.posterior(x).has_rsample, Bernoulli(logits=torch.zeros(1)).has_rsample
    )
