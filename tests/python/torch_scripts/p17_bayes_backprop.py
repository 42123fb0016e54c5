"""Uncertainty estimation for regression: Bayes-by-backprop linear layers (softplus-parameterized
posteriors, reparameterized weights from a fixed deterministic epsilon during the compared part,
KL to a Normal prior with torch.distributions.kl_divergence, an ELBO with a Gaussian
likelihood and learned noise), MC dropout kept active in eval via a train-mode submodule, and a
heteroscedastic mean/variance network trained with GaussianNLLLoss, compared on in- and
out-of-distribution inputs."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence


class BayesLinear(nn.Module):
    def __init__(self, din, dout, prior_sigma=1.0):
        super().__init__()
        self.w_mu = nn.Parameter(torch.linspace(-0.5, 0.5, din * dout).reshape(dout, din).sin())
        self.w_rho = nn.Parameter(torch.full((dout, din), -4.0))
        self.b_mu = nn.Parameter(torch.zeros(dout))
        self.b_rho = nn.Parameter(torch.full((dout,), -4.0))
        self.prior = Normal(0.0, prior_sigma)
        self.eps = None  # a fixed noise (deterministic runs); None draws from the generator

    def forward(self, x):
        w_sigma, b_sigma = F.softplus(self.w_rho), F.softplus(self.b_rho)
        if self.eps is None:
            ew, eb = torch.randn_like(w_sigma), torch.randn_like(b_sigma)
        else:
            ew, eb = self.eps
        w, b = self.w_mu + w_sigma * ew, self.b_mu + b_sigma * eb
        self.kl = (
            kl_divergence(Normal(self.w_mu, w_sigma), self.prior).sum()
            + kl_divergence(Normal(self.b_mu, b_sigma), self.prior).sum()
        )
        return F.linear(x, w, b)


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = BayesLinear(1, 16), BayesLinear(16, 16), BayesLinear(16, 1)
        self.log_noise = nn.Parameter(torch.tensor(-1.0))

    def forward(self, x):
        return self.l3(torch.tanh(self.l2(torch.tanh(self.l1(x)))))

    def kl(self):
        return self.l1.kl + self.l2.kl + self.l3.kl


def set_eps(model, k):
    for j, layer in enumerate((model.l1, model.l2, model.l3)):
        shape_w, shape_b = layer.w_mu.shape, layer.b_mu.shape
        nw = shape_w.numel()
        seq = torch.sin(
            torch.arange(nw + shape_b.numel(), dtype=torch.float32) * (1.3 + 0.7 * j) + k * 2.1
        )
        layer.eps = (seq[:nw].reshape(shape_w) * 1.5, seq[nw:] * 1.5)


x = torch.linspace(-3, 3, 48)[:, None]
y = torch.sin(1.5 * x) + 0.1 * torch.cos(7 * x) * (x.abs() + 0.5)
x_ood = torch.linspace(4, 6, 5)[:, None]

bnn = BNN()
opt = torch.optim.Adam(bnn.parameters(), lr=2e-2)
for step in range(60):
    set_eps(bnn, step % 4)
    pred = bnn(x)
    nll = -Normal(pred, bnn.log_noise.exp()).log_prob(y).sum()
    loss = nll + bnn.kl() / 10.0
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 14:
        print(f"bnn {step} elbo {loss.item():.4f} nll {nll.item():.4f} kl {bnn.kl().item():.4f}")
with torch.no_grad():
    preds = []
    for k in range(6):
        set_eps(bnn, k + 10)
        preds.append(torch.cat([bnn(x), bnn(x_ood)]))
    preds = torch.stack(preds)
mean, std = preds.mean(0), preds.std(0)
print(
    "bnn_uncert",
    round(std[:48].mean().item(), 5),
    round(std[48:].mean().item(), 5),
    round(F.mse_loss(mean[:48], y).item(), 5),
)
print(
    "noise", round(bnn.log_noise.exp().item(), 5), round(F.softplus(bnn.l1.w_rho).mean().item(), 5)
)
bnn.l1.eps = bnn.l2.eps = bnn.l3.eps = None
with torch.no_grad():
    print("rng_bnn_draw", bnn(x_ood[:2]).flatten().tolist())


class MCDropoutNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(1, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 32), nn.ReLU()
        )
        self.head = nn.Linear(32, 2)

    def forward(self, x):
        mu, raw = self.head(self.body(x)).unbind(-1)
        return mu, F.softplus(raw) + 1e-4


net = MCDropoutNet()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 2.3).sin() * 0.5)
gnll = nn.GaussianNLLLoss(full=True)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
net.body[2].p = 0.0  # deterministic training for the comparison
for step in range(60):
    mu, var = net(x)
    loss = gnll(mu, y.squeeze(-1), var)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(f"hetero {step} gnll {loss.item():.5f}")
net.eval()
with torch.no_grad():
    mu, var = net(torch.cat([x, x_ood]))
print(
    "hetero_var",
    round(var[:48].mean().item(), 5),
    round(var[48:].mean().item(), 5),
    round(mu[:4].sum().item(), 5),
)
net.body[2].p = 0.2
net.body[2].train()
print("modes", net.training, net.body[2].training, net.body[0].training)
with torch.no_grad():
    samples = torch.stack([net(x_ood)[0] for _ in range(8)])
print("rng_mc_dropout_std", samples.std(0).mean().item())
