# ruff: noqa: E501
"""A tiny decoder-only GPT in the nanoGPT style: a character tokenizer, causal self-attention
written with scaled_dot_product_attention and with an explicit masked_fill mask, a
TransformerDecoder variant, AdamW with weight-decay groups, a cosine schedule with warmup,
and generation with temperature, top-k and torch.multinomial."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = "hello world. hello there. the world is wide. there is hello in the world. " * 4


def det_init(module):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if name.endswith("bias"):
                p.zero_()
            elif "ln" in name or "norm" in name:
                p.fill_(1.0)
            else:
                n = p.numel()
                p.copy_(
                    (torch.sin(torch.arange(n, dtype=torch.float32) * 1.37 + i) * 0.08).view_as(p)
                )


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, flash=True):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd, self.flash = n_head, n_embd, flash
        self.register_buffer(
            "bias",
            torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size),
        )

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True
            )
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, flash):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, flash)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * n_embd, n_embd),
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=16, n_layer=2, n_head=2, n_embd=32, flash=True):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(vocab_size, n_embd),
                wpe=nn.Embedding(block_size, n_embd),
                h=nn.ModuleList([Block(n_embd, n_head, block_size, flash) for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd),
            )
        )
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        det_init(self)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        print(
            f"num_decayed {len(decay_params)} {sum(p.numel() for p in decay_params)} num_nodecay {len(nodecay_params)}"
        )
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size :]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def get_lr(it, warmup=5, max_iters=40, lr=3e-3, min_lr=3e-4):
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    decay_ratio = (it - warmup) / (max_iters - warmup)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (lr - min_lr)


def main():
    torch.manual_seed(1337)
    chars = sorted(set(TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731
    decode = lambda l: "".join(itos[i] for i in l)  # noqa: E731
    data = torch.tensor(encode(TEXT), dtype=torch.long)
    print(f"vocab {len(chars)} data {tuple(data.shape)}")
    block_size, batch_size = 16, 8
    starts = torch.arange(0, len(data) - block_size - 1, 7)

    def get_batch(it):
        ix = starts[(torch.arange(batch_size) + it * batch_size) % len(starts)]
        x = torch.stack([data[i : i + block_size] for i in ix])
        y = torch.stack([data[i + 1 : i + 1 + block_size] for i in ix])
        return x, y

    model = GPT(len(chars), block_size)
    print(
        f"n_params {sum(p.numel() for p in model.parameters())} tied {model.transformer.wte.weight is model.lm_head.weight}"
    )
    ref = GPT(len(chars), block_size, flash=False)
    xb, yb = get_batch(0)
    l1, loss1 = model(xb, yb)
    l2, loss2 = ref(xb, yb)
    print(f"flash_vs_manual {torch.allclose(l1, l2, atol=1e-5)} loss0 {loss1.item():.5f}")

    optimizer = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    for it in range(40):
        lr = get_lr(it)
        for g in optimizer.param_groups:
            g["lr"] = lr
        xb, yb = get_batch(it)
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if it in (0, 10, 39):
            print(f"iter{it} loss {loss.item():.4f} norm {norm.item():.4f} lr {lr:.6f}")

    model.eval()
    ctx = torch.tensor([encode("hello ")], dtype=torch.long)
    with torch.no_grad():
        logits, _ = model(ctx)
        print(
            f"next_logits_shape {tuple(logits.shape)} argmax {decode([logits[0, -1].argmax().item()])!r}"
        )
        greedy = ctx
        for _ in range(10):
            lg, _ = model(greedy[:, -block_size:])
            greedy = torch.cat([greedy, lg[:, -1].argmax(-1, keepdim=True)], dim=1)
        print(f"greedy {decode(greedy[0].tolist())!r}")
    out = model.generate(ctx, 20, temperature=0.8, top_k=5)
    print(f"rng_sample {decode(out[0].tolist())!r}")
    print(f"sample_len {out.shape[1]}")

    # The same causal language model on the stock decoder layer (memory-free: self-attention only).
    layer = nn.TransformerDecoderLayer(
        d_model=32, nhead=2, dim_feedforward=64, dropout=0.0, batch_first=True, norm_first=True
    )
    dec = nn.TransformerDecoder(layer, num_layers=2)
    det_init(dec)
    emb = nn.Embedding(len(chars), 32)
    det_init(emb)
    mask = nn.Transformer.generate_square_subsequent_mask(block_size)
    x = emb(xb)
    memory = torch.zeros(batch_size, 1, 32)
    y = dec(x, memory, tgt_mask=mask, tgt_is_causal=True)
    y2 = dec(x[:, :8], memory, tgt_mask=mask[:8, :8])
    print(
        f"decoder_out {tuple(y.shape)} prefix_consistent {torch.allclose(y[:, :8], y2, atol=1e-5)} mean {y.mean().item():.5f}"
    )
    kpm = torch.zeros(batch_size, block_size, dtype=torch.bool)
    kpm[:, -3:] = True
    y3 = dec(x, memory, tgt_mask=mask, tgt_key_padding_mask=kpm)
    print(f"decoder_kpm_prefix_same {torch.allclose(y3[:, :-3], y[:, :-3], atol=1e-5)}")


if __name__ == "__main__":
    main()
