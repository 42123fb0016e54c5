"""Face-recognition style metric learning: a small CNN embedder with BatchNorm1d features, an
ArcFace (additive angular margin) head built from F.normalize, acos/cos with clamping and a
one-hot scatter_, a CosFace variant, CE with label smoothing, SGD with nesterov momentum and
MultiStepLR, then verification: pairwise cosine similarities, a ROC from sorted scores,
TAR@FAR, the best-accuracy threshold and an EER estimate."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.4):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 2.1).sin() * scale
            )


class Embedder(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 6, 3, padding=1, bias=False),
            nn.BatchNorm2d(6),
            nn.PReLU(6),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 8, 3, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.PReLU(8),
            nn.AdaptiveAvgPool2d(2),
        )
        self.fc = nn.Linear(32, dim, bias=False)
        self.bn = nn.BatchNorm1d(dim, affine=False)

    def forward(self, x):
        return self.bn(self.fc(self.conv(x).flatten(1)))


class ArcMargin(nn.Module):
    def __init__(self, dim, classes, s=8.0, m=0.3, easy_margin=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(classes, dim))
        self.s, self.m, self.easy = s, m, easy_margin
        self.th, self.mm = math.cos(math.pi - m), math.sin(math.pi - m) * m

    def forward(self, emb, labels):
        cosine = F.linear(F.normalize(emb), F.normalize(self.weight)).clamp(-1 + 1e-7, 1 - 1e-7)
        sine = torch.sqrt(1.0 - cosine.pow(2))
        phi = cosine * math.cos(self.m) - sine * math.sin(self.m)
        phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros_like(cosine).scatter_(1, labels.view(-1, 1), 1.0)
        return self.s * (one_hot * phi + (1.0 - one_hot) * cosine), cosine


def cosface(emb, weight, labels, s=8.0, m=0.2):
    cos = F.normalize(emb) @ F.normalize(weight, dim=1).t()
    return s * (cos - m * F.one_hot(labels, cos.shape[1]).to(cos.dtype))


classes, per = 5, 6
yy, xx = torch.meshgrid(torch.linspace(-1, 1, 12), torch.linspace(-1, 1, 12), indexing="ij")
imgs, labels = [], []
for c in range(classes):
    for j in range(per):
        base = torch.sin((c + 1) * 2.0 * xx + c) * torch.cos((c % 3 + 1) * yy)
        jitter = 0.25 * torch.sin(7.0 * xx * (j + 1) + 3 * yy)
        imgs.append((base + jitter)[None])
        labels.append(c)
x, y = torch.stack(imgs), torch.tensor(labels)
print("data", tuple(x.shape), torch.bincount(y).tolist())

net, head = Embedder(), ArcMargin(8, classes)
det_init(net)
det_init(head)
opt = torch.optim.SGD(
    [{"params": net.parameters()}, {"params": head.parameters(), "weight_decay": 5e-4}],
    lr=0.01,
    momentum=0.9,
    nesterov=True,
)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[6, 9], gamma=0.3)
ce = nn.CrossEntropyLoss(label_smoothing=0.1)
for epoch in range(12):
    net.train()
    for b in range(0, len(x), 15):
        order = torch.arange(len(x)).roll(epoch * 7)[b : b + 15]
        logits, cos = head(net(x[order]), y[order])
        loss = ce(logits, y[order]) + 0.1 * ce(
            cosface(net(x[order]), head.weight, y[order]), y[order]
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
    if epoch % 3 == 2:
        acc = (cos.argmax(1) == y[order]).float().mean().item()
        print(f"epoch {epoch} loss {loss.item():.5f} acc {acc:.3f} lr {sched.get_last_lr()[0]:.4f}")

net.eval()
with torch.no_grad():
    emb = F.normalize(net(x), dim=1)
sim = emb @ emb.t()
iu = torch.triu_indices(len(x), len(x), offset=1)
scores, same = sim[iu[0], iu[1]], (y[iu[0]] == y[iu[1]])
print("pairs", scores.numel(), same.sum().item(), round(scores[same].mean().item(), 4))
print(
    "pairwise_check",
    torch.allclose(F.cosine_similarity(emb[:, None], emb[None], dim=-1), sim, atol=1e-5),
)
order = torch.argsort(scores, descending=True)
tp = torch.cumsum(same[order].float(), 0)
fp = torch.cumsum((~same[order]).float(), 0)
tpr, fpr = tp / same.sum(), fp / (~same).sum()
auc = torch.trapezoid(torch.cat([torch.zeros(1), tpr]), torch.cat([torch.zeros(1), fpr]))
print("auc", round(auc.item(), 5))
for far in (0.01, 0.1):
    ok = fpr <= far
    print(f"tar@far{far}", round(tpr[ok].max().item() if ok.any() else 0.0, 4))
thr = torch.linspace(-1, 1, 201)
accs = ((scores[None] > thr[:, None]) == same[None]).float().mean(1)
best = accs.argmax()
print("best_threshold", round(thr[best].item(), 3), round(accs[best].item(), 4))
eer_i = torch.argmin((fpr - (1 - tpr)).abs())
print("eer", round(fpr[eer_i].item(), 4), round(1 - tpr[eer_i].item(), 4))
print("rng_probe", torch.randn(2).tolist())
