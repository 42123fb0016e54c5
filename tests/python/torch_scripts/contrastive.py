# ruff: noqa: E501
"""Metric learning as people write it: a Siamese encoder with contrastive loss on pairs,
SimCLR's NT-Xent loss (F.normalize, a similarity matrix, masked_fill of the diagonal,
cross_entropy), triplet losses with cdist hard-negative mining, cosine_similarity,
pairwise_distance and a nearest-neighbour retrieval metric with topk."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_(
                (torch.cos(torch.arange(n, dtype=torch.float32) * 1.13 + 0.5 * i) * scale).view_as(
                    p
                )
            )


class Encoder(nn.Module):
    def __init__(self, d_in=6, d_out=4):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, d_out)
        )

    def forward(self, x):
        return self.net(x)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.margin = margin

    def forward(self, out1, out2, label):
        d = F.pairwise_distance(out1, out2, keepdim=True)
        return torch.mean(
            (1 - label) * torch.pow(d, 2)
            + label * torch.pow(torch.clamp(self.margin - d, min=0.0), 2)
        )


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    n = z1.size(0)
    sim = z @ z.T / temperature
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


def make_data(n=24):
    t = torch.arange(n, dtype=torch.float32)
    cls = torch.arange(n) % 3
    centers = torch.stack([torch.sin(cls * 2.0 + k) for k in range(6)], dim=1) * 2
    x = centers + 0.3 * torch.cos(t.unsqueeze(1) * torch.arange(1, 7, dtype=torch.float32))
    return x, cls


def augment(x, k):
    return x * (1 + 0.1 * torch.sin(x * 3 + k)) + 0.05 * k


def main():
    torch.manual_seed(0)
    x, cls = make_data()
    enc = Encoder()
    det_init(enc)
    criterion = ContrastiveLoss(margin=2.0)
    opt = torch.optim.Adam(enc.parameters(), lr=5e-3)
    i1 = torch.arange(24)
    i2 = (i1 * 5 + 3) % 24
    label = (cls[i1] != cls[i2]).float().unsqueeze(1)
    print(f"pairs_dissimilar {int(label.sum().item())}")
    for step in range(40):
        opt.zero_grad()
        loss = criterion(enc(x[i1]), enc(x[i2]), label)
        loss.backward()
        opt.step()
        if step in (0, 39):
            print(f"siamese_step{step} {loss.item():.5f}")

    # SimCLR-style self-supervised objective on two augmented views.
    proj = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    det_init(proj, 0.2)
    opt = torch.optim.SGD(
        list(enc.parameters()) + list(proj.parameters()), lr=0.05, momentum=0.9, nesterov=True
    )
    for step in range(25):
        opt.zero_grad()
        loss = nt_xent(proj(enc(augment(x, 1.0))), proj(enc(augment(x, 2.0))))
        loss.backward()
        opt.step()
        if step in (0, 24):
            print(f"ntxent_step{step} {loss.item():.5f}")

    enc.eval()
    with torch.no_grad():
        emb = F.normalize(enc(x), p=2, dim=1)
        d = torch.cdist(emb, emb)
        d.fill_diagonal_(float("inf"))
        nn_idx = d.topk(3, largest=False).indices
        recall1 = (cls[nn_idx[:, 0]] == cls).float().mean().item()
        print(f"recall_at_1 {recall1:.4f} nn_shape {tuple(nn_idx.shape)}")
        cs = F.cosine_similarity(emb.unsqueeze(1), emb.unsqueeze(0), dim=-1)
        print(
            f"cos_sim_matches_mm {torch.allclose(cs, emb @ emb.T, atol=1e-5)} diag {cs.diagonal().mean().item():.5f}"
        )

    # Triplet losses with batch-hard mining.
    emb = enc(x)
    dist = torch.cdist(emb, emb, p=2)
    same = cls.unsqueeze(0) == cls.unsqueeze(1)
    hardest_pos = (dist * same.float()).max(dim=1).values
    hardest_neg = dist.masked_fill(same, float("inf")).min(dim=1).values
    batch_hard = F.relu(hardest_pos - hardest_neg + 0.5).mean()
    print(f"batch_hard {batch_hard.item():.5f}")
    a, p, n = emb[:8], emb[8:16], emb[16:24]
    print(f"triplet {F.triplet_margin_loss(a, p, n, margin=1.0, p=2, swap=True).item():.5f}")
    twd = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), margin=0.5
    )
    print(f"triplet_cos {twd(a, p, n).item():.5f}")
    print(
        f"cosine_emb {F.cosine_embedding_loss(a, p, torch.tensor([1, -1] * 4), margin=0.1).item():.5f}"
    )
    print(
        f"margin_rank {F.margin_ranking_loss(a[:, 0], p[:, 0], torch.tensor([1.0, -1.0] * 4), margin=0.2).item():.5f}"
    )
    print(
        f"hinge_emb {F.hinge_embedding_loss(dist[0], torch.where(same[0], 1, -1).float(), margin=1.0).item():.5f}"
    )
    print(
        f"cdist_p1 {torch.cdist(a, p, p=1).sum().item():.4f} pdist {F.pdist(a).shape[0]} {F.pdist(a).sum().item():.4f}"
    )
    print(
        f"cdist_mm_mode {torch.allclose(torch.cdist(a, p, compute_mode='use_mm_for_euclid_dist'), torch.cdist(a, p), atol=1e-4)}"
    )
    print(f"logsumexp {torch.logsumexp(dist, dim=1)[:3].tolist()}")
    sim = emb @ emb.T
    ranks = sim.argsort(dim=1, descending=True)
    print(f"argsort_first {ranks[:3, :4].tolist()}")


if __name__ == "__main__":
    main()
