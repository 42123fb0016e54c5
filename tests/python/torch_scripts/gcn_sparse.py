# ruff: noqa: E501
"""A graph convolutional network in the pygcn style on a small two-community graph: the
adjacency as a sparse COO tensor (self loops, symmetric degree normalization with
torch.sparse.sum), torch.sparse.mm / spmm in the layers, masked node classification with
nll_loss, then node embeddings with nn.Embedding(sparse=True) trained by SparseAdam
and Adagrad on sparse gradients, and the COO / CSR toolkit around them."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            k = torch.arange(n, dtype=torch.float32)
            p.copy_((torch.sin(k * 0.71 + 0.021 * k * k + i) * scale).view_as(p))


def make_graph(n=20):
    edges = []
    for i in range(n):
        for j in range(i + 1, n):
            same = (i < n // 2) == (j < n // 2)
            if (same and (i * 7 + j * 3) % 4 == 0) or (not same and (i + j) % 9 == 0):
                edges.append((i, j))
    edges = torch.tensor(edges).T
    labels = (torch.arange(n) >= n // 2).long()
    feats = torch.stack(
        [torch.cos(torch.arange(n, dtype=torch.float32) * (k + 1) * 0.3) for k in range(6)], dim=1
    )
    feats[:, 0] += labels.float() * 0.5
    return edges, feats, labels


def normalize_adj(edge_index, n):
    ei = torch.cat([edge_index, edge_index.flip(0), torch.arange(n).repeat(2, 1)], dim=1)
    adj = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)), (n, n)).coalesce()
    deg = torch.sparse.sum(adj, dim=1).to_dense()
    d_inv_sqrt = deg.pow(-0.5)
    d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0.0
    idx = adj.indices()
    vals = d_inv_sqrt[idx[0]] * adj.values() * d_inv_sqrt[idx[1]]
    return torch.sparse_coo_tensor(idx, vals, (n, n)), deg


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)
        return torch.sparse.mm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, 0.5, training=False)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def main():
    torch.manual_seed(0)
    n = 20
    edge_index, feats, labels = make_graph(n)
    adj, deg = normalize_adj(edge_index, n)
    print(
        f"edges {edge_index.size(1)} nnz {adj._nnz()} is_sparse {adj.is_sparse} layout {adj.layout} deg {deg[:6].tolist()}"
    )
    dense = adj.to_dense()
    print(
        f"symmetric {torch.allclose(dense, dense.T)} row0 {[round(v, 4) for v in dense[0][dense[0] != 0].tolist()]}"
    )
    model = GCN(6, 8, 2)
    det_init(model)
    idx_train, idx_test = torch.arange(0, n, 2), torch.arange(1, n, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    for epoch in range(60):
        model.train()
        optimizer.zero_grad()
        output = model(feats, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()
        if epoch in (0, 59):
            print(f"gcn_epoch{epoch} loss {loss_train.item():.5f}")
    model.eval()
    output = model(feats, adj)
    acc = (output[idx_test].argmax(1) == labels[idx_test]).float().mean()
    print(
        f"gcn_test_acc {acc.item():.4f} dense_same {torch.allclose(output, F.log_softmax(dense @ F.relu(dense @ feats @ model.gc1.weight + model.gc1.bias) @ model.gc2.weight + model.gc2.bias, 1), atol=1e-5)}"
    )
    g = torch.sparse.mm(adj, feats.requires_grad_())
    g.sum().backward()
    print(f"spmm_grad {[round(v, 4) for v in feats.grad[:3, 0].tolist()]}")

    # Sparse gradients from embeddings.
    emb = nn.Embedding(10, 4, sparse=True)
    det_init(emb)
    out = emb(torch.tensor([1, 3, 3, 7]))
    out.sum().backward()
    gr = emb.weight.grad
    print(
        f"sparse_grad {gr.is_sparse} rows {sorted(set(gr.coalesce().indices()[0].tolist()))} dense_rows {gr.to_dense().sum(1).tolist()}"
    )
    opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    ctx = torch.tensor([[1, 2], [3, 4], [5, 6], [7, 8]])
    row9 = emb.weight[9].detach().clone()
    for step in range(20):
        opt.zero_grad()
        e = emb(ctx)
        score = (e[:, 0] * e[:, 1]).sum(-1)
        loss = F.binary_cross_entropy_with_logits(score, torch.tensor([1.0, 1.0, 0.0, 0.0]))
        loss.backward()
        opt.step()
    print(
        f"sparse_adam_loss {loss.item():.5f} untouched_row9 {torch.equal(emb.weight[9], row9)} state_keys {sorted(opt.state[emb.weight])}"
    )
    bag = nn.EmbeddingBag(10, 3, mode="sum", sparse=True)
    det_init(bag)
    opt2 = torch.optim.Adagrad(bag.parameters(), lr=0.1)
    before = bag.weight.detach().clone()
    bag(torch.tensor([0, 2, 4]), torch.tensor([0, 2])).pow(2).sum().backward()
    opt2.step()
    changed = (bag.weight.detach() != before).any(1).nonzero().flatten().tolist()
    print(f"adagrad_sparse_changed_rows {changed}")

    # The COO / CSR toolkit.
    i = torch.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    v = torch.tensor([3.0, 4.0, 5.0, 1.0])
    s = torch.sparse_coo_tensor(i, v, (2, 3))
    print(
        f"coalesced {s.is_coalesced()} -> {s.coalesce().indices().tolist()} {s.coalesce().values().tolist()}"
    )
    d = torch.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    csr = d.to_sparse_csr()
    print(
        f"csr crow {csr.crow_indices().tolist()} col {csr.col_indices().tolist()} vals {csr.values().tolist()} back {torch.equal(csr.to_dense(), d)}"
    )
    print(
        f"to_sparse {d.to_sparse().indices().tolist()} sparse_dim {d.to_sparse().sparse_dim()} mul {(s * 2).to_dense().tolist()} add {(s + d.to_sparse()).to_dense().tolist()}"
    )
    print(
        f"sparse_matmul {(s.t() @ torch.ones(2, 1)).flatten().tolist()} addmm {torch.sparse.addmm(torch.ones(2, 1), s, torch.ones(3, 1)).flatten().tolist()} softmax {[round(x, 4) for x in torch.sparse.softmax(s.coalesce(), dim=1).to_dense()[1].tolist()]}"
    )


if __name__ == "__main__":
    main()
