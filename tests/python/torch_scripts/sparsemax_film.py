"""Two small research ideas as their papers' reference code writes them: sparsemax and
1.5-entmax (by bisection) as autograd.Functions with hand-written backward passes (sort,
cumsum, gather of the threshold, masks), checked with torch.autograd.gradcheck in float64 and
used as a sparse attention; and FiLM conditioning where a hypernetwork emits per-example
scales and shifts, plus weights applied through torch.func.functional_call."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


class Sparsemax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z, dim=-1):
        zs, _ = torch.sort(z, dim=dim, descending=True)
        k = torch.arange(1, z.shape[dim] + 1, dtype=z.dtype).view(
            [-1 if i == (dim % z.dim()) else 1 for i in range(z.dim())]
        )
        cs = zs.cumsum(dim) - 1
        support = (k * zs > cs).sum(dim=dim, keepdim=True)
        tau = cs.gather(dim, support - 1) / support.to(z.dtype)
        out = torch.clamp(z - tau, min=0)
        ctx.save_for_backward(out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        nz = (out > 0).to(g.dtype)
        v = (g * nz).sum(ctx.dim, keepdim=True) / nz.sum(ctx.dim, keepdim=True)
        return nz * (g - v), None


def entmax15_bisect(z, dim=-1, n_iter=40):
    z = z / 2
    zmax = z.max(dim=dim, keepdim=True).values
    lo, hi = zmax - 1, zmax - (1 / z.shape[dim]) ** 0.5
    for _ in range(n_iter):
        tau = (lo + hi) / 2
        p = torch.clamp(z - tau, min=0) ** 2
        f = p.sum(dim, keepdim=True) - 1
        lo = torch.where(f > 0, tau, lo)
        hi = torch.where(f > 0, hi, tau)
    p = torch.clamp(z - (lo + hi) / 2, min=0) ** 2
    return p / p.sum(dim, keepdim=True)


z = torch.tensor([[1.0, 0.8, 0.1, -1.0], [0.3, 0.3, 0.3, 0.3], [2.0, -2.0, 0.0, 1.9]])
sp = Sparsemax.apply(z, -1)
print("sparsemax", [[round(v, 4) for v in row] for row in sp.tolist()], sp.sum(-1).tolist())
print("sparsemax_dim0", [round(v, 4) for v in Sparsemax.apply(z, 0)[:, 0].tolist()])
ent = entmax15_bisect(z)
print("entmax15", [[round(v, 4) for v in row] for row in ent.tolist()])
print(
    "softmax_dense", bool((F.softmax(z, -1) > 0).all()), int((sp == 0).sum()), int((ent == 0).sum())
)
zd = torch.tensor(
    [[0.5, 0.1, -0.3, 0.9], [1.0, 1.1, -1.0, 0.0]], dtype=torch.float64, requires_grad=True
)
print(
    "gradcheck",
    torch.autograd.gradcheck(lambda t: Sparsemax.apply(t, -1), (zd,), eps=1e-6, atol=1e-5),
)

q = torch.sin(torch.arange(24.0).view(2, 3, 4))
k = torch.cos(torch.arange(32.0).view(2, 4, 4))
scores = q @ k.transpose(1, 2) / 2.0
att = Sparsemax.apply(scores, -1)
print("sparse_attention", tuple(att.shape), [int(v) for v in (att > 0).sum(-1).flatten().tolist()])


class FiLMNet(nn.Module):
    def __init__(self, n_cond=3, ch=8):
        super().__init__()
        self.conv1 = nn.Conv2d(1, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.film = nn.Linear(n_cond, 4 * ch)
        self.head = nn.Linear(ch, 2)

    def forward(self, x, c):
        g1, b1, g2, b2 = self.film(c).chunk(4, dim=-1)
        h = F.relu((1 + g1[..., None, None]) * self.conv1(x) + b1[..., None, None])
        h = F.relu((1 + g2[..., None, None]) * self.conv2(h) + b2[..., None, None])
        return self.head(h.mean((2, 3)))


net = FiLMNet()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.41 + i).view_as(p) * 0.3)
x = torch.cos(torch.arange(6 * 36, dtype=torch.float32) * 0.3).view(6, 1, 6, 6)
c = F.one_hot(torch.tensor([0, 1, 2, 0, 1, 2]), 3).float()
y = torch.tensor([0, 1, 1, 0, 1, 1])
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(25):
    loss = F.cross_entropy(net(x, c), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 0:
        first = loss.item()
print("film", round(first, 4), round(loss.item(), 4), loss.item() < first)


class HyperNet(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.shapes = {n: p.shape for n, p in target.named_parameters()}
        total = sum(s.numel() for s in self.shapes.values())
        self.gen = nn.Linear(2, total)

    def forward(self, task):
        flat = self.gen(task)
        out, i = {}, 0
        for n, s in self.shapes.items():
            out[n] = flat[i : i + s.numel()].view(s)
            i += s.numel()
        return out


target = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
hyper = HyperNet(target)
with torch.no_grad():
    hyper.gen.weight.copy_(
        torch.sin(torch.arange(hyper.gen.weight.numel(), dtype=torch.float32)).view_as(
            hyper.gen.weight
        )
        * 0.3
    )
    hyper.gen.bias.zero_()
xs = torch.linspace(-1, 1, 16).unsqueeze(-1)
tasks = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])]
targets = [torch.sin(2 * xs), xs**2]
hopt = torch.optim.Adam(hyper.parameters(), lr=1e-2)
for step in range(40):
    loss = sum(
        F.mse_loss(functional_call(target, hyper(t), (xs,)), yt) for t, yt in zip(tasks, targets)
    )
    hopt.zero_grad()
    loss.backward()
    hopt.step()
    if step == 0:
        first = loss.item()
print("hypernet", round(first, 4), round(loss.item(), 4), loss.item() < first / 2)
print("target_untouched", all(p.grad is None for p in target.parameters()), sorted(hyper(tasks[0])))
