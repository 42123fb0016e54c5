"""Metric learning with a Siamese network: a shared encoder applied to pairs and triplets,
contrastive loss written by hand on F.pairwise_distance, TripletMarginWithDistanceLoss with the
default distance, a cosine distance and a PairwiseDistance module (swap=True), CosineEmbedding /
MarginRanking losses, batch-hard mining with torch.cdist, and retrieval by cosine_similarity."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d_in=6, d_out=4):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, 8), nn.PReLU(), nn.LayerNorm(8), nn.Linear(8, d_out)
        )

    def forward(self, x):
        return F.normalize(self.net(x), p=2, dim=-1, eps=1e-6)


class SiameseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, a, b=None, c=None):
        outs = [self.encoder(t) for t in (a, b, c) if t is not None]
        return outs[0] if len(outs) == 1 else tuple(outs)


def contrastive_loss(e1, e2, same, margin=1.0):
    d = F.pairwise_distance(e1, e2, keepdim=False)
    return (same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2)).mean() / 2


def det_fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.53 + i) * 0.5).view_as(
                    p
                )
            )


def make_data():
    centers = torch.tensor(
        [
            [1.0, 0.0, 0.5, -0.5, 0.2, 0.0],
            [-1.0, 0.5, 0.0, 0.5, -0.2, 0.3],
            [0.0, -1.0, -0.5, 0.0, 0.4, -0.3],
        ]
    )
    labels = torch.arange(12) % 3
    jitter = torch.sin(torch.arange(12 * 6, dtype=torch.float32) * 1.7).view(12, 6) * 0.3
    return centers[labels] + jitter, labels


def batch_hard(emb, labels, margin=0.3):
    dist = torch.cdist(emb, emb, p=2)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    hardest_pos = (dist * same.float()).max(dim=1).values
    hardest_neg = dist.masked_fill(same, float("inf")).min(dim=1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean(), int((hardest_pos < hardest_neg).sum())


def main():
    x, labels = make_data()
    model = SiameseNet()
    det_fill(model)
    anchors, positives, negatives = x[:6], x[3:9], x[[1, 2, 0, 4, 5, 3]]
    print("pair_same", (labels[:6] == labels[[6, 8, 7, 10, 9, 11]]).tolist())
    cos_dist = lambda a, b: 1.0 - F.cosine_similarity(a, b)  # noqa: E731
    losses = {
        "default": nn.TripletMarginWithDistanceLoss(),
        "cosine": nn.TripletMarginWithDistanceLoss(distance_function=cos_dist, margin=0.4),
        "l1_swap": nn.TripletMarginWithDistanceLoss(
            distance_function=nn.PairwiseDistance(p=1), swap=True, reduction="sum"
        ),
    }
    print("loss_modules", {k: [type(m).__name__ for m in v.children()] for k, v in losses.items()})
    ea, ep, en = model(anchors, positives, negatives)
    for k, fn in losses.items():
        print("triplet", k, round(fn(ea, ep, en).item(), 5))
    print(
        "triplet_fn",
        round(F.triplet_margin_loss(ea, ep, en, margin=0.5, p=2, eps=1e-6, swap=True).item(), 5),
    )
    try:
        nn.TripletMarginWithDistanceLoss(margin=0.0)
    except ValueError as e:
        print("bad_margin", e)

    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    triplet = losses["cosine"]
    hist = []
    for step in range(6):
        opt.zero_grad()
        emb = model(x)
        partner = emb[[6, 8, 7, 10, 9, 11]]
        pair_same = (labels[:6] == labels[[6, 8, 7, 10, 9, 11]]).float()
        l_con = contrastive_loss(emb[:6], partner, pair_same)
        l_tri = triplet(*model(anchors, positives, negatives))
        l_hard, n_ok = batch_hard(emb, labels)
        target = torch.where(pair_same.bool(), 1, -1)
        l_cos = F.cosine_embedding_loss(emb[:6], partner, target, margin=0.1)
        loss = l_con + l_tri + l_hard + l_cos
        loss.backward()
        opt.step()
        hist.append((round(loss.item(), 4), n_ok))
    print("train", hist)
    prelu = model.encoder.net[1]
    print("prelu", round(prelu.weight.item(), 5), prelu)

    model.eval()
    with torch.no_grad():
        emb = model(x)
        sim = F.cosine_similarity(emb.unsqueeze(1), emb.unsqueeze(0), dim=-1)
        sim.fill_diagonal_(-2.0)
        nn_idx = sim.argmax(dim=1)
        print("retrieval_acc", round((labels[nn_idx] == labels).float().mean().item(), 4))
        print("sim_row", [round(v, 4) for v in sim[0].tolist()])
        d = torch.cdist(emb, emb)
        print("cdist_sym", torch.allclose(d, d.T, atol=1e-6), round(d.max().item(), 4))
        pd = F.pdist(emb[:4])
        print("pdist", [round(v, 4) for v in pd.tolist()])
        scores_a, scores_b = sim[0, 1:4], sim[1, [0, 2, 3]]
        mr = F.margin_ranking_loss(scores_a, scores_b, torch.tensor([1.0, -1.0, 1.0]), margin=0.05)
        print("margin_rank", round(mr.item(), 5))
        print(
            "pairwise_bcast",
            [round(v, 4) for v in F.pairwise_distance(emb[:3], emb[0], p=float("inf")).tolist()],
        )


if __name__ == "__main__":
    main()
