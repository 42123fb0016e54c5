"""Optimizer wrappers people paste from GitHub: SAM (sharpness-aware minimization) as a
torch.optim.Optimizer subclass wrapping a base optimizer and sharing its param_groups, with
first_step/second_step and a closure; Lookahead keeping slow weights in its own state; the
torch._foreach_* ops they use; clip_grad_norm_ with foreach; state_dict round trips."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def step(self, closure=None):
        assert closure is not None, "SAM requires closure"
        closure = torch.enable_grad()(closure)
        self.first_step(zero_grad=True)
        closure()
        self.second_step()

    def _grad_norm(self):
        return torch.norm(
            torch.stack(
                [
                    ((torch.abs(p) if g["adaptive"] else 1.0) * p.grad).norm(p=2)
                    for g in self.param_groups
                    for p in g["params"]
                    if p.grad is not None
                ]
            ),
            p=2,
        )


class Lookahead:
    def __init__(self, optimizer, k=3, alpha=0.5):
        self.optimizer, self.k, self.alpha = optimizer, k, alpha
        self.param_groups = optimizer.param_groups
        self.slow = [[p.detach().clone() for p in g["params"]] for g in self.param_groups]
        self.counter = 0

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    @torch.no_grad()
    def step(self):
        self.optimizer.step()
        self.counter += 1
        if self.counter % self.k == 0:
            for group, slow in zip(self.param_groups, self.slow):
                fast = group["params"]
                torch._foreach_lerp_(slow, fast, self.alpha)
                torch._foreach_copy_(fast, slow)


def make_model():
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.BatchNorm1d(8), nn.Linear(8, 3))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.5).sin() * 0.7)
    return m


x = torch.linspace(-2, 2, 48).reshape(12, 4)
y = (x.sum(1) * 3).long().remainder(3)

model = make_model()
sam = SAM(model.parameters(), torch.optim.SGD, rho=0.1, adaptive=True, lr=0.1, momentum=0.9)
print("sam_groups", sam.param_groups is sam.base_optimizer.param_groups, sorted(sam.defaults))
for step in range(5):

    def closure():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    loss = F.cross_entropy(model(x), y)
    loss.backward()
    sam.step(closure)
    sam.zero_grad()
    print(f"sam {step} {loss.item():.6f}")
print(
    "sam_state",
    sorted(sam.state[model[0].weight]),
    sorted(sam.base_optimizer.state[model[0].weight]),
)
print(
    "bn_stats",
    [round(v, 5) for v in model[2].running_mean[:3].tolist()],
    model[2].num_batches_tracked.item(),
)

model = make_model()
inner = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01, foreach=True)
opt = Lookahead(inner, k=3, alpha=0.5)
for step in range(7):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5, foreach=True)
    opt.step()
    print(f"la {step} {loss.item():.6f} {norm.item():.5f}")
print(
    "slow_eq_fast",
    all(torch.equal(s, f) for s, f in zip(opt.slow[0], opt.param_groups[0]["params"])),
)

params = [torch.ones(2, 2), torch.full((3,), 2.0)]
grads = [torch.tensor([[1.0, -2.0], [3.0, 0.5]]), torch.tensor([0.1, -0.2, 0.3])]
norms = torch._foreach_norm(grads)
print("foreach_norm", [round(n.item(), 5) for n in norms])
torch._foreach_mul_(grads, 0.5)
torch._foreach_add_(params, grads, alpha=-0.1)
print("foreach_add", [p.flatten().tolist() for p in params])
sq = torch._foreach_sqrt(torch._foreach_abs(grads))
print("foreach_sqrt", [[round(v, 5) for v in s.flatten().tolist()] for s in sq])
torch._foreach_addcdiv_(params, grads, torch._foreach_add(sq, 1e-3), value=-0.2)
print("foreach_addcdiv", [[round(v, 5) for v in p.flatten().tolist()] for p in params])
maxes = torch._foreach_maximum(grads, 0.0)
print("foreach_max", [m.flatten().tolist() for m in maxes])
sd = inner.state_dict()
fresh = torch.optim.AdamW(make_model().parameters(), lr=1.0)
fresh.load_state_dict(sd)
print(
    "reloaded",
    fresh.param_groups[0]["lr"],
    fresh.param_groups[0]["foreach"],
    int(fresh.state[fresh.param_groups[0]["params"][0]]["step"].item()),
)
