"""A small WaveNet on a synthetic waveform as audio-generation repos write it: mu-law
companding (sign, log1p, expm1) and 8-bit quantization, one-hot inputs through
F.one_hot(...).permute, causal dilated Conv1d stacks (left padding with F.pad), gated tanh x
sigmoid units with residual and skip connections, receptive-field arithmetic, cross entropy over
the 256-way quantized sample, Adam with ExponentialLR, and fast autoregressive generation with a
per-layer queue of past activations (collections.deque) checked against the full forward."""

import math
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F

Q = 64


def mu_law_encode(x, q=Q):
    mu = q - 1
    y = torch.sign(x) * torch.log1p(mu * x.abs()) / math.log1p(mu)
    return ((y + 1) / 2 * mu + 0.5).long().clamp(0, mu)


def mu_law_decode(idx, q=Q):
    mu = q - 1
    y = idx.float() / mu * 2 - 1
    return torch.sign(y) * torch.expm1(y.abs() * math.log1p(mu)) / mu


class CausalConv1d(nn.Conv1d):
    def __init__(self, cin, cout, k, dilation=1):
        super().__init__(cin, cout, k, dilation=dilation)
        self.left = (k - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class ResBlock(nn.Module):
    def __init__(self, ch, skip, dilation):
        super().__init__()
        self.dilation = dilation
        self.filt = CausalConv1d(ch, ch, 2, dilation)
        self.gate = CausalConv1d(ch, ch, 2, dilation)
        self.res = nn.Conv1d(ch, ch, 1)
        self.skip = nn.Conv1d(ch, skip, 1)

    def forward(self, x):
        z = torch.tanh(self.filt(x)) * torch.sigmoid(self.gate(x))
        return x + self.res(z), self.skip(z)

    def step(self, x_t, x_past):
        """One time step: x_t and x_past (dilation steps ago) are (B, C)."""
        both = torch.stack([x_past, x_t], -1)
        f = (both.unsqueeze(1) * self.filt.weight.unsqueeze(0)).sum((2, 3)) + self.filt.bias
        g = (both.unsqueeze(1) * self.gate.weight.unsqueeze(0)).sum((2, 3)) + self.gate.bias
        z = torch.tanh(f) * torch.sigmoid(g)
        return x_t + F.linear(z, self.res.weight.squeeze(-1), self.res.bias), F.linear(
            z, self.skip.weight.squeeze(-1), self.skip.bias
        )


class WaveNet(nn.Module):
    def __init__(self, ch=16, skip=24, dilations=(1, 2, 4, 8, 1, 2, 4, 8)):
        super().__init__()
        self.inp = CausalConv1d(Q, ch, 1)
        self.blocks = nn.ModuleList(ResBlock(ch, skip, d) for d in dilations)
        self.out1 = nn.Conv1d(skip, skip, 1)
        self.out2 = nn.Conv1d(skip, Q, 1)
        self.receptive_field = sum(dilations) + 1

    def forward(self, idx):
        x = self.inp(F.one_hot(idx, Q).float().permute(0, 2, 1))
        skips = 0
        for b in self.blocks:
            x, s = b(x)
            skips = skips + s
        return self.out2(F.relu(self.out1(F.relu(skips))))

    @torch.no_grad()
    def generate(self, prime, n):
        queues = [
            deque([torch.zeros(prime.shape[0], b.filt.in_channels)] * b.dilation, maxlen=b.dilation)
            for b in self.blocks
        ]
        out = []
        cur = prime[:, 0]
        for t in range(prime.shape[1] + n - 1):
            x = F.linear(F.one_hot(cur, Q).float(), self.inp.weight.squeeze(-1), self.inp.bias)
            skips = 0
            for b, q in zip(self.blocks, queues):
                past = q[0]
                q.append(x)
                x, s = b.step(x, past)
                skips = skips + s
            logits = F.linear(
                F.relu(F.linear(F.relu(skips), self.out1.weight.squeeze(-1), self.out1.bias)),
                self.out2.weight.squeeze(-1),
                self.out2.bias,
            )
            nxt = logits.argmax(-1)
            if t + 1 < prime.shape[1]:
                cur = prime[:, t + 1]
            else:
                cur = nxt
                out.append(nxt)
        return torch.stack(out, 1), logits


def main():
    t = torch.arange(400, dtype=torch.float32)
    wave = 0.6 * torch.sin(t * 0.19) + 0.3 * torch.sin(t * 0.051 + 1.0)
    q = mu_law_encode(wave)
    back = mu_law_decode(q)
    print(
        "mulaw",
        q[:10].tolist(),
        round((back - wave).abs().max().item(), 4),
        q.min().item(),
        q.max().item(),
    )
    print("mulaw_edges", mu_law_encode(torch.tensor([-1.0, -0.01, 0.0, 0.01, 1.0])).tolist())

    model = WaveNet()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.83 + i).view_as(p)
                * (
                    0.5
                    / math.sqrt(
                        max(p.shape[1] if p.dim() > 1 else 1, 1)
                        * (p.shape[2] if p.dim() > 2 else 1)
                    )
                )
            )
    print("receptive_field", model.receptive_field, sum(p.numel() for p in model.parameters()))
    segs = torch.stack([q[i : i + 64] for i in range(0, 320, 40)])
    x, y = segs[:, :-1], segs[:, 1:]
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.97)
    for step in range(40):
        logits = model(x)
        loss = F.cross_entropy(logits[:, :, model.receptive_field :], y[:, model.receptive_field :])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            print("step", step, round(loss.item(), 4), round(sched.get_last_lr()[0], 6))
    print("final_loss", round(loss.item(), 4))
    model.eval()
    prime = q[:40].unsqueeze(0)
    gen, last_logits = model.generate(prime, 12)
    full = model(torch.cat([prime, gen[:, :-1]], 1))
    print("generated", gen[0].tolist())
    print(
        "incremental_matches_full",
        torch.allclose(full[:, :, -1], last_logits, atol=1e-4),
        bool((full.argmax(1)[:, 39:] == gen).all()),
    )
    print("gen_wave", [round(v, 3) for v in mu_law_decode(gen[0, :5]).tolist()])


if __name__ == "__main__":
    main()
