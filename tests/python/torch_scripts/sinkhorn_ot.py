# ruff: noqa: E501
"""Entropic optimal transport in torch (as in POT/geomloss-style code): log-domain Sinkhorn
iterations with logsumexp between two weighted point clouds, the transport plan's marginals, the
regularized cost and its gradient with respect to the source points (autograd through the
unrolled iterations), a Sinkhorn divergence, a few gradient-flow steps moving the source towards
the target, and a fixed-support Wasserstein barycenter of two 1-D histograms."""

import torch


def sinkhorn_log(a, b, C, eps, iters=60):
    f = torch.zeros_like(a)
    g = torch.zeros_like(b)
    loga, logb = a.log(), b.log()
    for _ in range(iters):
        f = -eps * torch.logsumexp((g[None, :] - C) / eps + logb[None, :], dim=1)
        g = -eps * torch.logsumexp((f[:, None] - C) / eps + loga[:, None], dim=0)
    logP = (f[:, None] + g[None, :] - C) / eps + loga[:, None] + logb[None, :]
    return logP.exp(), f, g


def ot_cost(x, y, a, b, eps):
    C = torch.cdist(x, y) ** 2
    P, f, g = sinkhorn_log(a, b, C, eps)
    return (P * C).sum(), P


def main():
    t = torch.arange(12, dtype=torch.float32)
    x = torch.stack([torch.cos(t * 0.5), torch.sin(t * 0.5)], 1)
    s = torch.arange(9, dtype=torch.float32)
    y = torch.stack([s * 0.3 + 1.0, torch.cos(s) * 0.4 + 0.5], 1)
    a = torch.softmax(torch.sin(t), 0)
    b = torch.full((9,), 1.0 / 9)

    xr = x.clone().requires_grad_(True)
    cost, P = ot_cost(xr, y, a, b, eps=0.1)
    cost.backward()
    print(f"cost {cost.item():.5f}")
    print(
        f"row_marginal_err {(P.sum(1) - a).abs().max().item():.4f} col_marginal_ok {(P.sum(0) - b).abs().max().item() < 1e-5}"
    )
    print(f"plan_row0 {[round(v, 4) for v in P[0].tolist()]} argmax {P.argmax(1).tolist()}")
    print(f"grad_x {[round(v, 4) for v in xr.grad[:3].flatten().tolist()]}")

    def divergence(x, y, a, b, eps):
        return (
            ot_cost(x, y, a, b, eps)[0]
            - 0.5 * ot_cost(x, x, a, a, eps)[0]
            - 0.5 * ot_cost(y, y, b, b, eps)[0]
        )

    print(
        f"divergence {divergence(x, y, a, b, 0.1).item():.5f} self {divergence(y, y, b, b, 0.1).item():.6f}"
    )

    flow = x.clone().requires_grad_(True)
    opt = torch.optim.SGD([flow], lr=0.5)
    trace = []
    for _ in range(6):
        opt.zero_grad()
        loss = divergence(flow, y, a, b, 0.1)
        loss.backward()
        flow.grad /= a[:, None]
        opt.step()
        trace.append(round(loss.item(), 4))
    print(f"flow_losses {trace}")
    print(
        f"flow_mean {[round(v, 4) for v in flow.detach().mean(0).tolist()]} target_mean {[round(v, 4) for v in y.mean(0).tolist()]}"
    )

    grid = torch.linspace(0, 1, 21)
    h1 = torch.exp(-((grid - 0.25) ** 2) / 0.005)
    h2 = torch.exp(-((grid - 0.7) ** 2) / 0.01)
    h1, h2 = h1 / h1.sum(), h2 / h2.sum()
    C = (grid[:, None] - grid[None, :]) ** 2
    K = torch.exp(-C / 0.02)
    hs = torch.stack([h1, h2])
    v = torch.ones(2, 21)
    for _ in range(100):
        u = hs / (v @ K.T)
        Ktu = u @ K
        bary = torch.exp((Ktu.log() + v.log()).mean(0))
        v = bary[None] / Ktu
    bary = bary / bary.sum()
    print(
        f"barycenter_var {(bary * (grid - 0.475) ** 2).sum().item():.5f} top {[round(v, 4) for v in bary.topk(3).values.tolist()]} mass {bary.sum().item():.4f} mean {(bary * grid).sum().item():.4f}"
    )


if __name__ == "__main__":
    main()
