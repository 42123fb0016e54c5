"""A physics-informed network for u'' + u = 0 on [0, pi] with u(0) = 0, u'(0) = 1: derivatives of
the network with respect to its inputs through autograd.grad(create_graph=True), Adam then LBFGS;
plus forward-mode AD (torch.autograd.forward_ad dual numbers, torch.func.jvp/linearize),
autograd.functional.jacobian/hessian/vjp/jvp/hvp and torch.func.grad on the trained model."""

import math

import torch
import torch.nn as nn
from torch.autograd import forward_ad

torch.set_default_dtype(torch.float64)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1)
        )

    def forward(self, x):
        return self.net(x)


def det_init(model):
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_((torch.sin(torch.arange(p.numel()) * 1.1 + k) * 0.6).view_as(p))


def residual_loss(model, x):
    x = x.clone().requires_grad_(True)
    u = model(x)
    du = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)[0]
    pde = ((d2u + u) ** 2).mean()
    x0 = torch.zeros(1, 1, requires_grad=True)
    u0 = model(x0)
    du0 = torch.autograd.grad(u0, x0, torch.ones_like(u0), create_graph=True)[0]
    bc = (u0**2).sum() + ((du0 - 1) ** 2).sum()
    return pde + bc


def main():
    model = MLP()
    det_init(model)
    x = torch.linspace(0, math.pi, 32).view(-1, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    hist = []
    for _ in range(60):
        opt.zero_grad()
        loss = residual_loss(model, x)
        loss.backward()
        opt.step()
        hist.append(loss.item())
    print(f"adam first {hist[0]:.6f} last {hist[-1]:.6f}")
    lbfgs = torch.optim.LBFGS(
        model.parameters(), lr=0.5, max_iter=15, line_search_fn="strong_wolfe"
    )

    def closure():
        lbfgs.zero_grad()
        loss = residual_loss(model, x)
        loss.backward()
        return loss

    lbfgs.step(closure)
    final = residual_loss(model, x).item()
    print(f"lbfgs final {final:.3e} better {final < hist[-1]}")
    with torch.no_grad():
        pred = model(x).squeeze(1)
    err = (pred - torch.sin(x.squeeze(1))).abs().max().item()
    print(f"max_err_vs_sin {err:.3e} small {err < 0.2}")

    # forward-mode AD: du/dx as a tangent
    pts = torch.tensor([[0.5], [1.0], [2.0]])
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(pts, torch.ones_like(pts))
        out = model(dual)
        primal, tangent = forward_ad.unpack_dual(out)
    xg = pts.clone().requires_grad_(True)
    (rev,) = torch.autograd.grad(model(xg).sum(), xg)
    print(f"fwd_tangent {[round(v, 6) for v in tangent.squeeze(1).tolist()]}")
    print(
        f"fwd_eq_rev {torch.allclose(tangent, rev)} primal_ok {torch.allclose(primal, model(pts))}"
    )

    from torch.func import functional_call, grad, jvp, linearize, vmap

    f = lambda z: model(z.view(1, 1)).squeeze()  # noqa: E731
    p_out, t_out = jvp(f, (torch.tensor(1.0),), (torch.tensor(1.0),))
    print(f"func_jvp {p_out.item():.6f} {t_out.item():.6f}")
    _, lin = linearize(f, torch.tensor(1.0))
    print(f"linearize {lin(torch.tensor(2.0)).item():.6f}")
    d2 = vmap(grad(grad(f)))(torch.tensor([0.5, 1.0, 2.0]))
    print(f"second_derivative {[round(v, 5) for v in d2.tolist()]}")
    params = dict(model.named_parameters())
    g = grad(lambda p: functional_call(model, p, (pts,)).sum())(params)
    print(
        f"param_grad_keys {list(g)[:2]} "
        f"norm {torch.cat([v.flatten() for v in g.values()]).norm().item():.5f}"
    )

    from torch.autograd.functional import hessian, hvp, jacobian, vjp

    def energy(z):
        return (model(z.view(-1, 1)) ** 2).sum()

    z = torch.tensor([0.3, 1.7])
    J = jacobian(lambda z: model(z.view(-1, 1)).squeeze(1), z)
    H = hessian(energy, z)
    _, v = vjp(energy, z)
    _, hv = hvp(energy, z, torch.tensor([1.0, -1.0]))
    Jv = jacobian(lambda z: model(z.view(-1, 1)).squeeze(1), z, vectorize=True)
    print(f"jacobian {[[round(a, 5) for a in r] for r in J.tolist()]}")
    print(f"hessian {[[round(a, 5) for a in r] for r in H.tolist()]}")
    print(f"vjp {[round(a, 5) for a in v.tolist()]} hvp {[round(a, 5) for a in hv.tolist()]}")
    print(f"vectorized_same {torch.allclose(J, Jv)} symmetric {torch.allclose(H, H.T)}")


if __name__ == "__main__":
    main()
