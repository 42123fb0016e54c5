"""A DDPM on 2-D points (the "swiss roll" tutorial): a linear and a cosine beta schedule
(linspace, cumprod, clamp), q_sample with per-example timesteps gathered from the schedule,
a sinusoidal timestep embedding, an MLP denoiser with SiLU and GroupNorm-free residual blocks,
training on the noise-prediction MSE with EMA weights (torch.lerp_ over parameters), and the
ancestral sampling loop under torch.inference_mode."""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 50


def linear_betas(t):
    return torch.linspace(1e-4, 0.02, t, dtype=torch.float64).float()


def cosine_betas(t, s=0.008):
    steps = torch.arange(t + 1, dtype=torch.float64) / t
    f = torch.cos((steps + s) / (1 + s) * math.pi / 2) ** 2
    alphas_bar = f / f[0]
    return torch.clamp(1 - alphas_bar[1:] / alphas_bar[:-1], 0.0001, 0.9999).float()


def extract(a, t, shape):
    out = a.gather(-1, t)
    return out.reshape(t.shape[0], *((1,) * (len(shape) - 1)))


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class Block(nn.Module):
    def __init__(self, d, temb):
        super().__init__()
        self.lin1 = nn.Linear(d, d)
        self.lin2 = nn.Linear(d, d)
        self.t_proj = nn.Linear(temb, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, h, te):
        x = F.silu(self.lin1(self.norm(h)) + self.t_proj(te))
        return h + self.lin2(x)


class Denoiser(nn.Module):
    def __init__(self, d=32, temb=16):
        super().__init__()
        self.temb = temb
        self.inp = nn.Linear(2, d)
        self.blocks = nn.ModuleList([Block(d, temb) for _ in range(2)])
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(d, 2))

    def forward(self, x, t):
        te = timestep_embedding(t, self.temb)
        h = self.inp(x)
        for b in self.blocks:
            h = b(h, te)
        return self.out(h)


def det_init(model):
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            w = torch.cos(torch.arange(n, dtype=torch.float32) * 0.37 + k) * 0.4
            p.copy_(w.view_as(p) / math.sqrt(p.shape[-1]))


def swiss_roll(n):
    s = torch.linspace(1.5 * math.pi, 4.5 * math.pi, n)
    return torch.stack([s * torch.cos(s), s * torch.sin(s)], 1) / 10.0


for name, betas in [("linear", linear_betas(T)), ("cosine", cosine_betas(T))]:
    alphas = 1.0 - betas
    ab = torch.cumprod(alphas, dim=0)
    ab_prev = F.pad(ab[:-1], (1, 0), value=1.0)
    post_var = betas * (1.0 - ab_prev) / (1.0 - ab)
    print(
        f"sched_{name}",
        round(ab[-1].item(), 6),
        round(post_var[1:].mean().item(), 6),
        round(torch.sqrt(1.0 / ab).max().item(), 3),
    )

betas = linear_betas(T)
alphas = 1.0 - betas
ab = torch.cumprod(alphas, 0)
sqrt_ab, sqrt_1mab = ab.sqrt(), (1 - ab).sqrt()

model = Denoiser()
det_init(model)
ema = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
data = swiss_roll(64)
losses = []
for step in range(40):
    t = (torch.arange(64) * 7 + step * 3) % T
    noise = torch.sin(torch.arange(128, dtype=torch.float32).view(64, 2) * 1.7 + step)
    x_t = extract(sqrt_ab, t, data.shape) * data + extract(sqrt_1mab, t, data.shape) * noise
    loss = F.mse_loss(model(x_t, t), noise)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            pe.lerp_(pm, 0.1)
    losses.append(loss.item())
print("loss_first_last", round(losses[0], 4), round(losses[-1], 4), losses[-1] < losses[0])
print(
    "ema_differs", not torch.equal(ema.inp.weight, model.inp.weight), ema.inp.weight.requires_grad
)

with torch.inference_mode():
    x = torch.cos(torch.arange(32, dtype=torch.float32).view(16, 2))
    for i in reversed(range(T)):
        t = torch.full((16,), i, dtype=torch.long)
        eps = ema(x, t)
        mean = (x - betas[i] / sqrt_1mab[i] * eps) / alphas[i].sqrt()
        if i > 0:
            z = torch.sin(torch.arange(32, dtype=torch.float32).view(16, 2) * (i + 0.5))
            x = mean + betas[i].sqrt() * z
        else:
            x = mean
    print("sample", tuple(x.shape), x.is_inference(), bool(torch.isfinite(x).all()))
    print("sample_stats", round(x.mean().item(), 3), round(x.std().item(), 3))
rng = torch.randn(3, 2)
print("rng_noise", rng.shape)
