# ruff: noqa: E501
"""Variational autoencoder on tiny synthetic binary images with torch.distributions:
reparameterized sampling, analytic KL, log-likelihoods, and a mixture prior check."""

import torch
import torch.distributions as D
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence


def det_init(model, scale=0.1):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float32) * 1.3 + 0.7 * i) * scale).view_as(p)
            )


class VAE(nn.Module):
    def __init__(self, d_in=36, hidden=48, latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(d_in, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(
            nn.Linear(latent, hidden),
            nn.ReLU(),
            nn.Linear(hidden, d_in),
            nn.Unflatten(1, (1, 6, 6)),
        )

    def encode(self, x):
        h = self.enc(x)
        return self.mu(h), self.logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.dec(z), mu, logvar


def make_images(n=64):
    i = torch.arange(n, dtype=torch.float32).view(n, 1, 1, 1)
    r = torch.arange(6, dtype=torch.float32).view(1, 1, 6, 1)
    c = torch.arange(6, dtype=torch.float32).view(1, 1, 1, 6)
    img = torch.sin(r * (1 + i % 3) * 0.5 + c * 0.8 + i * 0.1) > 0
    return img.float()


def loss_fn(recon_logits, x, mu, logvar):
    bce = F.binary_cross_entropy_with_logits(recon_logits, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kld) / x.size(0), bce / x.size(0), kld / x.size(0)


def main():
    torch.manual_seed(1)
    x = make_images()
    model = VAE()
    det_init(model)
    # Deterministic parts: encoder statistics and the analytic KL two ways.
    with torch.no_grad():
        mu, logvar = model.encode(x)
        q = Normal(mu, torch.exp(0.5 * logvar))
        p = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        kl_lib = kl_divergence(q, p).sum(-1).mean()
        kl_formula = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).sum(-1).mean()
        print(f"kl_lib {kl_lib.item():.6f}")
        print(f"kl_agree {torch.allclose(kl_lib, kl_formula, atol=1e-5)}")
        print(f"logprob_mu {q.log_prob(mu).sum().item():.5f}")
        qi = D.Independent(q, 1)
        print(f"independent_shapes {tuple(qi.batch_shape)} {tuple(qi.event_shape)}")
        print(f"independent_entropy {qi.entropy().mean().item():.6f}")
        bern = D.Bernoulli(logits=model.dec(mu))
        print(f"bern_logprob {bern.log_prob(x).sum().item():.4f}")
        mvn = D.MultivariateNormal(
            torch.zeros(3),
            covariance_matrix=torch.tensor([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]]),
        )
        print(f"mvn_logprob {mvn.log_prob(torch.tensor([0.5, -0.2, 0.1])).item():.6f}")
        print(f"mvn_entropy {mvn.entropy().item():.6f}")
        cat = D.Categorical(probs=torch.tensor([0.2, 0.5, 0.3]))
        mix = D.MixtureSameFamily(
            cat, Normal(torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([0.5, 1.0, 0.3]))
        )
        print(f"mixture_logprob {mix.log_prob(torch.tensor([0.1, 1.9])).tolist()}")
        print(f"mixture_mean {mix.mean.item():.6f}")
        tr = D.TransformedDistribution(Normal(0.0, 1.0), [D.transforms.ExpTransform()])
        print(
            f"lognormal_agree {torch.allclose(tr.log_prob(torch.tensor(1.7)), D.LogNormal(0.0, 1.0).log_prob(torch.tensor(1.7)))}"
        )
        print(f"has_rsample {Normal(0.0, 1.0).has_rsample} {D.Bernoulli(0.3).has_rsample}")
        print(f"beta_kl {kl_divergence(D.Beta(2.0, 3.0), D.Beta(1.5, 1.5)).item():.6f}")
        print(
            f"dirichlet_logprob {D.Dirichlet(torch.tensor([1.5, 2.0, 3.0])).log_prob(torch.tensor([0.2, 0.3, 0.5])).item():.6f}"
        )
        print(f"sample_shape {tuple(q.sample((5,)).shape)} {tuple(q.rsample().shape)}")

    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for epoch in range(30):
        for xb in x.split(16):
            recon, mu, logvar = model(xb)
            loss, bce, kld = loss_fn(recon, xb, mu, logvar)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if first is None:
                first = loss.item()
    print(f"rng_loss_first {first:.4f}")
    print(f"rng_loss_last {loss.item():.4f}")
    print(f"loss_decreased {loss.item() < first}")
    # rsample carries gradient to the distribution parameters; sample does not.
    loc = torch.zeros(3, requires_grad=True)
    z = Normal(loc, 1.0).rsample()
    print(f"rsample_grad {z.requires_grad} {Normal(loc, 1.0).sample().requires_grad}")
    with torch.no_grad():
        samples = torch.sigmoid(model.dec(torch.randn(4, 4)))
    print(
        f"samples_shape {tuple(samples.shape)} in_unit {bool(((samples >= 0) & (samples <= 1)).all())}"
    )
    try:
        Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
    except ValueError as e:
        print(f"validate_error {type(e).__name__}")


if __name__ == "__main__":
    main()
