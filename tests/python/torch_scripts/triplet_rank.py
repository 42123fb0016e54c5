# ruff: noqa: E501
"""Embedding learning for retrieval with the ranking losses of torch.nn: a small siamese
encoder trained with nn.TripletMarginLoss (p=2, swap=True) on batch-hard triplets mined from
torch.cdist, nn.TripletMarginWithDistanceLoss with a cosine distance, MarginRankingLoss on
pair scores, CosineEmbeddingLoss and HingeEmbeddingLoss on pairs, recall@k from a cdist
distance matrix with topk(largest=False), and the p / compute_mode variants of cdist."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.47 + 0.019 * k * k + i) * scale).view_as(p))


def make_data(n_classes=5, per_class=6, dim=10):
    labels = torch.arange(n_classes).repeat_interleave(per_class)
    k = torch.arange(dim, dtype=torch.float32)
    centers = torch.stack([torch.sin(k * (c + 1) * 0.7) for c in range(n_classes)])
    j = torch.arange(labels.numel(), dtype=torch.float32)[:, None]
    x = centers[labels] + 0.45 * torch.cos(j * 1.7 + k * 0.9)
    return x, labels


class Encoder(nn.Module):
    def __init__(self, d_in=10, d_out=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 16), nn.Tanh(), nn.Linear(16, d_out))

    def forward(self, x):
        return F.normalize(self.net(x), p=2, dim=1)


def batch_hard(emb, labels):
    d = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(len(labels), dtype=torch.bool)
    pos = d.masked_fill(~same | eye, float("-inf")).argmax(1)
    neg = d.masked_fill(same, float("inf")).argmin(1)
    return pos, neg


def recall_at_k(emb, labels, k):
    d = torch.cdist(emb, emb)
    d.fill_diagonal_(float("inf"))
    idx = d.topk(k, dim=1, largest=False).indices
    return (labels[idx] == labels[:, None]).any(1).float().mean().item()


def main():
    torch.manual_seed(0)
    x, labels = make_data()
    model = Encoder()
    det_init(model)
    with torch.no_grad():
        e0 = model(x)
    print(f"recall_before r1 {recall_at_k(e0, labels, 1):.4f} r3 {recall_at_k(e0, labels, 3):.4f}")
    triplet = nn.TripletMarginLoss(margin=0.3, p=2, swap=True)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(40):
        emb = model(x)
        with torch.no_grad():
            pos, neg = batch_hard(emb, labels)
        loss = triplet(emb, emb[pos], emb[neg])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in (0, 39):
            print(f"triplet_step{step} loss {loss.item():.5f}")
    with torch.no_grad():
        e1 = model(x)
    print(f"recall_after r1 {recall_at_k(e1, labels, 1):.4f} r3 {recall_at_k(e1, labels, 3):.4f}")

    cos_dist = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.5
    )
    eu = nn.TripletMarginWithDistanceLoss(
        distance_function=nn.PairwiseDistance(), margin=0.5, swap=True
    )
    a, p, n = x[:5], x[5:10], x[20:25]
    print(
        f"twd_cos {cos_dist(a, p, n).item():.5f} twd_pairwise {eu(a, p, n).item():.5f} default {nn.TripletMarginWithDistanceLoss()(a, p, n).item():.5f}"
    )
    print(
        f"tml_none {[round(v, 4) for v in F.triplet_margin_loss(a, p, n, margin=1.0, p=1, reduction='none').tolist()]}"
    )

    # Pairwise objectives.
    i = torch.arange(0, 30, 2)
    j = (i * 7 + 3) % 30
    y = torch.where(labels[i] == labels[j], 1.0, -1.0)
    s1, s2 = model.net(x[i]).sum(1), model.net(x[j]).sum(1)
    mr = nn.MarginRankingLoss(margin=0.2)(s1, s2, y)
    ce = nn.CosineEmbeddingLoss(margin=0.1)(model.net(x[i]), model.net(x[j]), y)
    dist = F.pairwise_distance(model.net(x[i]), model.net(x[j]))
    he = nn.HingeEmbeddingLoss(margin=1.0)(dist, y)
    print(
        f"pairs pos {(y > 0).sum().item()} margin_rank {mr.item():.5f} cos_emb {ce.item():.5f} hinge {he.item():.5f}"
    )
    tot = mr + ce + he
    tot.backward()
    print(
        f"pair_grad_norm {torch.cat([q.grad.flatten() for q in model.parameters()]).norm().item():.5f}"
    )

    # cdist variants against explicit formulas.
    A, B = x[:4], x[10:13]
    manual = (A[:, None] - B[None]).pow(2).sum(-1).sqrt()
    print(
        f"cdist_p2 {torch.allclose(torch.cdist(A, B), manual, atol=1e-5)} mm {torch.allclose(torch.cdist(A, B, compute_mode='use_mm_for_euclid_dist'), manual, atol=1e-4)}"
    )
    print(
        f"cdist_p1 {torch.cdist(A, B, p=1)[0].tolist()[:2]} pinf {[round(v, 5) for v in torch.cdist(A, B, p=float('inf'))[0].tolist()]}"
    )
    batched = torch.cdist(x[:6].view(2, 3, 10), x[6:10].view(1, 4, 10))
    print(
        f"cdist_batched {tuple(batched.shape)} {batched[1, 2, 3].item():.5f} pdist {[round(v, 4) for v in F.pdist(A).tolist()]}"
    )


if __name__ == "__main__":
    main()
