# ruff: noqa: E501
"""Regression with custom and distributional losses: a multi-quantile network trained with the
pinball loss written as an nn.Module, a monotone-quantile fix with torch.cumsum of softplus
increments, interval coverage, heteroscedastic regression with nn.GaussianNLLLoss, count
regression with nn.PoissonNLLLoss (log_input both ways, full=True), Huber / SmoothL1 / L1
compared on outliers, torch.quantile / nanquantile with every interpolation, and weighted
MSE via reduction='none'."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.39 + 0.017 * k * k + i) * scale).view_as(p))


class PinballLoss(nn.Module):
    def __init__(self, quantiles):
        super().__init__()
        self.register_buffer("q", torch.tensor(quantiles))

    def forward(self, pred, target):
        err = target.unsqueeze(-1) - pred
        return torch.max(self.q * err, (self.q - 1) * err).mean()


class QuantileNet(nn.Module):
    def __init__(self, n_q=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU())
        self.base = nn.Linear(32, 1)
        self.deltas = nn.Linear(32, n_q - 1)

    def forward(self, x):
        h = self.body(x)
        inc = F.softplus(self.deltas(h))
        return torch.cat([self.base(h), self.base(h) + torch.cumsum(inc, dim=-1)], dim=-1)


def main():
    torch.manual_seed(0)
    x = torch.linspace(-2, 2, 200).unsqueeze(1)
    wiggle = torch.sin(torch.arange(200, dtype=torch.float32) * 2.7).unsqueeze(1)
    y = (torch.sin(2 * x) + (0.2 + 0.3 * x.abs()) * wiggle).squeeze(1)
    qs = [0.1, 0.5, 0.9]
    net = QuantileNet(len(qs))
    det_init(net)
    loss_fn = PinballLoss(qs)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for step in range(100):
        pred = net(x)
        loss = loss_fn(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in (0, 99):
            print(f"pinball_step{step} {loss.item():.5f}")
    with torch.no_grad():
        pred = net(x)
    cover = ((y >= pred[:, 0]) & (y <= pred[:, 2])).float().mean().item()
    below = [(y <= pred[:, i]).float().mean().item() for i in range(3)]
    print(
        f"monotone {(pred.diff(dim=-1) >= 0).all().item()} coverage80 {cover:.4f} below {[round(b, 3) for b in below]}"
    )

    # Heteroscedastic Gaussian NLL.
    mean_head = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 2))
    det_init(mean_head)
    gnll = nn.GaussianNLLLoss(eps=1e-6)
    opt = torch.optim.Adam(mean_head.parameters(), lr=0.02)
    for step in range(80):
        out = mean_head(x)
        mu, var = out[:, 0], F.softplus(out[:, 1]) + 1e-4
        loss = gnll(mu, y, var)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"gaussian_nll {loss.item():.5f} var_edge_vs_mid {var[0].item() / var[100].item():.3f}")
    g = torch.tensor([0.5, 1.0, 2.0])
    t = torch.tensor([0.0, 1.5, 1.0])
    print(
        f"gnll_full {F.gaussian_nll_loss(g, t, torch.tensor([1.0, 0.5, 2.0]), full=True).item():.5f} scalar_var {F.gaussian_nll_loss(g.unsqueeze(1), t.unsqueeze(1), torch.ones(3, 1) * 0.3, reduction='sum').item():.5f}"
    )

    # Poisson regression for counts.
    counts = torch.round(torch.exp(0.8 * x.squeeze(1) + 0.2 * wiggle.squeeze(1)))
    lin = nn.Linear(1, 1)
    det_init(lin)
    pnll = nn.PoissonNLLLoss(log_input=True)
    opt = torch.optim.SGD(lin.parameters(), lr=0.05)
    for step in range(100):
        loss = pnll(lin(x).squeeze(1), counts)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"poisson w {lin.weight.item():.4f} b {lin.bias.item():.4f} loss {loss.item():.5f}")
    rate = torch.tensor([0.5, 2.0, 4.0])
    k = torch.tensor([0.0, 3.0, 2.0])
    print(
        f"poisson_forms log_input {F.poisson_nll_loss(rate.log(), k).item():.5f} rate_input {F.poisson_nll_loss(rate, k, log_input=False).item():.5f} full {F.poisson_nll_loss(rate.log(), k, full=True).item():.5f}"
    )

    # Robust losses on outliers.
    p = torch.tensor([0.0, 0.5, 1.0, 8.0])
    tt = torch.zeros(4)
    print(
        f"robust l1 {F.l1_loss(p, tt).item():.4f} huber {F.huber_loss(p, tt, delta=1.0).item():.4f} huber_d2 {nn.HuberLoss(delta=2.0)(p, tt).item():.4f} smoothl1_b05 {nn.SmoothL1Loss(beta=0.5)(p, tt).item():.4f} mse {F.mse_loss(p, tt).item():.4f}"
    )
    w = torch.tensor([1.0, 2.0, 0.5, 0.1])
    print(f"weighted_mse {(F.mse_loss(p, tt, reduction='none') * w).sum().div(w.sum()).item():.5f}")

    # torch.quantile.
    data = torch.tensor([[1.0, 7.0, 3.0, 9.0, 5.0], [2.0, float("nan"), 4.0, 0.0, 8.0]])
    q = torch.tensor([0.25, 0.5, 0.9])
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        print(f"quantile_{mode} {torch.quantile(data[0], q, interpolation=mode).tolist()}")
    print(
        f"quantile_dim {torch.quantile(data[:, [0, 2, 3, 4]], 0.5, dim=1, keepdim=True).tolist()} nan {torch.quantile(data[1], 0.5).item()} nanquantile {torch.nanquantile(data, 0.5, dim=1).tolist()}"
    )


if __name__ == "__main__":
    main()
