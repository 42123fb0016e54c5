"""A Mamba-style selective state-space block from the minimal reference implementations:
in-projection split with chunk, a depthwise causal Conv1d (groups=channels, padding then
slicing), softplus step sizes, A = -exp(A_log) built from repeat, a selective scan written
with einsum and a Python loop over time, the same scan as a parallel cumsum in log space,
RMSNorm, and a small language-model training loop with weight tying."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

D, N, EXPAND, KCONV, VOCAB = 16, 4, 2, 4, 20


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MambaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        di = EXPAND * D
        self.dt_rank = math.ceil(D / 16)
        self.in_proj = nn.Linear(D, 2 * di, bias=False)
        self.conv1d = nn.Conv1d(di, di, KCONV, groups=di, padding=KCONV - 1, bias=True)
        self.x_proj = nn.Linear(di, self.dt_rank + 2 * N, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, di, bias=True)
        A = torch.arange(1, N + 1, dtype=torch.float32).repeat(di, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(di))
        self.out_proj = nn.Linear(di, D, bias=False)

    def ssm(self, x, parallel):
        A = -torch.exp(self.A_log.float())
        dbc = self.x_proj(x)
        delta, B, C = dbc.split([self.dt_rank, N, N], dim=-1)
        delta = F.softplus(self.dt_proj(delta))
        dA = torch.exp(torch.einsum("bld,dn->bldn", delta, A))
        dBu = torch.einsum("bld,bln,bld->bldn", delta, B, x)
        if parallel:
            log_dA = torch.einsum("bld,dn->bldn", delta, A)
            cum = torch.cumsum(log_dA, dim=1)
            # h_t = sum_s exp(cum_t - cum_s) dBu_s
            w = torch.exp(cum[:, :, None] - cum[:, None, :])
            mask = torch.tril(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool))
            w = w.masked_fill(~mask[None, :, :, None, None], 0.0)
            h = torch.einsum("btsdn,bsdn->btdn", w, dBu)
            y = torch.einsum("btdn,btn->btd", h, C)
        else:
            h = torch.zeros(x.shape[0], x.shape[2], N)
            ys = []
            for t in range(x.shape[1]):
                h = dA[:, t] * h + dBu[:, t]
                ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
            y = torch.stack(ys, dim=1)
        return y + x * self.D

    def forward(self, x, parallel=False):
        L = x.shape[1]
        xr, res = self.in_proj(x).chunk(2, dim=-1)
        xr = self.conv1d(xr.transpose(1, 2))[:, :, :L].transpose(1, 2)
        xr = F.silu(xr)
        y = self.ssm(xr, parallel) * F.silu(res)
        return self.out_proj(y)


class MambaLM(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList([MambaBlock() for _ in range(layers)])
        self.norms = nn.ModuleList([RMSNorm(D) for _ in range(layers)])
        self.norm_f = RMSNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids, parallel=False):
        x = self.emb(ids)
        for norm, layer in zip(self.norms, self.layers):
            x = x + layer(norm(x), parallel)
        return self.head(self.norm_f(x))


model = MambaLM()
with torch.no_grad():
    for k, (name, p) in enumerate(model.named_parameters()):
        if name.endswith("A_log") or name.endswith(".D") or "norm" in name:
            continue
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + k).view_as(p) * 0.3)
print("params", sum(p.numel() for p in model.parameters()), model.head.weight is model.emb.weight)
ids = (torch.arange(3 * 13).view(3, 13) * 7 + 3) % VOCAB
out_seq = model(ids[:, :-1])
out_par = model(ids[:, :-1], parallel=True)
print(
    "scan_agree",
    tuple(out_seq.shape),
    torch.allclose(out_seq, out_par, atol=1e-4),
    round(out_seq.abs().mean().item(), 4),
)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
losses = []
for step in range(20):
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
print("train", round(losses[0], 4), round(losses[-1], 4), losses[-1] < losses[0] * 0.8)
print("a_log_grad", model.layers[0].A_log.grad is not None, tuple(model.layers[0].A_log.grad.shape))
with torch.no_grad():
    seq = ids[:1, :3]
    for _ in range(6):
        nxt = model(seq)[:, -1].argmax(-1, keepdim=True)
        seq = torch.cat([seq, nxt], 1)
print("generate", seq.tolist())
