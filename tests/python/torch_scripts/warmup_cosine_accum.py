# ruff: noqa: E501
"""A fine-tuning loop as in many repositories: AdamW with separate parameter groups (no weight
decay for biases and norms), linear warmup then cosine decay through LambdaLR, gradient
accumulation, clipping, eval under torch.no_grad with BatchNorm/Dropout switched to eval, and a
checkpoint of model, optimizer and scheduler written to an in-memory BytesIO, loaded into fresh
objects, with training resumed identically."""

import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(0.3)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.ln(self.drop(F.gelu(self.bn(self.fc1(x))))))


def det_init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i).view_as(p) * 0.3
            )


def make(n):
    x = torch.cos(torch.arange(n * 6, dtype=torch.float32) * 0.13).view(n, 6)
    y = (x[:, 0] * 3 + x[:, 1]).abs().long() % 3
    return x, y


def build():
    m = Net()
    det_init(m)
    decay, no_decay = [], []
    for name, p in m.named_parameters():
        (no_decay if p.ndim < 2 or "bn" in name or "ln" in name else decay).append(p)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=3e-3,
        betas=(0.9, 0.98),
        eps=1e-7,
    )
    warm, total = 3, 12

    def lr_lambda(step):
        if step < warm:
            return (step + 1) / warm
        prog = (step - warm) / max(1, total - warm)
        return 0.5 * (1.0 + math.cos(math.pi * prog))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    return m, opt, sched


X, Y = make(48)
Xv, Yv = make(20)
model, opt, sched = build()
print(
    "groups",
    [len(g["params"]) for g in opt.param_groups],
    [g["weight_decay"] for g in opt.param_groups],
)
print("initial_lr", [g["initial_lr"] for g in opt.param_groups], sched.get_last_lr())
ACC = 3


def train_steps(model, opt, sched, steps, log):
    model.train()
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        for k in range(ACC):
            sl = slice(((step * ACC + k) * 8) % 40, ((step * ACC + k) * 8) % 40 + 8)
            loss = (
                F.cross_entropy(
                    model[0](X[sl]) if isinstance(model, tuple) else model(X[sl]), Y[sl]
                )
                / ACC
            )
            # dropout uses the random stream: keep the figure independent of it by zero p below
            loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        log.append(
            (round(loss.item() * ACC, 5), round(gn.item(), 5), round(sched.get_last_lr()[0], 7))
        )


model.drop.p = 0.0
log = []
train_steps(model, opt, sched, 5, log)
print("log_first", log)


def evaluate(model):
    model.eval()
    with torch.no_grad():
        out = model(Xv)
        return F.cross_entropy(out, Yv).item(), (out.argmax(1) == Yv).float().mean().item()


print("eval_mid", [round(v, 5) for v in evaluate(model)])
print(
    "bn_stats",
    round(model.bn.running_mean.sum().item(), 5),
    round(model.bn.running_var.sum().item(), 5),
    model.bn.num_batches_tracked.item(),
)
print("training_flag", model.training, model.bn.training)

buf = io.BytesIO()
torch.save(
    {"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "step": 5},
    buf,
)
print("ckpt_bytes_positive", buf.tell() > 1000)
buf.seek(0)
ck = torch.load(buf)
print("ckpt_keys", sorted(ck), sorted(ck["sched"])[:4], ck["step"])
print("opt_state_keys", sorted(ck["opt"]["state"][0]), ck["opt"]["param_groups"][1]["params"])
m2, o2, s2 = build()
m2.drop.p = 0.0
print("load_result", m2.load_state_dict(ck["model"]))
o2.load_state_dict(ck["opt"])
s2.load_state_dict(ck["sched"])
print("resumed_lr", s2.get_last_lr() == sched.get_last_lr(), s2.last_epoch)
la, lb = [], []
train_steps(model, opt, sched, 4, la)
train_steps(m2, o2, s2, 4, lb)
print("resume_identical", la == lb)
print("log_after", la)
print("eval_end", [round(v, 5) for v in evaluate(m2)])
print(
    "step_count",
    o2.state[m2.fc1.weight]["step"].item(),
    type(o2.state[m2.fc1.weight]["step"]).__name__,
)
