# ruff: noqa: E501
"""A CycleGAN-style image translation loop, scaled down, as the reference implementation is
structured: ResNet generators with ReflectionPad2d, InstanceNorm2d and ConvTranspose2d, a
PatchGAN discriminator with LeakyReLU and spectral-norm-free least-squares (MSE) GAN loss,
cycle-consistency and identity L1 losses, itertools.chain of both generators' parameters in one
Adam, set_requires_grad toggling for the discriminators, a history ImagePool (deterministic here),
LambdaLR linear decay, bias-free convolutions in front of the norms (use_bias=False), init_weights with normal_(0, 0.02) replaced by a seeded-free fill, and
eval-time translation of a fixed batch."""

import itertools

import torch
import torch.nn as nn


class ResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(dim, dim, 3, bias=False),
            nn.InstanceNorm2d(dim),
            nn.ReLU(True),
            nn.ReflectionPad2d(1),
            nn.Conv2d(dim, dim, 3, bias=False),
            nn.InstanceNorm2d(dim),
        )

    def forward(self, x):
        return x + self.conv_block(x)


class Generator(nn.Module):
    def __init__(self, ch=3, ngf=8, n_blocks=2):
        super().__init__()
        layers = [
            nn.ReflectionPad2d(3),
            nn.Conv2d(ch, ngf, 7, bias=False),
            nn.InstanceNorm2d(ngf, affine=True),
            nn.ReLU(True),
        ]
        layers += [
            nn.Conv2d(ngf, ngf * 2, 3, stride=2, padding=1, bias=False),
            nn.InstanceNorm2d(ngf * 2),
            nn.ReLU(True),
        ]
        layers += [ResnetBlock(ngf * 2) for _ in range(n_blocks)]
        layers += [
            nn.ConvTranspose2d(ngf * 2, ngf, 3, stride=2, padding=1, output_padding=1, bias=False),
            nn.InstanceNorm2d(ngf),
            nn.ReLU(True),
        ]
        layers += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, ch, 7), nn.Tanh()]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


class PatchD(nn.Module):
    def __init__(self, ch=3, ndf=8):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(ch, ndf, 4, 2, 1),
            nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.InstanceNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf * 2, 1, 3, 1, 1),
        )

    def forward(self, x):
        return self.model(x)


def init_weights(net, phase):
    def init_func(m):
        name = m.__class__.__name__
        if hasattr(m, "weight") and m.weight is not None and ("Conv" in name):
            with torch.no_grad():
                n = m.weight.numel()
                m.weight.copy_(
                    (torch.sin(torch.arange(n, dtype=torch.float32) * 0.91 + phase) * 0.08).view_as(
                        m.weight
                    )
                )
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0.0)
        elif "InstanceNorm" in name and m.weight is not None:
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    net.apply(init_func)


class ImagePool:
    def __init__(self, size):
        self.size, self.images, self.calls = size, [], 0

    def query(self, images):
        out = []
        for img in images:
            img = img.unsqueeze(0)
            self.calls += 1
            if len(self.images) < self.size:
                self.images.append(img)
                out.append(img)
            elif self.calls % 2 == 0:
                idx = self.calls % self.size
                old = self.images[idx].clone()
                self.images[idx] = img
                out.append(old)
            else:
                out.append(img)
        return torch.cat(out, 0)


def set_requires_grad(nets, flag):
    for net in nets:
        for p in net.parameters():
            p.requires_grad = flag


def main():
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
    A = torch.stack(
        [torch.stack([torch.sin(3 * xx + i), torch.cos(2 * yy - i), xx * yy]) for i in range(4)]
    ).tanh()
    B = torch.stack([torch.stack([xx.sign() * 0.5 + 0.1 * i, yy, (xx + yy) / 2]) for i in range(4)])
    G_AB, G_BA, D_A, D_B = Generator(), Generator(), PatchD(), PatchD()
    for i, net in enumerate((G_AB, G_BA, D_A, D_B)):
        init_weights(net, i)
    print("params", [sum(p.numel() for p in n.parameters()) for n in (G_AB, D_A)])
    print("shapes", tuple(G_AB(A).shape), tuple(D_A(A).shape))
    opt_G = torch.optim.Adam(
        itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=1e-3, betas=(0.5, 0.999)
    )
    opt_D = torch.optim.Adam(
        itertools.chain(D_A.parameters(), D_B.parameters()), lr=1e-3, betas=(0.5, 0.999)
    )
    n_epochs, decay_start = 3, 1
    rule = lambda epoch: 1.0 - max(0, epoch + 1 - decay_start) / float(n_epochs - decay_start + 1)
    sched_G = torch.optim.lr_scheduler.LambdaLR(opt_G, lr_lambda=rule)
    sched_D = torch.optim.lr_scheduler.LambdaLR(opt_D, lr_lambda=rule)
    mse, l1 = nn.MSELoss(), nn.L1Loss()
    pool_A, pool_B = ImagePool(3), ImagePool(3)
    for epoch in range(n_epochs):
        for s in range(0, 4, 2):
            real_A, real_B = A[s : s + 2], B[s : s + 2]
            fake_B, fake_A = G_AB(real_A), G_BA(real_B)
            rec_A, rec_B = G_BA(fake_B), G_AB(fake_A)
            set_requires_grad([D_A, D_B], False)
            opt_G.zero_grad()
            pred = D_B(fake_B)
            loss_gan = mse(pred, torch.ones_like(pred)) + mse(D_A(fake_A), torch.ones_like(pred))
            loss_cycle = (l1(rec_A, real_A) + l1(rec_B, real_B)) * 10
            loss_idt = (l1(G_AB(real_B), real_B) + l1(G_BA(real_A), real_A)) * 5
            loss_G = loss_gan + loss_cycle + loss_idt
            loss_G.backward()
            opt_G.step()
            set_requires_grad([D_A, D_B], True)
            opt_D.zero_grad()
            loss_D = 0
            for D, real, fake in (
                (D_B, real_B, pool_B.query(fake_B.detach())),
                (D_A, real_A, pool_A.query(fake_A.detach())),
            ):
                pr, pf = D(real), D(fake)
                ld = 0.5 * (mse(pr, torch.ones_like(pr)) + mse(pf, torch.zeros_like(pf)))
                ld.backward()
                loss_D = loss_D + ld
            opt_D.step()
        sched_G.step()
        sched_D.step()
        print(
            "epoch",
            epoch,
            round(loss_G.item(), 4),
            round(loss_cycle.item(), 4),
            round(loss_D.item(), 4),
            round(sched_G.get_last_lr()[0], 6),
        )
    G_AB.eval()
    with torch.no_grad():
        out = G_AB(A[:1])
    print(
        "translated",
        tuple(out.shape),
        round(out.mean().item(), 4),
        round(out.std().item(), 4),
        round(out.abs().max().item(), 4),
    )
    print(
        "pool",
        pool_A.calls,
        len(pool_A.images),
        [round(img.mean().item(), 4) for img in pool_A.images],
    )
    print(
        "grad_flags",
        all(p.requires_grad for p in D_A.parameters()),
        D_A.model[0].weight.grad is not None,
    )
    print(
        "instnorm_affine",
        [type(m).__name__ + str(m.affine) for m in G_AB.model if isinstance(m, nn.InstanceNorm2d)],
    )


if __name__ == "__main__":
    main()
