"""Transformer encoder text classifier: learned token embeddings, sinusoidal positions
as a buffer, key padding masks, causal masks, scaled_dot_product_attention, warmup."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(model, scale=0.15):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if name.endswith("norm1.weight") or name.endswith("norm2.weight"):
                p.fill_(1.0)
                continue
            n = p.numel()
            p.copy_(
                (torch.cos(torch.arange(n, dtype=torch.float32) * 0.377 + 0.5 * i) * scale).view_as(
                    p
                )
            )


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class Classifier(nn.Module):
    def __init__(self, vocab, d_model=32, nhead=4, layers=2, classes=3, norm_first=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=64,
            dropout=0.0,
            batch_first=True,
            activation="gelu",
            norm_first=norm_first,
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, classes))

    def forward(self, tokens):
        pad = tokens.eq(0)
        h = self.encoder(
            self.pos(self.emb(tokens) * math.sqrt(self.emb.embedding_dim)), src_key_padding_mask=pad
        )
        keep = (~pad).unsqueeze(-1).float()
        pooled = (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        return self.head(pooled)


def make_data(n=48, vocab=20, max_len=12):
    # Label = which third of the vocabulary the majority of tokens come from.
    xs, ys = [], []
    for i in range(n):
        length = 4 + (i * 5) % (max_len - 4)
        cls = i % 3
        lo = 1 + cls * 6
        toks = [lo + (i * 7 + j * 3) % 6 for j in range(length)]
        toks += [0] * (max_len - length)
        xs.append(toks)
        ys.append(cls)
    return torch.tensor(xs), torch.tensor(ys)


def manual_causal_attention(q, k, v):
    L = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    mask = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    return scores.softmax(-1) @ v


def main():
    torch.manual_seed(0)
    x, y = make_data()
    model = Classifier(vocab=20)
    det_init(model)
    print(f"num_layers {len(model.encoder.layers)}")
    print(f"buffers {[n for n, _ in model.named_buffers()]}")
    print(f"state_dict_has_pe {'pos.pe' in model.state_dict()}")
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    warmup = 5
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
    lrs = []
    for step in range(40):
        logits = model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
        if step == 0:
            print(f"loss_first {loss.item():.6f}")
    print(f"lr_sched {[round(v, 6) for v in lrs[:6]]}")
    print(f"loss_last {loss.item():.6f}")
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(-1) == y).float().mean().item()
    print(f"train_acc {acc:.4f}")

    # Attention building blocks.
    q = torch.sin(torch.arange(2 * 4 * 6 * 8, dtype=torch.float32)).reshape(2, 4, 6, 8)
    k = torch.cos(torch.arange(2 * 4 * 6 * 8, dtype=torch.float32) * 0.3).reshape(2, 4, 6, 8)
    v = torch.sin(torch.arange(2 * 4 * 6 * 8, dtype=torch.float32) * 0.7).reshape(2, 4, 6, 8)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    b = manual_causal_attention(q, k, v)
    print(f"sdpa_causal_maxdiff_small {bool((a - b).abs().max() < 1e-5)}")
    print(f"sdpa_sum {a.sum().item():.5f}")
    mask = nn.Transformer.generate_square_subsequent_mask(6)
    print(f"square_mask_dtype {mask.dtype}")
    print(f"square_mask_row1 {mask[1].tolist()}")
    c = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    print(f"sdpa_float_mask_matches {torch.allclose(a, c, atol=1e-5)}")
    bool_mask = torch.ones(6, 6, dtype=torch.bool).tril()
    d = F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask, scale=0.5)
    print(f"sdpa_scale_sum {d.sum().item():.5f}")

    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    det_init(mha)
    xq = q[0].transpose(0, 1).reshape(6, 4, 8).transpose(0, 1)
    out, w = mha(xq, xq, xq, key_padding_mask=torch.tensor([[False] * 5 + [True]] * 4))
    print(f"mha_out_shape {tuple(out.shape)} {tuple(w.shape)}")
    print(f"mha_w_last_col_zero {bool(w[..., -1].abs().max() == 0)}")
    print(f"mha_out_sum {out.sum().item():.5f}")
    out2, w2 = mha(xq, xq, xq, average_attn_weights=False, need_weights=True)
    print(f"mha_w_per_head {tuple(w2.shape)}")

    full = nn.Transformer(
        d_model=16,
        nhead=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        dim_feedforward=32,
        dropout=0.0,
        batch_first=True,
    )
    det_init(full)
    src = torch.sin(torch.arange(2 * 5 * 16, dtype=torch.float32)).reshape(2, 5, 16)
    tgt = torch.cos(torch.arange(2 * 3 * 16, dtype=torch.float32)).reshape(2, 3, 16)
    o = full(src, tgt, tgt_mask=full.generate_square_subsequent_mask(3), tgt_is_causal=True)
    print(f"transformer_out {tuple(o.shape)} {o.sum().item():.4f} {o.abs().sum().item():.4f}")


if __name__ == "__main__":
    main()
