"""Single-image super-resolution (ESPCN): a channels_last model with ReplicationPad2d and
PixelShuffle, bicubic downsampling for the low-resolution input and a bicubic baseline, a
Charbonnier loss, PSNR, and SSIM computed with a Gaussian window through grouped conv2d;
Adam(amsgrad) with MultiStepLR and a PixelUnshuffle round trip."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def gaussian_window(size=5, sigma=1.5, channels=1):
    g = torch.exp(-((torch.arange(size, dtype=torch.float32) - size // 2) ** 2) / (2 * sigma**2))
    g = (g / g.sum()).unsqueeze(1)
    w = (g @ g.t()).expand(channels, 1, size, size).contiguous()
    return w


def ssim(a, b, window):
    c = a.shape[1]
    pad = window.shape[-1] // 2
    mu_a = F.conv2d(a, window, padding=pad, groups=c)
    mu_b = F.conv2d(b, window, padding=pad, groups=c)
    var_a = F.conv2d(a * a, window, padding=pad, groups=c) - mu_a**2
    var_b = F.conv2d(b * b, window, padding=pad, groups=c) - mu_b**2
    cov = F.conv2d(a * b, window, padding=pad, groups=c) - mu_a * mu_b
    c1, c2 = 0.01**2, 0.03**2
    m = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / (
        (mu_a**2 + mu_b**2 + c1) * (var_a + var_b + c2)
    )
    return m.mean()


def psnr(a, b):
    return 10 * torch.log10(1.0 / F.mse_loss(a, b))


class ESPCN(nn.Module):
    def __init__(self, scale=2, c=1):
        super().__init__()
        self.body = nn.Sequential(
            nn.ReplicationPad2d(2),
            nn.Conv2d(c, 8, 5),
            nn.Tanh(),
            nn.Conv2d(8, 6, 3, padding=1),
            nn.Tanh(),
            nn.Conv2d(6, c * scale**2, 3, padding=1, padding_mode="reflect"),
        )
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        return torch.sigmoid(self.shuffle(self.body(x)))


yy, xx = torch.meshgrid(torch.linspace(0, 1, 16), torch.linspace(0, 1, 16), indexing="ij")
hr = torch.stack(
    [
        0.5 + 0.4 * torch.sin(6 * xx + 3 * yy) * torch.cos(4 * yy),
        0.5 + 0.3 * torch.cos(5 * xx * yy + 1),
    ]
).unsqueeze(1)
lr_img = F.interpolate(hr, scale_factor=0.5, mode="bicubic", align_corners=False, antialias=True)
bicubic = F.interpolate(lr_img, scale_factor=2, mode="bicubic", align_corners=False).clamp(0, 1)
win = gaussian_window()
print("shapes", tuple(lr_img.shape), tuple(bicubic.shape), tuple(win.shape))
print("bicubic", round(psnr(bicubic, hr).item(), 4), round(ssim(bicubic, hr, win).item(), 5))

model = ESPCN()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 2).sin() * 0.3)
model = model.to(memory_format=torch.channels_last)
w0 = model.body[1].weight
print("channels_last", w0.is_contiguous(memory_format=torch.channels_last), w0.stride())
lr_cl = lr_img.contiguous(memory_format=torch.channels_last)
opt = torch.optim.Adam(model.parameters(), lr=0.02, amsgrad=True)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[5, 8], gamma=0.3)
for step in range(10):
    sr = model(lr_cl)
    loss = torch.sqrt((sr - hr) ** 2 + 1e-6).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 3 == 0:
        print(f"step {step} {loss.item():.5f} {sched.get_last_lr()[0]:.5f}")
print("out_channels_last", sr.shape, sr.is_contiguous(memory_format=torch.channels_last))
with torch.no_grad():
    sr = model(lr_cl)
print("espcn", round(psnr(sr, hr).item(), 4), round(ssim(sr, hr, win).item(), 5))
state = opt.state[model.body[1].weight]
print("amsgrad_state", sorted(state), round(state["max_exp_avg_sq"].sum().item(), 8))

down = nn.PixelUnshuffle(2)(hr)
print("unshuffle", tuple(down.shape), torch.equal(nn.PixelShuffle(2)(down), hr))
print("ssim_self", round(ssim(hr, hr, win).item(), 6), round(math.log10(2.0), 6))
