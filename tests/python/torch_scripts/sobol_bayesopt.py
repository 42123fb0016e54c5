"""Bayesian optimization in plain torch, as BoTorch-free research code writes it: unscrambled
Sobol points from torch.quasirandom.SobolEngine (draw, fast_forward, reset, draw_base2), a
Gaussian process with an RBF kernel (torch.cdist), hyperparameters fit by maximizing the log
marginal likelihood with Adam over softplus-constrained parameters, Cholesky solves
(torch.linalg.cholesky, cholesky_solve, solve_triangular), the posterior mean and variance,
expected improvement through torch.distributions.Normal's cdf and log_prob, and a loop that
picks the next point from Sobol candidates; plus a scrambled engine whose points depend on the
seed."""

import math

import torch
import torch.nn.functional as F
from torch.distributions import Normal
from torch.quasirandom import SobolEngine

torch.set_default_dtype(torch.float64)


def objective(x):
    return torch.sin(3 * x[:, 0]) * torch.cos(2 * x[:, 1]) + 0.5 * (x[:, 0] - 0.6) ** 2


def rbf(a, b, lengthscale, outputscale):
    return outputscale * torch.exp(-0.5 * torch.cdist(a / lengthscale, b / lengthscale) ** 2)


class GP:
    def __init__(self, x, y):
        self.x, self.y = x, y
        self.raw = torch.tensor(
            [0.0, 0.0, -3.0], requires_grad=True
        )  # lengthscale, outputscale, noise

    def params(self):
        ls, os_, noise = F.softplus(self.raw) + torch.tensor([1e-3, 1e-3, 1e-6])
        return ls, os_, noise

    def mll(self):
        ls, os_, noise = self.params()
        n = len(self.x)
        k = rbf(self.x, self.x, ls, os_) + noise * torch.eye(n)
        chol = torch.linalg.cholesky(k)
        alpha = torch.cholesky_solve(self.y.unsqueeze(1), chol)
        return (
            -0.5 * (self.y.unsqueeze(1) * alpha).sum()
            - torch.log(torch.diagonal(chol)).sum()
            - 0.5 * n * math.log(2 * math.pi)
        ) / n

    def fit(self, steps=60):
        opt = torch.optim.Adam([self.raw], lr=0.1)
        for _ in range(steps):
            opt.zero_grad()
            loss = -self.mll()
            loss.backward()
            opt.step()
        return -loss.item()

    @torch.no_grad()
    def posterior(self, xs):
        ls, os_, noise = self.params()
        k = rbf(self.x, self.x, ls, os_) + noise * torch.eye(len(self.x))
        chol = torch.linalg.cholesky(k)
        ks = rbf(self.x, xs, ls, os_)
        v = torch.linalg.solve_triangular(chol, ks, upper=False)
        alpha = torch.cholesky_solve(self.y.unsqueeze(1), chol)
        mean = (ks.T @ alpha).squeeze(1)
        var = (os_ - (v * v).sum(0)).clamp_min(1e-12)
        return mean, var


def expected_improvement(mean, var, best):
    sd = var.sqrt()
    z = (best - mean) / sd
    n = Normal(torch.zeros(()), torch.ones(()))
    return sd * (z * n.cdf(z) + n.log_prob(z).exp())


def main():
    eng = SobolEngine(dimension=2, scramble=False)
    first = eng.draw(4)
    print("sobol_first", first.tolist(), first.dtype)
    eng.fast_forward(4)
    nxt = eng.draw(2)
    eng.reset()
    again = eng.draw(10)[8:]
    print("fast_forward", nxt.tolist(), torch.equal(nxt, again), eng.num_generated)
    print(
        "draw_base2",
        tuple(SobolEngine(3).draw_base2(3).shape),
        SobolEngine(5, scramble=False).draw(3, dtype=torch.float32).dtype,
    )
    print("sobol_repr", repr(eng))

    x = SobolEngine(2, scramble=False).draw(8)
    y = objective(x)
    gp = GP(x, (y - y.mean()) / y.std())
    mll = gp.fit()
    ls, os_, noise = gp.params()
    print(
        "gp_fit", round(mll, 4), round(ls.item(), 4), round(os_.item(), 4), round(noise.item(), 6)
    )
    cand = SobolEngine(2, scramble=False).draw(64)[8:]
    for it in range(4):
        ystd = (y - y.mean()) / y.std()
        gp = GP(x, ystd)
        gp.fit(40)
        mean, var = gp.posterior(cand)
        ei = expected_improvement(mean, var, ystd.min())
        best_i = int(ei.argmax())
        new = cand[best_i : best_i + 1]
        x = torch.cat([x, new])
        y = torch.cat([y, objective(new)])
        cand = torch.cat([cand[:best_i], cand[best_i + 1 :]])
        print(
            "iter",
            it,
            [round(v, 4) for v in new[0].tolist()],
            round(ei.max().item(), 5),
            round(y.min().item(), 5),
        )
    mean, var = gp.posterior(x[:3])
    print("posterior_at_data", [round(v, 3) for v in mean.tolist()], bool((var < 0.1).all()))
    print("best", [round(v, 4) for v in x[y.argmin()].tolist()], round(y.min().item(), 5))

    torch.manual_seed(0)
    scr = SobolEngine(2, scramble=True, seed=7).draw(3)
    scr2 = SobolEngine(2, scramble=True, seed=7).draw(3)
    print("scrambled_repeatable", torch.equal(scr, scr2), bool(((scr >= 0) & (scr < 1)).all()))
    print("rng_scrambled", [round(v, 4) for v in scr[0].tolist()])


if __name__ == "__main__":
    main()
