# ruff: noqa: E501
"""Attention as models configure it: nn.MultiheadAttention with separate key/value sizes
(kdim/vdim), add_bias_kv and add_zero_attn, key padding and per-head 3-D masks, per-head weights
(average_attn_weights=False), batch_first and unbatched inputs; scaled_dot_product_attention with
boolean and float masks, is_causal, dropout off, grouped-query heads (enable_gqa) and a custom
scale; and a rotary-embedding attention block trained a few steps."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.619 + i + phase) * 0.3).view_as(p))


def det(shape, phase):
    n = 1
    for s in shape:
        n *= s
    return torch.cos(torch.arange(n, dtype=torch.float32) * 0.37 + phase).view(shape)


def rope(x, base=10000.0):
    b, h, t, d = x.shape
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = torch.arange(t, dtype=torch.float32)[:, None] * inv[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class RotaryAttention(nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = rope(self.q(x).view(b, t, self.h, self.hd).transpose(1, 2))
        k = rope(self.k(x).view(b, t, self.kv, self.hd).transpose(1, 2))
        v = self.v(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o(y.transpose(1, 2).reshape(b, t, -1))


def main():
    mha = nn.MultiheadAttention(8, 2, kdim=6, vdim=4, batch_first=True)
    det_init(mha)
    print(f"kvdim_params {[(n, tuple(p.shape)) for n, p in mha.named_parameters()]}")
    q, k, v = det((2, 3, 8), 0.0), det((2, 5, 6), 1.0), det((2, 5, 4), 2.0)
    kpm = torch.tensor([[False] * 5, [False, False, False, True, True]])
    out, w = mha(q, k, v, key_padding_mask=kpm)
    print(
        f"kvdim_out {tuple(out.shape)} {out[1, 0, :3].tolist()} w {tuple(w.shape)} masked {w[1, :, 3:].abs().sum().item()}"
    )
    out, w = mha(q, k, v, key_padding_mask=kpm, average_attn_weights=False)
    print(f"per_head_w {tuple(w.shape)} rowsum {w.sum(-1)[0, 0].tolist()}")

    mha2 = nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)
    det_init(mha2, 1.0)
    print(f"bias_kv {tuple(mha2.bias_k.shape)} {tuple(mha2.bias_v.shape)}")
    x = det((4, 2, 8), 3.0)  # (L, N, E): batch_first=False
    out, w = mha2(x, x, x)
    print(f"bias_kv_out {tuple(out.shape)} w {tuple(w.shape)} {out[0, 0, :3].tolist()}")
    attn_mask = torch.zeros(2 * 2, 4, 4)
    attn_mask[:, :, 0] = float("-inf")
    mha3 = nn.MultiheadAttention(8, 2)
    det_init(mha3, 2.0)
    out, w = mha3(x, x, x, attn_mask=attn_mask)
    print(f"mask3d {w[0, :, 0].abs().sum().item()} {out[1, 1, :3].tolist()}")
    out, w = mha3(x[:, 0], x[:, 0], x[:, 0], need_weights=False)
    print(f"unbatched {tuple(out.shape)} {w} {out[0, :3].tolist()}")
    bool_mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
    o1, _ = mha3(x, x, x, attn_mask=bool_mask)
    o2, _ = mha3(x, x, x, attn_mask=nn.Transformer.generate_square_subsequent_mask(4))
    o3, _ = mha3(x, x, x, attn_mask=bool_mask, is_causal=True)
    print(
        f"bool_vs_float {torch.allclose(o1, o2, atol=1e-6)} causal_flag {torch.allclose(o1, o3, atol=1e-6)}"
    )

    qh, kh, vh = det((1, 2, 3, 4), 0.5), det((1, 2, 5, 4), 1.5), det((1, 2, 5, 4), 2.5)
    bm = torch.tensor([[True, True, False, True, False]] * 3)
    a = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=bm)
    fm = torch.zeros(3, 5).masked_fill(~bm, float("-inf"))
    b = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=fm)
    print(f"sdpa_masks {torch.allclose(a, b, atol=1e-6)} {a[0, 1, 2].tolist()}")
    c = F.scaled_dot_product_attention(qh, kh, vh, scale=0.1)
    ref = torch.softmax(qh @ kh.transpose(-2, -1) * 0.1, -1) @ vh
    print(f"sdpa_scale {torch.allclose(c, ref, atol=1e-6)}")
    causal = F.scaled_dot_product_attention(qh, qh, qh, is_causal=True)
    print(f"sdpa_causal_first {torch.allclose(causal[..., 0, :], qh[..., 0, :])}")
    g = F.scaled_dot_product_attention(det((1, 4, 3, 4), 0.0), kh, vh, enable_gqa=True)
    rep = F.scaled_dot_product_attention(
        det((1, 4, 3, 4), 0.0), kh.repeat_interleave(2, 1), vh.repeat_interleave(2, 1)
    )
    print(f"gqa {tuple(g.shape)} same_as_repeat {torch.allclose(g, rep, atol=1e-6)}")
    try:
        F.scaled_dot_product_attention(det((1, 3, 3, 4), 0.0), kh, vh, enable_gqa=True)
    except RuntimeError as e:
        print(f"gqa_error {type(e).__name__}")

    model = RotaryAttention(16, 4, 2)
    det_init(model, 0.7)
    xs = det((2, 6, 16), 0.9)
    target = xs.roll(1, dims=1)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    for step in range(10):
        loss = F.mse_loss(model(xs), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"rotary_loss {loss.item():.5f} grad_q {model.q.weight.grad.abs().sum().item():.5f}")
    qq = det((1, 1, 4, 8), 0.0)
    print(f"rope_norm_kept {torch.allclose(rope(qq).norm(dim=-1), qq.norm(dim=-1), atol=1e-5)}")
    try:
        nn.MultiheadAttention(10, 3)
    except AssertionError as e:
        print(f"heads_error {e}")


if __name__ == "__main__":
    main()
