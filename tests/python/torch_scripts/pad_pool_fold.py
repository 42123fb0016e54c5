"""Padding, pooling and im2col as layers are built from them by hand: ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d, CircularPad1d/2d, ZeroPad2d, ConstantPad3d and F.pad in each mode with
negative pads, LPPool1d/2d, AdaptiveMaxPool1d/2d with return_indices into MaxUnpool2d, AvgPool2d
with ceil_mode / count_include_pad / divisor_override, MaxPool with dilation, Fold / Unfold
reproducing a Conv2d (im2col + matmul) and a sliding-window sum, Conv3d / ConvTranspose3d /
AvgPool3d / trilinear Upsample on a small volume, PixelUnshuffle / ChannelShuffle, Upsample
nearest-exact, and gradients through all of them."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def r(t, n=4):
    return [round(v, n) for v in t.detach().flatten().tolist()]


def main():
    x1 = torch.arange(1.0, 6.0).view(1, 1, 5)
    x2 = torch.arange(16.0).view(1, 1, 4, 4)
    x3 = torch.arange(2 * 3 * 3.0).view(1, 1, 2, 3, 3)
    pads = [
        ("reflect1d", nn.ReflectionPad1d((2, 1)), x1),
        ("replicate1d", nn.ReplicationPad1d(2), x1),
        ("circular1d", nn.CircularPad1d((1, 3)), x1),
        ("reflect2d", nn.ReflectionPad2d((1, 0, 2, 1)), x2),
        ("replicate2d", nn.ReplicationPad2d(1), x2),
        ("circular2d", nn.CircularPad2d((1, 1, 0, 2)), x2),
        ("zero2d", nn.ZeroPad2d((0, 1, 1, 0)), x2),
        ("reflect3d", nn.ReflectionPad3d(1), x3),
        ("replicate3d", nn.ReplicationPad3d((1, 0, 0, 1, 1, 0)), x3),
        ("constant3d", nn.ConstantPad3d((1, 1, 0, 0, 1, 0), -2.5), x3),
    ]
    for name, pad, inp in pads:
        inp = inp.clone().requires_grad_(True)
        out = pad(inp)
        (out * torch.arange(out.numel()).view_as(out)).sum().backward()
        print("pad", name, tuple(out.shape), round(out.sum().item(), 3), r(inp.grad)[:6])
    print("pad_repr", repr(nn.ReflectionPad2d((1, 0, 2, 1))), repr(nn.ConstantPad3d(1, 0.5)))
    for mode in ("constant", "reflect", "replicate", "circular"):
        print("F.pad", mode, r(F.pad(x2, (1, -1, -1, 2), mode=mode))[:10])

    img = torch.sin(torch.arange(2 * 2 * 6 * 6.0) * 0.7).view(2, 2, 6, 6)
    print("lppool2d", r(nn.LPPool2d(2, 2)(img)[0, 0]), r(nn.LPPool1d(3, 2, stride=1)(img[0, :, 0])))
    pooled, idx = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(img)
    print("adaptive_max", r(pooled[0, 0]), idx[0, 0].tolist())
    p1, i1 = F.adaptive_max_pool1d(img[:, 0, 0], 4, return_indices=True)
    print("adaptive_max1d", r(p1), i1.tolist())
    mp, mi = F.max_pool2d(img, 2, return_indices=True)
    un = nn.MaxUnpool2d(2)(mp, mi, output_size=img.shape)
    print(
        "unpool",
        tuple(un.shape),
        int((un != 0).sum()),
        torch.equal(
            un.gather(-1, un.abs().argmax(-1, keepdim=True)).squeeze(-1).ne(0).any(-1),
            torch.ones(2, 2, 6, dtype=torch.bool),
        ),
    )
    print(
        "avgpool_ceil",
        r(nn.AvgPool2d(4, stride=3, ceil_mode=True)(img)[0, 0]),
        r(nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)(img)[0, 0, 0]),
    )
    print("avgpool_divisor", r(nn.AvgPool2d(2, divisor_override=3)(img)[0, 1, 0]))
    print(
        "maxpool_dilation",
        r(nn.MaxPool2d(2, stride=1, dilation=2)(img)[1, 1, 0]),
        tuple(nn.MaxPool2d(3, 2, ceil_mode=True)(img).shape),
    )

    conv = nn.Conv2d(2, 3, 3, padding=1, stride=2, bias=True)
    with torch.no_grad():
        conv.weight.copy_(
            torch.cos(torch.arange(conv.weight.numel(), dtype=torch.float32)).view_as(conv.weight)
            * 0.2
        )
        conv.bias.copy_(torch.tensor([0.1, -0.1, 0.0]))
    unfold = nn.Unfold(kernel_size=3, padding=1, stride=2)
    cols = unfold(img)
    out = (conv.weight.view(3, -1) @ cols + conv.bias.view(1, 3, 1)).view(2, 3, 3, 3)
    print(
        "im2col",
        tuple(cols.shape),
        torch.allclose(out, conv(img), atol=1e-5),
        round(out.sum().item(), 4),
    )
    fold = nn.Fold(output_size=(6, 6), kernel_size=2, stride=2)
    print("fold_roundtrip", torch.equal(fold(nn.Unfold(2, stride=2)(img)), img))
    overlap = F.fold(F.unfold(torch.ones(1, 1, 4, 4), 2, stride=1), (4, 4), 2, stride=1)
    print("fold_overlap", overlap[0, 0].tolist())
    print("fold_repr", repr(unfold), repr(fold))
    g = img.clone().requires_grad_(True)
    F.unfold(g, (2, 3), dilation=(1, 2), padding=(0, 1)).pow(2).sum().backward()
    print("unfold_grad", round(g.grad.abs().sum().item(), 4))

    vol = torch.cos(torch.arange(1 * 2 * 4 * 4 * 4.0) * 0.3).view(1, 2, 4, 4, 4)
    c3 = nn.Conv3d(2, 2, 3, padding=1)
    t3 = nn.ConvTranspose3d(2, 1, 2, stride=2)
    for m in (c3, t3):
        with torch.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(
                    torch.sin(torch.arange(p.numel(), dtype=torch.float32) + i).view_as(p) * 0.1
                )
    v = vol.clone().requires_grad_(True)
    h = t3(F.relu(c3(v)))
    h.sum().backward()
    print(
        "conv3d",
        tuple(h.shape),
        round(h.sum().item(), 4),
        round(v.grad.abs().sum().item(), 4),
        round(c3.weight.grad.norm().item(), 4),
    )
    print("avgpool3d", r(nn.AvgPool3d(2)(vol)[0, 0]), r(F.max_pool3d(vol, 2, stride=2)[0, 1]))
    print(
        "trilinear",
        r(nn.Upsample(scale_factor=1.5, mode="trilinear", align_corners=False)(vol)[0, 0, 0, 0]),
    )
    print(
        "nearest_exact",
        r(nn.Upsample(size=(5, 5), mode="nearest-exact")(x2)[0, 0, 0]),
        r(nn.Upsample(size=(5, 5), mode="nearest")(x2)[0, 0, 0]),
    )
    print(
        "pixel_unshuffle",
        tuple(nn.PixelUnshuffle(2)(img).shape),
        r(nn.PixelUnshuffle(2)(x2)[0, :, 0, 0]),
    )
    print("channel_shuffle", r(nn.ChannelShuffle(2)(torch.arange(6.0).view(1, 6, 1, 1))))
    print("adaptive_avg3d", r(nn.AdaptiveAvgPool3d((1, 2, 2))(vol)[0, 1]))


if __name__ == "__main__":
    main()
