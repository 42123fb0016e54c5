# ruff: noqa: E501
"""Training-loop plumbing: chained and sequential LR schedulers (LinearLR, ExponentialLR,
CosineAnnealingWarmRestarts, MultiStepLR, CyclicLR, PolynomialLR, ReduceLROnPlateau),
gradient accumulation, clip_grad_value_ and clip_grad_norm_ with foreach, and a full
checkpoint (model, optimizer, scheduler, epoch) saved mid-run and resumed bit-for-bit."""

import io
import os
import tempfile

import torch
import torch.nn as nn
from torch.optim import lr_scheduler


def det_init(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.61 + i) * 0.4).view_as(p))


def make_model():
    m = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 1))
    det_init(m)
    return m


X = torch.linspace(-2, 2, 80).view(16, 5)
Y = X[:, :1] * 0.7 - X[:, 2:3].pow(2) * 0.3 + torch.sin(X[:, 4:5])


def lrs(sched_fn, steps=12, **opt_kw):
    p = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1, **opt_kw)
    sched = sched_fn(opt)
    out = []
    for _ in range(steps):
        out.append(round(opt.param_groups[0]["lr"], 6))
        opt.step()
        sched.step()
    return out


def train(model, opt, sched, start, end, accum=2):
    loss_fn = nn.MSELoss()
    losses = []
    for epoch in range(start, end):
        opt.zero_grad()
        for k in range(0, 16, 16 // accum):
            loss = loss_fn(model(X[k : k + 16 // accum]), Y[k : k + 16 // accum]) / accum
            loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
        total = torch.nn.utils.clip_grad_norm_(
            model.parameters(), max_norm=1.0, norm_type=2.0, foreach=True
        )
        opt.step()
        sched.step()
        losses.append(loss.item() * accum)
    return losses, total


def main():
    torch.manual_seed(0)
    print(f"linear {lrs(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4), 6)}")
    print(
        f"seq {lrs(lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.LinearLR(o, 0.1, total_iters=3), lr_scheduler.ExponentialLR(o, gamma=0.8)], milestones=[3]), 8)}"
    )
    print(
        f"chained {lrs(lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3), lr_scheduler.ExponentialLR(o, gamma=0.9)]), 6)}"
    )
    print(
        f"warm_restarts {lrs(lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01), 10)}"
    )
    print(
        f"multistep {lrs(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.5), 7)}"
    )
    print(f"poly {lrs(lambda o: lr_scheduler.PolynomialLR(o, total_iters=5, power=2.0), 7)}")
    print(
        f"cyclic {lrs(lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode='triangular2'), 10, momentum=0.9)}"
    )
    print(
        f"onecycle {lrs(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=8, anneal_strategy='linear'), 8, momentum=0.9)}"
    )
    print(
        f"multiplicative {lrs(lambda o: lr_scheduler.MultiplicativeLR(o, lr_lambda=lambda e: 0.9 if e % 2 else 1.0), 5)}"
    )

    p = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    plateau = lr_scheduler.ReduceLROnPlateau(
        opt, mode="min", factor=0.5, patience=1, threshold=0.01, cooldown=1, min_lr=0.1
    )
    seen = []
    for metric in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]:
        plateau.step(metric)
        seen.append(opt.param_groups[0]["lr"])
    print(f"plateau {seen} best {plateau.best}")

    # Train 12 epochs straight, or 6 + checkpoint + 6 resumed in a fresh process state.
    def build():
        model = make_model()
        opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01, amsgrad=True)
        sched = lr_scheduler.SequentialLR(
            opt,
            [
                lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=3),
                lr_scheduler.CosineAnnealingLR(opt, T_max=9, eta_min=1e-3),
            ],
            milestones=[3],
        )
        return model, opt, sched

    model, opt, sched = build()
    straight, total = train(model, opt, sched, 0, 12)
    print(
        f"straight {[round(v, 5) for v in straight[::3]]} last_norm {total.item():.5f} lr {sched.get_last_lr()[0]:.6f}"
    )

    model, opt, sched = build()
    first, _ = train(model, opt, sched, 0, 6)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ckpt.pt")
        torch.save(
            {
                "epoch": 6,
                "model_state_dict": model.state_dict(),
                "optimizer_state_dict": opt.state_dict(),
                "scheduler": sched.state_dict(),
                "loss": first[-1],
            },
            path,
        )
        model, opt, sched = build()
        checkpoint = torch.load(path, weights_only=True)
        model.load_state_dict(checkpoint["model_state_dict"])
        opt.load_state_dict(checkpoint["optimizer_state_dict"])
        sched.load_state_dict(checkpoint["scheduler"])
        start = checkpoint["epoch"]
        print(
            f"ckpt_keys {sorted(checkpoint)} opt_state_keys {sorted(checkpoint['optimizer_state_dict']['state'][0])}"
        )
        print(
            f"ckpt_step {checkpoint['optimizer_state_dict']['state'][0]['step'].item()} groups {len(checkpoint['optimizer_state_dict']['param_groups'])} lr {opt.param_groups[0]['lr']:.6f}"
        )
    rest, total = train(model, opt, sched, start, 12)
    print(
        f"resumed_equal {[round(v, 6) for v in first + rest] == [round(v, 6) for v in straight]} lr {sched.get_last_lr()[0]:.6f}"
    )

    # Partial loading: a model with an extra head, strict=False, and buffers.
    class WithHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = make_model()
            self.head = nn.Linear(1, 2)
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))
            self.register_buffer("scratch", torch.ones(2), persistent=False)

    wh = WithHead()
    res = wh.body.load_state_dict(model.state_dict())
    res2 = wh.load_state_dict({"body." + k: v for k, v in model.state_dict().items()}, strict=False)
    print(
        f"load_result {list(res.missing_keys)} missing {res2.missing_keys} unexpected {res2.unexpected_keys}"
    )
    print(f"state_keys {list(wh.state_dict().keys())}")
    buf = io.BytesIO()
    torch.save(wh.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf)
    print(
        f"roundtrip_equal {all(torch.equal(sd[k], v) for k, v in wh.state_dict().items())} types {sorted({type(v).__name__ for v in sd.values()})}"
    )
    try:
        wh.load_state_dict({"body.0.weight": torch.zeros(3, 3)}, strict=False)
    except RuntimeError as e:
        print(f"size_mismatch {'size mismatch for body.0.weight' in str(e)}")


if __name__ == "__main__":
    main()
