"""What training scripts print about their optimizers and schedulers: optimizer repr, param
group keys and defaults, state_dict layout, add_param_group, LBFGS with strong Wolfe line search,
CyclicLR / OneCycleLR momentum cycling, CosineAnnealingWarmRestarts with fractional epochs,
ReduceLROnPlateau in min/max modes, scheduler state_dicts, and per-group freezing."""

import torch
import torch.nn as nn
from torch.optim import lr_scheduler as S


def r(t, n=5):
    if isinstance(t, (list, tuple)):
        return [round(float(v), n) for v in t]
    return [round(v, n) for v in t.flatten().tolist()]


def make():
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-0.4, 0.6, p.numel()).reshape(p.shape) * (1 + i / 3))
    return m


X = torch.linspace(-1, 1, 24).reshape(8, 3)
Y = (X**2).sum(1, keepdim=True) - X[:, :1]

for cls, kw in [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)),
    (torch.optim.Adam, dict(lr=0.01, amsgrad=True)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.05)),
    (torch.optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5)),
    (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01)),
    (torch.optim.NAdam, dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.01)),
    (torch.optim.RAdam, dict(lr=0.01)),
    (torch.optim.Adamax, dict(lr=0.02)),
    (torch.optim.ASGD, dict(lr=0.05)),
    (torch.optim.Rprop, dict(lr=0.01)),
    (torch.optim.Adadelta, dict(lr=1.0)),
]:
    model = make()
    opt = cls(model.parameters(), **kw)
    for _ in range(3):
        opt.zero_grad()
        nn.functional.mse_loss(model(X), Y).backward()
        opt.step()
    sd = opt.state_dict()
    name = cls.__name__
    print("opt", name, round(nn.functional.mse_loss(model(X), Y).item(), 5))
    print("group_keys", name, sorted(sd["param_groups"][0]))
    print("state_keys", name, sorted(sd["state"][0]), sd["param_groups"][0]["params"])
    print("repr", name, repr(opt).replace("\n", " | "))
    step = sd["state"][0].get("step")
    print(
        "step_type",
        name,
        type(step).__name__,
        getattr(step, "dtype", None),
        getattr(step, "shape", None),
    )

# param groups: different lr, frozen group, add_param_group
model = make()
opt = torch.optim.SGD(
    [{"params": model[0].parameters(), "lr": 0.05}, {"params": model[2].weight}],
    lr=0.1,
    momentum=0.9,
)
opt.add_param_group({"params": [model[2].bias], "lr": 0.0, "momentum": 0.0})
print("groups", [(g["lr"], g["momentum"], len(g["params"])) for g in opt.param_groups])
try:
    opt.add_param_group({"params": [model[2].bias]})
except ValueError as e:
    print("dup_group", str(e))
try:
    torch.optim.SGD([{"params": model[0].weight}, {"params": model[0].weight}], lr=0.1)
except ValueError as e:
    print("dup_init", str(e))
for _ in range(2):
    opt.zero_grad()
    nn.functional.mse_loss(model(X), Y).backward()
    opt.step()
print("group_bias_frozen", r(model[2].bias.detach()), round(model[0].weight.sum().item(), 5))
sd = opt.state_dict()
print("sd_groups", [g["params"] for g in sd["param_groups"]], sorted(sd["state"]))
opt2 = torch.optim.SGD(make().parameters(), lr=1.0)
try:
    opt2.load_state_dict(sd)
except ValueError as e:
    print("load_mismatch", str(e))

