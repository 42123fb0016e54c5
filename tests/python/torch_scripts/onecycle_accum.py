# ruff: noqa: E501
"""Large-batch training on a small machine: gradient accumulation over micro-batches with
loss / accum_steps, clip_grad_norm_ (its returned total norm, error_if_nonfinite, inf norm)
and the split form get_total_norm + clip_grads_with_norm_, OneCycleLR with cosine and
linear annealing, three_phase and cycle_momentum driving Adam's beta1 and SGD's momentum,
SequentialLR (warmup then cosine), ReduceLROnPlateau on a validation metric in 'max' mode with
threshold_mode='abs', and scheduler state_dict round trips."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import lr_scheduler


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.37 + 0.015 * k * k + i) * scale).view_as(p))


def make_model():
    m = nn.Sequential(nn.Linear(6, 24), nn.GELU(), nn.Linear(24, 3))
    det_init(m)
    return m


X = torch.sin(torch.arange(64 * 6, dtype=torch.float32) * 0.77).view(64, 6)
Y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).long() + (X[:, 3] > 0.5).long()


def schedule(make, steps, opt_fn=None, key="lr"):
    p = nn.Parameter(torch.zeros(1))
    opt = (opt_fn or (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)))([p])
    sched = make(opt)
    out = []
    for _ in range(steps):
        v = opt.param_groups[0][key]
        out.append(round(v[0] if isinstance(v, tuple) else v, 6))
        opt.step()
        sched.step()
    return out


def main():
    torch.manual_seed(0)
    print(
        f"onecycle_cos {schedule(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10), 10)}"
    )
    print(
        f"onecycle_mom {schedule(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10, base_momentum=0.8, max_momentum=0.95), 10, key='momentum')}"
    )
    print(
        f"onecycle_3phase {schedule(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=6, three_phase=True, anneal_strategy='linear', div_factor=10, final_div_factor=100), 12)}"
    )
    print(
        f"onecycle_adam_beta1 {schedule(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.01, total_steps=8, pct_start=0.25), 8, opt_fn=lambda ps: torch.optim.Adam(ps, lr=0.01), key='betas')}"
    )
    warm_cos = lambda o: lr_scheduler.SequentialLR(
        o,
        [
            lr_scheduler.LinearLR(o, start_factor=0.01, end_factor=1.0, total_iters=3),
            lr_scheduler.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
        ],
        milestones=[3],
    )  # noqa: E731
    print(f"warmup_cosine {schedule(warm_cos, 10)}")

    # Gradient accumulation: 4 micro-batches of 16 give the gradient of the full batch of 64.
    model = make_model()
    full = make_model()
    F.cross_entropy(full(X), Y).backward()
    accum = 4
    for k in range(accum):
        xb, yb = X[k * 16 : (k + 1) * 16], Y[k * 16 : (k + 1) * 16]
        (F.cross_entropy(model(xb), yb) / accum).backward()
    same = all(
        torch.allclose(a.grad, b.grad, atol=1e-6)
        for a, b in zip(model.parameters(), full.parameters())
    )
    print(f"accum_equals_full {same}")
    grads = [p.grad.clone() for p in model.parameters()]
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1)
    manual = torch.sqrt(sum(g.pow(2).sum() for g in grads))
    after = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    print(f"clip total {total.item():.6f} manual {manual.item():.6f} after {after.item():.5f}")
    tinf = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type="inf")
    print(f"clip_inf {tinf.item():.6f}")
    gl = [p.grad for p in full.parameters()]
    tn = nn.utils.get_total_norm(gl, norm_type=2.0)
    nn.utils.clip_grads_with_norm_(full.parameters(), max_norm=0.5, total_norm=tn)
    print(
        f"split_clip total {tn.item():.6f} after {torch.sqrt(sum(g.pow(2).sum() for g in gl)).item():.5f}"
    )
    bad = nn.Parameter(torch.ones(2))
    bad.grad = torch.tensor([float("nan"), 1.0])
    try:
        nn.utils.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        print(f"nonfinite_error {'non-finite' in str(e)}")

    # A full run: accumulation, clipping, OneCycleLR per optimizer step, plateau on val accuracy.
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    epochs, micro, accum = 6, 8, 2
    steps_per_epoch = math.ceil(64 / (micro * accum))
    sched = lr_scheduler.OneCycleLR(
        opt, max_lr=0.03, epochs=epochs, steps_per_epoch=steps_per_epoch
    )
    plateau_opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    plateau = lr_scheduler.ReduceLROnPlateau(
        plateau_opt, mode="max", factor=0.5, patience=0, threshold=0.05, threshold_mode="abs"
    )
    norms, plateau_lrs = [], []
    for epoch in range(epochs):
        model.train()
        opt.zero_grad()
        for i in range(64 // micro):
            xb, yb = X[i * micro : (i + 1) * micro], Y[i * micro : (i + 1) * micro]
            (F.cross_entropy(model(xb), yb) / accum).backward()
            if (i + 1) % accum == 0:
                norms.append(nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
                opt.step()
                sched.step()
                opt.zero_grad()
        model.eval()
        with torch.no_grad():
            acc = (model(X).argmax(1) == Y).float().mean().item()
        plateau.step(acc)
        plateau_lrs.append(plateau_opt.param_groups[0]["lr"])
    print(
        f"run acc {acc:.4f} steps {sched.last_epoch} norms {[round(n, 4) for n in norms[::6]]} final_lr {sched.get_last_lr()[0]:.8f}"
    )
    print(f"plateau_lrs {plateau_lrs} best {plateau.best:.4f} bad_epochs {plateau.num_bad_epochs}")
    sd = sched.state_dict()
    fresh = lr_scheduler.OneCycleLR(
        torch.optim.AdamW(make_model().parameters(), lr=1e-3),
        max_lr=0.03,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
    )
    fresh.load_state_dict(sd)
    print(
        f"state_roundtrip last_epoch {fresh.last_epoch} total_steps {fresh.total_steps} keys {sorted(k for k in sd if not k.startswith('_'))[:5]}"
    )
    psd = plateau.state_dict()
    print(
        f"plateau_state {sorted(k for k in psd if k in ('best', 'cooldown_counter', 'mode', 'num_bad_epochs', 'patience', 'threshold_mode'))}"
    )


if __name__ == "__main__":
    main()
