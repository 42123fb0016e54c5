"""Graph-level regression on small molecule-like graphs, PyG style without PyG: a collate that
concatenates graphs with node-index offsets (cumsum) and a batch vector (repeat_interleave),
an edge-conditioned message passing layer (NNConv: edge MLP -> per-edge weight matrices via
bmm) aggregated with index_add_ and scatter_reduce (mean/amax, include_self=False), a GRU
update, GIN with (1+eps), global sum/mean/max pooling, Set2Set readout with an LSTM, and a
degree histogram with bincount."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 1.1).sin() * scale
            )


def make_graph(k):
    n = 4 + k % 5
    src = torch.arange(n - 1)
    ring = torch.stack(
        [torch.cat([src, torch.tensor([n - 1])]), torch.cat([src + 1, torch.tensor([0])])]
    )
    if k % 2:
        ring = torch.cat([ring, torch.tensor([[0], [n // 2]])], 1)
    edge_index = torch.cat([ring, ring.flip(0)], 1)
    x = torch.stack([torch.sin(torch.arange(n) * (k + 1.0) + d) for d in range(5)], 1)
    e = edge_index.shape[1]
    edge_attr = torch.stack(
        [torch.cos(torch.arange(e) * 0.7 + k), (edge_index[0] - edge_index[1]).abs().float() / n], 1
    )
    y = torch.tensor([x[:, 0].sum().item() * 0.3 + 0.1 * e])
    return x, edge_index, edge_attr, y


def collate(graphs):
    sizes = torch.tensor([g[0].shape[0] for g in graphs])
    offsets = torch.cumsum(sizes, 0) - sizes
    x = torch.cat([g[0] for g in graphs])
    edge_index = torch.cat([g[1] + off for g, off in zip(graphs, offsets.tolist())], 1)
    edge_attr = torch.cat([g[2] for g in graphs])
    batch = torch.repeat_interleave(torch.arange(len(graphs)), sizes)
    return x, edge_index, edge_attr, batch, torch.cat([g[3] for g in graphs])


class NNConv(nn.Module):
    def __init__(self, d, de):
        super().__init__()
        self.d = d
        self.edge_net = nn.Sequential(nn.Linear(de, 16), nn.ReLU(), nn.Linear(16, d * d))
        self.root = nn.Linear(d, d)

    def forward(self, h, edge_index, edge_attr):
        src, dst = edge_index
        w = self.edge_net(edge_attr).view(-1, self.d, self.d)
        msg = torch.bmm(h[src].unsqueeze(1), w).squeeze(1)
        agg = torch.zeros_like(h).scatter_reduce(
            0, dst[:, None].expand_as(msg), msg, "mean", include_self=False
        )
        return agg + self.root(h)


class GIN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(
            nn.Linear(d, d, bias=False), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, d)
        )

    def forward(self, h, edge_index):
        agg = torch.zeros_like(h).index_add_(0, edge_index[1], h[edge_index[0]])
        return self.mlp((1 + self.eps) * h + agg)


class Set2Set(nn.Module):
    def __init__(self, d, steps=3):
        super().__init__()
        self.steps, self.lstm = steps, nn.LSTM(2 * d, d, batch_first=False)

    def forward(self, h, batch, size):
        q_star = h.new_zeros(size, 2 * h.shape[1])
        state = None
        for _ in range(self.steps):
            q, state = self.lstm(q_star.unsqueeze(0), state)
            q = q.squeeze(0)
            e = (h * q[batch]).sum(-1)
            e_max = torch.full((size,), float("-inf")).scatter_reduce(
                0, batch, e, "amax", include_self=False
            )
            a = (e - e_max[batch]).exp()
            a = a / torch.zeros(size).index_add_(0, batch, a)[batch]
            r = torch.zeros(size, h.shape[1]).index_add_(0, batch, a[:, None] * h)
            q_star = torch.cat([q, r], -1)
        return q_star


class Net(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.lin0 = nn.Linear(5, d)
        self.conv = NNConv(d, 2)
        self.gru = nn.GRU(d, d)
        self.gin = GIN(d)
        self.s2s = Set2Set(d)
        self.out = nn.Sequential(nn.Linear(2 * d + 3 * d, d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x, edge_index, edge_attr, batch, size):
        h = F.relu(self.lin0(x))
        hidden = h.unsqueeze(0)
        for _ in range(2):
            m = F.relu(self.conv(h, edge_index, edge_attr))
            h, hidden = self.gru(m.unsqueeze(0), hidden)
            h = h.squeeze(0)
        h = self.gin(h, edge_index)
        counts = torch.bincount(batch, minlength=size).clamp(min=1)[:, None]
        s = torch.zeros(size, h.shape[1]).index_add_(0, batch, h)
        mx = torch.zeros(size, h.shape[1]).scatter_reduce(
            0, batch[:, None].expand_as(h), h, "amax", include_self=False
        )
        return self.out(torch.cat([self.s2s(h, batch, size), s, s / counts, mx], -1)).squeeze(-1)


graphs = [make_graph(k) for k in range(16)]
x, ei, ea, batch, y = collate(graphs[:4])
print("batch", tuple(x.shape), tuple(ei.shape), batch.tolist()[:12], round(y.sum().item(), 4))
deg = torch.bincount(ei[1], minlength=x.shape[0])
print("degree_hist", torch.bincount(deg).tolist())
y_all = torch.cat([g[3] for g in graphs])
mu, sd = y_all.mean(), y_all.std()
model = Net()
det_init(model)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
for epoch in range(10):
    model.train()
    total = 0.0
    for b in range(0, 12, 4):
        order = [(i + epoch) % 12 for i in range(b, b + 4)]
        x, ei, ea, batch, y = collate([graphs[i] for i in order])
        pred = model(x, ei, ea, batch, 4)
        loss = F.mse_loss(pred, (y - mu) / sd)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 1.0)
        opt.step()
        total += loss.item()
    sched.step()
    if epoch % 3 == 0 or epoch == 9:
        print(f"epoch {epoch} loss {total / 3:.5f} eps {model.gin.eps.item():.5f}")
model.eval()
with torch.no_grad():
    x, ei, ea, batch, y = collate(graphs[12:])
    pred = model(x, ei, ea, batch, 4) * sd + mu
print("test_mae", round((pred - y).abs().mean().item(), 4), [round(v, 3) for v in pred.tolist()])
perm = torch.tensor([3, 1, 0, 2, 5, 4, 6, 7])
g = graphs[5]
inv = torch.argsort(perm[: g[0].shape[0]])
pg = (g[0][perm[: g[0].shape[0]]], inv[g[1]], g[2], g[3])
with torch.no_grad():
    a = model(*collate([g])[:4], 1)
    b = model(*collate([pg])[:4], 1)
print("perm_invariant", torch.allclose(a, b, atol=1e-5), g[0].shape[0])
