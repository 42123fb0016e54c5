"""Character-level language model: Embedding -> LSTM/GRU over packed variable-length
sequences, gradient clipping, greedy and sampled generation."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

TEXT = (
    "the quick brown fox jumps over the lazy dog. "
    "a stitch in time saves nine. "
    "all that glitters is not gold. "
)


def det_init(model, scale=0.2):
    # Weights that do not depend on the random generator, so runs are comparable.
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float32) * 0.731 + i) * scale).view_as(p)
            )


class CharLM(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32, cell="lstm", layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        rnn_cls = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn_cls(emb, hidden, num_layers=layers, batch_first=True, dropout=0.0)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, lengths, state=None):
        e = self.embed(x)
        packed = pack_padded_sequence(e, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, state = self.rnn(packed, state)
        out, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return self.head(out), state, out_lengths


def make_batches(stoi, seq_lens):
    seqs, targets = [], []
    pos = 0
    for n in seq_lens:
        chunk = TEXT[pos : pos + n + 1]
        pos = (pos + 7) % (len(TEXT) - 40)
        seqs.append(torch.tensor([stoi[c] for c in chunk[:-1]]))
        targets.append(torch.tensor([stoi[c] for c in chunk[1:]]))
    lengths = torch.tensor([len(s) for s in seqs])
    x = pad_sequence(seqs, batch_first=True, padding_value=0)
    y = pad_sequence(targets, batch_first=True, padding_value=-100)
    return x, y, lengths


def generate(model, stoi, itos, prompt, steps, greedy=True):
    model.eval()
    ids = [stoi[c] for c in prompt]
    with torch.no_grad():
        x = torch.tensor([ids])
        logits, state, _ = model(x, torch.tensor([len(ids)]))
        out = []
        nxt = logits[0, -1]
        for _ in range(steps):
            if greedy:
                c = int(nxt.argmax())
            else:
                c = int(torch.multinomial(F.softmax(nxt / 0.8, dim=-1), 1).item())
            out.append(itos[c])
            logits, state, _ = model(torch.tensor([[c]]), torch.tensor([1]), state)
            nxt = logits[0, -1]
    model.train()
    return prompt + "".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--cell", choices=["lstm", "gru"], default="lstm")
    args = parser.parse_args()
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i + 1 for i, c in enumerate(chars)}  # 0 is padding
    itos = {i: c for c, i in stoi.items()}
    vocab = len(chars) + 1
    for cell in ("lstm", "gru"):
        model = CharLM(vocab, cell=cell)
        det_init(model)
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        crit = nn.CrossEntropyLoss(ignore_index=-100)
        x, y, lengths = make_batches(stoi, [30, 22, 17, 30, 9, 25])
        losses = []
        norms = []
        for _ in range(args.steps):
            opt.zero_grad(set_to_none=True)
            logits, _, out_len = model(x, lengths)
            loss = crit(logits.reshape(-1, vocab), y.reshape(-1))
            loss.backward()
            norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
            opt.step()
            losses.append(loss.item())
        print(f"{cell}_logits_shape {tuple(logits.shape)}")
        print(f"{cell}_out_lengths {out_len.tolist()}")
        print(f"{cell}_loss_first {losses[0]:.6f}")
        print(f"{cell}_loss_10 {losses[10]:.6f}")
        print(f"{cell}_gradnorm_first {norms[0]:.6f}")
        print(f"{cell}_loss_last {losses[-1]:.6f}")
        print(f"{cell}_greedy {generate(model, stoi, itos, 'the ', 12)!r}")
        print(f"rng_{cell}_sample {generate(model, stoi, itos, 'a ', 12, greedy=False)!r}")
        n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        print(f"{cell}_params {n_params}")


if __name__ == "__main__":
    main()
