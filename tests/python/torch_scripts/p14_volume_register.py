"""3-D image registration with a spatial transformer: a small 3-D CNN predicts an affine
transform (N x 3 x 4, initialised to the identity) that aligns a moving volume to a fixed one
through affine_grid + trilinear grid_sample; labels are warped with nearest sampling and scored
with Dice; a dense displacement field is smoothed and applied as well."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def r(t, n=4):
    return [round(v, n) for v in t.flatten().tolist()]


D, H, W = 6, 8, 8
z, y, x = torch.meshgrid(
    torch.linspace(-1, 1, D), torch.linspace(-1, 1, H), torch.linspace(-1, 1, W), indexing="ij"
)


def blob(cx, cy, cz, s):
    return torch.exp(-((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2) / (2 * s**2))


fixed = (blob(0.0, 0.0, 0.0, 0.35) + 0.5 * blob(0.4, -0.3, 0.2, 0.2)).reshape(1, 1, D, H, W)
true_theta = torch.tensor([[[1.0, 0.0, 0.0, 0.15], [0.0, 1.0, 0.0, -0.1], [0.0, 0.0, 1.0, 0.05]]])
grid = F.affine_grid(true_theta, list(fixed.shape), align_corners=False)
moving = F.grid_sample(fixed, grid, mode="bilinear", padding_mode="border", align_corners=False)
print("volumes", tuple(fixed.shape), round(fixed.sum().item(), 4), round(moving.sum().item(), 4))
print("grid", tuple(grid.shape), r(grid[0, 0, 0, 0]), r(grid[0, -1, -1, -1]))


class AffineNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(2, 4, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool3d(2),
            nn.Conv3d(4, 8, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool3d(1),
            nn.Flatten(),
        )
        self.head = nn.Linear(8, 12)
        nn.init.zeros_(self.head.weight)
        with torch.no_grad():
            self.head.bias.copy_(torch.tensor([1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]))

    def forward(self, mov, fix):
        theta = self.head(self.features(torch.cat([mov, fix], 1))).view(-1, 3, 4)
        g = F.affine_grid(theta, list(mov.shape), align_corners=False)
        return F.grid_sample(mov, g, align_corners=False, padding_mode="border"), theta


net = AffineNet()
with torch.no_grad():
    for i, p in enumerate(net.features.parameters()):
        p.copy_(torch.linspace(-0.3, 0.3, p.numel()).reshape(p.shape).sin() * (1 + i % 2))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.5)
losses = []
for step in range(20):
    warped, theta = net(moving, fixed)
    loss = F.mse_loss(warped, fixed)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(round(loss.item(), 6))
print("losses", losses[::5], losses[-1] < losses[0])
print("theta", r(theta.detach(), 3))
print("warped_grad_fn", type(warped.grad_fn).__name__, type(theta.grad_fn).__name__)

# labels follow the image with nearest sampling (no new label values appear)
labels = (fixed > 0.4).float() + (fixed > 0.8).float()
moved_labels = F.grid_sample(
    labels, grid, mode="nearest", padding_mode="zeros", align_corners=False
)
print("label_values", sorted(set(moved_labels.flatten().tolist())), moved_labels.sum().item())


def dice(a, b, cls):
    a, b = (a == cls).float(), (b == cls).float()
    return (2 * (a * b).sum() / (a.sum() + b.sum()).clamp_min(1e-6)).item()


print("dice", [round(dice(labels, moved_labels, c), 4) for c in (1.0, 2.0)])
back = F.grid_sample(
    moved_labels,
    F.affine_grid(
        torch.linalg.inv(torch.cat([true_theta, torch.tensor([[[0.0, 0.0, 0.0, 1.0]]])], 1))[:, :3],
        list(fixed.shape),
        align_corners=False,
    ),
    mode="nearest",
    align_corners=False,
)
print("dice_back", [round(dice(labels, back, c), 4) for c in (1.0, 2.0)])

# dense displacement field: smoothed with a separable 3-D Gaussian, added to the identity grid
ident = F.affine_grid(torch.eye(3, 4).unsqueeze(0), list(fixed.shape), align_corners=True)
disp = torch.zeros(1, 3, D, H, W, requires_grad=True)
k = torch.tensor([0.25, 0.5, 0.25])
kernels = [k.view(1, 1, 3, 1, 1), k.view(1, 1, 1, 3, 1), k.view(1, 1, 1, 1, 3)]


def smooth(f):
    out = f.reshape(3, 1, D, H, W)
    for kern, pad in zip(kernels, [(0, 0, 0, 0, 1, 1), (0, 0, 1, 1, 0, 0), (1, 1, 0, 0, 0, 0)]):
        out = F.conv3d(F.pad(out, pad, mode="replicate"), kern)
    return out.reshape(1, 3, D, H, W)


opt = torch.optim.SGD([disp], lr=2.0)
for step in range(15):
    field = smooth(disp).permute(0, 2, 3, 4, 1)
    warped = F.grid_sample(moving, ident + field, align_corners=True, padding_mode="border")
    jac = (field[:, 1:] - field[:, :-1]).pow(2).mean()
    loss = F.mse_loss(warped, fixed) + 0.1 * jac
    opt.zero_grad()
    loss.backward()
    opt.step()
print(
    "dense", round(loss.item(), 6), round(disp.abs().max().item(), 5), r(disp.grad.mean((2, 3, 4)))
)
vol_t = F.grid_sample(
    moving.expand(2, 1, D, H, W),
    torch.stack([grid[0], ident[0]]),
    mode="nearest",
    padding_mode="reflection",
    align_corners=True,
)
print("batch_nearest_reflection", tuple(vol_t.shape), round(vol_t.sum().item(), 4))
try:
    F.grid_sample(moving, ident, mode="bicubic")
except RuntimeError as e:
    print("bicubic_3d", e)
