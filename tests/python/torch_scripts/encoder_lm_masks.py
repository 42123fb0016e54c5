# ruff: noqa: E501
"""A small language-model step on nn.TransformerEncoder as tutorials write it: sequence-first
layout (batch_first=False), the causal mask from Transformer.generate_square_subsequent_mask,
a key padding mask, pre-norm GELU layers with a final LayerNorm, tied input/output embeddings,
AdamW with weight-decay groups, gradient clipping, and the eval-mode forward whose padded
positions the fast path returns as zeros."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(model, scale=0.12):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if "norm" in name and name.endswith("weight"):
                p.fill_(1.0)
                continue
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.377 + 0.5 * i)
                    * scale
                ).view_as(p)
            )


class LM(nn.Module):
    def __init__(self, vocab=20, d=16, nhead=2, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(
            d, nhead, dim_feedforward=32, dropout=0.1, activation="gelu", norm_first=True
        )
        self.enc = nn.TransformerEncoder(
            layer, layers, norm=nn.LayerNorm(d), enable_nested_tensor=False
        )
        self.out = nn.Linear(d, vocab, bias=False)
        self.out.weight = self.emb.weight
        self.d = d

    def forward(self, src, mask, pad):
        h = self.emb(src) * math.sqrt(self.d)
        return self.out(self.enc(h, mask=mask, src_key_padding_mask=pad, is_causal=True))


model = LM()
det_init(model)
print("tied", model.out.weight is model.emb.weight, len(list(model.parameters())))
seq, batch = 6, 3
src = (torch.arange(seq * batch).reshape(seq, batch) * 7 % 19) + 1
src[4:, 1] = 0
src[5:, 2] = 0
pad = (src == 0).t()
mask = nn.Transformer.generate_square_subsequent_mask(seq)
print("mask", mask[1].tolist(), mask.dtype)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
opt = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=3e-3
)
model.train()
for m in model.modules():  # deterministic: no dropout, the attention's own included
    if isinstance(m, nn.Dropout):
        m.p = 0.0
    if isinstance(m, nn.MultiheadAttention):
        m.dropout = 0.0
for step in range(3):
    logits = model(src[:-1], mask[:-1, :-1], pad[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), src[1:].reshape(-1), ignore_index=0)
    opt.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    opt.step()
    print(f"step{step} loss {loss.item():.5f} grad_norm {gn.item():.5f}")

model.eval()
with torch.no_grad():
    out = model.enc(model.emb(src) * 4.0, mask=mask, src_key_padding_mask=pad)
    print("eval_shape", tuple(out.shape), round(out[:4, 1].abs().sum().item(), 4))
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)
    det_init(layer)
    layer.eval()
    enc = nn.TransformerEncoder(layer, 1)
    y = enc(model.emb(src.t()), src_key_padding_mask=pad)
    print("fast_path_pad_zero", y[1, 4:].abs().sum().item() == 0, round(y[0].abs().sum().item(), 4))
probs = model(src, mask, pad).softmax(-1)
print("next_token", probs[-1].argmax(-1).tolist(), round(probs.max().item(), 5))
