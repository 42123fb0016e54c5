"""A masked autoencoder (MAE) on tiny images: patchify with unfold/einsum, per-sample random
masking by argsort of (here deterministic) noise with gather/restore indices, a pre-norm
nn.TransformerEncoder encoder on the visible patches, a mask token expanded into the decoder
sequence, a loss on the masked patches only with per-patch normalized targets, AdamW with
parameter groups (no decay on biases, norms and tokens), and a warmup + cosine LambdaLR."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
P, C, H = 4, 3, 16
N = (H // P) ** 2


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 1.3).cos() * scale
            )


def patchify(imgs):
    cols = F.unfold(imgs, kernel_size=P, stride=P)  # (B, C*P*P, N)
    return cols.transpose(1, 2)


def unpatchify(x):
    b = x.shape[0]
    g = H // P
    x = x.reshape(b, g, g, C, P, P)
    return torch.einsum("nhwcpq->nchpwq", x).reshape(b, C, H, H)


def sincos_pos(d, n):
    g = int(math.sqrt(n))
    yy, xx = torch.meshgrid(torch.arange(g), torch.arange(g), indexing="ij")
    omega = 1.0 / 10000 ** (torch.arange(d // 4, dtype=torch.float32) / (d // 4))
    parts = []
    for pos in (yy.flatten(), xx.flatten()):
        out = pos[:, None].float() * omega[None]
        parts += [out.sin(), out.cos()]
    return torch.cat(parts, 1)


class MAE(nn.Module):
    def __init__(self, d=16, dd=12):
        super().__init__()
        self.embed = nn.Linear(C * P * P, d)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.register_buffer("pos", sincos_pos(d, N)[None], persistent=False)
        layer = nn.TransformerEncoderLayer(
            d, 2, 32, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.dec_embed = nn.Linear(d, dd)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dd))
        self.register_buffer("dec_pos", sincos_pos(dd, N)[None], persistent=False)
        self.decoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(dd, 2, 24, 0.0, batch_first=True, norm_first=True), 1
        )
        self.head = nn.Linear(dd, C * P * P)

    def random_masking(self, x, noise, ratio):
        b, n, d = x.shape
        keep = int(n * (1 - ratio))
        shuffle = torch.argsort(noise, dim=1)
        restore = torch.argsort(shuffle, dim=1)
        ids_keep = shuffle[:, :keep]
        visible = torch.gather(x, 1, ids_keep.unsqueeze(-1).expand(-1, -1, d))
        mask = torch.ones(b, n)
        mask[:, :keep] = 0
        return visible, torch.gather(mask, 1, restore), restore

    def forward(self, imgs, noise, ratio=0.75):
        x = self.embed(patchify(imgs)) + self.pos
        x, mask, restore = self.random_masking(x, noise, ratio)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1)
        latent = self.norm(self.encoder(x))
        y = self.dec_embed(latent)
        fill = self.mask_token.repeat(y.shape[0], restore.shape[1] + 1 - y.shape[1], 1)
        y_ = torch.cat([y[:, 1:], fill], 1)
        y_ = torch.gather(y_, 1, restore.unsqueeze(-1).repeat(1, 1, y.shape[2]))
        pred = self.head(self.decoder(y_ + self.dec_pos))
        target = patchify(imgs)
        mean, var = target.mean(-1, keepdim=True), target.var(-1, keepdim=True)
        target = (target - mean) / (var + 1e-6) ** 0.5
        loss = ((pred - target) ** 2).mean(-1)
        return (loss * mask).sum() / mask.sum(), pred, mask


yy, xx = torch.meshgrid(torch.linspace(-1, 1, H), torch.linspace(-1, 1, H), indexing="ij")
imgs = torch.stack(
    [
        torch.stack([torch.sin(3 * xx * (k + 1) + c) * torch.cos(2 * yy + k) for c in range(C)])
        for k in range(6)
    ]
)
print("patches", tuple(patchify(imgs).shape), torch.allclose(unpatchify(patchify(imgs)), imgs))

model = MAE()
det_init(model)
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim < 2 or "token" in name or name == "cls" else decay).append(p)
print("groups", len(decay), len(no_decay), sum(p.numel() for p in model.parameters()))
opt = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
    lr=3e-3,
    betas=(0.9, 0.95),
)
steps, warm = 12, 3
sched = torch.optim.lr_scheduler.LambdaLR(
    opt,
    lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / steps)),
)
for step in range(steps):
    noise = torch.sin(torch.arange(6 * N, dtype=torch.float32).reshape(6, N) * 1.7 + step) * 1e3
    loss, pred, mask = model(imgs, noise.frac())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    sched.step()
    if step % 3 == 2:
        print(f"step {step} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.6f}")
print("mask", mask.sum(1).tolist(), mask[0, :8].tolist())
model.eval()
with torch.inference_mode():
    loss, pred, mask = model(imgs, torch.linspace(0, 1, N).expand(6, N))
    recon = unpatchify(pred)
print("eval", round(loss.item(), 5), tuple(recon.shape), round(recon.std().item(), 5))
rng_noise = torch.rand(2, N)
print("rng_masking", model.random_masking(torch.zeros(2, N, 3), rng_noise, 0.5)[1].sum().item())
