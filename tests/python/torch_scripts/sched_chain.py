# ruff: noqa: E501
"""LR schedules as training recipes chain them: linear warmup then cosine restarts through
SequentialLR, ChainedScheduler of a per-step decay and a constant factor, OneCycleLR cycling
Adam's beta1 (three-phase, linear annealing), CyclicLR exp_range cycling SGD momentum,
MultiplicativeLR and PolynomialLR on two parameter groups, and a schedule saved mid-run and
resumed from its state_dict."""

import torch
import torch.nn as nn
from torch.optim import lr_scheduler as S


def make_opt(kind="sgd", groups=False):
    a = nn.Parameter(torch.ones(2))
    b = nn.Parameter(torch.ones(2))
    params = [{"params": [a]}, {"params": [b], "lr": 0.01}] if groups else [a, b]
    if kind == "adam":
        return torch.optim.Adam(params, lr=0.1, betas=(0.9, 0.999))
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)


def run(opt, sched, steps, extra=None):
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        row = [round(g["lr"], 6) for g in opt.param_groups]
        if extra:
            row.append(
                round(
                    opt.param_groups[0][extra]
                    if extra != "beta1"
                    else opt.param_groups[0]["betas"][0],
                    6,
                )
            )
        out.append(row if len(row) > 1 else row[0])
    return out


def main():
    opt = make_opt()
    warm = S.LinearLR(opt, start_factor=0.01, end_factor=1.0, total_iters=4)
    cos = S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)
    seq = S.SequentialLR(opt, [warm, cos], milestones=[4])
    print(f"warm_restart {run(opt, seq, 14)}")
    print(
        f"seq_last {[round(v, 6) for v in seq.get_last_lr()]} initial {opt.param_groups[0]['initial_lr']}"
    )

    opt = make_opt()
    chain = S.ChainedScheduler(
        [S.ExponentialLR(opt, gamma=0.9), S.ConstantLR(opt, factor=0.5, total_iters=3)]
    )
    print(f"chained {run(opt, chain, 6)}")

    opt = make_opt("adam")
    one = S.OneCycleLR(
        opt,
        max_lr=0.5,
        total_steps=12,
        pct_start=0.25,
        anneal_strategy="linear",
        three_phase=True,
        div_factor=10.0,
        final_div_factor=100.0,
    )
    print(f"onecycle_start {opt.param_groups[0]['lr']:.6f} beta1 {opt.param_groups[0]['betas'][0]}")
    print(f"onecycle {run(opt, one, 11, 'beta1')}")

    opt = make_opt()
    cyc = S.CyclicLR(
        opt,
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=2,
        mode="exp_range",
        gamma=0.9,
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.95,
    )
    print(f"cyclic {run(opt, cyc, 8, 'momentum')}")

    opt = make_opt(groups=True)
    mult = S.MultiplicativeLR(opt, lr_lambda=[lambda e: 0.5, lambda e: 0.9])
    print(f"multiplicative {run(opt, mult, 3)}")
    opt = make_opt(groups=True)
    poly = S.PolynomialLR(opt, total_iters=4, power=2.0)
    print(f"polynomial {run(opt, poly, 5)}")
    opt = make_opt()
    ms = S.MultiStepLR(opt, milestones=[2, 5], gamma=0.1)
    print(f"multistep {run(opt, ms, 6)}")

    # Save mid-run, resume in a fresh optimizer/scheduler, continue identically.
    opt = make_opt()
    sched = S.SequentialLR(
        opt,
        [S.LinearLR(opt, 0.1, total_iters=3), S.StepLR(opt, step_size=2, gamma=0.5)],
        milestones=[3],
    )
    run(opt, sched, 4)
    state, ostate = sched.state_dict(), opt.state_dict()
    rest = run(opt, sched, 4)
    opt2 = make_opt()
    sched2 = S.SequentialLR(
        opt2,
        [S.LinearLR(opt2, 0.1, total_iters=3), S.StepLR(opt2, step_size=2, gamma=0.5)],
        milestones=[3],
    )
    opt2.load_state_dict(ostate)
    sched2.load_state_dict(state)
    print(f"resumed {run(opt2, sched2, 4)} orig {rest}")
    print(f"state_keys {sorted(state)} last_epoch {state['last_epoch']}")
    opt = make_opt()
    lam = S.LambdaLR(opt, lambda e: 1.0 / (1 + e))
    run(opt, lam, 2)
    sd = lam.state_dict()
    print(
        f"lambda_state {sd['lr_lambdas']} {sd['base_lrs']} {sd['last_epoch']} {'lr_lambdas' in sd}"
    )


if __name__ == "__main__":
    main()
