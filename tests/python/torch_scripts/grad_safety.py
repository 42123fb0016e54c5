"""Guarding a training loop against bad gradients: clip_grad_norm_ with every norm_type and
foreach setting, error_if_nonfinite raising on a NaN gradient, get_total_norm +
clip_grads_with_norm_ (the split API FSDP-style code uses), clip_grad_value_, skipping a step
when the norm is not finite, detect_anomaly naming the backward that produced NaN, a CPU
GradScaler that skips the inf step and backs off its scale, and AdamW with decay exclusions."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.norm = nn.LayerNorm(8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.norm(self.fc1(x))))


def det_fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + i) * 0.6).view_as(
                    p
                )
            )


def grads(model):
    return [p.grad.clone() for p in model.parameters()]


def set_grads(model, gs):
    for p, g in zip(model.parameters(), gs):
        p.grad = g.clone()


def main():
    model = Net()
    det_fill(model)
    x = torch.cos(torch.arange(24, dtype=torch.float32) * 0.4).view(6, 4)
    y = torch.sin(torch.arange(6, dtype=torch.float32)).view(6, 1) * 3
    F.mse_loss(model(x), y).backward()
    g0 = grads(model)
    for norm_type in (2.0, 1, float("inf"), "inf", 0.5):
        for foreach in (None, False, True):
            set_grads(model, g0)
            total = clip_grad_norm_(
                model.parameters(), max_norm=0.25, norm_type=norm_type, foreach=foreach
            )
            after = get_total_norm([p.grad for p in model.parameters()], norm_type=norm_type)
            if foreach is None:
                print("clip", norm_type, round(total.item(), 5), round(after.item(), 5))
    set_grads(model, g0)
    norm = get_total_norm([p.grad for p in model.parameters()])
    clip_grads_with_norm_(model.parameters(), max_norm=1.0, total_norm=norm)
    print("split_api", round(norm.item(), 5), round(model.fc1.weight.grad.abs().sum().item(), 5))
    set_grads(model, g0)
    clip_grad_value_(model.parameters(), clip_value=0.05)
    print("clip_value", round(max(p.grad.abs().max().item() for p in model.parameters()), 5))

    bad = [g.clone() for g in g0]
    bad[1][0] = float("nan")
    set_grads(model, bad)
    try:
        clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        print("nonfinite", str(e).split(".")[0])
    set_grads(model, bad)
    total = clip_grad_norm_(model.parameters(), 1.0)
    print("nan_total", total.isnan().item(), torch.isnan(model.fc1.weight.grad).all().item())

    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("bias") or "norm" in name else decay).append(p)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=0.01
    )
    print("group_sizes", [len(g["params"]) for g in opt.param_groups], opt.defaults["weight_decay"])
    skipped, losses = 0, []
    for step in range(6):
        opt.zero_grad()
        scale = float("inf") if step == 2 else 1.0
        loss = F.mse_loss(model(x) * scale, y)
        loss.backward()
        total = clip_grad_norm_(model.parameters(), max_norm=1.0)
        if not torch.isfinite(total):
            skipped += 1
            continue
        opt.step()
        losses.append(round(loss.item(), 5))
    print("guarded", skipped, losses)
    print("adam_steps", [opt.state[p]["step"].item() for p in decay])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = torch.tensor([-1.0, 4.0], requires_grad=True)
        try:
            with torch.autograd.detect_anomaly():
                torch.sqrt(w).sum().backward()
        except RuntimeError as e:
            print("anomaly", e)
        with torch.autograd.detect_anomaly(check_nan=False):
            torch.sqrt(torch.tensor([0.0], requires_grad=True)).sum().backward()
        print("anomaly_flags", torch.is_anomaly_enabled())

    m2 = Net()
    det_fill(m2)
    opt2 = torch.optim.SGD(m2.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(
        "cpu", init_scale=1024.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2
    )
    scales = []
    for step in range(5):
        opt2.zero_grad()
        out = m2(x)
        if step == 1:
            out = out * float("inf")
        loss = F.mse_loss(out, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt2)
        clip_grad_norm_(m2.parameters(), 2.0)
        scaler.step(opt2)
        scaler.update()
        scales.append(scaler.get_scale())
    print("scaler_scales", scales)
    print("scaler_weights", round(m2.fc2.weight.sum().item(), 5), sorted(scaler.state_dict()))


if __name__ == "__main__":
    main()
