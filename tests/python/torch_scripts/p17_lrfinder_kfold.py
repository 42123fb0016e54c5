"""Everyday training-loop tooling: an LR range test (ExponentialLR per batch, a smoothed and
bias-corrected loss, stop on divergence, restore the model and optimizer from deep-copied
state dicts), k-fold cross-validation with Subset/DataLoader and reset_parameters between
folds, early stopping with patience that keeps the best weights in an in-memory
torch.save/torch.load(weights_only=True) checkpoint, and a final evaluation with the restored
best model."""

import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset, TensorDataset

n = 96
x = torch.stack([torch.sin(torch.arange(n) * 0.37 + k) for k in range(6)], 1)
y = ((x[:, 0] * x[:, 1] + 0.5 * x[:, 2] - x[:, 3] ** 2) > -0.3).long()
ds = TensorDataset(x, y)
print("data", tuple(x.shape), torch.bincount(y).tolist())


def make_model():
    m = nn.Sequential(
        nn.Linear(6, 24),
        nn.LayerNorm(24),
        nn.Tanh(),
        nn.Linear(24, 24),
        nn.Tanh(),
        nn.Linear(24, 2),
    )
    det_init(m)
    return m


def det_init(m, shift=0.0):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 1.6 + shift).sin()
                * 0.4
            )


# ---------------- LR range test
model = make_model()
opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
saved_model, saved_opt = copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict())
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=(1.0 / 1e-4) ** (1 / 30))
loader = DataLoader(ds, batch_size=16, shuffle=False)
lrs, losses, avg, best = [], [], 0.0, float("inf")
it = 0
while it < 30:
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        avg = 0.9 * avg + 0.1 * loss.item()
        smooth = avg / (1 - 0.9 ** (it + 1))
        lrs.append(sched.get_last_lr()[0])
        losses.append(smooth)
        best = min(best, smooth)
        sched.step()
        it += 1
        if smooth > 4 * best or not torch.isfinite(loss) or it >= 30:
            it = 30
            break
losses_t = torch.tensor(losses)
grads = losses_t[1:] - losses_t[:-1]
suggest = lrs[int(torch.argmin(grads[5:])) + 5]
print(
    "range_test",
    len(lrs),
    f"{lrs[0]:.2e}",
    f"{lrs[-1]:.3e}",
    f"{suggest:.3e}",
    round(min(losses), 4),
)
model.load_state_dict(saved_model)
opt.load_state_dict(saved_opt)
print(
    "restored",
    opt.param_groups[0]["lr"],
    len(opt.state),
    torch.equal(model[0].weight, make_model()[0].weight),
)

# ---------------- k-fold CV
k = 4
folds = torch.arange(n).reshape(k, -1)
scores = []
for f in range(k):
    val_idx = folds[f].tolist()
    train_idx = torch.cat([folds[j] for j in range(k) if j != f]).tolist()
    model = make_model()
    for layer in model:
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
    det_init(model, shift=f * 0.1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tl = DataLoader(Subset(ds, train_idx), batch_size=24, shuffle=False, drop_last=True)
    for epoch in range(5):
        for xb, yb in tl:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        xv, yv = ds[val_idx]
        scores.append((model(xv).argmax(1) == yv).float().mean().item())
s = torch.tensor(scores)
print(
    "kfold",
    [round(v, 4) for v in scores],
    round(s.mean().item(), 4),
    round(s.std().item(), 4),
    len(tl),
)

# ---------------- early stopping with an in-memory best checkpoint
model = make_model()
opt = torch.optim.AdamW(model.parameters(), lr=2e-2, weight_decay=0.05)
train, val = Subset(ds, list(range(72))), Subset(ds, list(range(72, 96)))
best_loss, bad, patience, buf, history = float("inf"), 0, 3, None, []
for epoch in range(40):
    model.train()
    for xb, yb in DataLoader(train, batch_size=12):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        xv, yv = next(iter(DataLoader(val, batch_size=len(val))))
        vloss = F.cross_entropy(model(xv), yv).item()
    history.append(round(vloss, 4))
    if vloss < best_loss - 2e-3:
        best_loss, bad, best_epoch = vloss, 0, epoch
        buf = io.BytesIO()
        torch.save(
            {"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict(), "val": vloss},
            buf,
        )
    else:
        bad += 1
        if bad >= patience:
            break
print("early_stop", epoch, best_epoch, history[-4:])
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
model.load_state_dict(ckpt["model"])
opt.load_state_dict(ckpt["opt"])
with torch.no_grad():
    restored = F.cross_entropy(model(xv), yv).item()
print(
    "checkpoint",
    ckpt["epoch"],
    round(ckpt["val"], 5),
    round(restored, 5),
    sorted(ckpt["opt"]["state"][0]),
)
print("sizes", len(buf.getvalue()) > 1000, sorted(ckpt))
