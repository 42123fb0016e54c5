"""word2vec skip-gram with negative sampling as in the classic PyTorch re-implementations:
a vocabulary from collections.Counter, subsampling probabilities, the unigram^0.75 noise
distribution sampled with torch.multinomial, (center, context) pairs from a sliding window, two
embedding tables with uniform_/zero_ init, the SGNS loss via bmm + logsigmoid, SparseAdam on
sparse embeddings, and nearest neighbours by cosine similarity (F.normalize, mm, topk)."""

from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F

text = (
    "the king rules the land the queen rules the land the king and the queen live in the castle "
    "a man works the land a woman works the land the man and the woman live in the village "
    "the castle is near the village the king visits the village the queen visits the castle "
) * 3
words = text.split()
counts = Counter(words)
vocab = sorted(counts, key=lambda w: (-counts[w], w))
w2i = {w: i for i, w in enumerate(vocab)}
ids = torch.tensor([w2i[w] for w in words])
V = len(vocab)
freq = torch.tensor([counts[w] for w in vocab], dtype=torch.float)
freq = freq / freq.sum()
keep_prob = ((freq / 1e-3).sqrt() + 1) * 1e-3 / freq
noise = freq.pow(0.75)
noise = noise / noise.sum()
print("vocab", V, vocab[:4], round(keep_prob[0].item(), 4), round(noise[0].item(), 4))

window = 2
centers, contexts = [], []
for i in range(len(ids)):
    for j in range(max(0, i - window), min(len(ids), i + window + 1)):
        if j != i:
            centers.append(ids[i])
            contexts.append(ids[j])
centers, contexts = torch.stack(centers), torch.stack(contexts)
print("pairs", centers.numel(), centers[:6].tolist(), contexts[:6].tolist())


class SGNS(nn.Module):
    def __init__(self, v, d):
        super().__init__()
        self.inp = nn.Embedding(v, d, sparse=True)
        self.out = nn.Embedding(v, d, sparse=True)
        with torch.no_grad():
            self.inp.weight.copy_(
                torch.sin(torch.arange(v * d, dtype=torch.float).view(v, d) * 0.37) * (0.5 / d)
            )
            self.out.weight.zero_()

    def forward(self, c, pos, neg):
        ce = self.inp(c).unsqueeze(2)
        pos_s = torch.bmm(self.out(pos).unsqueeze(1), ce).squeeze()
        neg_s = torch.bmm(self.out(neg), ce).squeeze(2)
        return -(F.logsigmoid(pos_s) + F.logsigmoid(-neg_s).sum(1)).mean()


model = SGNS(V, 16)
opt = torch.optim.SparseAdam(list(model.parameters()), lr=0.05)
K, bs = 4, 64
n_batches = centers.numel() // bs
# deterministic "negatives" for the recorded figures: the noise distribution's quantiles
cdf = noise.cumsum(0)
u = (torch.arange(n_batches * bs * K, dtype=torch.float) * 0.6180339) % 1.0
det_negs = torch.searchsorted(cdf, u.contiguous()).clamp(max=V - 1).view(n_batches, bs, K)
hist = []
for epoch in range(4):
    tot = 0.0
    for b in range(n_batches):
        sl = slice(b * bs, (b + 1) * bs)
        loss = model(centers[sl], contexts[sl], det_negs[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item()
    hist.append(tot / n_batches)
print("loss", [round(h, 4) for h in hist], hist[-1] < hist[0])
print("sparse_grad", model.inp.weight.grad.is_sparse, model.inp.weight.grad.layout)

emb = F.normalize(model.inp.weight.detach(), dim=1)
sims = emb @ emb.T
top = sims.topk(3, dim=1).indices
print("neighbours_king", [vocab[i] for i in top[w2i["king"]].tolist()])
print("self_sim", [round(v, 4) for v in sims.diagonal()[:3].tolist()])
neg_sample = torch.multinomial(noise, 10, replacement=True)
print("rng_negatives", neg_sample.tolist())
print("neg_shape", tuple(neg_sample.shape), bool((neg_sample < V).all()))
keep = torch.rand(len(ids)) < keep_prob[ids]
print("rng_kept", int(keep.sum()))
