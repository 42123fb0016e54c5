# ruff: noqa: E501
"""A small U-Net for binary segmentation of synthetic discs: double-conv blocks, MaxPool2d
down, ConvTranspose2d and F.interpolate up, F.pad to match odd sizes, skip concatenation,
BCE-with-logits plus soft Dice loss, IoU metrics, and torch.no_grad evaluation."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.15):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float32) * 0.917 + 0.3 * i) * scale).view_as(
                    p
                )
            )


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels, bilinear=True):
        super().__init__()
        if bilinear:
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels=1, n_classes=1, bilinear=False):
        super().__init__()
        factor = 2 if bilinear else 1
        self.inc = DoubleConv(n_channels, 8)
        self.down1 = Down(8, 16)
        self.down2 = Down(16, 32 // factor)
        self.up1 = Up(32, 16 // factor, bilinear)
        self.up2 = Up(16, 8, bilinear)
        self.outc = nn.Conv2d(8, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def make_discs(n, size=15):
    ys, xs = torch.meshgrid(
        torch.arange(size, dtype=torch.float32),
        torch.arange(size, dtype=torch.float32),
        indexing="ij",
    )
    imgs, masks = [], []
    for i in range(n):
        cy, cx, r = 4 + (i * 3) % 7, 4 + (i * 5) % 7, 2.5 + (i % 3)
        m = (((ys - cy) ** 2 + (xs - cx) ** 2) <= r * r).float()
        noise = torch.sin(xs * 1.3 + ys * 0.7 + i) * 0.2
        imgs.append(m * 0.8 + noise)
        masks.append(m)
    return torch.stack(imgs).unsqueeze(1), torch.stack(masks).unsqueeze(1)


def dice_coeff(input, target, epsilon=1e-6):
    inter = 2 * (input * target).sum(dim=(-1, -2))
    sets_sum = input.sum(dim=(-1, -2)) + target.sum(dim=(-1, -2))
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    return ((inter + epsilon) / (sets_sum + epsilon)).mean()


def iou(pred, target):
    inter = (pred & target).sum().item()
    union = (pred | target).sum().item()
    return inter / max(union, 1)


def main():
    torch.manual_seed(0)
    x, y = make_discs(12)
    print(f"data {tuple(x.shape)} fg_frac {y.mean().item():.4f}")
    for bilinear in (False, True):
        model = UNet(bilinear=bilinear)
        det_init(model)
        out = model(x[:2])
        print(
            f"bilinear{int(bilinear)} out {tuple(out.shape)} params {sum(p.numel() for p in model.parameters())}"
        )
    model = UNet(bilinear=False)
    det_init(model)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(5):
        model.train()
        for b in range(0, 12, 4):
            xb, yb = x[b : b + 4], y[b : b + 4]
            pred = model(xb)
            loss = criterion(pred, yb) + (1 - dice_coeff(torch.sigmoid(pred), yb))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        if epoch in (0, 4):
            print(f"epoch{epoch} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        logits = model(x)
        prob = torch.sigmoid(logits)
        pred = prob > 0.5
        print(
            f"eval_soft_dice {dice_coeff(prob, y).item():.4f} hard_dice {dice_coeff(pred.float(), y).item():.2f} iou {iou(pred, y.bool()):.2f}"
        )
        print(f"bn_running_mean {model.inc.double_conv[1].running_mean[:3].tolist()}")

    # Resizing helpers that segmentation code mixes in.
    t = torch.arange(16, dtype=torch.float32).view(1, 1, 4, 4)
    for mode, ac in (
        ("nearest", None),
        ("bilinear", False),
        ("bilinear", True),
        ("bicubic", False),
    ):
        r = F.interpolate(t, size=(6, 7), mode=mode, align_corners=ac)
        print(f"interp_{mode}_{ac} {round(r.sum().item(), 3)} {round(r[0, 0, 1, 2].item(), 4)}")
    r = F.interpolate(t, scale_factor=0.5, mode="area")
    print(f"interp_area {r.flatten().tolist()}")
    r = F.interpolate(t, scale_factor=1.5, mode="nearest-exact")
    print(f"interp_nearest_exact {r[0, 0, 0].tolist()}")
    ct = nn.ConvTranspose2d(1, 2, kernel_size=3, stride=2, padding=1, output_padding=1)
    det_init(ct)
    print(f"convT_out {tuple(ct(t).shape)} sum {ct(t).sum().item():.4f}")
    print(f"convT_output_size {tuple(ct(t, output_size=[7, 7]).shape)}")
    onehot = F.one_hot(torch.tensor([[0, 2], [1, 1]]), num_classes=3).permute(2, 0, 1).float()
    print(f"one_hot_perm {onehot.sum(dim=(1, 2)).tolist()}")
    ce = F.cross_entropy(
        torch.stack([t[0, 0], -t[0, 0], t[0, 0] * 0.5]).unsqueeze(0) / 10,
        torch.tensor([[0, 1, 2, 0]] * 4).unsqueeze(0),
        ignore_index=2,
    )
    print(f"ce_2d {ce.item():.5f}")


if __name__ == "__main__":
    main()
