"""A character-level LSTM language model trained on padded, packed batches (sorted
pack_padded_sequence, a 2-layer LSTM with dropout 0, ignore_index padding in cross_entropy,
clip_grad_norm_), a checkpoint written to a temporary file mid-run with model, optimizer,
scheduler and step, loaded back with weights_only and mmap into fresh objects, and the resumed
run reproducing the uninterrupted run's losses exactly; then perplexity and greedy decoding."""

import math
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

text = ["the cat sat", "a dog ran far", "cats nap", "the sun is warm", "dogs dig"]
chars = sorted(set("".join(text)))
stoi = {c: i + 1 for i, c in enumerate(chars)}  # 0 = padding
itos = {i: c for c, i in stoi.items()}
V = len(stoi) + 1
seqs = [torch.tensor([stoi[c] for c in s]) for s in text]
print("vocab", V, "".join(chars))


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True, dropout=0.0)
        self.out = nn.Linear(12, V)

    def forward(self, x, lengths, state=None):
        packed = pack_padded_sequence(self.emb(x), lengths, batch_first=True)
        out, state = self.lstm(packed, state)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.out(out), state


def make():
    m = CharLM()
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.9).sin() * 0.35)
    opt = torch.optim.Adam(m.parameters(), lr=0.02)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12, eta_min=1e-3)
    return m, opt, sched


order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
batch = pad_sequence([seqs[i] for i in order], batch_first=True)
lengths = torch.tensor([len(seqs[i]) for i in order])
inp, tgt = batch[:, :-1], batch[:, 1:].clone()
tgt[torch.arange(tgt.shape[1])[None] >= (lengths - 1)[:, None]] = 0
print("batch", tuple(inp.shape), lengths.tolist(), int((tgt != 0).sum()))


def train_step(m, opt, sched):
    logits, _ = m(inp, lengths - 1)
    loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=0)
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    sched.step()
    return loss.item(), norm.item()


m, opt, sched = make()
full = [train_step(m, opt, sched) for _ in range(10)]
print("full", [round(l, 5) for l, _ in full[::3]], round(full[0][1], 4))

m, opt, sched = make()
first = [train_step(m, opt, sched) for _ in range(6)]
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "ckpt.pt")
    torch.save(
        {"model": m.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "step": 6},
        path,
    )
    ck = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    m2, opt2, sched2 = make()
    m2.load_state_dict(ck["model"])
    opt2.load_state_dict(ck["opt"])
    sched2.load_state_dict(ck["sched"])
    del ck
print(
    "resumed_lr",
    round(sched2.get_last_lr()[0], 6),
    round(opt2.param_groups[0]["lr"], 6),
    sched2.last_epoch,
)
rest = [train_step(m2, opt2, sched2) for _ in range(4)]
print("same_losses", [l for l, _ in first + rest] == [l for l, _ in full])
print(
    "opt_state", sorted(opt2.state_dict()["state"][0]), opt2.state_dict()["state"][0]["step"].item()
)

with torch.no_grad():
    logits, _ = m2(inp, lengths - 1)
    nll = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=0, reduction="sum")
    ppl = math.exp(nll.item() / int((tgt != 0).sum()))
    print("ppl", round(ppl, 4))
    x = torch.tensor([[stoi["t"]]])
    state, out = None, "t"
    for _ in range(8):
        logits, state = m2(x, torch.tensor([1]), state)
        nxt = logits[0, -1].argmax().item()
        out += itos.get(nxt, "_")
        x = torch.tensor([[nxt if nxt else 1]])
    print("greedy", repr(out), tuple(state[0].shape))
