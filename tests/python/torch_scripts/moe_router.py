"""A sparse mixture-of-experts layer as Switch/Mixtral-style code writes it: a linear router,
top-k gating with softmax over the chosen logits, tokens dispatched to experts by boolean masks
and torch.where, outputs combined with index_add_ and scatter_add_, capacity limits through
cumsum of one_hot assignments, the load-balancing auxiliary loss (bincount, one_hot means),
router z-loss, and a few Adam steps of a tiny MoE transformer block on a copy task."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.1):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if name.endswith("bias"):
                p.copy_(torch.linspace(-0.01, 0.01, p.numel()).view_as(p))
            elif p.dim() == 1:
                p.fill_(1.0)
            else:
                n = p.numel()
                p.copy_(
                    (torch.sin(torch.arange(n, dtype=torch.float32) * 0.731 + i) * scale).view_as(p)
                )


class Expert(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.w1 = nn.Linear(d, h)
        self.w2 = nn.Linear(h, d)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class MoE(nn.Module):
    def __init__(self, d, h, n_experts=4, k=2, capacity_factor=1.25):
        super().__init__()
        self.router = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(Expert(d, h) for _ in range(n_experts))
        self.k, self.n, self.cf = k, n_experts, capacity_factor

    def forward(self, x):
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        logits = self.router(flat)
        probs = logits.softmax(dim=-1)
        topv, topi = torch.topk(logits, self.k, dim=-1)
        gates = F.softmax(topv, dim=-1)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            hit = topi == e
            rows = hit.any(dim=-1).nonzero(as_tuple=True)[0]
            if rows.numel() == 0:
                continue
            w = (gates * hit).sum(dim=-1)[rows].unsqueeze(-1)
            out.index_add_(0, rows, expert(flat[rows]) * w)
        # auxiliary losses
        counts = torch.bincount(topi[:, 0], minlength=self.n).float()
        frac = F.one_hot(topi[:, 0], self.n).float().mean(0)
        aux = self.n * (frac * probs.mean(0)).sum()
        z = torch.logsumexp(logits, dim=-1).pow(2).mean()
        self.stats = (counts, aux, z)
        return out.view(b, t, d)


def capacity_dispatch(topi, n, capacity):
    """Position of each token in its expert's buffer; tokens beyond capacity are dropped."""
    onehot = F.one_hot(topi, n)
    pos = torch.cumsum(onehot, dim=0) * onehot - 1
    pos = pos.max(dim=-1).values
    keep = pos < capacity
    return pos, keep


class Block(nn.Module):
    def __init__(self, vocab, d, h):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.ln = nn.LayerNorm(d)
        self.moe = MoE(d, h)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        x = self.emb(idx)
        x = x + self.moe(self.ln(x))
        return self.head(x)


def main():
    torch.set_printoptions(precision=4)
    moe = MoE(6, 12)
    det_init(moe)
    x = torch.cos(torch.arange(2 * 5 * 6, dtype=torch.float32) * 0.37).view(2, 5, 6)
    y = moe(x)
    counts, aux, z = moe.stats
    print("moe_out", tuple(y.shape), round(y.sum().item(), 5), round(y.abs().max().item(), 5))
    print("counts", counts.tolist())
    print("aux", round(aux.item(), 5), "z", round(z.item(), 5))
    y.pow(2).sum().backward()
    print("router_grad", round(moe.router.weight.grad.norm().item(), 5))
    print(
        "expert_grads",
        [
            round(e.w1.weight.grad.abs().sum().item(), 5) if e.w1.weight.grad is not None else None
            for e in moe.experts
        ],
    )

    logits = torch.tensor(
        [
            [2.0, 1.0, 0.5, -1.0],
            [0.1, 0.2, 3.0, 0.0],
            [1.0, 1.5, 0.2, 0.3],
            [0.0, 4.0, 0.1, 0.2],
            [0.9, 2.0, 0.3, 0.1],
        ]
    )
    topi = logits.argmax(-1)
    pos, keep = capacity_dispatch(topi, 4, capacity=2)
    print("capacity", topi.tolist(), pos.tolist(), keep.tolist())
    buf = torch.zeros(4, 2, 4)
    e_idx, p_idx = topi[keep], pos[keep]
    buf[e_idx, p_idx] = logits[keep]
    print("buffer_rows", buf.abs().sum(-1).tolist())
    combined = torch.zeros(5, 4).scatter_add_(
        0, torch.arange(5)[keep].unsqueeze(-1).expand(-1, 4), buf[e_idx, p_idx]
    )
    print("combined", combined.sum(-1).tolist())

    vocab, seq = 10, 6
    model = Block(vocab, 8, 16)
    det_init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    data = (torch.arange(4 * seq).view(4, seq) * 3) % vocab
    losses = []
    for step in range(25):
        logits = model(data)
        loss = F.cross_entropy(logits.reshape(-1, vocab), data.reshape(-1))
        _, aux, z = model.moe.stats
        total = loss + 0.01 * aux + 0.001 * z
        opt.zero_grad()
        total.backward()
        opt.step()
        losses.append(loss.item())
    print("train_loss", round(losses[0], 4), round(losses[-1], 4))
    with torch.no_grad():
        acc = (model(data).argmax(-1) == data).float().mean().item()
    print("train_acc", round(acc, 3))
    print("final_counts", model.moe.stats[0].tolist())


if __name__ == "__main__":
    main()
