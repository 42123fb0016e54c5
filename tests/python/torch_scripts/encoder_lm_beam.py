# ruff: noqa: E501
"""A word-level language model on nn.TransformerEncoder (pre-norm layers, GELU, a causal mask
from generate_square_subsequent_mask, padding masks, tied input/output embeddings), trained a
few steps with AdamW and a warmup LambdaLR, then decoded greedily and with a small beam search;
eval mode takes the encoder's fast path with a padding mask."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = (
    "the cat sat on the mat . the dog sat on the log . a cat saw a dog . "
    "the dog saw the cat on the mat . a bird sat on the dog ."
).split()


def det_init(module, scale=0.1):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if "norm" in name:
                p.fill_(1.0) if name.endswith("weight") else p.zero_()
            else:
                k = torch.arange(p.numel(), dtype=torch.float32)
                p.copy_((torch.cos(k * 0.731 + 0.37 * i) * scale).view_as(p))


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class EncoderLM(nn.Module):
    def __init__(self, vocab, d_model=32, nhead=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=64,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(
            layer, layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False
        )
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.d_model = d_model

    def forward(self, ids, pad_mask=None):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.size(1))
        h = self.pos(self.embed(ids) * math.sqrt(self.d_model))
        h = self.encoder(h, mask=mask, src_key_padding_mask=pad_mask, is_causal=True)
        return self.head(h)


@torch.no_grad()
def greedy(model, prefix, steps):
    ids = prefix.clone()
    for _ in range(steps):
        nxt = model(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
    return ids


@torch.no_grad()
def beam_search(model, prefix, steps, width=3):
    beams = [(0.0, prefix[0].tolist())]
    for _ in range(steps):
        cands = []
        for score, seq in beams:
            logp = F.log_softmax(model(torch.tensor([seq]))[0, -1], dim=-1)
            top = torch.topk(logp, width)
            for lp, tok in zip(top.values.tolist(), top.indices.tolist()):
                cands.append((score + lp, seq + [tok]))
        cands.sort(key=lambda c: -c[0])
        beams = cands[:width]
    return beams


def main():
    torch.manual_seed(0)
    vocab = ["<pad>"] + sorted(set(CORPUS))
    stoi = {w: i for i, w in enumerate(vocab)}
    data = torch.tensor([stoi[w] for w in CORPUS])
    print(f"vocab {len(vocab)} tokens {data.numel()}")
    seq = 8
    starts = torch.arange(0, data.numel() - seq - 1, 3)
    x = torch.stack([data[s : s + seq] for s in starts])
    y = torch.stack([data[s + 1 : s + seq + 1] for s in starts])
    print(f"batch {tuple(x.shape)} first {x[0].tolist()}")

    model = EncoderLM(len(vocab))
    det_init(model)
    model.head.weight = model.embed.weight  # weight tying
    print(
        f"params {sum(p.numel() for p in model.parameters())} tied {model.head.weight is model.embed.weight}"
    )
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.98), weight_decay=0.01)
    warm = 5
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    for step in range(30):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0 or step == 29:
            print(
                f"step{step} loss {loss.item():.4f} gnorm {gn.item():.4f} lr {sched.get_last_lr()[0]:.5f}"
            )

    model.eval()
    prefix = torch.tensor([[stoi["the"], stoi["cat"]]])
    out = greedy(model, prefix, 6)
    print(f"greedy {' '.join(vocab[i] for i in out[0].tolist())}")
    for rank, (score, s) in enumerate(beam_search(model, prefix, 4)):
        print(f"beam{rank} {score:.4f} {' '.join(vocab[i] for i in s)}")

    # Padded batch: right padding with a key padding mask; the real positions must agree with
    # the unpadded run.
    short = torch.tensor([stoi[w] for w in "a cat saw".split()])
    padded = torch.stack([data[:5], torch.cat([short, torch.zeros(2, dtype=torch.long)])])
    pad_mask = padded == 0
    with torch.no_grad():
        lp = model(padded, pad_mask)
        alone = model(short.unsqueeze(0))
    print(f"pad_agree {torch.allclose(lp[1, :3], alone[0], atol=1e-5)} {pad_mask.sum().item()}")
    ppl = torch.exp(F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1)))
    print(f"eval_ppl {ppl.item():.4f}")
    fast_layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    det_init(fast_layer)
    fast = nn.TransformerEncoder(fast_layer, 2, enable_nested_tensor=True).eval()
    src = torch.sin(torch.arange(2 * 5 * 16, dtype=torch.float32)).view(2, 5, 16)
    km = torch.tensor([[False] * 5, [False, False, False, True, True]])
    with torch.inference_mode():
        o = fast(src, src_key_padding_mask=km)
    print(
        f"fast_path {tuple(o.shape)} {o[0, 0, :3].tolist()} padded_rows_zero {o[1, 3:].abs().sum().item():.4f}"
    )
    print(f"fast_real {o[1, :3].abs().sum().item():.5f}")


if __name__ == "__main__":
    main()
