"""A Llama-style decoder: RMSNorm (nn.RMSNorm and a hand-written one), rotary position
embeddings through complex numbers (torch.polar, view_as_complex), grouped-query attention with
repeat_interleave, SwiGLU, SDPA with is_causal and with an explicit float mask, a KV cache for
incremental decoding and greedy generation; trained a few AdamW steps with a cosine schedule."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, HEADS, KV_HEADS, LAYERS, MAXLEN = 32, 32, 4, 2, 2, 24


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = DIM // HEADS
        self.wq = nn.Linear(DIM, HEADS * self.head_dim, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * self.head_dim, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * self.head_dim, bias=False)
        self.wo = nn.Linear(HEADS * self.head_dim, DIM, bias=False)
        self.cache_k = self.cache_v = None

    def forward(self, x, freqs_cis, start_pos=0, use_cache=False, explicit_mask=False):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, HEADS, self.head_dim)
        k = self.wk(x).view(b, t, KV_HEADS, self.head_dim)
        v = self.wv(x).view(b, t, KV_HEADS, self.head_dim)
        q, k = apply_rotary(q, k, freqs_cis)
        if use_cache:
            if start_pos == 0:
                self.cache_k, self.cache_v = k, v
            else:
                self.cache_k = torch.cat([self.cache_k, k], dim=1)
                self.cache_v = torch.cat([self.cache_v, v], dim=1)
            k, v = self.cache_k, self.cache_v
        rep = HEADS // KV_HEADS
        k = torch.repeat_interleave(k, rep, dim=2)
        v = torch.repeat_interleave(v, rep, dim=2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        if explicit_mask:
            mask = torch.full((t, k.shape[2]), float("-inf")).triu(1 + start_pos)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        elif t > 1:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            out = F.scaled_dot_product_attention(q, k, v)
        return self.wo(out.transpose(1, 2).contiguous().view(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w1 = nn.Linear(DIM, hidden, bias=False)
        self.w2 = nn.Linear(hidden, DIM, bias=False)
        self.w3 = nn.Linear(DIM, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Layer(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward(64)
        self.attention_norm = RMSNorm(DIM) if i % 2 == 0 else nn.RMSNorm(DIM, eps=1e-6)
        self.ffn_norm = nn.RMSNorm(DIM, eps=1e-6)

    def forward(self, x, freqs_cis, **kw):
        h = x + self.attention(self.attention_norm(x), freqs_cis, **kw)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Layer(i) for i in range(LAYERS))
        self.norm = nn.RMSNorm(DIM, eps=1e-6)
        self.output = nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer(
            "freqs_cis", precompute_freqs_cis(DIM // HEADS, MAXLEN), persistent=False
        )

    def forward(self, tokens, start_pos=0, **kw):
        h = self.tok_embeddings(tokens)
        freqs = self.freqs_cis[start_pos : start_pos + tokens.shape[1]]
        for layer in self.layers:
            h = layer(h, freqs, start_pos=start_pos, **kw)
        return self.output(self.norm(h)).float()


def det_init(model):
    with torch.no_grad():
        for k, (name, p) in enumerate(model.named_parameters()):
            if name.endswith("weight") and p.dim() == 1:
                continue
            n = p.numel()
            p.copy_(
                (
                    torch.sin(torch.arange(n, dtype=torch.float32) * 1.3 + k)
                    * 0.5
                    / math.sqrt(p.shape[-1])
                ).view_as(p)
            )


def batch(step, b=4, t=12):
    i = torch.arange(b * (t + 1)).view(b, t + 1) + step * 7
    return (i * 5 + (i // 3)) % VOCAB


def main():
    model = Transformer()
    det_init(model)
    print(f"params {sum(p.numel() for p in model.parameters())}")
    print(
        f"freqs {model.freqs_cis.dtype} {tuple(model.freqs_cis.shape)} "
        f"{model.freqs_cis[3, 1].item()}"
    )
    print(f"buffers_in_sd {'freqs_cis' in model.state_dict()}")
    seq = batch(0)
    logits_causal = model(seq[:, :-1])
    logits_mask = model(seq[:, :-1], explicit_mask=True)
    print(f"causal_eq_mask {torch.allclose(logits_causal, logits_mask, atol=1e-5)}")
    print(f"logits {tuple(logits_causal.shape)} {logits_causal[0, -1, :4].tolist()}")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20, eta_min=1e-4)
    losses = []
    for step in range(20):
        seq = batch(step)
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    print(f"loss_first {losses[0]:.5f} loss_last {losses[-1]:.5f} grad_norm {gn.item():.5f}")
    print(f"lr_end {sched.get_last_lr()[0]:.6f}")
    model.eval()
    prompt = batch(99)[:2, :5]
    with torch.inference_mode():
        full = prompt
        for _ in range(6):
            nxt = model(full)[:, -1].argmax(-1, keepdim=True)
            full = torch.cat([full, nxt], 1)
        cached = prompt
        logits = model(prompt, start_pos=0, use_cache=True)
        pos = prompt.shape[1]
        for _ in range(6):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            cached = torch.cat([cached, nxt], 1)
            logits = model(nxt, start_pos=pos, use_cache=True)
            pos += 1
    print(f"greedy {full.tolist()}")
    print(
        f"kv_cache_same {torch.equal(full, cached)} "
        f"cache_shape {tuple(model.layers[0].attention.cache_k.shape)}"
    )
    print(f"inference_tensor {full.is_inference()}")


if __name__ == "__main__":
    main()
