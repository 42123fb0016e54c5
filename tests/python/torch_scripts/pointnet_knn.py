"""Point-cloud code from PointNet / DGCNN reference implementations: a T-Net predicting a 3x3
transform with an identity bias and the orthogonality regulariser (bmm, eye, norm), farthest
point sampling written with a Python loop (argmax over running min distances), k-nearest
neighbours from pairwise squared distances and topk(largest=False), neighbour gathering with a
batch offset index (arange(B)[:, None, None]), EdgeConv features max-pooled over neighbours,
global max pooling, and a few classifier training steps."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B, N, K = 4, 32, 6


def cloud(b):
    t = torch.linspace(0, 6.28, N)
    r = 1.0 + 0.3 * b
    # a slight spiral (0.07 * t): no two distances tie, so argmax and topk pick the same points
    pts = torch.stack(
        [r * torch.cos(t * (b + 1)) + 0.07 * t, r * torch.sin(t), 0.2 * b * torch.cos(3 * t)], -1
    )
    return pts


def farthest_point_sample(xyz, npoint):
    b, n, _ = xyz.shape
    centroids = torch.zeros(b, npoint, dtype=torch.long)
    distance = torch.full((b, n), 1e10)
    farthest = torch.zeros(b, dtype=torch.long)
    batch = torch.arange(b)
    for i in range(npoint):
        centroids[:, i] = farthest
        c = xyz[batch, farthest, :].view(b, 1, 3)
        dist = torch.sum((xyz - c) ** 2, -1)
        distance = torch.min(distance, dist)
        farthest = torch.max(distance, -1)[1]
    return centroids


def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x**2, dim=1, keepdim=True)
    pairwise = -xx - inner - xx.transpose(2, 1)
    return pairwise.topk(k=k, dim=-1)[1]


def graph_feature(x, k):
    b, c, n = x.shape
    idx = knn(x, k)
    idx = (idx + torch.arange(b).view(-1, 1, 1) * n).view(-1)
    xt = x.transpose(2, 1).contiguous()
    feat = xt.view(b * n, -1)[idx, :].view(b, n, k, c)
    xt = xt.view(b, n, 1, c).repeat(1, 1, k, 1)
    return torch.cat((feat - xt, xt), dim=3).permute(0, 3, 1, 2).contiguous()


class TNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 16, 1)
        self.fc = nn.Linear(16, 9)

    def forward(self, x):
        h = F.relu(self.conv(x)).max(dim=2)[0]
        iden = torch.eye(3).flatten().unsqueeze(0).repeat(x.shape[0], 1)
        return (self.fc(h) + iden).view(-1, 3, 3)


class DGCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.tnet = TNet()
        self.edge = nn.Sequential(
            nn.Conv2d(6, 16, 1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2)
        )
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        trans = self.tnet(x)
        x = torch.bmm(x.transpose(2, 1), trans).transpose(2, 1)
        h = self.edge(graph_feature(x, K)).max(dim=-1, keepdim=False)[0]
        return self.head(F.adaptive_max_pool1d(h, 1).squeeze(-1)), trans


def ortho_reg(trans):
    d = trans.shape[1]
    eye = torch.eye(d)[None]
    return torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - eye, dim=(1, 2)))


xyz = torch.stack([cloud(b) for b in range(B)])
cent = farthest_point_sample(xyz, 8)
print("fps", cent[0].tolist(), cent[3].tolist())
idx = knn(xyz.transpose(1, 2), K)
print("knn", tuple(idx.shape), idx[0, 0].tolist(), bool((idx[..., 0] == torch.arange(N)).all()))
gf = graph_feature(xyz.transpose(1, 2), K)
print("graph_feature", tuple(gf.shape), round(gf.abs().sum().item(), 3))

model = DGCNN()
with torch.no_grad():
    for k, (name, p) in enumerate(model.named_parameters()):
        if "edge.1" in name:
            continue
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.53 + k).view_as(p) * 0.3)
labels = torch.tensor([0, 1, 2, 1])
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(20):
    logits, trans = model(xyz.transpose(1, 2))
    loss = F.cross_entropy(logits, labels) + 0.001 * ortho_reg(trans)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 0:
        first = loss.item()
print("train", round(first, 4), round(loss.item(), 4), loss.item() < first)
model.eval()
with torch.no_grad():
    logits, trans = model(xyz.transpose(1, 2))
print("eval", logits.argmax(1).tolist(), round(ortho_reg(trans).item(), 4))
print(
    "bn_stats",
    [round(v, 4) for v in model.edge[1].running_mean[:3].tolist()],
    int(model.edge[1].num_batches_tracked),
)
rot = torch.linalg.matrix_exp(torch.tensor([[0.0, -0.7, 0.0], [0.7, 0.0, 0.0], [0.0, 0.0, 0.0]]))
idx_rot = knn((xyz @ rot.T).transpose(1, 2), K)
print("knn_rotation_invariant", torch.equal(idx_rot, idx))
