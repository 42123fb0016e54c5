"""A Fourier Neural Operator as in the neuraloperator tutorials: SpectralConv2d with complex
(cfloat) Parameters multiplied into the lowest modes of rfft2 by einsum, irfft2 back with s=,
a 1-D spectral derivative through fftfreq, Adam on complex and real parameters together, a
relative L2 loss, and a StepLR schedule."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SpectralConv2d(nn.Module):
    def __init__(self, cin, cout, m1, m2):
        super().__init__()
        self.m1, self.m2 = m1, m2
        scale = 1 / (cin * cout)
        n = cin * cout * m1 * m2
        re = torch.linspace(-1, 1, n).reshape(cin, cout, m1, m2).mul(3).sin()
        im = torch.linspace(-1, 1, n).reshape(cin, cout, m1, m2).mul(5).cos()
        self.w1 = nn.Parameter(scale * torch.complex(re, im))
        self.w2 = nn.Parameter(scale * torch.complex(im, -re).to(torch.cfloat))

    def forward(self, x):
        b, _, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, : self.m1, : self.m2] = torch.einsum(
            "bixy,ioxy->boxy", x_ft[:, :, : self.m1, : self.m2], self.w1
        )
        out_ft[:, :, -self.m1 :, : self.m2] = torch.einsum(
            "bixy,ioxy->boxy", x_ft[:, :, -self.m1 :, : self.m2], self.w2
        )
        return torch.fft.irfft2(out_ft, s=(h, w))


class FNO(nn.Module):
    def __init__(self, width=6, modes=3):
        super().__init__()
        self.lift = nn.Linear(3, width)
        self.spec = nn.ModuleList([SpectralConv2d(width, width, modes, modes) for _ in range(2)])
        self.pw = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in range(2)])
        self.proj = nn.Sequential(nn.Linear(width, 8), nn.GELU(), nn.Linear(8, 1))

    def forward(self, a):
        b, h, w = a.shape
        gx = torch.linspace(0, 1, h).view(1, h, 1).expand(b, h, w)
        gy = torch.linspace(0, 1, w).view(1, 1, w).expand(b, h, w)
        x = self.lift(torch.stack([a, gx, gy], dim=-1)).permute(0, 3, 1, 2)
        for k, (s, p) in enumerate(zip(self.spec, self.pw)):
            x = s(x) + p(x)
            if k == 0:
                x = F.gelu(x)
        return self.proj(x.permute(0, 2, 3, 1)).squeeze(-1)


def rel_l2(pred, y):
    diff = torch.linalg.vector_norm(pred - y, dim=(1, 2))
    return (diff / torch.linalg.vector_norm(y, dim=(1, 2))).mean()


model = FNO()
with torch.no_grad():
    for name, p in model.named_parameters():
        if not p.is_complex():
            p.copy_(torch.linspace(-0.6, 0.6, p.numel()).reshape(p.shape).mul(7).cos() * 0.4)
n_complex = sum(p.numel() for p in model.parameters() if p.is_complex())
print("params", sum(p.numel() for p in model.parameters()), n_complex, model.spec[0].w1.dtype)

# inputs: smooth fields; target: a smoothed (heat-kernel) version computed in Fourier space
h = w = 12
xs = torch.linspace(0, 2 * math.pi, h + 1)[:-1]
a = torch.stack(
    [torch.sin((k + 1) * xs)[:, None] * torch.cos((k % 3 + 1) * xs)[None] for k in range(4)]
)
kx = torch.fft.fftfreq(h, d=1.0 / h)
ky = torch.fft.rfftfreq(w, d=1.0 / w)
kernel = torch.exp(-0.05 * (kx[:, None] ** 2 + ky[None] ** 2))
y = torch.fft.irfft2(torch.fft.rfft2(a) * kernel, s=(h, w))
print("target", tuple(y.shape), round(y.abs().max().item(), 4), kernel.shape)

opt = torch.optim.Adam(model.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
for step in range(10):
    opt.zero_grad()
    loss = rel_l2(model(a), y)
    loss.backward()
    if step == 0:
        g = model.spec[0].w1.grad
        print("grad0", g.dtype, round(g.abs().sum().item(), 5), round(g.real.sum().item(), 5))
    opt.step()
    sched.step()
    if step % 3 == 0 or step == 9:
        print(f"step {step} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.5f}")
state = opt.state[model.spec[0].w1]
print(
    "adam_state",
    state["exp_avg"].dtype,
    state["exp_avg_sq"].dtype,
    round(state["exp_avg_sq"].abs().sum().item(), 8),
)

# spectral derivative of a periodic signal and Parseval's identity
u = torch.sin(3 * xs) + 0.5 * torch.cos(5 * xs)
du = torch.fft.irfft(1j * torch.fft.rfftfreq(h, d=1.0 / h) * torch.fft.rfft(u), n=h)
exact = 3 * torch.cos(3 * xs) - 2.5 * torch.sin(5 * xs)
print("deriv_err", round((du - exact).abs().max().item(), 5))
U = torch.fft.fft(u, norm="ortho")
print("parseval", round(u.pow(2).sum().item(), 4), round(U.abs().pow(2).sum().item(), 4))
print("shifted", torch.fft.fftshift(torch.fft.fftfreq(6)).tolist())
with torch.no_grad():
    out = model(a[:1])
print("eval", round(out.mean().item(), 5), round(out.std().item(), 5))
