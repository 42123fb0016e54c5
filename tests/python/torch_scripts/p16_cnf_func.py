"""A continuous normalizing flow and a neural ODE written with torch.func: RK4 integration of
dynamics given by functional_call on a dict of parameters, the exact divergence from
vmap(jacrev) traces against a Hutchinson estimate with fixed probes, the change of
log-density along the path, a Gauss-Newton step from jacrev over the parameter dict, hessian
of a small potential, and training the flow by maximum likelihood with LBFGS."""

import math

import torch
import torch.nn as nn
from torch.func import functional_call, hessian, jacrev, vmap


class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))

    def forward(self, t, z):
        return self.net(torch.cat([z, t.expand(z.shape[:-1] + (1,))], -1))


f = Dynamics()
with torch.no_grad():
    for i, p in enumerate(f.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.1).sin() * 0.6)
params = {k: v.detach().requires_grad_() for k, v in f.named_parameters()}
print("params", list(params), [tuple(v.shape) for v in params.values()])


def field(p, t, z):
    return functional_call(f, p, (t, z))


def div_exact(p, t, z):
    jac = vmap(jacrev(lambda zz: field(p, t, zz[None])[0]))(z)
    return jac.diagonal(dim1=-2, dim2=-1).sum(-1)


probes = torch.stack(
    [torch.tensor([1.0, -1.0]), torch.tensor([-1.0, -1.0]), torch.tensor([1.0, 1.0])]
)


def div_hutch(p, t, z):
    zz = z.detach().requires_grad_(True) if not z.requires_grad else z
    out = field(p, t, zz)
    est = 0
    for v in probes:
        (g,) = torch.autograd.grad(out, zz, v.expand_as(out), create_graph=True)
        est = est + (g * v).sum(-1)
    return est / len(probes)


z = torch.stack([torch.linspace(-1, 1, 6), torch.linspace(1, -0.5, 6) ** 2], 1)
t0 = torch.tensor(0.3)
de, dh = div_exact(params, t0, z), div_hutch(params, t0, z)
print("div", [round(v, 5) for v in de.tolist()], round((de - dh).abs().max().item(), 5))


def cnf(p, z0, steps=4, T=1.0):
    h = T / steps
    z, logdet = z0, torch.zeros(z0.shape[0])

    def aug(t, z):
        return field(p, t, z), -div_exact(p, t, z)

    for k in range(steps):
        t = torch.tensor(k * h)
        k1 = aug(t, z)
        k2 = aug(t + h / 2, z + h / 2 * k1[0])
        k3 = aug(t + h / 2, z + h / 2 * k2[0])
        k4 = aug(t + h, z + h * k3[0])
        z = z + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        logdet = logdet + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return z, logdet


def nll(p, x):
    zT, dlogp = cnf(p, x)
    logp0 = -0.5 * (zT**2).sum(-1) - math.log(2 * math.pi)
    return -(logp0 - dlogp).mean()


data = torch.stack([torch.linspace(-2, 2, 10).sin() * 1.5, torch.linspace(-2, 2, 10)], 1)
print("nll0", round(nll(params, data).item(), 5))
zT, ld = cnf(params, data)
print("flow", round(zT.abs().sum().item(), 5), [round(v, 5) for v in ld[:3].tolist()])

opt = torch.optim.LBFGS(
    list(params.values()), lr=0.5, max_iter=4, history_size=5, line_search_fn="strong_wolfe"
)


def closure():
    opt.zero_grad()
    loss = nll(params, data)
    loss.backward()
    return loss


for it in range(2):
    loss = opt.step(closure)
    print(f"lbfgs {it} {loss.item():.5f}")
print("nll_after", round(nll(params, data).item(), 5))

# Gauss-Newton step on a regression fit of the field at t=0
target = torch.stack([-z[:, 1], z[:, 0]], 1)


def residual(p):
    return (field(p, torch.tensor(0.0), z) - target).flatten()


p0 = {k: v.detach() for k, v in params.items()}
J = jacrev(residual)(p0)
Jm = torch.cat([J[k].flatten(1) for k in p0], 1)
r = residual(p0)
print("jac", tuple(Jm.shape), round(Jm.abs().sum().item(), 4))
delta = torch.linalg.lstsq(
    Jm.T @ Jm + 1e-2 * torch.eye(Jm.shape[1]), -(Jm.T @ r)[:, None]
).solution.squeeze(1)
sizes = [v.numel() for v in p0.values()]
p1 = {k: v + d.view_as(v) for (k, v), d in zip(p0.items(), delta.split(sizes))}
print("gauss_newton", round(r.pow(2).sum().item(), 5), round(residual(p1).pow(2).sum().item(), 5))

H = hessian(lambda q: (q[0] ** 2 - 1) ** 2 + 0.5 * q[1] ** 2 * q[0] + torch.cos(q[1]))(
    torch.tensor([0.7, -0.4])
)
print(
    "hessian",
    [[round(v, 5) for v in row] for row in H.tolist()],
    round(torch.linalg.eigvalsh(H).min().item(), 5),
)
