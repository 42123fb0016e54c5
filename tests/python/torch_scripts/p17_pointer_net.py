"""A pointer network learning to sort numbers: an LSTM encoder, an LSTMCell decoder whose
additive (Bahdanau) attention over the encoder states is the output distribution, masking
already-chosen positions with masked_fill(-inf), teacher forcing by gathering the target
inputs, NLL over log_softmax pointers, RMSprop with a StepLR, greedy decoding with the mask,
and sequence-level accuracy plus Kendall-tau style pair agreement."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B, L, H = 16, 6, 24


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 1.8).sin() * scale
            )


class PointerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(1, H)
        self.encoder = nn.LSTM(H, H, batch_first=True)
        self.decoder = nn.LSTMCell(H, H)
        self.W1, self.W2 = nn.Linear(H, H, bias=False), nn.Linear(H, H, bias=False)
        self.v = nn.Linear(H, 1, bias=False)
        self.start = nn.Parameter(torch.zeros(H))

    def forward(self, x, targets=None):
        emb = self.embed(x.unsqueeze(-1))
        enc, (h, c) = self.encoder(emb)
        h, c = h[0], c[0]
        inp = self.start.expand(x.shape[0], -1)
        mask = torch.zeros(x.shape, dtype=torch.bool)
        keys = self.W1(enc)
        logps, picks = [], []
        for t in range(x.shape[1]):
            h, c = self.decoder(inp, (h, c))
            scores = self.v(torch.tanh(keys + self.W2(h).unsqueeze(1))).squeeze(-1)
            scores = scores.masked_fill(mask, float("-inf"))
            logp = F.log_softmax(scores, dim=-1)
            pick = logp.argmax(-1) if targets is None else targets[:, t]
            logps.append(logp)
            picks.append(pick)
            mask = mask.scatter(1, pick.unsqueeze(1), True)
            inp = torch.gather(emb, 1, pick.view(-1, 1, 1).expand(-1, 1, H)).squeeze(1)
        return torch.stack(logps, 1), torch.stack(picks, 1)


def batch(k):
    idx = torch.arange(B * L, dtype=torch.float32).reshape(B, L)
    x = torch.sin(idx * 1.618 + k * 0.77) * 0.5 + 0.5
    return x, torch.argsort(x, dim=1)


model = PointerNet()
det_init(model)
opt = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.95, momentum=0.5)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=15, gamma=0.5)
for step in range(40):
    x, y = batch(step % 8)
    logp, _ = model(x, y)
    loss = F.nll_loss(logp.reshape(-1, L), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 2.0)
    opt.step()
    sched.step()
    if step % 10 == 9:
        print(f"step {step} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    x, y = batch(11)
    logp, pred = model(x)
tf_logp, _ = model(x, y)
print("pred_is_perm", bool((pred.sort(1).values == torch.arange(L)).all()))
print("inf_masked", int(torch.isinf(logp).sum()), L * (L - 1) // 2 * B)
seq_acc = (pred == y).all(1).float().mean()
pos_acc = (pred == y).float().mean()
vals = torch.gather(x, 1, pred)
sorted_pairs = (vals[:, 1:] >= vals[:, :-1]).float().mean()
print("accuracy", round(seq_acc.item(), 4), round(pos_acc.item(), 4), round(sorted_pairs.item(), 4))
nll = -tf_logp.gather(2, y.unsqueeze(-1)).mean()
print("teacher_forced_nll", round(nll.item(), 5), tuple(tf_logp.shape))
print("first_rows", pred[:2].tolist(), y[:2].tolist())
