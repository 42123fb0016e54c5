"""DCGAN-style GAN on 16x16 synthetic images: ConvTranspose2d generator, strided-conv
discriminator, BatchNorm, BCEWithLogits, two Adam optimizers and detach()."""

import argparse

import torch
import torch.nn as nn
import torch.optim as optim

NZ, NGF, NDF = 8, 8, 8


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


def det_init(m):
    # Same structure as weights_init, but generator-free values.
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        n = m.weight.numel()
        with torch.no_grad():
            m.weight.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float32) * 0.91) * 0.05).view_as(m.weight)
            )
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
        m.reset_running_stats()


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),  # 4x4
            nn.BatchNorm2d(NGF * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(NGF * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, 1, 4, 2, 1, bias=False),  # 16x16
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, NDF, 4, 2, 1, bias=False),  # 8x8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),  # 4x4
            nn.BatchNorm2d(NDF * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),  # 1x1
        )

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def real_batch(b, offset):
    i = torch.arange(b, dtype=torch.float32).view(b, 1, 1, 1) + offset
    r = torch.linspace(-1, 1, 16).view(1, 1, 16, 1)
    c = torch.linspace(-1, 1, 16).view(1, 1, 1, 16)
    return torch.tanh(2 * torch.sin(3 * r + c * (1 + 0.1 * i) + i))


def det_noise(b, step):
    return torch.cos(torch.arange(b * NZ, dtype=torch.float32) * 0.37 + step).view(b, NZ, 1, 1)


def train(netG, netD, steps, noise_fn, batch=8):
    criterion = nn.BCEWithLogitsLoss()
    optD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0
    hist = []
    for step in range(steps):
        real = real_batch(batch, step)
        netD.zero_grad()
        label = torch.full((batch,), real_label, dtype=torch.float)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        D_x = torch.sigmoid(netD(real)).mean().item()
        fake = netG(noise_fn(batch, step))
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optD.step()
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optG.step()
        hist.append((errD.item(), errG.item(), D_x))
    return hist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=15)
    args = parser.parse_args()
    torch.manual_seed(999)
    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    w = netG.main[0].weight
    print(f"rng_init_std {w.std().item():.4f}")
    print(f"init_std_plausible {0.01 < w.std().item() < 0.03}")
    print(f"bn_bias_zero {bool((netD.main[3].bias == 0).all())}")
    z = torch.randn(4, NZ, 1, 1)
    print(f"gen_shape {tuple(netG(z).shape)} disc_shape {tuple(netD(netG(z)).shape)}")

    netG.apply(det_init)
    netD.apply(det_init)
    hist = train(netG, netD, args.steps, det_noise)
    for k in (0, 1, args.steps - 1):
        print(f"step{k} errD {hist[k][0]:.5f} errG {hist[k][1]:.5f} D_x {hist[k][2]:.5f}")
    print(f"bn_running_mean {netG.main[1].running_mean[:4].tolist()}")
    print(f"bn_batches_tracked {int(netG.main[1].num_batches_tracked)}")
    netG.eval()
    with torch.no_grad():
        fake = netG(det_noise(2, 0))
    print(f"eval_fake_sum {fake.sum().item():.5f} range_ok {bool(fake.abs().max() <= 1)}")
    # The fake batch must not have received gradients through the detached D step.
    leaf = netG(det_noise(2, 1)).detach()
    print(f"detached {leaf.requires_grad} {leaf.grad_fn is None}")


if __name__ == "__main__":
    main()
