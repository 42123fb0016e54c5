"""Exact Gaussian-process regression as in GP tutorials (no GPyTorch): an RBF + periodic kernel
built with torch.cdist, softplus-constrained hyperparameters, the negative log marginal
likelihood through torch.linalg.cholesky, cholesky_solve and the log-diagonal, predictive mean
and variance with solve_triangular, hyperparameters fitted with Adam, a jitter retry with
cholesky_ex, and an expected-improvement acquisition with torch.distributions.Normal."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.set_default_dtype(torch.float64)


class GP(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_ls = nn.Parameter(torch.tensor(0.0))
        self.raw_var = nn.Parameter(torch.tensor(0.0))
        self.raw_noise = nn.Parameter(torch.tensor(-2.0))
        self.raw_period = nn.Parameter(torch.tensor(1.0))

    def kernel(self, a, b):
        ls, var, period = (
            F.softplus(self.raw_ls),
            F.softplus(self.raw_var),
            F.softplus(self.raw_period),
        )
        d = torch.cdist(a, b)
        rbf = torch.exp(-0.5 * (d / ls) ** 2)
        per = torch.exp(-2 * torch.sin(math.pi * d / period) ** 2 / ls**2)
        return var * rbf * per

    def nll(self, x, y):
        n = x.shape[0]
        K = self.kernel(x, x) + (F.softplus(self.raw_noise) + 1e-6) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
        return (
            0.5 * (y.unsqueeze(0) @ alpha).squeeze()
            + torch.log(torch.diagonal(L)).sum()
            + 0.5 * n * math.log(2 * math.pi)
        )

    def predict(self, x, y, xs):
        n = x.shape[0]
        K = self.kernel(x, x) + (F.softplus(self.raw_noise) + 1e-6) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(x, xs)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
        mean = (Ks.T @ alpha).squeeze(-1)
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        var = torch.diagonal(self.kernel(xs, xs)) - (v * v).sum(0)
        return mean, var.clamp_min(1e-12)


x = torch.linspace(0, 6, 25).unsqueeze(-1)
y = torch.sin(2 * x.squeeze(-1)) + 0.1 * torch.cos(17 * x.squeeze(-1))
gp = GP()
opt = torch.optim.Adam(gp.parameters(), lr=0.05)
first = gp.nll(x, y).item()
for it in range(80):
    opt.zero_grad()
    loss = gp.nll(x, y)
    loss.backward()
    opt.step()
print("nll", round(first, 4), round(loss.item(), 4), loss.item() < first)
print("hypers", [round(F.softplus(p).item(), 4) for p in gp.parameters()])
xs = torch.linspace(-0.5, 6.5, 8).unsqueeze(-1)
with torch.no_grad():
    mu, var = gp.predict(x, y, xs)
print("predict", [round(v, 4) for v in mu.tolist()])
print("pred_std", [round(v, 4) for v in var.sqrt().tolist()])
print("in_sample_err", round((gp.predict(x, y, x)[0] - y).abs().max().item(), 4))

best = y.max()
sd = var.sqrt()
z = (mu - best) / sd
n01 = Normal(torch.zeros(()), torch.ones(()))
ei = sd * (z * n01.cdf(z) + n01.log_prob(z).exp())
print("ei", int(ei.argmax()), [round(v, 5) for v in ei.tolist()[:3]])

A = torch.ones(3, 3)  # singular: needs jitter
L, info = torch.linalg.cholesky_ex(A)
jitter = 1e-6
while info.item() != 0:
    L, info = torch.linalg.cholesky_ex(A + jitter * torch.eye(3))
    jitter *= 10
print("jitter", info.item(), jitter > 1e-6, torch.allclose(L @ L.T, A, atol=1e-2))
print("dtype", torch.get_default_dtype(), mu.dtype)
torch.set_default_dtype(torch.float32)
