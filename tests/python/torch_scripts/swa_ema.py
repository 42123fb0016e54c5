# ruff: noqa: E501
"""Weight averaging as the torch.optim.swa_utils docs show it: stochastic weight averaging
with AveragedModel + SWALR (cosine and linear annealing) starting at swa_start, update_bn over
a DataLoader to recompute BatchNorm statistics, an exponential moving average of weights with
get_ema_multi_avg_fn and use_buffers=True, a hand-rolled EMA compared with it, and the
averaged models' n_averaged, state_dict keys and evaluation losses."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.43 + 0.021 * k * k + i) * scale).view_as(p))


def make_model():
    m = nn.Sequential(nn.Linear(4, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
    det_init(m)
    return m


def main():
    torch.manual_seed(0)
    X = torch.linspace(-2, 2, 96).view(24, 4)
    Y = (X[:, :1] * 0.5 - X[:, 1:2].pow(2) * 0.2 + torch.sin(X[:, 2:3] * 2)).detach()
    loader = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=False)

    model = make_model()
    swa_model = AveragedModel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    swa_start = 10
    swa_sched = SWALR(opt, swa_lr=0.02, anneal_epochs=3, anneal_strategy="cos")
    lrs = []
    for epoch in range(20):
        for xb, yb in loader:
            opt.zero_grad()
            F.mse_loss(model(xb), yb).backward()
            opt.step()
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_sched.step()
        else:
            sched.step()
        lrs.append(round(opt.param_groups[0]["lr"], 6))
    print(f"lrs {lrs[8:16]}")
    print(
        f"n_averaged {swa_model.n_averaged.item()} keys {list(swa_model.state_dict().keys())[:4]}"
    )
    before = swa_model.module[1].running_mean.clone()
    update_bn(loader, swa_model)
    print(
        f"bn_updated {not torch.equal(before, swa_model.module[1].running_mean)} mean {[round(v, 4) for v in swa_model.module[1].running_mean[:4].tolist()]} momentum_restored {swa_model.module[1].momentum}"
    )
    model.eval()
    swa_model.eval()
    with torch.no_grad():
        print(
            f"eval_model {F.mse_loss(model(X), Y).item():.5f} eval_swa {F.mse_loss(swa_model(X), Y).item():.5f}"
        )
    avg_w = swa_model.module[0].weight
    print(f"swa_w {[round(v, 5) for v in avg_w[0].tolist()]}")

    # EMA with use_buffers=True, against a hand-written EMA.
    model = make_model()
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
    manual = {k: v.detach().clone().float() for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(6):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            F.smooth_l1_loss(model(xb), yb).backward()
            opt.step()
            ema.update_parameters(model)
            first = ema.n_averaged.item() == 1
            for k, v in model.state_dict().items():
                if first or k.endswith("num_batches_tracked"):
                    manual[k] = v.detach().clone().float()
                else:
                    manual[k] = 0.9 * manual[k] + 0.1 * v.detach().float()
    ema_sd = ema.module.state_dict()
    same = all(
        torch.allclose(ema_sd[k].float(), manual[k], atol=1e-5)
        for k in manual
        if not k.endswith("num_batches_tracked")
    )
    print(
        f"ema_n {ema.n_averaged.item()} ema_matches_manual {same} ema_rm {[round(v, 4) for v in ema_sd['1.running_mean'][:3].tolist()]}"
    )
    ema.eval()
    with torch.no_grad():
        print(f"ema_eval {F.mse_loss(ema(X), Y).item():.5f}")
    lin = SWALR(
        torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.5),
        swa_lr=0.1,
        anneal_epochs=4,
        anneal_strategy="linear",
    )
    seen = []
    for _ in range(6):
        seen.append(round(lin.optimizer.param_groups[0]["lr"], 5))
        lin.step()
    print(f"swalr_linear {seen}")
    custom = AveragedModel(make_model(), avg_fn=lambda avg, new, n: avg + (new - avg) / (n + 1))
    custom.update_parameters(model)
    custom.update_parameters(make_model())
    print(
        f"custom_avg {custom.n_averaged.item()} {[round(v, 5) for v in custom.module[3].weight[0, :3].tolist()]}"
    )


if __name__ == "__main__":
    main()
