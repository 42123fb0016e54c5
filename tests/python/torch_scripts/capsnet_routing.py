"""A capsule network with dynamic routing-by-agreement (Sabour et al.) on tiny synthetic digits:
a primary-capsule conv reshaped into 8-D capsules, the squash nonlinearity, prediction vectors
u_hat through a per-pair weight tensor with torch.einsum and with matmul broadcasting (checked
equal), three routing iterations (softmax over coupling logits, agreement updates with detached
u_hat in the inner iterations), the margin loss, a masked reconstruction decoder using the
true class, and Adam steps."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def squash(s, dim=-1, eps=1e-8):
    n2 = (s * s).sum(dim=dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + eps)


def digits(n):
    yy, xx = torch.meshgrid(torch.arange(12.0), torch.arange(12.0), indexing="ij")
    imgs, labels = [], []
    for i in range(n):
        c = i % 3
        if c == 0:
            img = ((xx - 6) ** 2 + (yy - 6) ** 2 - 16).abs() < 5
        elif c == 1:
            img = (xx - 6).abs() < 1.5
        else:
            img = ((xx - yy).abs() < 1.5) | ((xx + yy - 11).abs() < 1.5)
        shift = i // 3 % 3 - 1
        imgs.append(torch.roll(img.float(), shifts=(shift, -shift), dims=(0, 1)))
        labels.append(c)
    return torch.stack(imgs).unsqueeze(1), torch.tensor(labels)


class CapsNet(nn.Module):
    def __init__(self, n_classes=3, routing_iters=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 5)
        self.primary = nn.Conv2d(16, 4 * 8, 5, stride=2)
        self.n_primary = 4 * 2 * 2
        self.W = nn.Parameter(torch.zeros(1, self.n_primary, n_classes, 12, 8))
        self.iters = routing_iters
        self.decoder = nn.Sequential(
            nn.Linear(12 * n_classes, 64), nn.ReLU(), nn.Linear(64, 144), nn.Sigmoid()
        )

    def forward(self, x, y=None, use_einsum=True):
        b = x.shape[0]
        h = F.relu(self.conv(x))
        u = self.primary(h).view(b, 4, 8, 2, 2).permute(0, 1, 3, 4, 2).reshape(b, self.n_primary, 8)
        u = squash(u)
        if use_einsum:
            u_hat = torch.einsum("bid,ijkd->bijk", u, self.W[0])
        else:
            u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)
        logits = torch.zeros(b, self.n_primary, u_hat.shape[2])
        for it in range(self.iters):
            c = logits.softmax(dim=2)
            if it < self.iters - 1:
                v = squash((c.unsqueeze(-1) * u_hat.detach()).sum(1))
                logits = logits + (u_hat.detach() * v.unsqueeze(1)).sum(-1)
            else:
                v = squash((c.unsqueeze(-1) * u_hat).sum(1))
        lengths = v.norm(dim=-1)
        if y is None:
            y = lengths.argmax(1)
        mask = F.one_hot(y, v.shape[1]).unsqueeze(-1).float()
        recon = self.decoder((v * mask).flatten(1))
        return lengths, recon, c


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    t = F.one_hot(y, lengths.shape[1]).float()
    loss = t * F.relu(m_pos - lengths) ** 2 + lam * (1 - t) * F.relu(lengths - m_neg) ** 2
    return loss.sum(1).mean()


def main():
    x, y = digits(18)
    model = CapsNet()
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            scale = 0.5 if name == "W" else 0.15
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.613 + i).view_as(p)
                * scale
            )
    s = torch.tensor([[3.0, 4.0], [0.0, 0.0], [0.1, 0.0]])
    print(
        "squash",
        [[round(v, 5) for v in row] for row in squash(s).tolist()],
        [round(v, 5) for v in squash(s).norm(dim=-1).tolist()],
    )
    lengths, recon, c = model(x)
    l2, _, _ = model(x, use_einsum=False)
    print(
        "forward",
        tuple(lengths.shape),
        tuple(recon.shape),
        tuple(c.shape),
        torch.allclose(lengths, l2, atol=1e-6),
    )
    print(
        "coupling_sums", [round(v, 5) for v in c.sum(2)[0, :4].tolist()], round(c.max().item(), 5)
    )
    print("lengths0", [round(v, 5) for v in lengths[0].tolist()])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(30):
        lengths, recon, _ = model(x, y)
        loss = margin_loss(lengths, y) + 0.0005 * F.mse_loss(
            recon, x.flatten(1), reduction="sum"
        ) / len(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print("step", step, round(loss.item(), 5), round(model.W.grad.norm().item(), 5))
    model.eval()
    with torch.no_grad():
        lengths, recon, c = model(x)
    pred = lengths.argmax(1)
    print("accuracy", (pred == y).float().mean().item(), pred.tolist())
    print("final_loss", round(loss.item(), 5), round(F.mse_loss(recon, x.flatten(1)).item(), 5))


if __name__ == "__main__":
    main()
