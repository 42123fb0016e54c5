# ruff: noqa: E501
"""Density models built on torch.distributions: a mixture density network (MixtureSameFamily
of Normals with a Categorical over components) fit by negative log-likelihood to a bimodal
conditional, and a normalizing flow from composed transforms (AffineTransform,
SigmoidTransform, TanhTransform, ExpTransform, ComposeTransform, inverse transforms and
log_abs_det_jacobian) plus a trained RealNVP-style affine coupling flow evaluated through a
TransformedDistribution with a learnable base, constraints and transform_to / biject_to."""

import math

import torch
import torch.nn as nn
from torch import distributions as D


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.51 + 0.013 * k * k + i) * scale).view_as(p))


class MDN(nn.Module):
    def __init__(self, k=3, hidden=24):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, hidden), nn.Tanh())
        self.logits = nn.Linear(hidden, k)
        self.mu = nn.Linear(hidden, k)
        self.log_sigma = nn.Linear(hidden, k)

    def forward(self, x):
        h = self.body(x)
        mix = D.Categorical(logits=self.logits(h))
        comp = D.Normal(self.mu(h), self.log_sigma(h).clamp(-5, 3).exp())
        return D.MixtureSameFamily(mix, comp)


class Coupling(nn.Module):
    def __init__(self, mask, hidden=16):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, x):
        """x -> z and log|det dz/dx|."""
        s, t = self.net(x * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        z = x * torch.exp(s) + t
        return z, s.sum(-1)

    def inverse(self, z):
        s, t = self.net(z * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return (z - t) * torch.exp(-s)


class RealNVP(nn.Module):
    def __init__(self):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])] * 2
        self.layers = nn.ModuleList(Coupling(m) for m in masks)
        self.base = D.MultivariateNormal(torch.zeros(2), torch.eye(2))

    def log_prob(self, x):
        logdet = torch.zeros(x.size(0))
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return self.base.log_prob(x) + logdet

    def sample_from(self, z):
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


def main():
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 64).unsqueeze(1)
    branch = (torch.arange(64) % 2).float().unsqueeze(1)
    y = torch.where(branch > 0, torch.sin(3 * x), -torch.sin(3 * x) + 0.5) + 0.05 * torch.cos(
        x * 37
    )
    mdn = MDN()
    det_init(mdn)
    opt = torch.optim.Adam(mdn.parameters(), lr=0.02)
    for step in range(60):
        dist = mdn(x)
        nll = -dist.log_prob(y.squeeze(1)).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
        if step in (0, 59):
            print(f"mdn_step{step} nll {nll.item():.5f}")
    with torch.no_grad():
        dist = mdn(x[:3])
        print(
            f"mdn_mean {[round(v, 4) for v in dist.mean.tolist()]} var {[round(v, 4) for v in dist.variance.tolist()]}"
        )
        print(
            f"mdn_cdf {[round(v, 4) for v in dist.cdf(torch.zeros(3)).tolist()]} batch {tuple(dist.batch_shape)} mix_probs {[round(v, 4) for v in dist.mixture_distribution.probs[0].tolist()]}"
        )
        print(f"rng_mdn_sample {dist.sample((2,)).tolist()}")

    # Composed transforms.
    t = D.transforms.ComposeTransform(
        [D.transforms.AffineTransform(loc=1.0, scale=2.0), D.transforms.SigmoidTransform()]
    )
    u = torch.tensor([-1.0, 0.0, 0.5])
    v = t(u)
    print(
        f"compose {[round(a, 5) for a in v.tolist()]} inv {[round(a, 5) for a in t.inv(v).tolist()]} ladj {[round(a, 5) for a in t.log_abs_det_jacobian(u, v).tolist()]}"
    )
    logit_normal = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.SigmoidTransform()])
    print(
        f"logit_normal lp {[round(a, 5) for a in logit_normal.log_prob(torch.tensor([0.2, 0.5, 0.9])).tolist()]} support {logit_normal.support}"
    )
    lognorm = D.TransformedDistribution(D.Normal(0.3, 0.5), D.transforms.ExpTransform())
    ref = D.LogNormal(0.3, 0.5)
    pts = torch.tensor([0.5, 1.0, 2.0])
    print(
        f"lognormal_same {torch.allclose(lognorm.log_prob(pts), ref.log_prob(pts))} mean {ref.mean.item():.5f}"
    )
    tanh_t = D.transforms.TanhTransform(cache_size=1)
    a = torch.tensor([0.3, -1.2])
    print(
        f"tanh ladj {[round(b, 5) for b in tanh_t.log_abs_det_jacobian(a, tanh_t(a)).tolist()]} inv {[round(b, 5) for b in tanh_t.inv(tanh_t(a)).tolist()]}"
    )
    bij = D.biject_to(D.constraints.positive)
    tt = D.transform_to(D.constraints.simplex)
    print(
        f"biject_pos {[round(b, 5) for b in bij(torch.tensor([-1.0, 2.0])).tolist()]} simplex {[round(b, 5) for b in tt(torch.tensor([0.1, -0.3, 0.7])).tolist()]} interval {[round(b, 5) for b in D.transform_to(D.constraints.interval(-2.0, 3.0))(torch.tensor([0.0, 1.0])).tolist()]}"
    )

    # A RealNVP flow on two moons-like data.
    s = torch.linspace(0, math.pi, 40)
    data = torch.cat(
        [
            torch.stack([torch.cos(s), torch.sin(s)], 1),
            torch.stack([1 - torch.cos(s), 0.5 - torch.sin(s)], 1),
        ]
    )
    data = data + 0.05 * torch.sin(torch.arange(data.numel(), dtype=torch.float32) * 1.1).view_as(
        data
    )
    flow = RealNVP()
    det_init(flow)
    opt = torch.optim.Adam(flow.parameters(), lr=0.01)
    for step in range(80):
        loss = -flow.log_prob(data).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in (0, 79):
            print(f"flow_step{step} nll {loss.item():.5f}")
    with torch.no_grad():
        z = torch.tensor([[0.0, 0.0], [1.0, -0.5]])
        xs = flow.sample_from(z)
        back = xs
        for layer in flow.layers:
            back, _ = layer(back)
        print(
            f"flow_inverse_ok {torch.allclose(back, z, atol=1e-5)} samples {[[round(c, 4) for c in r] for r in xs.tolist()]}"
        )


if __name__ == "__main__":
    main()
