"""Rigid-body and geometry code from robotics notebooks: quaternion products and rotation
matrices, torch.cross / torch.linalg.cross for torques and normals, skew-symmetric matrices and
torch.linalg.matrix_exp (Rodrigues), a polynomial trajectory fit with torch.vander and
torch.linalg.lstsq, a differentiable semi-implicit Euler rollout whose initial velocity is fitted
by gradient descent, and hardtanh-bounded controls."""

import torch
import torch.nn.functional as F


def quat_mul(a, b):
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        -1,
    )


def quat_to_mat(q):
    q = F.normalize(q, dim=-1)
    w, x, y, z = q.unbind(-1)
    return torch.stack(
        [
            1 - 2 * (y * y + z * z),
            2 * (x * y - z * w),
            2 * (x * z + y * w),
            2 * (x * y + z * w),
            1 - 2 * (x * x + z * z),
            2 * (y * z - x * w),
            2 * (x * z - y * w),
            2 * (y * z + x * w),
            1 - 2 * (x * x + y * y),
        ],
        -1,
    ).view(*q.shape[:-1], 3, 3)


def skew(v):
    z = torch.zeros_like(v[..., 0])
    return torch.stack(
        [z, -v[..., 2], v[..., 1], v[..., 2], z, -v[..., 0], -v[..., 1], v[..., 0], z], -1
    ).view(*v.shape[:-1], 3, 3)


axis = F.normalize(torch.tensor([[0.0, 0.0, 1.0], [1.0, 1.0, 0.0]]), dim=-1)
angle = torch.tensor([0.5, 1.2])
q = torch.cat([torch.cos(angle / 2)[:, None], axis * torch.sin(angle / 2)[:, None]], -1)
R_q = quat_to_mat(q)
R_exp = torch.linalg.matrix_exp(skew(axis * angle[:, None]))
print("rotations", torch.allclose(R_q, R_exp, atol=1e-5), round(torch.linalg.det(R_q)[1].item(), 5))
qq = quat_mul(q[0], q[1])
print("quat_mul", [round(v, 4) for v in qq.tolist()], round(qq.norm().item(), 5))
print("compose", torch.allclose(quat_to_mat(qq), R_q[0] @ R_q[1], atol=1e-5))
orth = R_q.transpose(-1, -2) @ R_q
print("orthonormal", torch.allclose(orth, torch.eye(3).expand(2, 3, 3), atol=1e-5))

r = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0]])
f = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, -1.0, 0.5]])
tau = torch.cross(r, f, dim=1)
print("torque", tau.tolist(), torch.equal(tau, torch.linalg.cross(r, f)))
print("skew_cross", torch.allclose(skew(r) @ f.unsqueeze(-1), tau.unsqueeze(-1)))
tri = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
faces = torch.tensor([[0, 1, 2], [0, 1, 3], [1, 2, 3]])
v0, v1, v2 = tri[faces].unbind(1)
normals = torch.linalg.cross(v1 - v0, v2 - v0)
area = 0.5 * normals.norm(dim=-1)
print(
    "mesh",
    [round(a, 4) for a in area.tolist()],
    F.normalize(normals, dim=-1)[2].tolist() != [0, 0, 0],
)

t = torch.linspace(0, 1, 9, dtype=torch.float64)
xt = 2.0 - 3.0 * t + 0.5 * t**2 + 4.0 * t**3
V = torch.vander(t, N=4)
print("vander", tuple(V.shape), V[2].tolist())
coef = torch.linalg.lstsq(V, xt.unsqueeze(-1)).solution.squeeze(-1)
print("poly_fit", [round(c, 6) for c in coef.tolist()])
print("vander_inc", torch.vander(torch.tensor([2, 3]), N=3, increasing=True).tolist())

g = torch.tensor([0.0, -9.81])
target = torch.tensor([3.0, 0.5])
v0 = torch.tensor([1.0, 1.0], requires_grad=True)
opt = torch.optim.Adam([v0], lr=0.2)
for it in range(60):
    pos, vel = torch.zeros(2), v0
    for step in range(20):
        u = F.hardtanh(0.1 * (target - pos), -0.5, 0.5)
        vel = vel + 0.05 * (g + u)
        pos = pos + 0.05 * vel
    loss = (pos - target).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it == 0:
        first = loss.item()
print("rollout", round(first, 4), round(loss.item(), 6), [round(v, 3) for v in v0.tolist()])
print(
    "hardtanh",
    F.hardtanh(torch.tensor([-2.0, -0.3, 0.4, 5.0])).tolist(),
    torch.nn.Hardtanh(0.0, 6.0)(torch.tensor([7.0, -1.0, 3.0])).tolist(),
)
