# ruff: noqa: E501
"""Segmentation decoder code: ConvTranspose2d with stride, output_padding, groups, dilation and
forward(output_size=...), Conv2d with padding='same' and reflect/circular/replicate padding modes,
every F.interpolate mode (align_corners both ways, scale factors, recompute_scale_factor, antialias),
Upsample modules, pixel (un)shuffle, affine_grid + grid_sample, and a dice + weighted
cross-entropy (ignore_index) loss on 4-D logits with a backward pass."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(model, scale=0.15):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.53 + i) * scale
                ).view_as(p)
            )


def r(t, n=4):
    return round(float(t), n)


x = torch.cos(torch.arange(2 * 4 * 7 * 7, dtype=torch.float32) * 0.11).view(2, 4, 7, 7)
ct = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
det_init(ct)
y = ct(x)
print("convT", tuple(y.shape), r(y.sum()), r(y.abs().mean()))
ct2 = nn.ConvTranspose2d(4, 3, (3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1))
det_init(ct2)
print("convT_dil", tuple(ct2(x).shape), r(ct2(x).sum()))
print(
    "convT_output_size",
    tuple(ct(x, output_size=[13, 13]).shape),
    tuple(ct(x, output_size=(2, 6, 14, 14)).shape),
)
try:
    ct(x, output_size=[20, 20])
except Exception as e:
    print("convT_bad_size", type(e).__name__, str(e)[:60])
print(
    "convT_fn",
    tuple(F.conv_transpose2d(x, torch.ones(4, 2, 2, 2), stride=2).shape),
    r(F.conv_transpose2d(x, torch.ones(4, 2, 2, 2), stride=2).sum()),
)
for mode in ["zeros", "reflect", "replicate", "circular"]:
    c = nn.Conv2d(4, 2, 3, padding=1, padding_mode=mode)
    det_init(c)
    print(f"pad_{mode}", r(c(x).sum()), c.extra_repr()[-30:])
same = nn.Conv2d(4, 2, 3, padding="same", dilation=2)
det_init(same)
print("pad_same", tuple(same(x).shape), r(same(x).sum()))
valid = nn.Conv2d(4, 2, (2, 4), padding="valid", stride=1)
print("pad_valid", tuple(valid(x).shape))

s = torch.arange(16.0).view(1, 1, 4, 4)
for mode, kw in [
    ("nearest", {}),
    ("nearest-exact", {}),
    ("bilinear", {"align_corners": False}),
    ("bilinear", {"align_corners": True}),
    ("bicubic", {"align_corners": False}),
    ("bicubic", {"align_corners": True}),
    ("area", {}),
]:
    up = F.interpolate(s, size=(6, 7), mode=mode, **kw)
    dn = F.interpolate(s, scale_factor=0.75, mode=mode, **kw)
    print(
        f"interp_{mode}_{kw.get('align_corners')}",
        tuple(up.shape),
        r(up.sum()),
        r(up[0, 0, 1, 2]),
        tuple(dn.shape),
        r(dn.sum()),
    )
print(
    "interp_recompute",
    tuple(F.interpolate(s, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True).shape),
    r(F.interpolate(s, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True).sum()),
    r(F.interpolate(s, scale_factor=1.7, mode="bilinear").sum()),
)
print(
    "interp_antialias",
    r(F.interpolate(s, size=(2, 2), mode="bilinear", antialias=True).sum()),
    r(F.interpolate(s, size=(2, 3), mode="bicubic", antialias=True)[0, 0, 1, 1]),
)
print(
    "interp_1d_3d",
    tuple(F.interpolate(torch.ones(1, 2, 5), scale_factor=2, mode="linear").shape),
    tuple(F.interpolate(torch.ones(1, 1, 2, 2, 2), size=3, mode="trilinear").shape),
)
print(
    "upsample_mod",
    r(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(s).sum()),
    nn.Upsample(scale_factor=2, mode="nearest"),
    nn.UpsamplingBilinear2d(scale_factor=2)(s).shape,
)
ps = F.pixel_shuffle(torch.arange(32.0).view(1, 8, 2, 2), 2)
print(
    "pixel_shuffle",
    tuple(ps.shape),
    ps[0, 0].tolist(),
    F.pixel_unshuffle(ps, 2).equal(torch.arange(32.0).view(1, 8, 2, 2)),
)

theta = torch.tensor([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.1]]])
for ac in (False, True):
    grid = F.affine_grid(theta, (1, 1, 4, 4), align_corners=ac)
    for mode in ("bilinear", "nearest", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            out = F.grid_sample(s, grid, mode=mode, padding_mode=pm, align_corners=ac)
            print(f"grid_{ac}_{mode}_{pm}", r(out.sum()), r(out[0, 0, 3, 0]))


class TinySeg(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.down = nn.Sequential(
            nn.Conv2d(4, 8, 3, stride=2, padding=1),
            nn.InstanceNorm2d(8, affine=True),
            nn.LeakyReLU(0.1),
        )
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.head = nn.Conv2d(8, k, 1)

    def forward(self, x):
        h = self.down(x)
        u = self.up(h)
        u = F.pad(u, (0, x.shape[-1] - u.shape[-1], 0, x.shape[-2] - u.shape[-2]))
        return self.head(torch.cat([x, u], dim=1))


net = TinySeg()
det_init(net)
target = (torch.arange(2 * 7 * 7).view(2, 7, 7) % 4).clone()
target[target == 3] = 255
logits = net(x)
ce = F.cross_entropy(logits, target, weight=torch.tensor([1.0, 2.0, 0.5]), ignore_index=255)
probs = logits.softmax(1)
onehot = F.one_hot(target.clamp(max=2), 3).permute(0, 3, 1, 2).float() * (target != 255).unsqueeze(
    1
)
inter = (probs * onehot).sum((0, 2, 3))
dice = 1 - ((2 * inter + 1) / (probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3)) + 1)).mean()
loss = ce + dice
loss.backward()
print("seg_loss", r(ce), r(dice), r(loss))
print(
    "seg_grads",
    r(net.up.weight.grad.abs().sum()),
    r(net.down[1].weight.grad.sum()),
    r(net.head.bias.grad.sum()),
)
print("seg_pred", logits.argmax(1).flatten()[:10].tolist())
print(
    "ce_none",
    tuple(F.cross_entropy(logits, target, ignore_index=255, reduction="none").shape),
    r(F.cross_entropy(logits, target, ignore_index=255, reduction="none")[target == 255].sum()),
)
print("nll_2d_mean", r(F.nll_loss(F.log_softmax(logits, 1), target, ignore_index=255)))
