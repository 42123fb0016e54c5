# ruff: noqa: E501
"""A recommender in the DLRM / matrix-factorization style: user and item tables as
nn.Embedding(sparse=True) and multi-hot genre features as nn.EmbeddingBag(mode="sum",
sparse=True) with per_sample_weights and offsets, a dense MLP over their concatenation,
two optimizers (SparseAdam for the sparse tables, Adam for the dense part) as the docs advise,
BPR pairwise loss with negatives, sparse-gradient inspection (coalesce, indices, values),
max_norm renormalization, from_pretrained(freeze=True), and hit-rate@k evaluation."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N_USERS, N_ITEMS, N_GENRES, DIM = 12, 20, 6, 8


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.23 + 0.0071 * k * k + i) * scale).view_as(p))


def item_genres():
    """Each item has 1-3 genres with weights; returned flat with offsets (EmbeddingBag input)."""
    flat, weights, offsets = [], [], []
    for it in range(N_ITEMS):
        offsets.append(len(flat))
        gs = sorted({it % N_GENRES, (it * 3 + 1) % N_GENRES})[: 1 + it % 2]
        flat += gs
        weights += [1.0 / len(gs)] * len(gs)
    return torch.tensor(flat), torch.tensor(offsets), torch.tensor(weights)


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(N_USERS, DIM, sparse=True)
        self.item = nn.Embedding(N_ITEMS, DIM, sparse=True)
        self.genre = nn.EmbeddingBag(N_GENRES, DIM, mode="sum", sparse=True)
        self.mlp = nn.Sequential(nn.Linear(3 * DIM, 16), nn.ReLU(), nn.Linear(16, 1))
        self.genres = item_genres()

    def item_vec(self, items):
        flat, offsets, w = self.genres
        g_all = self.genre(flat, offsets, per_sample_weights=w)
        return self.item(items), g_all[items]

    def forward(self, users, items):
        u = self.user(users)
        iv, gv = self.item_vec(items)
        dot = (u * (iv + gv)).sum(-1)
        return dot + self.mlp(torch.cat([u, iv, gv], dim=-1)).squeeze(-1)


def interactions():
    pairs = [
        (u, i)
        for u in range(N_USERS)
        for i in range(N_ITEMS)
        if (u * 7 + i * 3) % 5 == 0 or (u + i) % 9 == 0
    ]
    t = torch.tensor(pairs)
    return t[:, 0], t[:, 1]


def main():
    torch.manual_seed(0)
    users, pos = interactions()
    neg = (pos * 7 + users * 3 + 5) % N_ITEMS
    keep = neg != pos
    users, pos, neg = users[keep], pos[keep], neg[keep]
    print(f"interactions {users.numel()} genres_flat {item_genres()[0].numel()}")
    model = Recommender()
    det_init(model)
    sparse_params = [model.user.weight, model.item.weight, model.genre.weight]
    dense_params = list(model.mlp.parameters())
    opt_sparse = torch.optim.SparseAdam(sparse_params, lr=0.05)
    opt_dense = torch.optim.Adam(dense_params, lr=0.01)
    for epoch in range(25):
        s_pos = model(users, pos)
        s_neg = model(users, neg)
        loss = -F.logsigmoid(s_pos - s_neg).mean()
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        if epoch == 0:
            g = model.item.weight.grad
            gc = g.coalesce()
            print(
                f"item_grad sparse {g.is_sparse} nnz_rows {gc.indices().size(1)} values {tuple(gc.values().shape)} genre_sparse {model.genre.weight.grad.is_sparse} mlp_dense {not model.mlp[0].weight.grad.is_sparse}"
            )
        opt_sparse.step()
        opt_dense.step()
        if epoch in (0, 24):
            print(f"bpr_epoch{epoch} loss {loss.item():.5f}")
    with torch.no_grad():
        all_items = torch.arange(N_ITEMS)
        scores = torch.stack([model(torch.full((N_ITEMS,), u), all_items) for u in range(N_USERS)])
        top = scores.topk(5, dim=1).indices
        truth = torch.zeros(N_USERS, N_ITEMS, dtype=torch.bool)
        truth[users, pos] = True
        hits = truth.gather(1, top).any(1).float().mean().item()
    print(f"hit_rate@5 {hits:.4f} top_u0 {top[0].tolist()}")
    print(
        f"state {sorted(opt_sparse.state[model.item.weight])} step {opt_sparse.state[model.item.weight]['step']}"
    )

    # EmbeddingBag modes and per-sample weights against hand sums.
    bag = nn.EmbeddingBag.from_pretrained(torch.arange(12.0).view(6, 2), mode="sum", freeze=True)
    inp = torch.tensor([0, 2, 2, 5, 1])
    offs = torch.tensor([0, 3])
    w = torch.tensor([1.0, 0.5, 0.5, 2.0, -1.0])
    print(
        f"bag_weighted {bag(inp, offs, per_sample_weights=w).tolist()} include_last {nn.EmbeddingBag.from_pretrained(torch.arange(12.0).view(6, 2), mode='mean', include_last_offset=True)(inp, torch.tensor([0, 3, 5])).tolist()}"
    )
    print(
        f"bag_2d_max {nn.EmbeddingBag.from_pretrained(torch.arange(12.0).view(6, 2), mode='max')(torch.tensor([[0, 5], [3, 1]])).tolist()} frozen {not bag.weight.requires_grad}"
    )
    emb = nn.Embedding(5, 3, max_norm=1.0)
    det_init(emb, scale=2.0)
    before = emb.weight.detach().norm(dim=1)
    emb(torch.tensor([1, 3]))
    after = emb.weight.detach().norm(dim=1)
    print(
        f"max_norm before {[round(v, 4) for v in before.tolist()]} after {[round(v, 4) for v in after.tolist()]}"
    )
    pre = nn.Embedding.from_pretrained(torch.eye(4), freeze=False, padding_idx=0)
    pre(torch.tensor([0, 1, 1])).sum().backward()
    print(f"from_pretrained grad {pre.weight.grad.sum(1).tolist()} padding_idx {pre.padding_idx}")
    sp = nn.Embedding(6, 2, sparse=True)
    sp(torch.tensor([[1, 1], [4, 0]])).sum().backward()
    g = sp.weight.grad
    print(
        f"uncoalesced_nnz {g._nnz()} coalesced {g.coalesce()._nnz()} dense {g.to_dense().sum(1).tolist()}"
    )


if __name__ == "__main__":
    main()
