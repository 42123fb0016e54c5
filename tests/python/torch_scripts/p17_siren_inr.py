"""Implicit neural representations: a SIREN (sine layers with the w0-scaled init done through
nn.init.uniform_ on a seeded generator replaced by a deterministic pattern), fitting an image
and its spatial gradient (Sobel filters via conv2d) with autograd.grad(create_graph=True), a
Laplacian from second derivatives, a Fourier-feature ReLU MLP baseline, PSNR, and a
super-resolved render on a denser grid in chunks under torch.no_grad."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SineLayer(nn.Module):
    def __init__(self, din, dout, w0=30.0, first=False):
        super().__init__()
        self.w0, self.linear = w0, nn.Linear(din, dout)
        bound = 1 / din if first else math.sqrt(6 / din) / w0
        with torch.no_grad():
            n = self.linear.weight.numel()
            pattern = torch.sin(torch.arange(n, dtype=torch.float32) * 2.39996 + din)
            self.linear.weight.copy_(pattern.reshape(dout, din) * bound)
            self.linear.bias.copy_(torch.cos(torch.arange(dout, dtype=torch.float32)) * bound)

    def forward(self, x):
        return torch.sin(self.w0 * self.linear(x))


class Siren(nn.Module):
    def __init__(self, hidden=24, layers=2):
        super().__init__()
        net = [SineLayer(2, hidden, first=True)]
        net += [SineLayer(hidden, hidden) for _ in range(layers)]
        self.net = nn.Sequential(*net)
        self.out = nn.Linear(hidden, 1)
        with torch.no_grad():
            self.out.weight.copy_(torch.linspace(-1, 1, hidden)[None] * math.sqrt(6 / hidden) / 30)
            self.out.bias.zero_()

    def forward(self, coords):
        return self.out(self.net(coords))


class FourierMLP(nn.Module):
    def __init__(self, freqs=6, hidden=24):
        super().__init__()
        b = torch.stack([torch.arange(1, freqs + 1.0), torch.arange(freqs, 0, -1.0)], 0)
        self.register_buffer("B", b * math.pi)
        self.mlp = nn.Sequential(
            nn.Linear(2 * freqs, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
        )
        with torch.no_grad():
            for i, p in enumerate(self.mlp.parameters()):
                p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.5).sin() * 0.3)

    def forward(self, coords):
        proj = coords @ self.B
        return self.mlp(torch.cat([proj.sin(), proj.cos()], -1))


def grid(n):
    lin = torch.linspace(-1, 1, n)
    return torch.stack(torch.meshgrid(lin, lin, indexing="ij"), -1).reshape(-1, 2)


n = 16
coords = grid(n)
img = (torch.sin(3 * coords[:, 0]) * torch.cos(2 * coords[:, 1] + 0.5) + 0.3 * coords[:, 0] ** 2)[
    :, None
]
sobel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8
kernels = torch.stack([sobel_x.t(), sobel_x])[:, None]
gt_grad = F.conv2d(F.pad(img.reshape(1, 1, n, n), (1, 1, 1, 1), mode="replicate"), kernels)
gt_grad = gt_grad.reshape(2, -1).t() * (n - 1) / 2
print("grad_target", tuple(gt_grad.shape), round(gt_grad.abs().mean().item(), 5))


def psnr(a, b):
    return 10 * torch.log10(4.0 / F.mse_loss(a, b))


siren, ff = Siren(), FourierMLP()
print("params", sum(p.numel() for p in siren.parameters()), sum(p.numel() for p in ff.parameters()))
opt_s = torch.optim.Adam(siren.parameters(), lr=1e-3)
opt_f = torch.optim.Adam(ff.parameters(), lr=3e-3)
for step in range(30):
    x = coords.clone().requires_grad_(True)
    pred = siren(x)
    (g,) = torch.autograd.grad(pred.sum(), x, create_graph=True)
    loss_s = F.mse_loss(pred, img) + 0.01 * F.mse_loss(g, gt_grad)
    opt_s.zero_grad()
    loss_s.backward()
    opt_s.step()
    loss_f = F.mse_loss(ff(coords), img)
    opt_f.zero_grad()
    loss_f.backward()
    opt_f.step()
    if step % 10 == 9:
        print(f"step {step} siren {loss_s.item():.6f} fourier {loss_f.item():.6f}")

x = coords[:20].clone().requires_grad_(True)
out = siren(x)
(g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
lap = sum(torch.autograd.grad(g[:, i].sum(), x, retain_graph=True)[0][:, i] for i in range(2))
print("laplacian", round(lap.abs().mean().item(), 4), round(g.norm(dim=1).max().item(), 4))
with torch.no_grad():
    print("psnr", round(psnr(siren(coords), img).item(), 3), round(psnr(ff(coords), img).item(), 3))
    dense = grid(40)
    up = torch.cat([siren(chunk) for chunk in dense.split(512)]).reshape(40, 40)
    ref = F.interpolate(img.reshape(1, 1, n, n), size=(40, 40), mode="bicubic", align_corners=True)
print("render", tuple(up.shape), round(up.mean().item(), 5), round(psnr(up, ref[0, 0]).item(), 3))
