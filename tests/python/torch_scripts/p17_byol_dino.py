"""Self-supervised learning without negatives: BYOL (online network + predictor, a momentum
target updated with torch._foreach_mul_/_foreach_add_ under no_grad, a cosine-decayed
momentum, stop-gradient through detach, symmetric normalized-MSE loss) and a DINO head (a
weight-normed last layer, teacher centering with an EMA center, sharpened teacher softmax,
student log_softmax cross entropy over multi-crop views made with F.interpolate and flips),
then a linear probe with LBFGS on the frozen features."""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.4, shift=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 1.9 + shift).sin()
                * scale
            )


def mlp(din, hidden, dout):
    return nn.Sequential(
        nn.Linear(din, hidden, bias=False),
        nn.BatchNorm1d(hidden),
        nn.ReLU(),
        nn.Linear(hidden, dout, bias=False),
    )


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.GroupNorm(2, 8),
            nn.SiLU(),
            nn.Conv2d(8, 12, 3, stride=2, padding=1),
            nn.SiLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )

    def forward(self, x):
        return self.conv(x)


yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
imgs = torch.stack(
    [
        torch.stack(
            [
                torch.sin((k % 4 + 1) * xx + c + k) * torch.cos((k // 4 + 1) * yy - c)
                for c in range(3)
            ]
        )
        for k in range(12)
    ]
)
labels = torch.arange(12) % 4


def views(x, step):
    v1 = x.flip(-1) * (1.0 + 0.1 * math.sin(step))
    v2 = torch.roll(x, shifts=(step % 3, 1), dims=(2, 3)) + 0.05 * torch.cos(x * 5)
    crops = [
        F.interpolate(x[..., 2:14, 2:14], size=8, mode="bilinear", align_corners=False),
        F.interpolate(x[..., :12, 4:], size=8, mode="area"),
    ]
    return v1, v2, crops


# ---------------- BYOL
online = nn.ModuleDict({"enc": Encoder(), "proj": mlp(12, 16, 8)})
predictor = mlp(8, 16, 8)
det_init(online)
det_init(predictor, shift=0.5)
target = copy.deepcopy(online).requires_grad_(False)
opt = torch.optim.AdamW(
    list(online.parameters()) + list(predictor.parameters()), lr=2e-3, weight_decay=0.01
)


def byol_loss(p, z):
    return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()


total = 8
for step in range(total):
    v1, v2, _ = views(imgs, step)
    p1 = predictor(online["proj"](online["enc"](v1)))
    p2 = predictor(online["proj"](online["enc"](v2)))
    with torch.no_grad():
        z1, z2 = target["proj"](target["enc"](v1)), target["proj"](target["enc"](v2))
    loss = byol_loss(p1, z2) + byol_loss(p2, z1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    tau = 1 - (1 - 0.9) * (math.cos(math.pi * step / total) + 1) / 2
    with torch.no_grad():
        tp, op = list(target.parameters()), list(online.parameters())
        torch._foreach_mul_(tp, tau)
        torch._foreach_add_(tp, op, alpha=1 - tau)
        for tb, ob in zip(target.buffers(), online.buffers()):
            tb.copy_(ob)
    if step % 2 == 1:
        print(f"byol {step} loss {loss.item():.5f} tau {tau:.4f}")
gap = torch._foreach_norm(torch._foreach_sub(list(target.parameters()), list(online.parameters())))
print(
    "byol_gap", round(torch.stack(gap).sum().item(), 5), target["enc"].conv[0].weight.requires_grad
)


# ---------------- DINO
class DinoHead(nn.Module):
    def __init__(self, din=12, out=10):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(din, 16), nn.GELU(), nn.Linear(16, 6))
        self.last = nn.utils.parametrizations.weight_norm(nn.Linear(6, out, bias=False))

    def forward(self, x):
        return self.last(F.normalize(self.mlp(x), dim=-1, p=2))


student = nn.Sequential(Encoder(), DinoHead())
det_init(student, shift=1.0)
with torch.no_grad():
    student[1].last.parametrizations.weight.original0.fill_(1.0)
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad = False
center = torch.zeros(1, 10)
opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
for step in range(6):
    v1, v2, crops = views(imgs, step)
    with torch.no_grad():
        t_out = teacher(torch.cat([v1, v2]))
        t_prob = F.softmax((t_out - center) / 0.04, dim=-1).chunk(2)
    s_out = [student(v) / 0.1 for v in (v1, v2)] + [student(c) / 0.1 for c in crops]
    loss, n = 0.0, 0
    for ti, tq in enumerate(t_prob):
        for si, sv in enumerate(s_out):
            if si == ti:
                continue
            loss = loss + torch.sum(-tq * F.log_softmax(sv, dim=-1), dim=-1).mean()
            n += 1
    loss = loss / n
    opt.zero_grad()
    loss.backward()
    student[1].last.parametrizations.weight.original0.grad = None  # frozen norm (DINO)
    opt.step()
    with torch.no_grad():
        for ps, pt in zip(student.parameters(), teacher.parameters()):
            pt.mul_(0.95).add_(ps.detach(), alpha=0.05)
        center = center * 0.9 + t_out.mean(0, keepdim=True) * 0.1
    print(f"dino {step} loss {loss.item():.5f} center {center.norm().item():.5f}")
ent = -(t_prob[0] * t_prob[0].clamp_min(1e-12).log()).sum(-1).mean()
print("teacher_entropy", round(ent.item(), 5), t_prob[0].argmax(-1).tolist())

# ---------------- linear probe on frozen BYOL features
with torch.no_grad():
    feats = online["enc"](imgs)
feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-6)
probe = nn.Linear(12, 4)
det_init(probe, scale=0.1)
lbfgs = torch.optim.LBFGS(probe.parameters(), lr=0.5, max_iter=20, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = F.cross_entropy(probe(feats), labels) + 1e-3 * probe.weight.pow(2).sum()
    loss.backward()
    return loss


final = lbfgs.step(closure)
acc = (probe(feats).argmax(1) == labels).float().mean()
print("probe", round(final.item(), 5), round(closure().item(), 5), acc.item())
