# ruff: noqa: E501
"""A sequence tagger with the recurrent-layer options taggers reach for: a 2-layer bidirectional
LSTM with proj_size, batch_first packed input from unsorted lengths (enforce_sorted=False),
initial states, pad_packed_sequence with total_length, LSTMCell/GRUCell loops with
teacher forcing, a masked token loss, flatten_parameters, and the RNN's state_dict names."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
)


def det_init(model, scale=0.25):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.29 + 0.4 * i) * scale
                ).view_as(p)
            )


class Tagger(nn.Module):
    def __init__(self, vocab=12, emb=6, hidden=8, proj=5, tags=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.LSTM(
            emb, hidden, num_layers=2, bidirectional=True, batch_first=True, proj_size=proj
        )
        self.out = nn.Linear(2 * proj, tags)

    def forward(self, ids, lengths, state=None):
        packed = pack_padded_sequence(
            self.emb(ids), lengths, batch_first=True, enforce_sorted=False
        )
        out, (h, c) = self.rnn(packed, state)
        padded, out_len = pad_packed_sequence(out, batch_first=True, total_length=ids.size(1))
        return self.out(padded), out_len, h, c


seqs = [
    torch.tensor([3, 5, 7, 2]),
    torch.tensor([4, 1]),
    torch.tensor([6, 8, 9, 10, 11]),
    torch.tensor([2, 2, 3]),
]
lengths = torch.tensor([len(s) for s in seqs])
ids = pad_sequence(seqs, batch_first=True)
ids = torch.cat([ids, torch.zeros(4, 1, dtype=torch.long)], 1)
tags = (ids * 3 + 1) % 4
mask = torch.arange(ids.size(1))[None] < lengths[:, None]
model = Tagger()
det_init(model)
print(
    "param_names",
    [n for n, _ in model.rnn.named_parameters()][:5],
    tuple(model.rnn.weight_hh_l0.shape),
)
model.rnn.flatten_parameters()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
h0 = torch.zeros(4, 4, 5)
c0 = torch.full((4, 4, 8), 0.1)
for step in range(3):
    logits, out_len, h, c = model(ids, lengths, (h0, c0))
    loss = F.cross_entropy(logits[mask], tags[mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(
        f"step{step} loss {loss.item():.5f} h {tuple(h.shape)} c {tuple(c.shape)} pad_logit {logits[1, 3].abs().sum().item():.5f}"
    )
print(
    "out_len",
    out_len.tolist(),
    "h_sum",
    round(h.sum().item(), 5),
    "c_sum",
    round(c.sum().item(), 5),
)

packed = pack_sequence([s.float().unsqueeze(-1) for s in seqs], enforce_sorted=False)
print(
    "packed",
    packed.batch_sizes.tolist(),
    packed.sorted_indices.tolist(),
    packed.unsorted_indices.tolist(),
)
gru = nn.GRU(1, 3, batch_first=False)
det_init(gru)
out, hn = gru(packed)
un, ln = pad_packed_sequence(out)
print(
    "gru_packed",
    tuple(un.shape),
    ln.tolist(),
    round(hn.sum().item(), 5),
    torch.allclose(un[ln[0] - 1, 0], hn[0, 0]),
)

cell = nn.LSTMCell(4, 6)
gcell = nn.GRUCell(6, 4)
det_init(cell)
det_init(gcell)
hx, cx = torch.zeros(2, 6), torch.zeros(2, 6)
prev = torch.zeros(2, 4)
target = torch.sin(torch.arange(5 * 2 * 4, dtype=torch.float32).reshape(5, 2, 4))
loss = 0
for t in range(5):
    hx, cx = cell(prev, (hx, cx))
    pred = gcell(hx)
    loss = loss + F.mse_loss(pred, target[t])
    prev = target[t] if t % 2 == 0 else pred
loss.backward()
print(
    "cells",
    round(loss.item(), 5),
    round(cell.weight_ih.grad.abs().sum().item(), 5),
    round(gcell.bias_hh.grad.sum().item(), 5),
)
rnn = nn.RNN(2, 3, nonlinearity="relu", num_layers=2, dropout=0.0)
det_init(rnn)
o, hn = rnn(torch.ones(4, 2, 2))
print("relu_rnn", tuple(o.shape), round(o.sum().item(), 5), tuple(hn.shape))
print("unbatched_lstm", tuple(nn.LSTM(2, 3, proj_size=2)(torch.ones(4, 2))[0].shape))
