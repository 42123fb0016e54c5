# ruff: noqa: E501
"""A convolutional autoencoder with the three upsampling styles people mix: ConvTranspose2d
(with output_padding), sub-pixel PixelShuffle and nn.Upsample (nearest and bilinear with
align_corners), plus PixelUnshuffle, MaxPool2d(return_indices=True) with MaxUnpool2d,
a denoising objective, SSIM-free PSNR, a latent bottleneck via Flatten / Unflatten, and the
output-size arithmetic checked on odd sizes."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if name.endswith("bias"):
                p.zero_()
                continue
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.33 + 0.009 * k * k + i) * scale).view_as(p))


def make_images(n=12, size=16):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    i = torch.arange(n, dtype=torch.float32)[:, None, None]
    r = ((xx - 0.3 * torch.sin(i)) ** 2 + (yy - 0.3 * torch.cos(i)) ** 2).sqrt()
    return torch.sigmoid((0.5 - r) * 8).unsqueeze(1)


class AE(nn.Module):
    def __init__(self, up="transpose"):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),
            nn.LeakyReLU(0.1),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),
            nn.LeakyReLU(0.1),
            nn.Flatten(),
            nn.Linear(16 * 4 * 4, 12),
        )
        self.fc = nn.Sequential(nn.Linear(12, 16 * 4 * 4), nn.Unflatten(1, (16, 4, 4)))
        if up == "transpose":
            self.decoder = nn.Sequential(
                nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1),
                nn.ReLU(),
                nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1),
            )
        elif up == "pixelshuffle":
            self.decoder = nn.Sequential(
                nn.Conv2d(16, 8 * 4, 3, padding=1),
                nn.PixelShuffle(2),
                nn.ReLU(),
                nn.Conv2d(8, 4, 3, padding=1),
                nn.PixelShuffle(2),
            )
        else:
            self.decoder = nn.Sequential(
                nn.Upsample(scale_factor=2, mode="nearest"),
                nn.Conv2d(16, 8, 3, padding=1),
                nn.ReLU(),
                nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                nn.Conv2d(8, 1, 3, padding=1),
            )

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.fc(self.encoder(x))))


def psnr(a, b):
    mse = F.mse_loss(a, b)
    return 10 * math.log10(1.0 / mse.item())


def main():
    torch.manual_seed(0)
    x = make_images()
    noise = 0.15 * torch.sin(torch.arange(x.numel(), dtype=torch.float32) * 2.3).view_as(x)
    for up in ("transpose", "pixelshuffle", "upsample"):
        model = AE(up)
        det_init(model)
        opt = torch.optim.Adam(model.parameters(), lr=5e-3)
        for step in range(30):
            recon = model((x + noise).clamp(0, 1))
            loss = F.binary_cross_entropy(recon, x)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            out = model(x)
        print(f"{up} shape {tuple(out.shape)} bce {loss.item():.5f} psnr {psnr(out, x):.3f}")

    # Output sizes on odd inputs.
    t = torch.sin(torch.arange(2 * 3 * 7 * 9, dtype=torch.float32)).view(2, 3, 7, 9)
    ct = nn.ConvTranspose2d(3, 2, kernel_size=3, stride=2, padding=1, output_padding=(0, 1))
    det_init(ct)
    y = ct(t)
    print(
        f"convT {tuple(y.shape)} output_size {tuple(ct(t, output_size=[14, 18]).shape)} sum {y.sum().item():.5f}"
    )
    ct_d = nn.ConvTranspose2d(3, 3, kernel_size=3, stride=1, dilation=2, groups=3, bias=False)
    det_init(ct_d)
    print(f"convT_dil_groups {tuple(ct_d(t).shape)} {ct_d(t)[0, 1, 2, :3].tolist()}")
    up_n = nn.Upsample(size=(10, 11), mode="nearest")(t)
    up_b = nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False)(t)
    up_bt = nn.Upsample(scale_factor=(2, 3), mode="bicubic", align_corners=True)(t)
    print(
        f"upsample {tuple(up_n.shape)} {tuple(up_b.shape)} {tuple(up_bt.shape)} {up_b[0, 0, 1, :3].tolist()} {up_bt[1, 2, 3, 4].item():.5f}"
    )
    print(
        f"nearest_exact {F.interpolate(t, size=(5, 4), mode='nearest-exact')[0, 0, :, 0].tolist()}"
    )
    ps = nn.PixelShuffle(3)(torch.arange(18.0).view(1, 18, 1, 1))
    pu = nn.PixelUnshuffle(2)(torch.arange(32.0).view(1, 2, 4, 4))
    print(
        f"pixel_shuffle {tuple(ps.shape)} {ps[0, 1].flatten().tolist()} unshuffle {tuple(pu.shape)} {pu[0, :, 0, 0].tolist()} roundtrip {torch.equal(F.pixel_shuffle(pu, 2), torch.arange(32.0).view(1, 2, 4, 4))}"
    )
    pool = nn.MaxPool2d(2, stride=2, return_indices=True)
    unpool = nn.MaxUnpool2d(2, stride=2)
    z = t[:, :, :6, :8]
    pooled, idx = pool(z)
    back = unpool(pooled, idx)
    print(
        f"unpool {tuple(back.shape)} nonzero {(back != 0).sum().item()} idx {idx[0, 0, 0].tolist()} size_arg {tuple(unpool(pooled, idx, output_size=(7, 9)).shape)}"
    )
    zz = z.clone().requires_grad_()
    p2, i2 = F.max_pool2d(zz, 2, return_indices=True)
    F.max_unpool2d(p2 * 2, i2, 2).sum().backward()
    print(f"unpool_grad {zz.grad.sum().item():.1f} {zz.grad[0, 0, :2, :4].tolist()}")


if __name__ == "__main__":
    main()
