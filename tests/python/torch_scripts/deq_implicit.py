# ruff: noqa: E501
"""A deep equilibrium layer as the "Deep Implicit Layers" tutorial builds it: a tanh cell whose
fixed point is found without autograd by Anderson acceleration (batched least squares with
torch.linalg.solve), one attached re-application to hook the graph, and the implicit backward
pass installed with register_hook solving the adjoint fixed point; gradients checked against
unrolled differentiation, then a few training steps of a DEQ classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.53 + 0.019 * k * k + i) * scale).view_as(p))


class TanhCell(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d, bias=False)
        self.norm = nn.LayerNorm(d)

    def forward(self, z, x):
        return self.norm(torch.tanh(self.lin(z) + x))


def anderson(f, x0, m=4, lam=1e-4, max_iter=40, tol=1e-5, beta=1.0):
    bsz, d = x0.shape
    X = torch.zeros(bsz, m, d, dtype=x0.dtype)
    Fv = torch.zeros(bsz, m, d, dtype=x0.dtype)
    X[:, 0], Fv[:, 0] = x0, f(x0)
    X[:, 1], Fv[:, 1] = Fv[:, 0], f(Fv[:, 0])
    H = torch.zeros(bsz, m + 1, m + 1, dtype=x0.dtype)
    H[:, 0, 1:] = H[:, 1:, 0] = 1
    y = torch.zeros(bsz, m + 1, 1, dtype=x0.dtype)
    y[:, 0] = 1
    res = []
    for k in range(2, max_iter):
        n = min(k, m)
        G = Fv[:, :n] - X[:, :n]
        H[:, 1 : n + 1, 1 : n + 1] = (
            torch.bmm(G, G.transpose(1, 2)) + lam * torch.eye(n, dtype=x0.dtype)[None]
        )
        alpha = torch.linalg.solve(H[:, : n + 1, : n + 1], y[:, : n + 1])[:, 1 : n + 1, 0]
        X[:, k % m] = (
            beta * (alpha[:, None] @ Fv[:, :n])[:, 0]
            + (1 - beta) * (alpha[:, None] @ X[:, :n])[:, 0]
        )
        Fv[:, k % m] = f(X[:, k % m])
        res.append((Fv[:, k % m] - X[:, k % m]).norm().item() / (1e-5 + Fv[:, k % m].norm().item()))
        if res[-1] < tol:
            break
    return X[:, k % m], res


class DEQ(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        with torch.no_grad():
            z, self.forward_res = anderson(lambda z: self.f(z, x), torch.zeros_like(x))
        z = self.f(z, x)
        z0 = z.clone().detach().requires_grad_()
        f0 = self.f(z0, x)

        def backward_hook(grad):
            g, self.backward_res = anderson(
                lambda y: torch.autograd.grad(f0, z0, y, retain_graph=True)[0] + grad, grad
            )
            return g

        if z.requires_grad:
            z.register_hook(backward_hook)
        return z


def main():
    d = 6
    cell = TanhCell(d)
    det_init(cell)
    x = torch.cos(torch.arange(4 * d, dtype=torch.float32) * 0.7).view(4, d)
    deq = DEQ(cell)
    z = deq(x)
    print(f"forward_iters {len(deq.forward_res)} converged {deq.forward_res[-1] < 1e-4}")
    print(f"fixed_point_residual_small {(cell(z, x) - z).norm().item() < 1e-3}")
    print(f"z {[round(v, 4) for v in z[0].tolist()]}")
    target = torch.sin(torch.arange(4 * d, dtype=torch.float32)).view(4, d)
    loss = F.mse_loss(z, target)
    loss.backward()
    g_implicit = cell.lin.weight.grad.clone()
    print(f"backward_converged {deq.backward_res[-1] < 1e-4}")

    cell.zero_grad()
    zu = torch.zeros_like(x)
    for _ in range(60):
        zu = cell(zu, x)
    F.mse_loss(zu, target).backward()
    g_unrolled = cell.lin.weight.grad.clone()
    rel = ((g_implicit - g_unrolled).norm() / g_unrolled.norm()).item()
    print(
        f"implicit_vs_unrolled_close {rel < 1e-2} grad {[round(v, 4) for v in g_implicit[0].tolist()]}"
    )

    model = nn.Sequential(nn.Linear(3, d), DEQ(TanhCell(d)), nn.Linear(d, 2))
    det_init(model)
    xs = torch.linspace(-1, 1, 30).view(10, 3)
    ys = (xs.sum(1) > 0).long()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 4))
    print(f"train_losses {losses}")
    print(f"acc {(model(xs).argmax(1) == ys).float().mean().item():.2f}")


if __name__ == "__main__":
    main()
