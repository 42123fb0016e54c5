# ruff: noqa: E501
"""Optimizers written by users: Lion as a torch.optim.Optimizer subclass (defaults, per-group
options, lazily created state, closure), SAM's two-step update wrapping a base optimizer,
Lookahead keeping slow weights in its own state, step hooks, state_dict round trips of the
custom classes, and gradient clipping by value and norm in between."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        if lr <= 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                p.mul_(1 - group["lr"] * group["weight_decay"])
                b1, b2 = group["betas"]
                update = state["exp_avg"].mul(b1).add_(p.grad, alpha=1 - b1).sign_()
                p.add_(update, alpha=-group["lr"])
                state["exp_avg"].mul_(b2).add_(p.grad, alpha=1 - b2)
        return loss


class SAM(Optimizer):
    def __init__(self, params, base_cls, rho=0.05, **kw):
        super().__init__(params, dict(rho=rho, **kw))
        self.base = base_cls(self.param_groups, **kw)
        self.param_groups = self.base.param_groups

    @torch.no_grad()
    def first_step(self):
        norm = torch.norm(
            torch.stack(
                [
                    p.grad.norm(2)
                    for g in self.param_groups
                    for p in g["params"]
                    if p.grad is not None
                ]
            ),
            2,
        )
        for g in self.param_groups:
            scale = g["rho"] / (norm + 1e-12)
            for p in g["params"]:
                if p.grad is None:
                    continue
                e = p.grad * scale
                p.add_(e)
                self.state[p]["e_w"] = e

    @torch.no_grad()
    def second_step(self):
        for g in self.param_groups:
            for p in g["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base.step()

    def step(self, closure):
        closure = torch.enable_grad()(closure)
        closure()
        self.first_step()
        self.zero_grad()
        closure()
        self.second_step()


class Lookahead:
    def __init__(self, base, k=3, alpha=0.5):
        self.base, self.k, self.alpha, self.steps = base, k, alpha, 0
        self.slow = [[p.detach().clone() for p in g["params"]] for g in base.param_groups]

    @property
    def param_groups(self):
        return self.base.param_groups

    def zero_grad(self, set_to_none=True):
        self.base.zero_grad(set_to_none)

    @torch.no_grad()
    def step(self):
        self.base.step()
        self.steps += 1
        if self.steps % self.k == 0:
            for group, slows in zip(self.base.param_groups, self.slow):
                for p, s in zip(group["params"], slows):
                    s.add_(p - s, alpha=self.alpha)
                    p.copy_(s)


def make_model():
    m = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i).view_as(p) * 0.5
            )
    return m


X = torch.cos(torch.arange(60, dtype=torch.float32).view(20, 3) * 0.37)
Y = (X[:, :1] * 2 - X[:, 1:2] + 0.5 * X[:, 2:]).tanh()


def main():
    m = make_model()
    opt = Lion(
        [{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 3e-3}],
        lr=1e-2,
        weight_decay=0.1,
    )
    print(f"lion_defaults {opt.defaults} groups {[g['lr'] for g in opt.param_groups]}")
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    for step in range(15):

        def closure():
            opt.zero_grad()
            loss = F.mse_loss(m(X), Y)
            loss.backward()
            return loss

        loss = opt.step(closure)
        if step == 0:
            h1.remove()
    h2.remove()
    print(f"lion_loss {loss.item():.5f} hooks {calls[:4]} {len(calls)}")
    sd = opt.state_dict()
    print(
        f"lion_state {sorted(sd['state'])} {sorted(sd['state'][0])} group_keys {sorted(sd['param_groups'][1])}"
    )
    m2 = make_model()
    opt2 = Lion(m2.parameters(), lr=1.0)
    opt2.add_param_group({"params": []})
    try:
        opt2.load_state_dict(sd)
    except ValueError as e:
        print(f"load_mismatch {str(e)[:60]}")
    opt3 = Lion([{"params": m2[0].parameters()}, {"params": m2[2].parameters()}], lr=1.0)
    opt3.load_state_dict(sd)
    print(
        f"lion_loaded {[g['lr'] for g in opt3.param_groups]} {torch.equal(opt3.state[m2[0].weight]['exp_avg'], opt.state[m[0].weight]['exp_avg'])}"
    )
    try:
        Lion(m.parameters(), lr=-1)
    except ValueError as e:
        print(f"lion_bad_lr {e}")

    m = make_model()
    sam = SAM(m.parameters(), torch.optim.SGD, rho=0.1, lr=0.1, momentum=0.9)
    for _ in range(10):

        def closure():
            loss = F.mse_loss(m(X), Y)
            loss.backward()
            return loss

        sam.zero_grad()
        sam.step(closure)
    print(
        f"sam_loss {F.mse_loss(m(X), Y).item():.5f} base_state {sorted(sam.base.state[m[0].weight])} groups_shared {sam.param_groups is sam.base.param_groups}"
    )

    m = make_model()
    la = Lookahead(torch.optim.Adam(m.parameters(), lr=0.05), k=3, alpha=0.5)
    losses = []
    for _ in range(9):
        la.zero_grad()
        loss = F.mse_loss(m(X), Y)
        loss.backward()
        torch.nn.utils.clip_grad_value_(m.parameters(), 0.5)
        norm = torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, norm_type=2.0)
        la.step()
        losses.append(round(loss.item(), 5))
    print(f"lookahead {losses} last_norm {norm.item():.5f}")
    print(f"slow_eq_fast {torch.equal(la.slow[0][0], m[0].weight)}")
    print(
        f"opt_repr {repr(torch.optim.SGD(m.parameters(), lr=0.1)).splitlines()[0]} {len(repr(Lion(m.parameters())).splitlines())}"
    )


if __name__ == "__main__":
    main()
