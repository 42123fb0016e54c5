"""A VQ-VAE in the style of the original paper's PyTorch ports on tiny 8x8 images: a conv
encoder, a vector-quantization layer (squared distances through torch.cdist and the expanded
form, argmin codes, embedding lookup with F.embedding), the straight-through estimator
(z + (q - z).detach()), codebook and commitment losses, an EMA codebook variant updated with
index_add_ / one_hot counts and Laplace smoothing, codebook perplexity and usage, dead-code
restarts from encoder outputs, and a conv-transpose decoder; plus Gumbel-softmax relaxed
quantization (hard=True, straight-through) whose samples depend on the random stream."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def images(n):
    yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    out = []
    for i in range(n):
        cx, cy, r = 2 + (i * 3) % 5, 2 + (i * 2) % 5, 1.5 + (i % 3) * 0.5
        out.append(((xx - cx) ** 2 + (yy - cy) ** 2 < r * r).float())
    return torch.stack(out).unsqueeze(1)


class VectorQuantizer(nn.Module):
    def __init__(self, n_codes, dim, beta=0.25, ema=False, decay=0.9):
        super().__init__()
        self.codebook = nn.Embedding(n_codes, dim)
        self.beta, self.ema, self.decay = beta, ema, decay
        if ema:
            self.codebook.weight.requires_grad_(False)
            self.register_buffer("cluster_size", torch.zeros(n_codes))
            self.register_buffer("embed_sum", self.codebook.weight.detach().clone())

    def forward(self, z):
        b, c, h, w = z.shape
        flat = z.permute(0, 2, 3, 1).reshape(-1, c)
        d = (
            flat.pow(2).sum(1, keepdim=True)
            - 2 * flat @ self.codebook.weight.t()
            + self.codebook.weight.pow(2).sum(1)
        )
        codes = d.argmin(1)
        q = F.embedding(codes, self.codebook.weight).view(b, h, w, c).permute(0, 3, 1, 2)
        if self.ema and self.training:
            with torch.no_grad():
                onehot = F.one_hot(codes, self.codebook.num_embeddings).type(flat.dtype)
                self.cluster_size.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
                summed = torch.zeros_like(self.embed_sum).index_add_(0, codes, flat)
                self.embed_sum.mul_(self.decay).add_(summed, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                size = (self.cluster_size + 1e-5) / (n + self.codebook.num_embeddings * 1e-5) * n
                self.codebook.weight.copy_(self.embed_sum / size.unsqueeze(1))
            loss = self.beta * F.mse_loss(z, q.detach())
        else:
            loss = F.mse_loss(q, z.detach()) + self.beta * F.mse_loss(z, q.detach())
        q_st = z + (q - z).detach()
        probs = (
            torch.bincount(codes, minlength=self.codebook.num_embeddings).float() / codes.numel()
        )
        perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
        return q_st, loss, codes.view(b, h, w), perplexity, d

    @torch.no_grad()
    def restart_dead(self, z, usage):
        flat = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        dead = (usage == 0).nonzero(as_tuple=True)[0]
        self.codebook.weight[dead] = flat[torch.arange(len(dead)) * 3 % len(flat)]
        return dead.tolist()


class VQVAE(nn.Module):
    def __init__(self, n_codes=8, dim=4, ema=False):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1), nn.ReLU(), nn.Conv2d(8, dim, 3, 1, 1))
        self.vq = VectorQuantizer(n_codes, dim, ema=ema)
        self.dec = nn.Sequential(
            nn.Conv2d(dim, 8, 3, 1, 1), nn.ReLU(), nn.ConvTranspose2d(8, 1, 4, 2, 1)
        )

    def forward(self, x):
        z = self.enc(x)
        q, vq_loss, codes, ppl, d = self.vq(z)
        return self.dec(q), vq_loss, codes, ppl, z, d


def det_init(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 1.31 + i * 0.7).view_as(p)
                * 0.4
            )
        for name, b in model.named_buffers():
            if name.endswith("embed_sum"):
                b.copy_(model.vq.codebook.weight)


def train(model, x, steps=25):
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for step in range(steps):
        recon, vq_loss, codes, ppl, z, d = model(x)
        rec = F.binary_cross_entropy_with_logits(recon, x)
        loss = rec + vq_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    return rec, vq_loss, codes, ppl, z, d


def main():
    x = images(12)
    model = VQVAE()
    det_init(model)
    recon, vq_loss, codes, ppl, z, d = model(x)
    dist = torch.cdist(z.permute(0, 2, 3, 1).reshape(-1, 4), model.vq.codebook.weight) ** 2
    print(
        "init",
        tuple(recon.shape),
        tuple(codes.shape),
        round(vq_loss.item(), 5),
        round(ppl.item(), 4),
    )
    print(
        "cdist_matches",
        torch.allclose(dist, d, atol=1e-4),
        torch.equal(dist.argmin(1), codes.flatten()),
    )
    z.retain_grad()
    (recon.sum() + vq_loss).backward()
    print(
        "straight_through",
        z.grad is not None,
        round(z.grad.abs().sum().item(), 4),
        model.vq.codebook.weight.grad.abs().sum().item() > 0,
    )
    model.zero_grad()
    rec, vq_loss, codes, ppl, z, _ = train(model, x)
    usage = torch.bincount(codes.flatten(), minlength=8)
    print(
        "trained",
        round(rec.item(), 5),
        round(vq_loss.item(), 5),
        round(ppl.item(), 4),
        usage.tolist(),
    )
    print("restarted", model.vq.restart_dead(z, usage))
    print("codes_img0", codes[0].tolist())

    ema = VQVAE(ema=True)
    det_init(ema)
    rec, vq_loss, codes, ppl, _, _ = train(ema, x)
    print(
        "ema",
        round(rec.item(), 5),
        round(vq_loss.item(), 5),
        round(ppl.item(), 4),
        round(ema.vq.cluster_size.sum().item(), 4),
        ema.vq.codebook.weight.requires_grad,
    )
    print("ema_codebook", [round(v, 4) for v in ema.vq.codebook.weight[:2].flatten().tolist()])
    ema.eval()
    with torch.no_grad():
        before = ema.vq.codebook.weight.clone()
        ema(x)
    print("ema_eval_frozen", torch.equal(before, ema.vq.codebook.weight))

    logits = torch.tensor([[2.0, 0.5, -1.0], [0.0, 0.1, 0.2]], requires_grad=True)
    torch.manual_seed(0)
    y_hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    y_soft = F.gumbel_softmax(logits, tau=0.5)
    (y_hard * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    print(
        "gumbel",
        y_hard.sum(1).tolist(),
        bool(((y_hard == 0) | (y_hard == 1)).all()),
        round(y_soft.sum().item(), 4),
        logits.grad.abs().sum().item() > 0,
    )
    print("rng_gumbel", y_hard.argmax(1).tolist())


if __name__ == "__main__":
    main()