# LBFGS with strong Wolfe on a quadratic + a small fit
w = torch.zeros(3, requires_grad=True)
A = torch.tensor([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
b = torch.tensor([1.0, -2.0, 0.5])
lbfgs = torch.optim.LBFGS([w], lr=1, max_iter=20, line_search_fn="strong_wolfe", history_size=5)
calls = []


def closure():
    lbfgs.zero_grad()
    loss = 0.5 * w @ A @ w - b @ w
    loss.backward()
    calls.append(loss.item())
    return loss


final = lbfgs.step(closure)
print("lbfgs", r(w.detach()), r(torch.linalg.solve(A, b)), len(calls), round(final.item(), 5))
print(
    "lbfgs_state",
    sorted(lbfgs.state[w])[:6],
    lbfgs.state[w]["n_iter"],
    lbfgs.state[w]["func_evals"],
)
model = make()
lb = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
for _ in range(3):

    def cl():
        lb.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        return loss

    lb.step(cl)
print("lbfgs_fit", round(nn.functional.mse_loss(model(X), Y).item(), 5))

# schedulers
p = nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
cyc = S.CyclicLR(
    opt,
    base_lr=0.01,
    max_lr=0.1,
    step_size_up=3,
    mode="triangular2",
    cycle_momentum=True,
    base_momentum=0.8,
    max_momentum=0.95,
)
lrs, moms = [], []
for _ in range(10):
    opt.step()
    cyc.step()
    lrs.append(cyc.get_last_lr()[0])
    moms.append(opt.param_groups[0]["momentum"])
print("cyclic", r(lrs), r(moms))
print("cyclic_sd", sorted(k for k in cyc.state_dict() if not k.startswith("_")))
opt = torch.optim.Adam([p], lr=0.1)
one = S.OneCycleLR(opt, max_lr=0.5, total_steps=12, three_phase=True, anneal_strategy="linear")
vals = []
for _ in range(12):
    opt.step()
    vals.append((round(one.get_last_lr()[0], 5), round(opt.param_groups[0]["betas"][0], 5)))
    one.step()
print("onecycle", vals)
try:
    one.step()
except ValueError as e:
    print("onecycle_over", str(e)[:80])
opt = torch.optim.SGD([p], lr=1.0)
warm = S.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.1)
seen = []
for epoch in range(3):
    for i in range(4):
        warm.step(epoch + i / 4)
        seen.append(round(opt.param_groups[0]["lr"], 5))
print("warm_restarts", seen, warm.T_cur, warm.T_i)
opt = torch.optim.SGD([p], lr=1.0)
plateau = S.ReduceLROnPlateau(
    opt,
    mode="max",
    factor=0.5,
    patience=1,
    threshold=0.01,
    threshold_mode="abs",
    cooldown=1,
    min_lr=0.2,
)
hist = []
for metric in [0.5, 0.6, 0.605, 0.6, 0.59, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]:
    plateau.step(metric)
    hist.append(plateau.get_last_lr()[0])
print("plateau", hist, plateau.num_bad_epochs, plateau.best)
print("plateau_sd", sorted(plateau.state_dict()))
opt = torch.optim.SGD([p], lr=1.0)
poly = S.PolynomialLR(opt, total_iters=4, power=2.0)
mult = S.MultiplicativeLR(opt, lr_lambda=lambda e: 0.9)
chain = S.ChainedScheduler([poly, mult])
got = []
for _ in range(6):
    opt.step()
    chain.step()
    got.append(round(chain.get_last_lr()[0], 5))
print("chained", got)
opt = torch.optim.SGD([p], lr=1.0)
cons = S.ConstantLR(opt, factor=0.25, total_iters=2)
lin = S.LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=3)
seq = S.SequentialLR(opt, [cons, lin], milestones=[2])
got = []
for _ in range(6):
    opt.step()
    seq.step()
    got.append(round(seq.get_last_lr()[0], 5))
print("sequential", got, sorted(seq.state_dict()))
opt = torch.optim.SGD([p], lr=1.0)
ms = S.MultiStepLR(opt, milestones=[2, 2, 4], gamma=0.5)
print(
    "multistep_dup",
    [(opt.step(), ms.step(), round(ms.get_last_lr()[0], 5))[2] for _ in range(5)],
    dict(ms.milestones),
)
opt = torch.optim.SGD([p], lr=1.0)
lam = S.LambdaLR(opt, lr_lambda=lambda e: 1 / (e + 1))
print("lambda_sd", sorted(lam.state_dict()), lam.state_dict()["lr_lambdas"])
