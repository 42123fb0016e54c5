# ruff: noqa: E501
"""A batched GRU encoder-decoder for sequence transduction (sort the digits of a string) on
variable-length inputs: padded batches with pad_sequence, the encoder run over
pack_padded_sequence(enforce_sorted=False) and unpacked with pad_packed_sequence, the
bidirectional final states merged for a 2-layer decoder, Luong dot attention masked on padding,
teacher-forced training with ignore_index on padded targets, batched greedy decoding that
stops at EOS, and beam search for one example."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

PAD, SOS, EOS = 0, 1, 2
V = 13  # digits 0..9 shifted by 3


def det_init(module, scale=0.25):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.37 + 0.011 * k * k + i) * scale).view_as(p))


def make_data():
    seqs = []
    for i in range(24):
        n = 3 + i % 4
        seqs.append([(i * 7 + j * 5 + j * j) % 10 for j in range(n)])
    src = [torch.tensor([d + 3 for d in s]) for s in seqs]
    tgt = [torch.tensor([d + 3 for d in sorted(s)] + [EOS]) for s in seqs]
    return src, tgt


class Encoder(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(V, 16, padding_idx=PAD)
        self.rnn = nn.GRU(16, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, hidden)

    def forward(self, src, lengths):
        packed = pack_padded_sequence(
            self.emb(src), lengths, batch_first=True, enforce_sorted=False
        )
        out, h = self.rnn(packed)
        out, out_lens = pad_packed_sequence(out, batch_first=True, padding_value=0.0)
        h = h.view(2, 2, src.size(0), -1)  # layers, directions, batch, hidden
        h = torch.tanh(self.proj(torch.cat([h[:, 0], h[:, 1]], dim=-1)))
        return self.proj(out), h, out_lens


class Decoder(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(V, 16, padding_idx=PAD)
        self.rnn = nn.GRU(16, hidden, num_layers=2, batch_first=True)
        self.concat = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, V)

    def forward(self, inp, h, enc_out, src_mask):
        o, h = self.rnn(self.emb(inp), h)  # B, T, H
        scores = torch.bmm(o, enc_out.transpose(1, 2)).masked_fill(
            ~src_mask[:, None, :], float("-inf")
        )
        attn = scores.softmax(-1)
        ctx = torch.bmm(attn, enc_out)
        return self.out(torch.tanh(self.concat(torch.cat([o, ctx], -1)))), h, attn


def greedy(enc, dec, src, lengths, max_len=8):
    enc_out, h, _ = enc(src, lengths)
    mask = torch.arange(src.size(1))[None] < lengths[:, None]
    inp = torch.full((src.size(0), 1), SOS)
    outs, done = [], torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_len):
        logits, h, _ = dec(inp, h, enc_out, mask)
        inp = logits.argmax(-1)
        inp = inp.masked_fill(done[:, None], PAD)
        outs.append(inp)
        done |= inp.squeeze(1) == EOS
        if done.all():
            break
    return torch.cat(outs, 1)


def beam_search(enc, dec, src, length, beam=3, max_len=8):
    enc_out, h, _ = enc(src[None], torch.tensor([length]))
    mask = torch.ones(1, src.size(0), dtype=torch.bool)
    beams = [([SOS], 0.0, h)]
    for _ in range(max_len):
        cand = []
        for toks, score, hh in beams:
            if toks[-1] == EOS:
                cand.append((toks, score, hh))
                continue
            logits, h2, _ = dec(torch.tensor([[toks[-1]]]), hh, enc_out, mask)
            lp = logits[0, -1].log_softmax(-1)
            top = lp.topk(beam)
            for v, i in zip(top.values.tolist(), top.indices.tolist()):
                cand.append((toks + [i], score + v, h2))
        beams = sorted(cand, key=lambda c: c[1], reverse=True)[:beam]
        if all(b[0][-1] == EOS for b in beams):
            break
    return beams[0][0][1:], beams[0][1]


def main():
    torch.manual_seed(0)
    src_list, tgt_list = make_data()
    lengths = torch.tensor([len(s) for s in src_list])
    src = pad_sequence(src_list, batch_first=True, padding_value=PAD)
    tgt = pad_sequence(tgt_list, batch_first=True, padding_value=PAD)
    dec_in = torch.cat([torch.full((tgt.size(0), 1), SOS), tgt[:, :-1]], 1).masked_fill(
        tgt == PAD, PAD
    )
    print(f"src {tuple(src.shape)} tgt {tuple(tgt.shape)} lengths {lengths[:6].tolist()}")
    enc, dec = Encoder(), Decoder()
    det_init(enc)
    det_init(dec)
    packed = pack_padded_sequence(enc.emb(src), lengths, batch_first=True, enforce_sorted=False)
    si, ui = packed.sorted_indices, packed.unsorted_indices
    print(
        f"packed batch_sizes {packed.batch_sizes.tolist()} sorted_desc {bool((lengths[si].diff() <= 0).all())} inverse {torch.equal(si[ui], torch.arange(24))} data {tuple(packed.data.shape)}"
    )
    enc_out, h, out_lens = enc(src, lengths)
    print(
        f"enc_out {tuple(enc_out.shape)} h {tuple(h.shape)} out_lens_equal {torch.equal(out_lens, lengths)} pad_zero {enc_out[0, lengths[0] :].abs().sum().item() if lengths[0] < src.size(1) else 0.0:.4f}"
    )
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=0.01)
    mask = torch.arange(src.size(1))[None] < lengths[:, None]
    for epoch in range(60):
        enc_out, h, _ = enc(src, lengths)
        logits, _, attn = dec(dec_in, h, enc_out, mask)
        loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if epoch in (0, 20):
            print(
                f"epoch{epoch} loss {loss.item():.5f} attn_pad_zero {attn.masked_select(~mask[:, None, :].expand_as(attn)).abs().sum().item():.1f}"
            )
    with torch.no_grad():
        pred = greedy(enc, dec, src, lengths)
        seq_ok = sum(pred[i, : len(t)].tolist() == t.tolist() for i, t in enumerate(tgt_list))
        toks, score = beam_search(enc, dec, src[0, : lengths[0]], lengths[0].item())
    print(f"greedy_exact {seq_ok}/{len(tgt_list)} beam_ok {toks == tgt_list[0].tolist()}")


if __name__ == "__main__":
    main()
