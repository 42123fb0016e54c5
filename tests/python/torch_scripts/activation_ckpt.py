# ruff: noqa: E501
"""Activation checkpointing as memory-bound training scripts use it: torch.utils.checkpoint on
residual blocks (non-reentrant, with keyword arguments and a non-tensor output), the reentrant
form, checkpoint_sequential over an nn.Sequential, dropout recomputed under the saved RNG
state, and BatchNorm's running statistics (updated again by the recomputation, as in torch)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


def det_init(module, phase=0.0):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            if "bn" in name or p.dim() == 1:
                p.copy_(
                    1.0 + 0.1 * torch.sin(k + i)
                    if name.endswith("weight")
                    else 0.05 * torch.cos(k + i)
                )
            else:
                p.copy_((torch.sin(k * 0.713 + i + phase) * (1.5 / p[0].numel()) ** 0.5).view_as(p))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x, scale=1.0):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + scale * self.bn2(self.conv2(h)))


class Net(nn.Module):
    def __init__(self, use_ckpt, reentrant=False):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.ModuleList([Block(8) for _ in range(3)])
        self.head = nn.Linear(8, 5)
        self.use_ckpt, self.reentrant = use_ckpt, reentrant

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            if self.use_ckpt and self.training:
                x = (
                    checkpoint(b, x, use_reentrant=self.reentrant, scale=0.5)
                    if not self.reentrant
                    else checkpoint(b, x, 0.5, use_reentrant=True)
                )
            else:
                x = b(x, scale=0.5)
        return self.head(x.mean((2, 3)))


def batch(i):
    k = torch.arange(4 * 3 * 8 * 8, dtype=torch.float32).view(4, 3, 8, 8)
    return torch.sin(k * 0.05 + i), torch.tensor([i % 5, (i + 1) % 5, (i + 2) % 5, (i + 3) % 5])


def train(net, steps=4):
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for i in range(steps):
        x, y = batch(i)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
    return losses


def main():
    nets = {}
    for name, ck, re in [("plain", False, False), ("ckpt", True, False), ("reentrant", True, True)]:
        torch.manual_seed(0)
        net = Net(ck, re)
        det_init(net)
        nets[name] = net
        print(f"{name}_losses {train(net)}")
    a, b, c = (nets[k].head.weight for k in ("plain", "ckpt", "reentrant"))
    print(f"weights_agree {torch.allclose(a, b, atol=1e-5)} {torch.allclose(a, c, atol=1e-5)}")
    bn = [nets[k].blocks[0].bn1 for k in ("plain", "ckpt", "reentrant")]
    print(f"bn_batches {[m.num_batches_tracked.item() for m in bn]}")
    print(f"bn_mean_plain {bn[0].running_mean[:3].tolist()}")
    print(f"bn_mean_ckpt {bn[1].running_mean[:3].tolist()}")

    # Dropout inside a checkpointed segment: the recomputation replays the same mask.
    torch.manual_seed(1)
    drop = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
    det_init(drop)
    x = torch.cos(torch.arange(18, dtype=torch.float32)).view(3, 6).requires_grad_()
    state = torch.get_rng_state()
    out = checkpoint(drop, x, use_reentrant=False)
    out.sum().backward()
    g_ckpt = x.grad.clone()
    x.grad = None
    torch.set_rng_state(state)
    drop(x).sum().backward()
    print(f"dropout_replay {torch.allclose(g_ckpt, x.grad)}")
    print(f"rng_dropout_out {out.detach().sum().item():.4f}")

    seq = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(6)])
    det_init(seq, 0.3)
    inp = torch.sin(torch.arange(16, dtype=torch.float32)).view(2, 8).requires_grad_()
    y1 = checkpoint_sequential(seq, 3, inp, use_reentrant=False)
    y1.pow(2).sum().backward()
    g1 = [p.grad.clone() for p in seq.parameters()]
    seq.zero_grad()
    y2 = seq(inp)
    y2.pow(2).sum().backward()
    print(f"seq_out {y1.detach().sum().item():.5f} same {torch.equal(y1, y2)}")
    print(f"seq_grads_agree {all(torch.allclose(p, q.grad) for p, q in zip(g1, seq.parameters()))}")
    print(f"seq_grad_fn {type(y1.grad_fn).__name__}")

    def two_outputs(t):
        return t.sin(), t.shape[0]

    t = torch.linspace(0, 1, 5, requires_grad=True)
    s, n = checkpoint(two_outputs, t, use_reentrant=False)
    (s * n).sum().backward()
    print(f"nontensor_out {n} grad {[round(v, 5) for v in t.grad.tolist()]}")
    with torch.no_grad():
        z = checkpoint(two_outputs, t, use_reentrant=False)[0]
    print(f"no_grad_ckpt {z.requires_grad}")


if __name__ == "__main__":
    main()
