# ruff: noqa: E501
"""A seq2seq translator with additive (Bahdanau) attention and beam search, as NMT tutorials
write it: a bidirectional GRU encoder over packed source sentences, a GRUCell decoder attending
with a source mask (masked_fill with -inf), teacher forcing, label-smoothed NLL, then beam search
that keeps (score, tokens) hypotheses via topk on flattened scores and divmod-style index
arithmetic, with length normalisation."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

BOS, EOS, PAD = 1, 2, 0


def det_init(model, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.47 + 0.6 * i) * scale
                ).view_as(p)
            )


class Seq2Seq(nn.Module):
    def __init__(self, vocab=9, emb=6, hid=8):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.encoder = nn.GRU(emb, hid, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hid, hid)
        self.W_enc = nn.Linear(2 * hid, hid, bias=False)
        self.W_dec = nn.Linear(hid, hid)
        self.v = nn.Linear(hid, 1, bias=False)
        self.cell = nn.GRUCell(emb + 2 * hid, hid)
        self.out = nn.Linear(hid + 2 * hid, vocab)

    def encode(self, src, lengths):
        packed = pack_padded_sequence(
            self.src_emb(src), lengths, batch_first=True, enforce_sorted=False
        )
        enc, h = self.encoder(packed)
        enc, _ = pad_packed_sequence(enc, batch_first=True, total_length=src.size(1))
        return enc, torch.tanh(self.bridge(torch.cat([h[0], h[1]], -1))), src != PAD

    def step(self, tok, h, enc, mask, keys):
        scores = self.v(torch.tanh(keys + self.W_dec(h).unsqueeze(1))).squeeze(-1)
        attn = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        ctx = torch.bmm(attn.unsqueeze(1), enc).squeeze(1)
        h = self.cell(torch.cat([self.tgt_emb(tok), ctx], -1), h)
        return F.log_softmax(self.out(torch.cat([h, ctx], -1)), -1), h, attn


src = torch.tensor([[3, 4, 5, 6], [7, 3, PAD, PAD], [5, 8, 4, PAD]])
lengths = (src != PAD).sum(1)
tgt = torch.tensor([[BOS, 6, 5, 4, 3, EOS], [BOS, 3, 7, EOS, PAD, PAD], [BOS, 4, 8, 5, EOS, PAD]])
model = Seq2Seq()
det_init(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    enc, h, mask = model.encode(src, lengths)
    keys = model.W_enc(enc)
    logps = []
    for t in range(tgt.size(1) - 1):
        lp, h, attn = model.step(tgt[:, t], h, enc, mask, keys)
        logps.append(lp)
    logp = torch.stack(logps, 1)
    loss = F.nll_loss(logp.reshape(-1, logp.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=PAD)
    smooth = -logp.mean(-1)[tgt[:, 1:] != PAD].mean()
    total = 0.9 * loss + 0.1 * smooth
    opt.zero_grad()
    total.backward()
    opt.step()
    print(
        f"epoch{epoch} loss {loss.item():.5f} smooth {smooth.item():.5f} attn_pad {attn[1, 2:].sum().item():.1f}"
    )


@torch.no_grad()
def beam_search(src_row, beam=3, max_len=6):
    enc, h, mask = model.encode(src_row.unsqueeze(0), (src_row != PAD).sum().view(1))
    keys = model.W_enc(enc)
    hyps = [(0.0, [BOS], h)]
    done = []
    for _ in range(max_len):
        toks = torch.tensor([hy[1][-1] for hy in hyps])
        hs = torch.cat([hy[2] for hy in hyps])
        n = len(hyps)
        lp, h_new, _ = model.step(
            toks, hs, enc.expand(n, -1, -1), mask.expand(n, -1), keys.expand(n, -1, -1)
        )
        total = torch.tensor([hy[0] for hy in hyps]).unsqueeze(1) + lp
        best = total.flatten().topk(beam)
        new = []
        for score, idx in zip(best.values.tolist(), best.indices.tolist()):
            b, tok = divmod(idx, lp.size(1))
            hyp = (score, hyps[b][1] + [tok], h_new[b : b + 1])
            (done if tok == EOS else new).append(hyp)
        hyps = new[:beam]
        if not hyps:
            break
    done = done or hyps
    best = max(done, key=lambda hy: hy[0] / len(hy[1]))
    return best[1], round(best[0], 4)


for i in range(3):
    toks, score = beam_search(src[i])
    print(f"beam{i} {toks} {score}")
