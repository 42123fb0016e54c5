"""Video action classification: an R(2+1)D network (Conv3d factorized into a (1,k,k) spatial and
a (t,1,1) temporal convolution with BatchNorm3d and a residual shortcut), channels_last_3d
inputs and weights, MaxPool3d with return_indices and MaxUnpool3d, AdaptiveAvgPool3d, temporal
segment sampling with index_select, clip-level averaging of logits over several clips, SGD with
CosineAnnealingLR, and a confusion matrix from bincount."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 1.25).sin() * scale
            )


class Conv2Plus1D(nn.Sequential):
    def __init__(self, cin, cout, mid, stride=1):
        super().__init__(
            nn.Conv3d(
                cin, mid, (1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1), bias=False
            ),
            nn.BatchNorm3d(mid),
            nn.ReLU(inplace=True),
            nn.Conv3d(mid, cout, (3, 1, 1), stride=(stride, 1, 1), padding=(1, 0, 0), bias=False),
        )


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Sequential(
            Conv2Plus1D(cin, cout, 6, stride), nn.BatchNorm3d(cout), nn.ReLU(inplace=True)
        )
        self.conv2 = nn.Sequential(Conv2Plus1D(cout, cout, 6), nn.BatchNorm3d(cout))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv3d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm3d(cout)
            )

    def forward(self, x):
        res = x if self.down is None else self.down(x)
        return F.relu(self.conv2(self.conv1(x)) + res)


class R2Plus1D(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv3d(3, 8, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2), bias=False),
            nn.BatchNorm3d(8),
            nn.ReLU(inplace=True),
        )
        self.layer1, self.layer2 = Block(8, 8, 1), Block(8, 12, 2)
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(12, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(self.pool(x).flatten(1))


T, S = 12, 16
t = torch.arange(T, dtype=torch.float32)[:, None, None]
yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
videos, labels = [], []
for k in range(9):
    cls = k % 3
    speed = 0.3 * (cls + 1)
    frames = torch.stack(
        [
            torch.sin(4 * (xx - speed * t / T * (1 + c)) + k * 0.1) * torch.cos(3 * yy + c * cls)
            for c in range(3)
        ]
    )  # (C, T, H, W)
    videos.append(frames)
    labels.append(cls)
videos, labels = torch.stack(videos), torch.tensor(labels)
print("videos", tuple(videos.shape), labels.tolist())


def clip(v, start, length=8, stride=1):
    idx = torch.arange(start, start + length * stride, stride).clamp(max=T - 1)
    return v.index_select(2, idx)


model = R2Plus1D()
det_init(model)
model = model.to(memory_format=torch.channels_last_3d)
w = model.stem[0].weight
print("weight_cl3d", w.is_contiguous(memory_format=torch.channels_last_3d), w.stride())
opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=1e-3)
for epoch in range(8):
    model.train()
    x = clip(videos, epoch % 4).contiguous(memory_format=torch.channels_last_3d)
    out = model(x)
    loss = F.cross_entropy(out, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if epoch % 2 == 1:
        print(
            f"epoch {epoch} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.5f}",
            f"out_cl {out.is_contiguous()}",
        )
model.eval()
with torch.no_grad():
    logits = torch.stack([model(clip(videos, s, stride=s // 2 + 1)) for s in (0, 2, 4)]).mean(0)
    feats = model.layer1(model.stem(videos[:2]))
pred = logits.argmax(1)
cm = torch.bincount(labels * 3 + pred, minlength=9).reshape(3, 3)
print("clip_avg", [round(v, 4) for v in logits[0].tolist()], pred.tolist())
print("confusion", cm.tolist(), round((cm.diag().sum() / cm.sum()).item(), 4))
print("feats", tuple(feats.shape), round(feats.mean().item(), 5))
pool = nn.MaxPool3d((2, 2, 2), return_indices=True)
unpool = nn.MaxUnpool3d((2, 2, 2))
pooled, idx = pool(feats)
restored = unpool(pooled, idx, output_size=feats.shape)
print(
    "unpool",
    tuple(pooled.shape),
    int(idx.max()),
    torch.equal(restored.amax((2, 3, 4)), feats.amax((2, 3, 4))),
)
print(
    "bn_stats",
    round(model.stem[1].running_mean.abs().sum().item(), 5),
    model.stem[1].num_batches_tracked.item(),
)
