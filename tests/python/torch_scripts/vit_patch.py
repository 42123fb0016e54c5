# ruff: noqa: E501
"""A small Vision Transformer in the timm style on synthetic 16x16 images: a Conv2d patch
embedding flattened to tokens, a learnable class token and position embedding (trunc_normal_
init replaced by a deterministic one), pre-norm nn.TransformerEncoder layers with GELU,
DropPath (stochastic depth) written by hand, a LayerNorm head, AdamW with a parameter-group
split that skips weight decay on norms / biases / embeddings, a linear-warmup cosine
LambdaLR, label-smoothed cross entropy, and attention maps read back with a forward hook."""

import math

import torch
import torch.nn as nn


def det_init(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            n = p.numel()
            k = torch.arange(n, dtype=torch.float32)
            if name.endswith("bias"):
                p.zero_()
            elif "norm" in name and name.endswith("weight"):
                p.fill_(1.0)
            else:
                p.copy_((torch.sin(k * 0.37 + 0.013 * k * k + i) * scale).view_as(p))


def make_images(n):
    i = torch.arange(n)
    labels = i % 3
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    base = torch.stack([torch.sin(xx * 0.7), torch.sin(yy * 0.7), torch.sin((xx + yy) * 0.5)])
    imgs = base[labels] + 0.1 * torch.cos(i.float()[:, None, None] * 0.3 + xx[None])
    imgs = imgs.unsqueeze(1).repeat(1, 3, 1, 1) * torch.tensor([1.0, 0.8, 0.6]).view(1, 3, 1, 1)
    return imgs, labels


class PatchEmbed(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)  # B, C, H', W'
        return x.flatten(2).transpose(1, 2)  # B, N, C


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        mask = x.new_empty(shape).bernoulli_(keep)
        return x * mask / keep


class ViT(nn.Module):
    def __init__(self, num_classes=3, embed_dim=32, depth=2, heads=4):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=embed_dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + 1, embed_dim))
        layer = nn.TransformerEncoderLayer(
            embed_dim,
            heads,
            dim_feedforward=64,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)
        self.drop_path = DropPath(0.1)

    def forward_features(self, x):
        x = self.patch_embed(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        x = x + self.drop_path(self.blocks(x) - x)
        return self.norm(x)

    def forward(self, x):
        return self.head(self.forward_features(x)[:, 0])


def param_groups(model, weight_decay=0.05):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name.endswith(".bias") or name in ("cls_token", "pos_embed"):
            no_decay.append(p)
        else:
            decay.append(p)
    return [
        {"params": no_decay, "weight_decay": 0.0},
        {"params": decay, "weight_decay": weight_decay},
    ]


def main():
    torch.manual_seed(0)
    x, y = make_images(24)
    model = ViT()
    det_init(model)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params {n_params} tokens {model.patch_embed(x[:2]).shape}")
    groups = param_groups(model)
    print(f"groups {[len(g['params']) for g in groups]}")
    opt = torch.optim.AdamW(groups, lr=3e-3, betas=(0.9, 0.999))
    warmup, total = 3, 20
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: (
            (s + 1) / warmup
            if s < warmup
            else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))
        ),
    )
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    model.drop_path.drop_prob = 0.0  # deterministic figures
    for step in range(total):
        model.train()
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step in (0, total - 1):
            print(
                f"step{step} loss {loss.item():.5f} grad_norm {gn.item():.5f} lr {sched.get_last_lr()[0]:.6f}"
            )
    model.eval()
    with torch.no_grad():
        logits = model(x)
        acc = (logits.argmax(-1) == y).float().mean().item()
    print(f"acc {acc:.4f} logits0 {[round(v, 4) for v in logits[0].tolist()]}")

    # Attention maps of the first block through a hook on its self-attention.
    maps = {}

    def grab(mod, args, kwargs, out):
        q = args[0]
        _, w = mod.forward(q, q, q, need_weights=True, average_attn_weights=False)
        maps["attn"] = w

    h = model.blocks.layers[0].self_attn.register_forward_hook(grab, with_kwargs=True)
    with torch.no_grad():
        model(x[:2])
    h.remove()
    a = maps["attn"]
    print(
        f"attn {tuple(a.shape)} rowsum {a.sum(-1).mean().item():.4f} cls_attn {[round(v, 4) for v in a[0, 0, 0, :4].tolist()]}"
    )
    drop = DropPath(0.5).train()
    out = drop(torch.ones(8, 2, 2))
    print(f"rng_droppath {out[:, 0, 0].tolist()}")
    print(f"droppath_eval {torch.equal(drop.eval()(torch.ones(2, 2)), torch.ones(2, 2))}")


if __name__ == "__main__":
    main()
