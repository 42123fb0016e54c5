# ruff: noqa: E501
"""A spatial transformer and the image-warping ops around it: a localisation net predicting
affine parameters initialised to the identity, affine_grid/grid_sample (bilinear and nearest,
zeros/border/reflection padding, align_corners both ways) with gradients to the image and the
theta, interpolate in its modes, unfold/fold patch extraction, pixel_shuffle, and roi-style
cropping by advanced indexing."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(model, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.53 + 0.7 * i) * scale
                ).view_as(p)
            )


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(
            nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 3 * 3, 6)
        )
        self.cls = nn.Linear(64, 3)

    def reset_identity(self):
        with torch.no_grad():
            self.loc[-1].weight.mul_(0.1)
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        warped = F.grid_sample(x, grid, align_corners=False)
        return self.cls(warped.flatten(1)), theta, warped


img = torch.sin(torch.arange(2 * 64, dtype=torch.float32).reshape(2, 1, 8, 8) * 0.37)
model = STN()
det_init(model)
model.reset_identity()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
target = torch.tensor([1, 2])
for step in range(3):
    logits, theta, warped = model(img)
    loss = F.cross_entropy(logits, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(
        f"step{step} loss {loss.item():.5f} theta00 {theta[0, 0, 0].item():.5f} loc_grad {model.loc[-1].bias.grad.abs().sum().item():.5f}"
    )

theta = torch.tensor([[[0.8, -0.3, 0.1], [0.25, 0.9, -0.2]]], requires_grad=True)
x = img[:1].clone().requires_grad_(True)
for mode in ("bilinear", "nearest", "bicubic"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            grid = F.affine_grid(theta, (1, 1, 6, 7), align_corners=ac)
            out = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
            print(f"gs_{mode}_{pad}_{int(ac)} {out.sum().item():.5f} {out[0, 0, 2, 3].item():.5f}")
grid = F.affine_grid(theta, (1, 1, 6, 7), align_corners=False)
F.grid_sample(x, grid, padding_mode="border", align_corners=False).pow(2).sum().backward()
print("gs_grad_x", round(x.grad.sum().item(), 5), round(x.grad.abs().max().item(), 5))
print("gs_grad_theta", [round(v, 5) for v in theta.grad.flatten().tolist()])
g3 = F.affine_grid(torch.eye(3, 4).unsqueeze(0), (1, 1, 2, 3, 4), align_corners=True)
print("grid3d", tuple(g3.shape), [round(v, 4) for v in g3[0, 1, 2, 3].tolist()])

small = img[:, :, :4, :4]
for mode, kw in (
    ("nearest", {}),
    ("bilinear", {"align_corners": False}),
    ("bilinear", {"align_corners": True}),
    ("bicubic", {"align_corners": False}),
    ("area", {}),
    ("nearest-exact", {}),
):
    up = F.interpolate(small, scale_factor=2, mode=mode, **kw)
    print(
        f"interp_{mode}_{kw.get('align_corners', '-')}",
        tuple(up.shape),
        round(up.sum().item(), 5),
        round(up[1, 0, 3, 5].item(), 5),
    )
print(
    "interp_size",
    round(
        F.interpolate(img, size=(5, 3), mode="bilinear", antialias=True, align_corners=False)
        .sum()
        .item(),
        5,
    ),
)
print(
    "interp_1d",
    [
        round(v, 4)
        for v in F.interpolate(torch.arange(4.0).view(1, 1, 4), size=6, mode="linear")
        .flatten()
        .tolist()
    ],
)

patches = F.unfold(img, kernel_size=3, stride=2, padding=1)
print("unfold", tuple(patches.shape), round(patches.sum().item(), 5))
back = F.fold(patches, output_size=(8, 8), kernel_size=3, stride=2, padding=1)
ones = F.fold(
    F.unfold(torch.ones_like(img), 3, stride=2, padding=1), (8, 8), 3, stride=2, padding=1
)
print("fold_roundtrip", torch.allclose(back / ones, img, atol=1e-6))
ps = F.pixel_shuffle(torch.arange(32.0).view(1, 8, 2, 2), 2)
print(
    "pixel_shuffle",
    tuple(ps.shape),
    ps[0, 0, 0].tolist(),
    torch.equal(F.pixel_unshuffle(ps, 2), torch.arange(32.0).view(1, 8, 2, 2)),
)

boxes = torch.tensor([[0, 1, 5], [1, 2, 0]])  # batch, top, left
rows = boxes[:, 1, None] + torch.arange(3)
cols = boxes[:, 2, None] + torch.arange(3)
crops = img[boxes[:, 0, None, None], 0, rows[:, :, None], cols[:, None, :]]
print("crops", tuple(crops.shape), [round(v, 4) for v in crops.sum((1, 2)).tolist()])
print(
    "adaptive",
    [round(v, 4) for v in F.adaptive_avg_pool2d(img, (3, 2)).flatten()[:4].tolist()],
    tuple(F.adaptive_max_pool2d(img, 3, return_indices=True)[1].shape),
)
