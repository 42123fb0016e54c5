# ruff: noqa: E501
"""Recurrent models for sequences of different lengths: a bidirectional multi-layer GRU
tagger over pack_padded_sequence (sorted and unsorted), pad_packed_sequence with
total_length, an LSTM with proj_size forecasting a sine wave (Huber loss, autoregressive
rollout), nn.RNN with relu, LSTMCell / GRUCell loops, pack_sequence / unpack_sequence /
unpad_sequence, and the PackedSequence fields."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def det_init(module, scale=0.25, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            k = torch.arange(n, dtype=torch.float32)
            p.copy_((torch.sin(k * 0.57 + 0.013 * k * k + i + phase) * scale).view_as(p))


class Tagger(nn.Module):
    def __init__(self, vocab=12, emb=8, hidden=10, tags=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.GRU(emb, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(
            self.emb(tokens), lengths, batch_first=True, enforce_sorted=False
        )
        out, h = self.rnn(packed)
        out, out_lens = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        return self.out(out), h, out_lens


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, 16, num_layers=1, batch_first=True, proj_size=4)
        self.head = nn.Linear(4, 1)

    def forward(self, x, state=None):
        y, state = self.lstm(x, state)
        return self.head(y), state


def main():
    torch.manual_seed(0)
    seqs = [
        torch.tensor([(i * 3 + j) % 11 + 1 for j in range(n)])
        for i, n in enumerate([5, 3, 7, 2, 6])
    ]
    tags = [s % 3 for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs])
    tokens = pad_sequence(seqs, batch_first=True, padding_value=0)
    tag_pad = pad_sequence(tags, batch_first=True, padding_value=-100)
    print(f"padded {tuple(tokens.shape)} lengths {lengths.tolist()}")
    model = Tagger()
    det_init(model)
    with torch.no_grad():
        model.emb.weight[0].zero_()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(30):
        logits, h, out_lens = model(tokens, lengths)
        loss = F.cross_entropy(logits.reshape(-1, 3), tag_pad.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in (0, 29):
            print(f"tagger_step{step} {loss.item():.5f}")
    print(
        f"h_shape {tuple(h.shape)} out_lens {out_lens.tolist()} pad_logits_zero_input {logits[3, 2:].std().item() < 1e-6}"
    )
    pred = logits.argmax(-1)
    mask = tag_pad != -100
    print(f"tag_acc {((pred == tag_pad) & mask).sum().item() / mask.sum().item():.4f}")
    # Each sequence alone gives the same outputs as in the padded batch.
    with torch.no_grad():
        alone, _, _ = model(tokens[2:3, :7], lengths[2:3])
        print(f"alone_matches_batch {torch.allclose(alone[0], logits[2, :7], atol=1e-5)}")

    packed = pack_sequence([s.float() for s in seqs], enforce_sorted=False)
    print(
        f"packed data {tuple(packed.data.shape)} batch_sizes {packed.batch_sizes.tolist()} sorted {packed.sorted_indices.tolist()} unsorted {packed.unsorted_indices.tolist()} is_packed {isinstance(packed, PackedSequence)}"
    )
    back = unpack_sequence(packed)
    print(f"unpack_equal {all(torch.equal(a, b.float()) for a, b in zip(back, seqs))}")
    unpadded = unpad_sequence(tokens, lengths, batch_first=True)
    print(
        f"unpad_lens {[len(u) for u in unpadded]} equal {all(torch.equal(a, b) for a, b in zip(unpadded, seqs))}"
    )
    srt = sorted(seqs, key=len, reverse=True)
    p2 = pack_padded_sequence(pad_sequence(srt).unsqueeze(-1).float(), [len(s) for s in srt])
    print(f"sorted_pack {p2.batch_sizes.tolist()} indices_none {p2.sorted_indices is None}")

    # Forecast a sine wave: teacher-forced training, then autoregressive rollout.
    t = torch.arange(0, 60, dtype=torch.float32) * 0.2
    wave = torch.sin(t) + 0.3 * torch.sin(2.3 * t)
    windows = torch.stack([wave[i : i + 21] for i in range(0, 36, 3)]).unsqueeze(-1)
    x, y = windows[:, :-1], windows[:, 1:]
    fc = Forecaster()
    det_init(fc, 0.3)
    print(f"lstm_proj weights {[tuple(p.shape) for p in fc.lstm.parameters()]}")
    opt = torch.optim.Adam(fc.parameters(), lr=0.03)
    crit = nn.HuberLoss(delta=0.5)
    for epoch in range(40):
        pred, _ = fc(x)
        loss = crit(pred, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(fc.parameters(), 1.0)
        opt.step()
        if epoch in (0, 39):
            print(f"forecast_epoch{epoch} {loss.item():.5f}")
    with torch.no_grad():
        ctx = windows[:1, :10]
        out, state = fc(ctx)
        step_in = out[:, -1:]
        rollout = []
        for _ in range(5):
            step_in, state = fc(step_in, state)
            rollout.append(step_in.item())
        print(
            f"rollout {[round(v, 4) for v in rollout]} h {tuple(state[0].shape)} c {tuple(state[1].shape)}"
        )

    # Vanilla RNN with relu and the cell versions in hand-written loops.
    rnn = nn.RNN(3, 5, num_layers=2, nonlinearity="relu", dropout=0.0)
    det_init(rnn)
    inp = torch.linspace(-1, 1, 4 * 2 * 3).view(4, 2, 3)
    out, hn = rnn(inp, torch.zeros(2, 2, 5))
    print(
        f"rnn_relu {tuple(out.shape)} {out.sum().item():.5f} hn_last_eq {torch.equal(hn[-1], out[-1])}"
    )
    lstm_cell, gru_cell = nn.LSTMCell(3, 4), nn.GRUCell(3, 4)
    det_init(lstm_cell)
    det_init(gru_cell, phase=1.0)
    hx, cx, gx = torch.zeros(2, 4), torch.zeros(2, 4), torch.zeros(2, 4)
    for i in range(inp.size(0)):
        hx, cx = lstm_cell(inp[i], (hx, cx))
        gx = gru_cell(inp[i], gx)
    print(
        f"cells {hx.sum().item():.5f} {cx.sum().item():.5f} {gx.sum().item():.5f} unbatched {tuple(gru_cell(inp[0, 0]).shape)}"
    )
    full = nn.LSTM(3, 4)
    with torch.no_grad():
        for a, b in zip(full.parameters(), lstm_cell.parameters()):
            a.copy_(b)
    print(f"cell_matches_layer {torch.allclose(full(inp)[1][0][0], hx, atol=1e-6)}")
    print(
        f"unbatched_lstm {tuple(full(inp[:, 0])[0].shape)} gru_h0_default {tuple(nn.GRU(3, 2)(inp)[1].shape)}"
    )
    print(f"dt {math.isclose(t[1].item(), 0.2, rel_tol=1e-6)}")


if __name__ == "__main__":
    main()
