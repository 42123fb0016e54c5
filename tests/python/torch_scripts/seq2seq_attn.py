# ruff: noqa: E501
"""GRU encoder-decoder with additive attention learning to reverse digit strings,
with teacher forcing decided by Python's random module."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

SOS, EOS, PAD = 0, 1, 2
VOCAB = 13  # 10 digits + 3 specials
MAX_LEN = 7


def det_init(model, scale=0.15):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float64) * 0.529 + 1.1 * i) * scale)
                .view_as(p)
                .to(p.dtype)
            )


class Encoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, hidden)

    def forward(self, src):
        out, h = self.gru(self.embedding(src))
        h = torch.tanh(self.fc(torch.cat((h[-2], h[-1]), dim=1))).unsqueeze(0)
        return self.fc(out), h


class BahdanauAttention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.Wa = nn.Linear(hidden, hidden)
        self.Ua = nn.Linear(hidden, hidden)
        self.Va = nn.Linear(hidden, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys))).squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, hidden)
        self.attention = BahdanauAttention(hidden)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def step(self, inp, hidden, enc_out):
        emb = self.embedding(inp)
        query = hidden.permute(1, 0, 2)
        ctx, w = self.attention(query, enc_out)
        out, hidden = self.gru(torch.cat((emb, ctx), dim=2), hidden)
        return self.out(out), hidden, w

    def forward(self, enc_out, hidden, target=None, teacher_forcing=0.0):
        b = enc_out.size(0)
        inp = torch.full((b, 1), SOS, dtype=torch.long)
        outs, attns = [], []
        for t in range(MAX_LEN):
            logits, hidden, w = self.step(inp, hidden, enc_out)
            outs.append(logits)
            attns.append(w)
            if target is not None and random.random() < teacher_forcing:
                inp = target[:, t].unsqueeze(1)
            else:
                _, top = logits.topk(1)
                inp = top.squeeze(-1).detach()
        return F.log_softmax(torch.cat(outs, 1), dim=-1), torch.cat(attns, 1)


def make_pairs(n):
    src, tgt = [], []
    for i in range(n):
        length = 3 + i % 4
        digits = [(i * 7 + j * 3 + j * j) % 10 + 3 for j in range(length)]
        pad = [PAD] * (MAX_LEN - length - 1)
        src.append(digits + [EOS] + pad)
        tgt.append(digits[::-1] + [EOS] + pad)
    return torch.tensor(src), torch.tensor(tgt)


def main():
    random.seed(0)
    torch.manual_seed(0)
    hidden = 24
    enc, dec = Encoder(hidden), AttnDecoder(hidden)
    det_init(enc)
    det_init(dec)
    src, tgt = make_pairs(40)
    enc_opt = optim.Adam(enc.parameters(), lr=0.01)
    dec_opt = optim.Adam(dec.parameters(), lr=0.01)
    criterion = nn.NLLLoss(ignore_index=PAD)
    history = []
    for epoch in range(40):
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        enc_out, h = enc(src)
        logp, attn = dec(enc_out, h, tgt, teacher_forcing=0.5)
        loss = criterion(logp.view(-1, VOCAB), tgt.view(-1))
        loss.backward()
        enc_opt.step()
        dec_opt.step()
        history.append(loss.item())
    print(
        f"attn_shape {tuple(attn.shape)} rows_sum_to_one {torch.allclose(attn.sum(-1), torch.ones(attn.shape[:2]))}"
    )
    print(f"loss_first {history[0]:.6f}")
    print(f"loss_5 {history[5]:.6f}")
    print(f"loss_last {history[-1]:.5f}")
    with torch.no_grad():
        enc_out, h = enc(src)
        logp, _ = dec(enc_out, h)
        pred = logp.argmax(-1)
        mask = tgt.ne(PAD)
        acc = ((pred == tgt) & mask).sum().item() / mask.sum().item()
    print(f"token_acc {acc:.4f}")
    print(f"pred0 {pred[0].tolist()} tgt0 {tgt[0].tolist()}")


if __name__ == "__main__":
    main()
