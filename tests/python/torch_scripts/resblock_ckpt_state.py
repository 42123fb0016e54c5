# ruff: noqa: E501
"""A small ResNet trained with activation checkpointing and saved/resumed as training scripts
do: BasicBlocks with BatchNorm run through torch.utils.checkpoint (use_reentrant=False and True)
and checkpoint_sequential, SGD with nesterov momentum and a StepLR, then a checkpoint dict
(model, optimizer, scheduler, epoch) written to a BytesIO, loaded with weights_only=True into
fresh objects whose next step matches the uninterrupted run; load_state_dict(strict=False)
reporting missing and unexpected keys, and a non-persistent buffer left out of the state_dict."""

import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


def det_init(model, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if name.endswith("bn1.weight") or name.endswith("bn2.weight"):
                p.fill_(1.0)
                continue
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.41 + 0.3 * i) * scale
                ).view_as(p)
            )


class Block(nn.Module):
    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.short = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.short = nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.short(x))


class Net(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.stem = nn.Conv2d(2, 4, 3, padding=1)
        self.blocks = nn.Sequential(Block(4, 4), Block(4, 8, 2))
        self.head = nn.Linear(8, 3)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.ones(2), persistent=False)

    def forward(self, x):
        x = self.stem(x)
        if self.mode == "seq":
            x = checkpoint_sequential(self.blocks, 2, x, use_reentrant=False)
        elif self.mode == "reentrant":
            x = checkpoint(self.blocks, x.requires_grad_(), use_reentrant=True)
        elif self.mode == "plain":
            x = self.blocks(x)
        else:
            for b in self.blocks:
                x = checkpoint(b, x, use_reentrant=False)
        self.steps += 1
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


x = torch.sin(torch.arange(4 * 2 * 6 * 6, dtype=torch.float32) * 0.13).reshape(4, 2, 6, 6)
y = torch.tensor([0, 2, 1, 2])


def make(mode):
    net = Net(mode)
    det_init(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    return net, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def step(net, opt, sched):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    return loss.item()


results = {}
for mode in ("plain", "block", "seq", "reentrant"):
    net, opt, sched = make(mode)
    losses = [step(net, opt, sched) for _ in range(3)]
    results[mode] = losses
    rm = net.blocks[0].bn1.running_mean
    print(
        f"{mode} losses {[round(v, 5) for v in losses]} steps {net.steps.item()} bn_batches {net.blocks[0].bn1.num_batches_tracked.item()} rm {round(rm.abs().sum().item(), 5)}"
    )
print(
    "ckpt_matches_plain", all(abs(a - b) < 1e-5 for a, b in zip(results["plain"], results["block"]))
)

net, opt, sched = make("block")
for _ in range(2):
    step(net, opt, sched)
buf = io.BytesIO()
torch.save(
    {"model": net.state_dict(), "optim": opt.state_dict(), "sched": sched.state_dict(), "epoch": 2},
    buf,
)
sd_keys = list(net.state_dict().keys())
print("state_keys", len(sd_keys), sd_keys[:3], "scratch" in sd_keys, sd_keys[-1])
print(
    "optim_state",
    sorted(opt.state_dict()["state"].keys())[:4],
    opt.state_dict()["param_groups"][0]["nesterov"],
)
cont = step(net, opt, sched)
buf.seek(0)
ck = torch.load(buf, weights_only=True)
net2, opt2, sched2 = make("block")
print("load_result", net2.load_state_dict(ck["model"]))
opt2.load_state_dict(ck["optim"])
sched2.load_state_dict(ck["sched"])
print("resumed_epoch", ck["epoch"], "lr", opt2.param_groups[0]["lr"], "steps", net2.steps.item())
print("resume_matches", round(step(net2, opt2, sched2), 5), round(cont, 5))
partial = {k: v for k, v in ck["model"].items() if not k.startswith("head")}
partial["extra.weight"] = torch.zeros(1)
res = Net("plain").load_state_dict(partial, strict=False)
print("missing", res.missing_keys, "unexpected", res.unexpected_keys)
try:
    Net("plain").load_state_dict(partial)
except RuntimeError as e:
    print("strict_error", str(e).splitlines()[0])
shape_bad = dict(ck["model"])
shape_bad["head.bias"] = torch.zeros(5)
try:
    Net("plain").load_state_dict(shape_bad)
except RuntimeError as e:
    print("shape_error", str(e).splitlines()[1].strip()[:90])
