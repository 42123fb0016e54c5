"""NeRF's core: positional encoding of 3-D points and directions, rays from a pinhole camera
(meshgrid indexing='xy', stack, matrix product with a camera-to-world pose), stratified sampling
with linspace + expand, volume rendering (alpha compositing with an exclusive cumprod built from
torch.cat and ones_like), hierarchical sampling from the weights' PDF (cumsum, searchsorted with
right=True, gather, clamp), and a few training steps of a tiny MLP on a rendered target."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def posenc(x, n_freqs):
    freqs = 2.0 ** torch.arange(n_freqs, dtype=torch.float32) * math.pi
    xb = x[..., None, :] * freqs[:, None]
    return torch.cat([x, torch.sin(xb).flatten(-2), torch.cos(xb).flatten(-2)], dim=-1)


def get_rays(h, w, focal, c2w):
    i, j = torch.meshgrid(
        torch.arange(w, dtype=torch.float32), torch.arange(h, dtype=torch.float32), indexing="xy"
    )
    dirs = torch.stack([(i - w * 0.5) / focal, -(j - h * 0.5) / focal, -torch.ones_like(i)], -1)
    rays_d = torch.sum(dirs[..., None, :] * c2w[:3, :3], -1)
    rays_o = c2w[:3, -1].expand(rays_d.shape)
    return rays_o, rays_d


def render(raw, z_vals, rays_d):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.full_like(dists[..., :1], 1e10)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    alpha = 1.0 - torch.exp(-F.relu(raw[..., 3]) * dists)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1.0 - alpha + 1e-10], -1), -1)
    weights = alpha * trans[..., :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth = torch.sum(weights * z_vals, -1)
    acc = weights.sum(-1)
    return rgb_map, depth, acc, weights


def sample_pdf(bins, weights, n, det=True):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    u = torch.linspace(0.0, 1.0, n).expand(list(cdf.shape[:-1]) + [n]).contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.clamp(inds - 1, min=0)
    above = torch.clamp(inds, max=cdf.shape[-1] - 1)
    g = torch.stack([below, above], -1)
    shape = [g.shape[0], g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(shape), 2, g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(shape), 2, g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


class TinyNeRF(nn.Module):
    def __init__(self, fx=4, fd=2, w=32):
        super().__init__()
        self.fx, self.fd = fx, fd
        self.l1 = nn.Linear(3 + 6 * fx, w)
        self.l2 = nn.Linear(w, w)
        self.sigma = nn.Linear(w, 1)
        self.rgb = nn.Sequential(nn.Linear(w + 3 + 6 * fd, w // 2), nn.ReLU(), nn.Linear(w // 2, 3))

    def forward(self, pts, dirs):
        h = F.relu(self.l2(F.relu(self.l1(posenc(pts, self.fx)))))
        d = posenc(F.normalize(dirs, dim=-1), self.fd)
        d = d[..., None, :].expand(*pts.shape[:-1], d.shape[-1])
        return torch.cat([self.rgb(torch.cat([h, d], -1)), self.sigma(h)], -1)


pose = torch.tensor(
    [[1.0, 0.0, 0.0, 0.1], [0.0, 0.8, -0.6, -1.5], [0.0, 0.6, 0.8, 2.0], [0.0, 0.0, 0.0, 1.0]]
)
ro, rd = get_rays(6, 8, 5.0, pose)
print(
    "rays",
    tuple(ro.shape),
    tuple(rd.shape),
    round(rd.sum().item(), 4),
    round(ro[2, 3, 1].item(), 4),
)
print(
    "posenc", tuple(posenc(torch.ones(2, 3), 4).shape), round(posenc(ro[:1, :1], 3).sum().item(), 4)
)

ro, rd = ro.reshape(-1, 3), rd.reshape(-1, 3)
near, far, ns = 1.0, 4.0, 16
z = torch.linspace(near, far, ns).expand(ro.shape[0], ns)
pts = ro[:, None, :] + rd[:, None, :] * z[..., None]

model = TinyNeRF()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.91 + k).view_as(p) * 0.3)
target = torch.sigmoid(torch.cos(torch.arange(ro.shape[0] * 3, dtype=torch.float32) * 0.2)).view(
    -1, 3
)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
for step in range(15):
    raw = model(pts, rd)
    rgb, depth, acc, w = render(raw, z, rd)
    loss = F.mse_loss(rgb, target)
    psnr = -10.0 * torch.log10(loss)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(
    "render",
    tuple(rgb.shape),
    tuple(depth.shape),
    round(acc.mean().item(), 4),
    round(w.sum(-1).max().item(), 4),
)
print(
    "train",
    round(losses[0], 5),
    round(losses[-1], 5),
    losses[-1] < losses[0],
    round(psnr.item(), 3),
)

with torch.no_grad():
    z_mid = 0.5 * (z[..., 1:] + z[..., :-1])
    z_fine = sample_pdf(z_mid, w[..., 1:-1], 8)
    z_all, order = torch.sort(torch.cat([z, z_fine], -1), -1)
print(
    "pdf",
    tuple(z_fine.shape),
    bool((z_fine >= near).all()),
    bool((z_fine <= far).all()),
    round(z_fine.mean().item(), 4),
)
print(
    "sorted", tuple(z_all.shape), bool((z_all[..., 1:] >= z_all[..., :-1]).all()), int(order[0, -1])
)
