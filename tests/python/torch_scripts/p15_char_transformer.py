"""A character-level transformer language model: nn.TransformerEncoder (pre-norm, GELU,
batch_first) under a causal mask from generate_square_subsequent_mask, sinusoidal positions in a
registered buffer, tied input/output embeddings, AdamW with no weight decay on biases and norms,
gradient clipping, then a greedy and a top-k/temperature generation loop with banned tokens,
and token statistics over a padding mask (masked_select, take, index_fill, scatter, einsum)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

text = "the quick brown fox jumps over the lazy dog. " * 4
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
PAD = len(chars)
vocab = len(chars) + 1
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print("vocab", vocab, "tokens", data.numel(), data.dtype)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class CharLM(nn.Module):
    def __init__(self, vocab, d_model=16, nhead=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=32,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied
        self.d_model = d_model

    def forward(self, idx, pad_mask=None):
        T = idx.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        h = self.pos(self.embed(idx) * math.sqrt(self.d_model))
        h = self.encoder(h, mask=mask, is_causal=True, src_key_padding_mask=pad_mask)
        return self.head(self.norm(h))


model = CharLM(vocab)
with torch.no_grad():
    for i, (name, p) in enumerate(model.named_parameters()):
        p.copy_(torch.linspace(-0.4, 0.4, p.numel()).reshape(p.shape).mul(i + 1).sin() * 0.5)
print("params", sum(p.numel() for p in model.parameters()), len(list(model.parameters())))
mask = nn.Transformer.generate_square_subsequent_mask(4)
print("causal_mask", mask.tolist())

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim < 2 or "norm" in name else decay).append(p)
opt = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
    lr=3e-3,
    betas=(0.9, 0.95),
)
print(
    "groups",
    [len(g["params"]) for g in opt.param_groups],
    [g["weight_decay"] for g in opt.param_groups],
)

block, batch = 12, 6
starts = torch.arange(0, batch * 7, 7)
for step in range(12):
    x = torch.stack([data[s : s + block] for s in starts.tolist()])
    y = torch.stack([data[s + 1 : s + 1 + block] for s in starts.tolist()])
    y[0, -3:] = PAD  # a padded tail, ignored by the loss
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1), ignore_index=PAD)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 4 == 0:
        ppl = math.exp(loss.item())
        print(f"step {step} loss {loss.item():.4f} ppl {ppl:.3f} gnorm {gnorm.item():.4f}")
print("tied", model.head.weight is model.embed.weight, model.embed.weight.grad is not None)

model.eval()


@torch.no_grad()
def generate(idx, n, temperature=1.0, top_k=None, banned=()):
    for _ in range(n):
        logits = model(idx[:, -block:])[:, -1, :] / temperature
        if banned:
            logits = logits.index_fill(1, torch.tensor(banned), float("-inf"))
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("inf")
        probs = F.softmax(logits, dim=-1)
        nxt = torch.argmax(probs, dim=-1, keepdim=True)
        idx = torch.cat((idx, nxt), dim=1)
    return idx


prompt = torch.tensor([[stoi["t"], stoi["h"]]])
out = generate(prompt, 10, banned=(PAD,))
print("greedy", repr("".join(itos[i] for i in out[0].tolist())))
out = generate(prompt, 8, temperature=0.7, top_k=3, banned=(PAD, stoi["."]))
print("topk", repr("".join(itos[i] for i in out[0].tolist())))
torch.manual_seed(0)
probs = F.softmax(model(prompt)[:, -1] / 0.8, -1)
print("rng_sample", torch.multinomial(probs, 3, replacement=True).tolist())

# token statistics over a padded batch, with gradients
x = torch.stack([data[:8], data[8:16]])
x[1, 5:] = PAD
pad_mask = x == PAD
logits = model(x, pad_mask=pad_mask)
logp = logits.log_softmax(-1)
tok_logp = logp.gather(-1, x.unsqueeze(-1)).squeeze(-1)
real = tok_logp.masked_select(~pad_mask)
print("real", real.shape, real.grad_fn is not None, round(real.sum().item(), 4))
first = logp.take(torch.tensor([0, vocab + 1, 2 * vocab + 2]))
print("take", [round(v, 4) for v in first.tolist()], type(first.grad_fn).__name__)
ent = -torch.einsum("btv,btv->bt", logp.exp(), logp)
print("entropy", [round(v, 4) for v in ent[0, :4].tolist()], ent.shape)
col = torch.einsum("btv->v", logp.exp())
print("col", round(col.sum().item(), 3), type(col.grad_fn).__name__)
onehot = torch.zeros(2, 8, vocab).scatter(2, x.unsqueeze(-1), 1.0)
print("onehot", onehot.sum().item(), onehot[1, 6].argmax().item())
filled = logp.index_fill(2, torch.tensor([PAD]), 0.0)
print("filled", type(filled.grad_fn).__name__, round(filled.sum().item(), 3))
(real.sum() + ent.sum() + filled.mean()).backward()
print(
    "emb_grad",
    round(model.embed.weight.grad.norm().item(), 4),
    round(model.embed.weight.grad[PAD].abs().sum().item(), 5),
)
