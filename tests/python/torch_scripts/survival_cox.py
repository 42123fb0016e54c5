"""Survival analysis and ranking losses from biostatistics notebooks: the Cox partial
likelihood with torch.logcumsumexp over risk sets sorted by argsort(descending=True), Breslow
ties handled with unique_consecutive counts, a concordance index computed by broadcasting,
cummax/cummin running extrema, flip, a discrete-time hazard model with log-sigmoid sums, and
Kaplan-Meier curves with cumprod; trained with LBFGS and a strong-Wolfe line search."""

import torch
import torch.nn as nn
import torch.nn.functional as F

n = 40
idx = torch.arange(n, dtype=torch.float32)
x = torch.stack([torch.sin(idx * 0.7), torch.cos(idx * 0.3), (idx % 5) / 5.0 - 0.4], 1)
true_risk = x @ torch.tensor([1.5, -1.0, 0.5])
time = torch.round(10.0 * torch.exp(-true_risk) * (1.0 + 0.3 * torch.sin(idx * 2.1)) * 4) / 4
event = ((idx * 7) % 10 < 7).float()


def cox_ph_loss(log_h, durations, events):
    order = torch.argsort(durations, descending=True, stable=True)
    log_h, events = log_h[order], events[order]
    log_cumsum_h = torch.logcumsumexp(log_h, dim=0)
    return -((log_h - log_cumsum_h) * events).sum() / events.sum().clamp(min=1)


def c_index(risk, durations, events):
    comparable = (durations[:, None] < durations[None, :]) & (events[:, None] > 0)
    concordant = (risk[:, None] > risk[None, :]).float() + 0.5 * (
        risk[:, None] == risk[None, :]
    ).float()
    return (concordant * comparable).sum() / comparable.sum()


print("time_stats", round(time.min().item(), 2), round(time.max().item(), 2), int(event.sum()))
u, counts = torch.unique_consecutive(torch.sort(time).values, return_counts=True)
print("ties", u.numel(), int(counts.max()), int(counts.sum()))

model = nn.Linear(3, 1, bias=False)
with torch.no_grad():
    model.weight.fill_(0.0)
opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = cox_ph_loss(model(x).squeeze(-1), time, event)
    loss.backward()
    return loss


l0 = closure().item()
for _ in range(3):
    opt.step(closure)
l1 = closure().item()
w = model.weight.detach().squeeze()
print("cox", round(l0, 4), round(l1, 4), [round(v, 2) for v in w.tolist()])
print("cindex", round(c_index(model(x).detach().squeeze(-1), time, event).item(), 4))

# Kaplan-Meier on the sorted times
st, so = torch.sort(time)
ev = event[so]
at_risk = torch.arange(n, 0, -1, dtype=torch.float32)
surv = torch.cumprod(1.0 - ev / at_risk, 0)
print(
    "km",
    round(surv[n // 2].item(), 4),
    round(surv[-1].item(), 4),
    bool((surv[1:] <= surv[:-1]).all()),
)

vals = torch.sin(idx * 1.3)
cmx, cmx_i = torch.cummax(vals, 0)
cmn, cmn_i = torch.cummin(vals, 0)
print("cummax", round(cmx[-1].item(), 4), cmx_i[-5:].tolist(), cmn_i[:6].tolist())
print(
    "flip_cumsum",
    [round(v, 3) for v in torch.flip(torch.cumsum(torch.flip(vals, [0]), 0), [0])[:3].tolist()],
)
print(
    "logcumsumexp_big",
    [round(v, 3) for v in torch.logcumsumexp(torch.tensor([1000.0, 1000.0, -1000.0]), 0).tolist()],
)

# discrete-time hazard: bins, logsigmoid likelihood
bins = torch.bucketize(time, torch.tensor([2.0, 5.0, 10.0, 20.0]))
net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 5))
with torch.no_grad():
    for k, p in enumerate(net.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.5 + k).view_as(p) * 0.5)
adam = torch.optim.Adam(net.parameters(), lr=0.05)
for step in range(30):
    logits = net(x)
    surv_part = (F.logsigmoid(-logits) * (torch.arange(5)[None] < bins[:, None]).float()).sum(1)
    ev_part = event * F.logsigmoid(logits.gather(1, bins[:, None]).squeeze(1))
    cens_part = (1 - event) * F.logsigmoid(-logits.gather(1, bins[:, None]).squeeze(1))
    nll = -(surv_part + ev_part + cens_part).mean()
    adam.zero_grad()
    nll.backward()
    adam.step()
    if step == 0:
        first = nll.item()
print("hazard", bins.bincount(minlength=5).tolist(), round(first, 4), round(nll.item(), 4))
haz = torch.sigmoid(net(x[:2]))
print("surv_curve", [round(v, 4) for v in torch.cumprod(1 - haz, 1)[0].tolist()])
