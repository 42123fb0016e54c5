# ruff: noqa: E501
"""Message passing on an edge list without a graph library, as torch_geometric / torch_scatter
code is written: a graph attention layer (GATConv-style) with per-edge LeakyReLU scores, a
segment softmax built from scatter_reduce("amax", include_self=False) and index_add_, multi-
head aggregation with index_add_ / scatter_add_, mean and max neighbourhood pooling via
scatter_reduce ("mean", "amax", "amin", "prod", include_self both ways), global pooling per
graph in a batch, and a node classifier trained by Adam, checked against a dense softmax."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.57 + 0.013 * k * k + i) * scale).view_as(p))


def segment_softmax(scores, index, num_nodes):
    """Softmax of `scores` (E, H) over the edges that share the same target in `index` (E,)."""
    H = scores.size(1)
    idx = index.unsqueeze(1).expand(-1, H)
    smax = torch.full((num_nodes, H), float("-inf")).scatter_reduce(
        0, idx, scores, reduce="amax", include_self=False
    )
    e = (scores - smax[index]).exp()
    denom = torch.zeros(num_nodes, H).index_add_(0, index, e)
    return e / (denom[index] + 1e-16)


class GATLayer(nn.Module):
    def __init__(self, d_in, d_out, heads=2, concat=True):
        super().__init__()
        self.h, self.d, self.concat = heads, d_out, concat
        self.lin = nn.Linear(d_in, heads * d_out, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, d_out))
        self.att_dst = nn.Parameter(torch.empty(1, heads, d_out))
        self.bias = nn.Parameter(torch.zeros(heads * d_out if concat else d_out))

    def forward(self, x, edge_index, return_attention=False):
        src, dst = edge_index
        n = x.size(0)
        z = self.lin(x).view(n, self.h, self.d)
        a_src = (z * self.att_src).sum(-1)
        a_dst = (z * self.att_dst).sum(-1)
        scores = F.leaky_relu(a_src[src] + a_dst[dst], 0.2)
        alpha = segment_softmax(scores, dst, n)
        msg = z[src] * alpha.unsqueeze(-1)
        out = torch.zeros(n, self.h, self.d).index_add_(0, dst, msg)
        out = out.reshape(n, -1) if self.concat else out.mean(1)
        out = out + self.bias
        return (out, alpha) if return_attention else out


class GAT(nn.Module):
    def __init__(self, d_in, hidden, n_cls):
        super().__init__()
        self.l1 = GATLayer(d_in, hidden, heads=2)
        self.l2 = GATLayer(2 * hidden, n_cls, heads=1, concat=False)

    def forward(self, x, ei):
        return self.l2(F.elu(self.l1(x, ei)), ei)


def make_graph(n=16):
    edges = [
        (i, j)
        for i in range(n)
        for j in range(n)
        if i != j and ((i < n // 2) == (j < n // 2)) and (i * 5 + j * 3) % 7 < 2
    ]
    edges += [(i, (i + n // 2) % n) for i in range(0, n, 5)]
    edges += [(i, i) for i in range(n)]  # self loops
    ei = torch.tensor(edges).T
    labels = (torch.arange(n) >= n // 2).long()
    x = torch.stack(
        [torch.cos(torch.arange(n, dtype=torch.float32) * (k + 1) * 0.45) for k in range(5)], 1
    )
    x[:, 0] += labels.float() * 0.4
    return x, ei, labels


def main():
    torch.manual_seed(0)
    x, ei, labels = make_graph()
    n = x.size(0)
    deg = torch.zeros(n, dtype=torch.long).scatter_add_(
        0, ei[1], torch.ones(ei.size(1), dtype=torch.long)
    )
    print(
        f"nodes {n} edges {ei.size(1)} in_degree {deg.tolist()} bincount_same {torch.equal(deg, torch.bincount(ei[1], minlength=n))}"
    )
    layer = GATLayer(5, 4, heads=2)
    det_init(layer)
    out, alpha = layer(x, ei, return_attention=True)
    sums = torch.zeros(n, 2).index_add_(0, ei[1], alpha)
    print(
        f"gat_out {tuple(out.shape)} alpha_sums_one {torch.allclose(sums, torch.ones(n, 2))} alpha0 {[round(v, 4) for v in alpha[:3, 0].tolist()]}"
    )
    # The same attention through a dense masked softmax.
    dense = torch.full((n, n, 2), float("-inf"))
    z = layer.lin(x).view(n, 2, 4)
    s = F.leaky_relu((z * layer.att_src).sum(-1)[ei[0]] + (z * layer.att_dst).sum(-1)[ei[1]], 0.2)
    dense[ei[1], ei[0]] = s
    att = dense.softmax(dim=1)
    print(f"dense_same {torch.allclose(att[ei[1], ei[0]], alpha, atol=1e-6)}")

    model = GAT(5, 4, 2)
    det_init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
    train = torch.arange(0, n, 2)
    for epoch in range(50):
        model.train()
        loss = F.cross_entropy(model(x, ei)[train], labels[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch in (0, 49):
            print(f"gat_epoch{epoch} loss {loss.item():.5f}")
    model.eval()
    with torch.no_grad():
        acc = (model(x, ei).argmax(1) == labels).float().mean().item()
    print(f"gat_acc {acc:.4f} att_grad {model.l1.att_src.grad.abs().sum().item():.5f}")

    # Neighbourhood aggregations with scatter_reduce.
    msgs = x[ei[0], :2]
    idx = ei[1].unsqueeze(1).expand(-1, 2)
    for red in ("sum", "mean", "amax", "amin", "prod"):
        a = torch.zeros(n, 2).scatter_reduce(0, idx, msgs, reduce=red, include_self=False)
        b = torch.ones(n, 2).scatter_reduce(0, idx, msgs, reduce=red, include_self=True)
        print(
            f"scatter_{red} {[round(v, 4) for v in a[:3, 0].tolist()]} self {[round(v, 4) for v in b[:3, 1].tolist()]}"
        )
    xr = x[:, :2].clone().requires_grad_()
    agg = torch.zeros(n, 2).scatter_reduce(0, idx, xr[ei[0]], reduce="amax", include_self=False)
    agg.sum().backward()
    print(f"amax_grad {xr.grad[:, 0].tolist()[:6]}")
    xm = x[:, :2].clone().requires_grad_()
    torch.zeros(n, 2).scatter_reduce(
        0, idx, xm[ei[0]], reduce="mean", include_self=False
    ).sum().backward()
    print(f"mean_grad {[round(v, 4) for v in xm.grad[:5, 0].tolist()]}")
    # Global pooling per graph in a batch of two graphs.
    batch = torch.tensor([0] * 6 + [1] * 10)
    counts = torch.bincount(batch).unsqueeze(1).float()
    mean_pool = torch.zeros(2, 5).index_add_(0, batch, x) / counts
    max_pool = torch.full((2, 5), float("-inf")).scatter_reduce(
        0, batch.unsqueeze(1).expand(-1, 5), x, "amax"
    )
    print(
        f"global_mean {[round(v, 4) for v in mean_pool[:, 0].tolist()]} global_max {[round(v, 4) for v in max_pool[:, 1].tolist()]}"
    )
    sc = torch.zeros(3, 4).scatter_(1, torch.tensor([[0, 1], [2, 3], [1, 1]]), 1.0, reduce="add")
    print(
        f"scatter_value_add {sc.tolist()} index_reduce {torch.ones(3, 2).index_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]), 'prod').tolist()}"
    )


if __name__ == "__main__":
    main()
