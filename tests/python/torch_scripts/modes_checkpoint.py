# ruff: noqa: E501
"""Function modes and activation checkpointing as profiling and memory-saving code uses them: a
TorchFunctionMode that counts calls by name while a model trains, one that records the shapes
flowing through F.linear to estimate FLOPs, nested modes (innermost first) and a mode that
rewrites a call (relu -> gelu) for a what-if run; torch.utils.checkpoint.checkpoint with
use_reentrant=False and True (equal gradients to the plain model, the number of forward calls
recomputed, kwargs, non-tensor outputs), checkpoint_sequential over segments, and
torch.autograd.graph.saved_tensors_hooks counting what the checkpointed region saves."""

from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class CallCounter(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.counts[getattr(func, "__name__", str(func))] += 1
        return func(*args, **(kwargs or {}))


class LinearFlops(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.flops = 0
        self.shapes = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is F.linear:
            x, w = args[0], args[1]
            self.flops += 2 * x.numel() // x.shape[-1] * w.shape[0] * w.shape[1]
            self.shapes.append((tuple(x.shape), tuple(w.shape)))
        return func(*args, **(kwargs or {}))


class Tagger(TorchFunctionMode):
    def __init__(self, tag, log):
        super().__init__()
        self.tag, self.log = tag, log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "relu":
            self.log.append(self.tag)
        return func(*args, **(kwargs or {}))


class SwapRelu(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is F.relu or func is torch.relu:
            return F.gelu(args[0])
        return func(*args, **(kwargs or {}))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.calls = 0

    def forward(self, x, scale=1.0):
        self.calls += 1
        return x + scale * self.fc2(F.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self, d=6, n=3, mode="none"):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, 2)
        self.mode = mode

    def forward(self, x):
        for b in self.blocks:
            if self.mode == "none":
                x = b(x)
            else:
                x = (
                    checkpoint(b, x, use_reentrant=(self.mode == "reentrant"), scale=0.5)
                    if self.mode == "reentrant_kw"
                    else checkpoint(b, x, use_reentrant=(self.mode == "reentrant"))
                )
        return self.head(x)


def det_init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).view_as(p) * 0.3
            )


def grads(model):
    return torch.cat([p.grad.flatten() for p in model.parameters()])


def main():
    x = torch.linspace(-1, 1, 4 * 6).view(4, 6)
    y = torch.tensor([0, 1, 1, 0])
    model = Net()
    det_init(model)
    counter = CallCounter()
    with counter:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    print("counts", sorted(counter.counts.items())[:8])
    print(
        "count_linear",
        counter.counts["linear"],
        counter.counts["relu"],
        counter.counts["cross_entropy"],
    )
    flops = LinearFlops()
    with flops, torch.no_grad():
        model(x)
    print("flops", flops.flops, flops.shapes[:2])
    log = []
    with Tagger("outer", log):
        with Tagger("inner", log):
            F.relu(torch.ones(1))
    print("nested", log)
    with torch.no_grad():
        base = model(x)
        with SwapRelu():
            swapped = model(x)
    print("swap", round((swapped - base).abs().max().item(), 5), round(swapped.sum().item(), 5))

    ref = grads(model)
    for mode in ("nonreentrant", "reentrant"):
        m = Net(mode=mode)
        det_init(m)
        out = m(
            x.clone().requires_grad_(True)
        )  # reentrant checkpointing needs an input requiring grad
        calls_fwd = [b.calls for b in m.blocks]
        F.cross_entropy(out, y).backward()
        calls_bwd = [b.calls for b in m.blocks]
        print(
            "ckpt",
            mode,
            torch.allclose(grads(m), ref, atol=1e-6),
            calls_fwd,
            calls_bwd,
            round(out.sum().item(), 5),
        )
    m = Net(mode="reentrant")
    det_init(m)
    F.cross_entropy(m(x), y).backward()
    print(
        "reentrant_no_input_grad",
        [p.grad is None for p in m.blocks[0].parameters()],
        m.head.weight.grad is not None,
    )
    m = Net(mode="reentrant_kw")
    det_init(m)
    F.cross_entropy(m(x), y).backward()
    print("ckpt_kwargs", round(grads(m).norm().item(), 5))

    counted = []

    def pack(t):
        counted.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        xin = x.clone().requires_grad_(True)
        checkpoint(model.blocks[0], xin, use_reentrant=False).sum()
    n_ckpt = len(counted)
    counted.clear()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model.blocks[0](xin).sum()
    print("saved_counts", n_ckpt, len(counted), n_ckpt < len(counted))

    seq = nn.Sequential(*[nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(4)])
    det_init(seq)
    xin = x.clone().requires_grad_(True)
    seq(xin).pow(2).sum().backward()
    plain = xin.grad.clone()
    xin.grad = None
    checkpoint_sequential(seq, 2, xin, use_reentrant=False).pow(2).sum().backward()
    print(
        "ckpt_sequential",
        torch.allclose(xin.grad, plain, atol=1e-6),
        round(plain.abs().sum().item(), 5),
    )

    def two_outputs(a):
        return a.sin(), "tag", a.cos()

    a = torch.tensor([0.5, 1.0], requires_grad=True)
    s, tag, c = checkpoint(two_outputs, a, use_reentrant=False)
    (s + c).sum().backward()
    print("non_tensor_out", tag, [round(v, 5) for v in a.grad.tolist()])


if __name__ == "__main__":
    main()
