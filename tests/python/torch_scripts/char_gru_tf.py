# ruff: noqa: E501
"""A character-level GRU language model trained the way tutorials write it: teacher forcing with a
deterministic scheduled-sampling switch, truncated BPTT (hidden state detached between chunks),
label smoothing, gradient clipping by norm and by value, RMSprop (centered, momentum), perplexity
on a held-out chunk under no_grad, and greedy decoding from a prompt."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = "the quick brown fox jumps over the lazy dog. " * 6
chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
V = len(chars)


def det_init(model, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            n = p.numel()
            p.copy_((torch.cos(torch.arange(n, dtype=torch.float32) * 0.37 + i) * scale).view_as(p))


class CharGRU(nn.Module):
    def __init__(self, vocab, emb=12, hidden=24, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, num_layers=layers, batch_first=True)
        self.drop = nn.Dropout(0.0)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.head(self.drop(out)), h

    def step(self, tok, h):
        logits, h = self.forward(tok.view(1, 1), h)
        return logits[:, -1], h


model = CharGRU(V)
det_init(model)
print("vocab", V)
print("params", sum(p.numel() for p in model.parameters()))
print("param_names", [n for n, _ in model.named_parameters()][:6])
opt = torch.optim.RMSprop(model.parameters(), lr=0.01, alpha=0.9, momentum=0.5, centered=True)
crit = nn.CrossEntropyLoss(label_smoothing=0.1)

B, T = 4, 10
train = data[: len(data) - 40]
heldout = data[len(data) - 40 :]
starts = torch.arange(0, B) * ((len(train) - 1) // B)
h = None
norms = []
for step in range(12):
    idx = starts.view(B, 1) + (step * T) % (len(train) // B - T - 1) + torch.arange(T).view(1, T)
    x, y = train[idx], train[idx + 1]
    if h is not None:
        h = h.detach()
    if step % 3 == 2:
        # scheduled sampling: feed back the model's own argmax after the first token
        inp = x[:, :1]
        logits_all = []
        hh = h
        for t in range(T):
            lo, hh = model(inp, hh)
            logits_all.append(lo[:, -1])
            inp = lo[:, -1].argmax(-1, keepdim=True)
        logits = torch.stack(logits_all, dim=1)
        h = hh
    else:
        logits, h = model(x, h)
    loss = crit(logits.reshape(-1, V), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=2.0)
    nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
    norms.append(round(total.item(), 4))
    opt.step()
    if step % 4 == 0:
        print(f"step{step}_loss {loss.item():.5f}")
print("grad_norms", norms[:6])
print("h_shape", tuple(h.shape), h.requires_grad)
print("state_keys", sorted(opt.state[model.head.weight].keys()))

model.eval()
with torch.no_grad():
    lo, _ = model(heldout[:-1].unsqueeze(0))
    nll = F.cross_entropy(lo.squeeze(0), heldout[1:], reduction="sum")
    print("heldout_ppl", f"{math.exp(nll.item() / (len(heldout) - 1)):.4f}")
    print("heldout_acc", (lo.squeeze(0).argmax(-1) == heldout[1:]).float().mean().item())
    hh = None
    for c in "the ":
        last, hh = model.step(torch.tensor(stoi[c]), hh)
    out = []
    for _ in range(12):
        nxt = last.argmax(-1)
        out.append(itos[nxt.item()])
        last, hh = model.step(nxt, hh)
    print("greedy", repr("".join(out)))
    probs = F.softmax(last / 0.7, dim=-1)
    print("temp_probs_sum", f"{probs.sum().item():.5f}", tuple(probs.shape))
    torch.manual_seed(0)
    print("rng_sample", torch.multinomial(probs, 3, replacement=True).tolist())
    lp = F.log_softmax(lo, -1)
    print("logprob_gather", lp.gather(-1, heldout[1:].view(1, -1, 1)).squeeze(-1).sum().item())
