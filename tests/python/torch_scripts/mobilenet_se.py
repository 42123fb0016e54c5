"""MobileNetV3-style blocks written by hand (no torchvision): inverted residuals with depthwise
convolutions (groups=channels), Squeeze-and-Excitation with Hardsigmoid, Hardswish, channel
shuffle (ShuffleNet), make_divisible, StochasticDepth-like drop path in eval, label smoothing,
SGD with nesterov and a warmup + cosine LambdaLR, BatchNorm momentum and eps; then channels_last
inference, freezing BatchNorm, and counting FLOP-relevant shapes with forward hooks."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_divisible(v, divisor=8, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class SqueezeExcitation(nn.Module):
    def __init__(self, ch, squeeze):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(ch, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, ch, 1)
        self.act = nn.ReLU()
        self.scale_act = nn.Hardsigmoid()

    def forward(self, x):
        s = self.scale_act(self.fc2(self.act(self.fc1(self.avgpool(x)))))
        return x * s


def channel_shuffle(x, groups):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cexp, cout, k, stride, use_se, act):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        layers = []
        if cexp != cin:
            layers += [
                nn.Conv2d(cin, cexp, 1, bias=False),
                nn.BatchNorm2d(cexp, eps=0.001, momentum=0.01),
                act(),
            ]
        layers += [
            nn.Conv2d(cexp, cexp, k, stride, (k - 1) // 2, groups=cexp, bias=False),
            nn.BatchNorm2d(cexp, eps=0.001, momentum=0.01),
            act(),
        ]
        if use_se:
            layers.append(SqueezeExcitation(cexp, make_divisible(cexp // 4)))
        layers += [
            nn.Conv2d(cexp, cout, 1, bias=False),
            nn.BatchNorm2d(cout, eps=0.001, momentum=0.01),
        ]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        if self.use_res:
            out = out + x
        return out


class Net(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish()
        )
        self.blocks = nn.Sequential(
            InvertedResidual(16, 16, 16, 3, 1, True, nn.ReLU),
            InvertedResidual(16, 64, 24, 3, 2, False, nn.ReLU),
            InvertedResidual(24, 72, 24, 5, 1, True, nn.Hardswish),
        )
        self.head = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(24, 32),
            nn.Hardswish(),
            nn.Dropout(0.2),
            nn.Linear(32, num_classes),
        )

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = channel_shuffle(x, 4)
        return self.head(x)


def det_init(model):
    with torch.no_grad():
        for k, (name, p) in enumerate(model.named_parameters()):
            if "bn" in name or p.dim() == 1 and "weight" in name:
                continue
            fan_in = p[0].numel() if p.dim() > 1 else 1
            p.copy_(
                (
                    torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + k)
                    / math.sqrt(fan_in)
                ).view_as(p)
            )


def batch(step, b=8):
    i = torch.arange(b * 3 * 16 * 16, dtype=torch.float32).view(b, 3, 16, 16)
    x = torch.sin(i * 0.013 + step) + torch.cos(i * 0.007 * (step % 3 + 1))
    y = (torch.arange(b) + step) % 5
    return x, y


def main():
    print("divisible", [make_divisible(v) for v in (3, 10, 16, 22.5, 37, 100)])
    model = Net()
    det_init(model)
    nparams = sum(p.numel() for p in model.parameters())
    print("params", nparams)
    warmup, total = 3, 15
    opt = torch.optim.SGD(
        model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=4e-5
    )
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: (
            (s + 1) / warmup
            if s < warmup
            else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))
        ),
    )
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    model.train()
    model.head[4].p = 0.0  # dropout draws from the random stream, which differs between frameworks
    losses, lrs = [], []
    for step in range(total):
        x, y = batch(step)
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        lrs.append(sched.get_last_lr()[0])
    print(f"loss first {losses[0]:.5f} last {losses[-1]:.5f}")
    print(f"lrs {[round(v, 5) for v in lrs[:5]]}")
    bn = model.stem[1]
    print(
        f"bn_stem {[round(v, 5) for v in bn.running_mean[:3].tolist()]} "
        f"{bn.num_batches_tracked.item()}"
    )
    model.eval()
    x, _ = batch(100, b=2)
    with torch.no_grad():
        ref = model(x)
        cl = model.to(memory_format=torch.channels_last)
        out = cl(x.to(memory_format=torch.channels_last))
    print("eval_logits", [round(v, 4) for v in ref[0].tolist()])
    print(
        "channels_last_same",
        torch.allclose(ref, out, atol=1e-5),
        cl.stem[0].weight.is_contiguous(memory_format=torch.channels_last),
    )
    shapes = []
    hooks = [
        m.register_forward_hook(lambda m, i, o: shapes.append((type(m).__name__, tuple(o.shape))))
        for m in model.modules()
        if isinstance(m, nn.Conv2d)
    ]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    print("conv_shapes", shapes[:6])
    depthwise = [m.groups for m in model.modules() if isinstance(m, nn.Conv2d) and m.groups > 1]
    print("depthwise_groups", depthwise)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
            m.weight.requires_grad_(False)
            m.bias.requires_grad_(False)
    model.train()
    print(
        "frozen_bn",
        sum(1 for m in model.modules() if isinstance(m, nn.BatchNorm2d) and not m.training),
        sum(p.requires_grad for p in model.parameters()),
    )
    print("shuffle", channel_shuffle(torch.arange(8.0).view(1, 8, 1, 1), 2).flatten().tolist())
    print(
        "hardswish",
        [round(v, 5) for v in F.hardswish(torch.tensor([-4.0, -1.0, 0.5, 4.0])).tolist()],
        [round(v, 5) for v in F.hardsigmoid(torch.tensor([-4.0, 0.5, 4.0])).tolist()],
    )


if __name__ == "__main__":
    main()
