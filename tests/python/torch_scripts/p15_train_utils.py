"""A time-series classifier trained the way tutorials do it: sliding windows cut with
Tensor.unfold, a dict-returning Dataset split with Subset/ConcatDataset, a BatchSampler over a
SequentialSampler, freezing a backbone with requires_grad_(False) then unfreezing it into a new
param group, LinearLR warm-up chained to ExponentialLR, early stopping on a validation loss with
the best state_dict kept in memory, a checkpoint round trip through BytesIO, and metrics from a
confusion matrix built with bincount."""

import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    SequentialSampler,
    Subset,
)

t = torch.arange(0, 96, dtype=torch.float32)
signal = torch.stack([torch.sin(t / 4), torch.cos(t / 7) * 0.5, (t % 12) / 12 - 0.5])
windows = signal.unfold(1, 16, 4).permute(1, 0, 2)  # (windows, channels, time)
labels = (windows[:, 0].mean(-1) > 0).long() + (windows[:, 2].std(-1) > 0.28).long()
print("windows", tuple(windows.shape), windows.stride(), labels.bincount(minlength=3).tolist())


class Windows(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i], "idx": i}


full = Windows(windows, labels)
train = ConcatDataset([Subset(full, range(0, 13)), Subset(full, range(16, 20))])
val = Subset(full, [13, 14, 15, 20])
print("sizes", len(train), len(val), train.cumulative_sizes)
sampler = BatchSampler(SequentialSampler(train), batch_size=5, drop_last=False)
loader = DataLoader(train, batch_sampler=sampler)
first = next(iter(loader))
print("batch", sorted(first), tuple(first["x"].shape), first["idx"].tolist(), first["y"].dtype)
val_loader = DataLoader(val, batch_size=4)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv1d(3, 6, 5, padding=2), nn.GELU(), nn.AdaptiveAvgPool1d(4), nn.Flatten()
        )
        self.head = nn.Sequential(nn.Dropout(0.0), nn.Linear(24, 3))

    def forward(self, x):
        return self.head(self.backbone(x))


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape).mul(i + 3).cos() * 0.4)
model.backbone.requires_grad_(False)
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
print("trainable", trainable)
# the frozen backbone's group is skipped by the optimizer while its grads stay None
opt = torch.optim.AdamW(
    [
        {"params": model.head.parameters()},
        {"params": model.backbone.parameters(), "lr": 0.005},
    ],
    lr=0.02,
)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[3])


def evaluate():
    model.eval()
    total, conf = 0.0, torch.zeros(3, 3, dtype=torch.long)
    with torch.no_grad():
        for b in val_loader:
            out = model(b["x"])
            total += F.cross_entropy(out, b["y"], reduction="sum").item()
            conf += torch.bincount(b["y"] * 3 + out.argmax(1), minlength=9).reshape(3, 3)
    model.train()
    return total / len(val), conf


best, best_state, patience, bad = float("inf"), None, 3, 0
for epoch in range(10):
    if epoch == 2:  # unfreeze the backbone (its group has a smaller learning rate)
        model.backbone.requires_grad_(True)
    for b in loader:
        loss = F.cross_entropy(model(b["x"]), b["y"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
    vloss, conf = evaluate()
    lrs = [round(g["lr"], 6) for g in opt.param_groups]
    frozen = model.backbone[0].weight.grad is None
    print(f"epoch {epoch} frozen {frozen} train {loss.item():.4f} val {vloss:.4f} lr {lrs}")
    if vloss < best - 1e-4:
        best, bad = vloss, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad += 1
        if bad >= patience:
            print("early_stop", epoch)
            break

model.load_state_dict(best_state)
vloss, conf = evaluate()
print("best", round(best, 4), round(vloss, 4), conf.tolist())
tp = conf.diag().float()
precision = tp / conf.sum(0).clamp(min=1)
recall = tp / conf.sum(1).clamp(min=1)
f1 = torch.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
print("f1", [round(v, 4) for v in f1.tolist()], round(f1.mean().item(), 4))

buf = io.BytesIO()
torch.save(
    {"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "epoch": 3},
    buf,
)
buf.seek(0)
ck = torch.load(buf, weights_only=True)
print("ckpt", sorted(ck), sorted(ck["sched"]), ck["sched"]["_milestones"], ck["epoch"])
print("opt_groups", [sorted(g) for g in ck["opt"]["param_groups"]][0])
model2 = Net()
model2.load_state_dict(ck["model"])
opt2 = torch.optim.AdamW(model2.head.parameters(), lr=0.02)
opt2.add_param_group({"params": model2.backbone.parameters(), "lr": 0.005})
opt2.load_state_dict(ck["opt"])
sched2 = torch.optim.lr_scheduler.SequentialLR(
    opt2,
    [
        torch.optim.lr_scheduler.LinearLR(opt2, start_factor=0.25, total_iters=3),
        torch.optim.lr_scheduler.ExponentialLR(opt2, gamma=0.9),
    ],
    milestones=[3],
)
sched2.load_state_dict(ck["sched"])
print("resumed_lr", [round(g["lr"], 6) for g in opt2.param_groups], sched2.last_epoch)
x = windows[:3]
print("same_out", torch.allclose(model(x), model2(x)))
vec = nn.utils.parameters_to_vector(model2.parameters())
nn.utils.vector_to_parameters(vec * 0.5, model2.parameters())
print("vec", vec.numel(), round(vec.norm().item(), 4), round(model2.head[1].bias.sum().item(), 5))
