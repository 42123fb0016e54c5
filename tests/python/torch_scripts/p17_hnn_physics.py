"""Physics-informed dynamics learning: a Hamiltonian neural network for a pendulum (the vector
field is the symplectic gradient of a learned scalar, from autograd.grad with create_graph),
trained on finite-difference derivatives of RK4 trajectories, rolled out with a leapfrog
(symplectic) integrator and with RK4, compared with a baseline MLP on energy drift; also
torch.func.jacrev/vmap for the Jacobian of the learned field and a Lagrangian-style check
with torch.autograd.functional.hessian."""

import torch
import torch.nn as nn
from torch.func import jacrev, vmap


def pendulum(state):
    q, p = state[..., 0], state[..., 1]
    return torch.stack([p, -torch.sin(q)], -1)


def energy(state):
    return 0.5 * state[..., 1] ** 2 + (1 - torch.cos(state[..., 0]))


def rk4(f, s, dt):
    k1 = f(s)
    k2 = f(s + dt / 2 * k1)
    k3 = f(s + dt / 2 * k2)
    k4 = f(s + dt * k3)
    return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


dt = 0.1
starts = torch.stack([torch.linspace(-1.5, 1.5, 8), torch.cos(torch.arange(8.0))], -1)
traj = [starts]
for _ in range(24):
    traj.append(rk4(pendulum, traj[-1], dt))
traj = torch.stack(traj, 1)  # (8, 25, 2)
xs = traj[:, 1:-1].reshape(-1, 2)
dxs = ((traj[:, 2:] - traj[:, :-2]) / (2 * dt)).reshape(-1, 2)
print("data", tuple(traj.shape), round(energy(traj).std(1).max().item(), 8), tuple(xs.shape))


def mlp(dout):
    m = nn.Sequential(
        nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, dout)
    )
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.2 + dout).sin() * 0.5
            )
    return m


class HNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.H = mlp(1)

    def forward(self, s):
        with torch.enable_grad():
            s = s if s.requires_grad else s.detach().requires_grad_(True)
            h = self.H(s).sum()
            (dh,) = torch.autograd.grad(h, s, create_graph=self.training)
        return torch.stack([dh[..., 1], -dh[..., 0]], -1)


hnn, base = HNN(), mlp(2)
opt_h = torch.optim.Adam(hnn.parameters(), lr=3e-3)
opt_b = torch.optim.Adam(base.parameters(), lr=3e-3)
for step in range(80):
    loss_h = (hnn(xs) - dxs).pow(2).mean()
    opt_h.zero_grad()
    loss_h.backward()
    opt_h.step()
    loss_b = (base(xs) - dxs).pow(2).mean()
    opt_b.zero_grad()
    loss_b.backward()
    opt_b.step()
    if step % 20 == 19:
        print(f"step {step} hnn {loss_h.item():.6f} mlp {loss_b.item():.6f}")

hnn.eval()


def leapfrog(field, s, dt):
    q, p = s[..., :1], s[..., 1:]
    p = p + dt / 2 * field(torch.cat([q, p], -1))[..., 1:]
    q = q + dt * field(torch.cat([q, p], -1))[..., :1]
    p = p + dt / 2 * field(torch.cat([q, p], -1))[..., 1:]
    return torch.cat([q, p], -1)


s0 = torch.tensor([[1.0, 0.0], [0.3, 0.8]])
roll = {"hnn_leapfrog": s0, "hnn_rk4": s0, "mlp_rk4": s0}
for _ in range(60):
    roll["hnn_leapfrog"] = leapfrog(hnn, roll["hnn_leapfrog"], dt).detach()
    roll["hnn_rk4"] = rk4(hnn, roll["hnn_rk4"], dt).detach()
    with torch.no_grad():
        roll["mlp_rk4"] = rk4(base, roll["mlp_rk4"], dt)
for k, v in roll.items():
    drift = (energy(v) - energy(s0)).abs()
    print(k, [round(d, 4) for d in drift.tolist()], round(v.norm().item(), 4))

hnn.train()
jac = vmap(jacrev(lambda s: hnn(s[None])[0]))(s0)
print("jacobian", tuple(jac.shape), [round(v, 4) for v in jac[0].flatten().tolist()])
print("trace_free", round(jac.diagonal(dim1=-2, dim2=-1).sum(-1).abs().max().item(), 5))
Hs = lambda s: hnn.H(s).sum()  # noqa: E731
hess = torch.autograd.functional.hessian(Hs, s0[0])
print(
    "hessian",
    [round(v, 4) for v in hess.flatten().tolist()],
    torch.allclose(hess, hess.t(), atol=1e-5),
)
