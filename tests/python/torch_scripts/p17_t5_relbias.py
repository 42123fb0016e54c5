"""A tiny T5: RMS layer norm (T5LayerNorm written by hand and nn.RMSNorm compared), bucketed
relative position bias (log-spaced buckets with torch.where/log/full_like, bidirectional for
the encoder, causal for the decoder), gated-GELU feed-forward, tied input/output embeddings
scaled by d**-0.5, encoder-decoder cross attention, labels shifted right with -100 ignored by
cross_entropy, AdamW, and greedy decoding with a per-layer key/value cache checked
against the uncached logits."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, HEADS, PAD, EOS = 20, 16, 2, 0, 1


def relative_bucket(rel, bidirectional, buckets=8, max_distance=16):
    ret = torch.zeros_like(rel)
    if bidirectional:
        buckets //= 2
        ret += (rel > 0).to(torch.long) * buckets
        rel = rel.abs()
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    exact = buckets // 2
    is_small = rel < exact
    large = exact + (
        torch.log(rel.float() / exact) / math.log(max_distance / exact) * (buckets - exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, buckets - 1))
    return ret + torch.where(is_small, rel, large)


class T5Norm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


class Attention(nn.Module):
    def __init__(self, has_bias=False, bidirectional=True):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.bidirectional = bidirectional
        self.rel = nn.Embedding(8, HEADS) if has_bias else None

    def bias(self, qlen, klen, offset=0):
        ctx = torch.arange(qlen)[:, None] + offset
        mem = torch.arange(klen)[None, :]
        b = relative_bucket(mem - ctx, self.bidirectional)
        return self.rel(b).permute(2, 0, 1).unsqueeze(0)

    def forward(self, x, kv=None, bias=None, cache=None, mask=None):
        b, n, _ = x.shape
        split = lambda t: t.view(b, -1, HEADS, D // HEADS).transpose(1, 2)  # noqa: E731
        q = split(self.q(x))
        src = x if kv is None else kv
        k, v = split(self.k(src)), split(self.v(src))
        if cache is not None:
            if "k" in cache and kv is None:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        scores = q @ k.transpose(-1, -2)  # T5 does not scale by sqrt(d)
        if bias is not None:
            scores = scores + bias
        if mask is not None:
            scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
        out = F.softmax(scores.float(), -1).type_as(scores) @ v
        return self.o(out.transpose(1, 2).reshape(b, n, D))


class FF(nn.Module):
    def __init__(self):
        super().__init__()
        self.wi0, self.wi1, self.wo = (
            nn.Linear(D, 32, bias=False),
            nn.Linear(D, 32, bias=False),
            nn.Linear(32, D, bias=False),
        )

    def forward(self, x):
        return self.wo(F.gelu(self.wi0(x), approximate="tanh") * self.wi1(x))


class T5(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(V, D)
        self.enc_attn = nn.ModuleList([Attention(i == 0) for i in range(2)])
        self.enc_ff = nn.ModuleList([FF() for _ in range(2)])
        self.enc_norms = nn.ModuleList([T5Norm(D) for _ in range(5)])
        self.dec_self = nn.ModuleList([Attention(i == 0, bidirectional=False) for i in range(2)])
        self.dec_cross = nn.ModuleList([Attention() for _ in range(2)])
        self.dec_ff = nn.ModuleList([FF() for _ in range(2)])
        self.dec_norms = nn.ModuleList([T5Norm(D) for _ in range(7)])

    def encode(self, ids):
        x, pad = self.shared(ids), (ids == PAD)[:, None, None, :]
        bias = self.enc_attn[0].bias(ids.shape[1], ids.shape[1])
        for i in range(2):
            x = x + self.enc_attn[i](self.enc_norms[2 * i](x), bias=bias, mask=pad)
            x = x + self.enc_ff[i](self.enc_norms[2 * i + 1](x))
        return self.enc_norms[4](x), pad

    def decode(self, ids, memory, pad, caches=None, offset=0):
        x, n = self.shared(ids), ids.shape[1]
        klen = offset + n
        bias = self.dec_self[0].bias(n, klen, offset)
        causal = torch.ones(n, klen, dtype=torch.bool).triu(1 + offset)
        for i in range(2):
            c = None if caches is None else caches[i]
            x = x + self.dec_self[i](self.dec_norms[3 * i](x), bias=bias, mask=causal, cache=c)
            x = x + self.dec_cross[i](self.dec_norms[3 * i + 1](x), kv=memory, mask=pad)
            x = x + self.dec_ff[i](self.dec_norms[3 * i + 2](x))
        return F.linear(self.dec_norms[6](x) * D**-0.5, self.shared.weight)


def shift_right(labels):
    dec = torch.full_like(labels, PAD)
    dec[:, 1:] = labels[:, :-1]
    return dec.masked_fill(dec == -100, PAD)


rel = torch.arange(-12, 13)[None, :]
print("buckets_bi", relative_bucket(rel, True).tolist()[0])
print("buckets_causal", relative_bucket(rel, False).tolist()[0])
xin = torch.linspace(-2, 2, 32).reshape(2, D)
print("rmsnorm_same", torch.allclose(T5Norm(D, 1e-6)(xin), nn.RMSNorm(D, eps=1e-6)(xin), atol=1e-6))

src = torch.tensor([[5, 6, 7, 8, 9, EOS], [10, 11, 12, EOS, PAD, PAD], [3, 4, 5, 6, EOS, PAD]])
tgt = torch.where(
    src == PAD, torch.full_like(src, -100), torch.where(src == EOS, src, (src + 2) % V)
)
tgt = torch.where((tgt >= 0) & (tgt < 2) & (src != EOS), tgt + 2, tgt)
model = T5()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i * 0.37 + 1).sin() * 0.2
            + (1.0 if p.ndim == 1 else 0.0)
        )
print("params", sum(p.numel() for p in model.parameters()), len(list(model.parameters())))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
for step in range(25):
    memory, pad = model.encode(src)
    logits = model.decode(shift_right(tgt), memory, pad)
    loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 6 == 0 or step == 24:
        print(f"step {step} loss {loss.item():.5f}")
print("adamw_state", sorted(opt.state[model.shared.weight]))

model.eval()
with torch.no_grad():
    memory, pad = model.encode(src)
    ids = torch.full((3, 1), PAD)
    caches = [{}, {}]
    for t in range(6):
        step_logits = model.decode(ids[:, -1:], memory, pad, caches=caches, offset=t)
        ids = torch.cat([ids, step_logits[:, -1].argmax(-1, keepdim=True)], 1)
    full = model.decode(ids[:, :-1], memory, pad)
print("greedy", ids[:, 1:].tolist())
print(
    "cache_matches",
    torch.allclose(full[:, -1], step_logits[:, -1], atol=1e-4),
    tuple(caches[0]["k"].shape),
)
print("target", tgt.clamp(min=0).tolist())
