"""Knowledge-graph embeddings and learning to rank: TransE with Embedding(max_norm=1) renormed
in forward, corrupted triples, MarginRankingLoss, filtered ranking with index_put_ and MRR /
Hits@k; then ListNet, ListMLE (logcumsumexp over the flipped sorted list) and a pairwise
RankNet loss on padded query lists with NDCG@k from gather and log2 discounts."""

import torch
import torch.nn as nn
import torch.nn.functional as F

n_ent, n_rel, dim = 7, 2, 4
triples = torch.tensor(
    [[0, 0, 1], [1, 0, 2], [2, 0, 3], [3, 1, 4], [4, 1, 5], [5, 1, 6], [0, 1, 6]]
)


class TransE(nn.Module):
    def __init__(self):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim, max_norm=1.0)
        self.rel = nn.Embedding(n_rel, dim)
        with torch.no_grad():
            self.ent.weight.copy_(torch.linspace(-2, 2, n_ent * dim).reshape(n_ent, dim).sin())
            self.rel.weight.copy_(
                torch.linspace(-1, 1, n_rel * dim).reshape(n_rel, dim).cos() * 0.3
            )

    def forward(self, h, r, t):
        return (self.ent(h) + self.rel(r) - self.ent(t)).norm(p=1, dim=-1)


model = TransE()
norms_before = model.ent.weight.norm(dim=1)
crit = nn.MarginRankingLoss(margin=1.0)
opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
for epoch in range(8):
    h, r, t = triples.unbind(1)
    corrupt_t = (t + 1 + epoch % 3) % n_ent
    pos, neg = model(h, r, t), model(h, r, corrupt_t)
    loss = crit(neg, pos, torch.ones_like(pos))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch in (0, 7):
        print(f"transe {epoch} {loss.item():.5f}")
print(
    "renormed",
    [round(v, 4) for v in norms_before.tolist()[:3]],
    (model.ent.weight.norm(dim=1) <= 1 + 1e-5).tolist(),
)

with torch.no_grad():
    h, r, t = triples.unbind(1)
    all_t = torch.arange(n_ent)
    scores = (model.ent(h)[:, None] + model.rel(r)[:, None] - model.ent(all_t)[None]).norm(
        p=1, dim=-1
    )
    true_scores = scores.gather(1, t[:, None])
    filt = scores.clone()
    for i, (hh, rr, _) in enumerate(triples.tolist()):
        known = triples[(triples[:, 0] == hh) & (triples[:, 1] == rr), 2]
        filt.index_put_((torch.full_like(known, i), known), torch.tensor(float("inf")))
    filt.scatter_(1, t[:, None], true_scores)
    ranks = (filt < true_scores).sum(1) + 1
print("ranks", ranks.tolist(), "mrr", round((1.0 / ranks.float()).mean().item(), 5))
print("hits", [(ranks <= k).float().mean().item() for k in (1, 3)])

# learning to rank: 3 queries padded to 5 docs
feats = torch.linspace(-1, 1, 3 * 5 * 4).reshape(3, 5, 4).mul(2.3).sin()
rel = torch.tensor([[3, 2, 0, 1, 0], [0, 1, 2, 0, 0], [2, 2, 1, 0, 0]]).float()
lengths = torch.tensor([5, 3, 4])
valid = torch.arange(5)[None] < lengths[:, None]
scorer = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 1))
with torch.no_grad():
    for i, p in enumerate(scorer.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1).cos() * 0.5)


def ndcg_at(scores, rel, valid, k):
    scores = scores.masked_fill(~valid, float("-inf"))
    order = scores.argsort(dim=1, descending=True, stable=True)
    gains = (2 ** rel.gather(1, order) - 1)[:, :k]
    disc = 1 / torch.log2(torch.arange(k, dtype=torch.float32) + 2)
    dcg = (gains * disc).sum(1)
    ideal = ((2 ** rel.sort(dim=1, descending=True).values - 1)[:, :k] * disc).sum(1)
    return torch.where(ideal > 0, dcg / ideal, torch.zeros_like(dcg))


def listnet(s, rel, valid):
    s = s.masked_fill(~valid, float("-inf"))
    t = rel.masked_fill(~valid, float("-inf"))
    return -(F.softmax(t, 1) * F.log_softmax(s, 1)).nan_to_num(0.0).sum(1).mean()


def listmle(s, rel, valid):
    rel = rel.masked_fill(~valid, -1)
    order = rel.argsort(dim=1, descending=True, stable=True)
    s_sorted = s.gather(1, order).masked_fill(~valid, float("-inf"))
    cums = torch.logcumsumexp(s_sorted.flip(1), dim=1).flip(1)
    return ((cums - s_sorted).masked_fill(~valid, 0.0)).sum(1).mean()


def ranknet(s, rel, valid):
    diff = s[:, :, None] - s[:, None, :]
    pair = (rel[:, :, None] > rel[:, None, :]) & valid[:, :, None] & valid[:, None, :]
    return F.binary_cross_entropy_with_logits(diff[pair], torch.ones(int(pair.sum())))


opt = torch.optim.Adam(scorer.parameters(), lr=0.05)
for name, fn in (("listnet", listnet), ("listmle", listmle), ("ranknet", ranknet)):
    s = scorer(feats).squeeze(-1)
    loss = fn(s, rel, valid)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(
        name,
        round(loss.item(), 5),
        [round(v, 4) for v in ndcg_at(s.detach(), rel, valid, 3).tolist()],
    )
print("cummax", torch.cummax(rel, 1).values[0].tolist(), torch.cummax(rel, 1).indices[2].tolist())
