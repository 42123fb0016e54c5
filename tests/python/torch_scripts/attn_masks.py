# ruff: noqa: E501
"""Attention code with masks as transformer repositories write it: scaled_dot_product_attention
with boolean and additive masks, is_causal, a custom scale, grouped-query heads (enable_gqa), a
fully masked row, nn.MultiheadAttention with key_padding_mask plus a per-head 3-D attn_mask,
kdim/vdim, per-head weights, the causal mask helper, and a decoder layer with tgt_is_causal."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det(shape, phase):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n, dtype=torch.float32) * 0.37 + phase).view(*shape)


def det_init(m, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.29 + i).view_as(p)
                * scale
            )


def r(t, n=4):
    return round(float(t), n)


q, k, v = det((2, 4, 5, 8), 0.1), det((2, 4, 6, 8), 0.7), det((2, 4, 6, 8), 1.3)
print("sdpa_plain", r(F.scaled_dot_product_attention(q, k, v).sum()))
bool_mask = torch.ones(5, 6, dtype=torch.bool).tril(1)
print("sdpa_bool", r(F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask).sum()))
add_mask = torch.zeros(5, 6).masked_fill(~bool_mask, float("-inf"))
print(
    "sdpa_additive_eq",
    torch.allclose(
        F.scaled_dot_product_attention(q, k, v, attn_mask=add_mask),
        F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask),
        atol=1e-6,
    ),
)
qs = det((2, 4, 6, 8), 0.2)
print(
    "sdpa_causal",
    r(F.scaled_dot_product_attention(qs, k, v, is_causal=True).sum()),
    r(F.scaled_dot_product_attention(q, k, v, is_causal=True).sum()),
)
print("sdpa_scale", r(F.scaled_dot_product_attention(q, k, v, scale=0.5).sum()))
kv_g, vv_g = det((2, 2, 6, 8), 0.4), det((2, 2, 6, 8), 0.9)
print("sdpa_gqa", r(F.scaled_dot_product_attention(q, kv_g, vv_g, enable_gqa=True).sum()))
full_mask = bool_mask.clone()
full_mask[2] = False
out = F.scaled_dot_product_attention(q, k, v, attn_mask=full_mask)
print("sdpa_masked_row", torch.isnan(out).any().item(), r(out[0, 0, 2].nan_to_num().sum()))
batch_mask = torch.ones(2, 1, 1, 6, dtype=torch.bool)
batch_mask[1, ..., 4:] = False
print("sdpa_bcast_mask", r(F.scaled_dot_product_attention(q, k, v, attn_mask=batch_mask).sum()))
qg = q.clone().requires_grad_()
F.scaled_dot_product_attention(qg, k, v, attn_mask=add_mask).pow(2).sum().backward()
print("sdpa_grad", r(qg.grad.abs().sum()))

mha = nn.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=4)
det_init(mha)
xq = det((2, 5, 8), 0.3)
xk = det((2, 7, 6), 0.5)
xv = det((2, 7, 4), 0.8)
kpm = torch.tensor([[False] * 7, [False] * 5 + [True] * 2])
o, w = mha(xq, xk, xv, key_padding_mask=kpm)
print("mha_kdim", tuple(o.shape), tuple(w.shape), r(o.sum()), r(w[1, :, 5:].sum()))
o2, w2 = mha(xq, xk, xv, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
print("mha_heads", tuple(w2.shape), torch.allclose(w2.mean(1), w, atol=1e-6))
mha2 = nn.MultiheadAttention(8, 2)
det_init(mha2)
xs = det((5, 2, 8), 0.6)
am3 = torch.zeros(2 * 2, 5, 5)
am3[:, :, 0] = -1e9
o3, w3 = mha2(xs, xs, xs, attn_mask=am3)
print("mha_3d_mask", tuple(o3.shape), r(o3.sum()), r(w3[..., 0].sum()))
causal = nn.Transformer.generate_square_subsequent_mask(5)
print("causal_mask", causal[1].tolist(), causal.dtype)
o4, _ = mha2(xs, xs, xs, attn_mask=causal, is_causal=True)
o5, _ = mha2(xs, xs, xs, attn_mask=causal)
print("mha_is_causal", torch.allclose(o4, o5, atol=1e-6), r(o4.sum()))
kpm_f = torch.zeros(2, 5).masked_fill(
    torch.tensor([[0, 0, 0, 0, 1], [0] * 5], dtype=torch.bool), float("-inf")
)
o6, _ = mha2(xs, xs, xs, key_padding_mask=kpm_f)
print("mha_float_kpm", r(o6.sum()))
o7, w7 = mha2(xs, xs, xs, need_weights=False)
print("mha_no_weights", w7, r(o7.sum()))

dec = nn.TransformerDecoderLayer(
    8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=True
)
det_init(dec)
tgt = det((2, 5, 8), 0.2)
mem = det((2, 3, 8), 0.9)
d1 = dec(
    tgt,
    mem,
    tgt_mask=causal,
    tgt_is_causal=True,
    memory_key_padding_mask=torch.tensor([[False, False, True], [False, False, False]]),
)
print("decoder", tuple(d1.shape), r(d1.sum()), r(d1[0, 0].sum()))
enc = nn.TransformerEncoder(
    nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation="gelu", batch_first=True),
    num_layers=2,
    enable_nested_tensor=False,
)
det_init(enc)
e1 = enc(tgt, mask=causal, is_causal=True)
print("encoder_causal", r(e1.sum()), r(e1[1, -1].sum()))
mask_bool = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
print("encoder_bool_mask_eq", torch.allclose(enc(tgt, mask=mask_bool), e1, atol=1e-5))
