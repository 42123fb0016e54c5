"""N-BEATS forecasting on synthetic series: trend (polynomial) and seasonality (Fourier) basis
blocks with backcast residual stacking and a generic block, windows cut with unfold, sMAPE /
MASE metrics, a Huber loss, RAdam with decoupled weight decay, ReduceLROnPlateau on a
validation loss, and gradient-norm tracking with clip_grad_norm_."""

import math

import torch
import torch.nn as nn

back, fore = 12, 4


class Block(nn.Module):
    def __init__(self, basis_b, basis_f, hidden=16):
        super().__init__()
        self.fc = nn.Sequential(
            nn.Linear(back, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU()
        )
        self.theta_b = nn.Linear(hidden, basis_b.shape[0], bias=False)
        self.theta_f = nn.Linear(hidden, basis_f.shape[0], bias=False)
        self.register_buffer("basis_b", basis_b)
        self.register_buffer("basis_f", basis_f)

    def forward(self, x):
        h = self.fc(x)
        return self.theta_b(h) @ self.basis_b, self.theta_f(h) @ self.basis_f


def trend_basis(degree):
    tb = torch.arange(back, dtype=torch.float32) / back
    tf = torch.arange(fore, dtype=torch.float32) / fore
    return torch.stack([tb**i for i in range(degree + 1)]), torch.stack(
        [tf**i for i in range(degree + 1)]
    )


def season_basis(harmonics):
    def basis(n):
        t = torch.arange(n, dtype=torch.float32) / n
        freqs = torch.arange(1, harmonics + 1, dtype=torch.float32)[:, None]
        return torch.cat(
            [
                torch.ones(1, n),
                torch.cos(2 * math.pi * freqs * t),
                torch.sin(2 * math.pi * freqs * t),
            ]
        )

    return basis(back), basis(fore)


class NBeats(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(
            [
                Block(*trend_basis(2)),
                Block(*season_basis(3)),
                Block(torch.eye(back), torch.eye(fore)),
            ]
        )

    def forward(self, x):
        residual, forecast = x.flip(dims=(1,)), 0
        for block in self.blocks:
            b, f = block(residual)
            residual = residual - b
            forecast = forecast + f
        return forecast


t = torch.arange(120, dtype=torch.float32)
series = torch.stack(
    [
        0.02 * t + torch.sin(2 * math.pi * t / 12) + 0.3 * torch.cos(2 * math.pi * t / 4),
        1.0 - 0.01 * t + 0.5 * torch.sin(2 * math.pi * t / 6 + 1),
    ]
)
win = series.unfold(1, back + fore, 3)
x, y = win[..., :back].reshape(-1, back), win[..., back:].reshape(-1, fore)
split = int(0.8 * len(x))
print("windows", tuple(win.shape), len(x), split)

model = NBeats()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.7).sin() * 0.3)
print("buffers", [tuple(b.shape) for b in model.buffers()], len(model.state_dict()))
opt = torch.optim.RAdam(model.parameters(), lr=0.01, weight_decay=1e-3, decoupled_weight_decay=True)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
    opt, mode="min", factor=0.5, patience=1, threshold=1e-2
)
huber = nn.HuberLoss(delta=0.5)


def smape(p, y):
    return (200 * (p - y).abs() / (p.abs() + y.abs() + 1e-8)).mean()


def mase(p, y, insample, m=1):
    scale = (insample[:, m:] - insample[:, :-m]).abs().mean(1, keepdim=True)
    return ((p - y).abs() / scale).mean()


for epoch in range(8):
    model.train()
    perm = torch.arange(split).roll(epoch * 3)
    for b in range(0, split, 8):
        idx = perm[b : b + 8]
        loss = huber(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
    model.eval()
    with torch.no_grad():
        pv = model(x[split:])
        val = huber(pv, y[split:])
    plateau.step(val)
    print(
        f"epoch {epoch} train {loss.item():.5f} val {val.item():.5f} gn {gn.item():.4f}",
        f"lr {opt.param_groups[0]['lr']:.5f}",
    )
print(
    "metrics",
    round(smape(pv, y[split:]).item(), 4),
    round(mase(pv, y[split:], x[split:]).item(), 4),
)
print("plateau", plateau.num_bad_epochs, round(plateau.best, 6), sorted(plateau.state_dict())[:4])
print("radam_state", sorted(opt.state[model.blocks[0].theta_b.weight]))
