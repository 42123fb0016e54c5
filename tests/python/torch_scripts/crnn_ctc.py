# ruff: noqa: E501
"""Text-line recognition with a CRNN trained by CTC, as OCR repos write it: synthetic
"glyph strip" images rendered from digit strings of different lengths, a conv stack that
collapses the height, a bidirectional LSTM over the width, log_softmax over (T, N, C),
nn.CTCLoss(blank=0, zero_infinity=True) with concatenated 1-D targets and with padded 2-D
targets, greedy best-path decoding (collapse repeats, drop blanks), character error rate by
edit distance, and the CTC loss checked against a hand-written forward algorithm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

GLYPH_W = 4


def glyph(d):
    """A 6x4 pattern per digit 1..5 (0 is the CTC blank)."""
    yy, xx = torch.meshgrid(torch.arange(6.0), torch.arange(float(GLYPH_W)), indexing="ij")
    return torch.sin(xx * (0.6 + 0.35 * d) + yy * (0.3 * d)) * 0.5 + 0.5


def render(labels, width=32):
    img = torch.zeros(1, 6, width)
    x = 1
    for d in labels:
        img[0, :, x : x + GLYPH_W] = glyph(d)
        x += GLYPH_W + 1
    return img


def make_batch():
    strings = [
        [1, 2, 3],
        [4, 4, 5, 1],
        [2, 5],
        [3, 1, 4, 2, 5],
        [5, 3],
        [1, 1, 2],
        [4, 2, 3, 3],
        [2, 4, 1],
    ]
    images = torch.stack([render(s) for s in strings])
    targets = torch.cat([torch.tensor(s) for s in strings])
    target_lengths = torch.tensor([len(s) for s in strings])
    padded = nn.utils.rnn.pad_sequence([torch.tensor(s) for s in strings], batch_first=True)
    return images, strings, targets, target_lengths, padded


class CRNN(nn.Module):
    def __init__(self, n_classes=6, hidden=24):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.MaxPool2d((2, 1)),
            nn.Conv2d(8, 16, 3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, None)),
        )
        self.rnn = nn.LSTM(16, hidden, bidirectional=True, batch_first=False)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, x):
        f = self.cnn(x).squeeze(2)  # N, C, W
        f = f.permute(2, 0, 1)  # T=W, N, C
        out, _ = self.rnn(f)
        return self.fc(out).log_softmax(2)  # T, N, C


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.29 + 0.011 * k * k + i) * scale).view_as(p))


def greedy_decode(log_probs):
    best = log_probs.argmax(2).T  # N, T
    out = []
    for row in best.tolist():
        seq, prev = [], 0
        for c in row:
            if c != prev and c != 0:
                seq.append(c)
            prev = c
        out.append(seq)
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return d[len(b)]


def ctc_forward(lp, target):
    """-log p(target | lp) for one sequence (lp: T x C log-probs) by the alpha recursion."""
    ext = [0]
    for c in target:
        ext += [c, 0]
    S = len(ext)
    neg_inf = torch.tensor(float("-inf"))
    alpha = torch.full((S,), float("-inf"))
    alpha[0] = lp[0, 0]
    alpha[1] = lp[0, ext[1]]
    for t in range(1, lp.size(0)):
        new = []
        for s in range(S):
            terms = [alpha[s], alpha[s - 1] if s >= 1 else neg_inf]
            if s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new.append(torch.logsumexp(torch.stack(terms), 0) + lp[t, ext[s]])
        alpha = torch.stack(new)
    return -torch.logsumexp(alpha[-2:], 0)


def main():
    torch.manual_seed(0)
    images, strings, targets, target_lengths, padded = make_batch()
    model = CRNN()
    det_init(model)
    T = model(images).size(0)
    input_lengths = torch.full((images.size(0),), T, dtype=torch.long)
    print(
        f"images {tuple(images.shape)} T {T} targets {tuple(targets.shape)} padded {tuple(padded.shape)}"
    )
    model.eval()
    with torch.no_grad():
        lp = model(images)  # the untrained model's outputs, for the loss checks below
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.3)
    for step in range(150):
        model.train()
        log_probs = model(images)
        loss = ctc(log_probs, targets, input_lengths, target_lengths)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        if step in (0, 40):
            print(f"step{step} ctc {loss.item():.5f}")
    model.eval()
    with torch.no_grad():
        decoded = greedy_decode(model(images))
    cer = sum(edit_distance(d, s) for d, s in zip(decoded, strings)) / sum(len(s) for s in strings)
    print(
        f"decoded {decoded[:3]} cer {cer:.4f} exact {sum(d == s for d, s in zip(decoded, strings))}"
    )
    l_padded = F.ctc_loss(lp, padded, input_lengths, target_lengths, reduction="none")
    l_cat = F.ctc_loss(lp, targets, input_lengths, target_lengths, reduction="none")
    print(
        f"padded_equal {torch.allclose(l_padded, l_cat)} per_seq {[round(v, 4) for v in l_cat[:4].tolist()]}"
    )
    mean_red = F.ctc_loss(lp, targets, input_lengths, target_lengths)
    print(
        f"mean_is_len_normalized {torch.allclose(mean_red, (l_cat / target_lengths).mean())} sum {F.ctc_loss(lp, targets, input_lengths, target_lengths, reduction='sum').item():.4f}"
    )
    ref = ctc_forward(lp[:, 0], strings[0])
    print(f"hand_forward {ref.item():.4f} matches {abs(ref.item() - l_cat[0].item()) < 1e-3}")
    short = torch.full((2,), 3, dtype=torch.long)
    inf = F.ctc_loss(lp[:, :2], padded[:2], short, target_lengths[:2], reduction="none")
    zeroed = F.ctc_loss(
        lp[:, :2], padded[:2], short, target_lengths[:2], reduction="none", zero_infinity=True
    )
    print(f"impossible {inf.tolist()} zero_infinity {zeroed.tolist()}")
    x = lp[:, :2].detach().requires_grad_()
    F.ctc_loss(x, padded[:2], input_lengths[:2], target_lengths[:2]).backward()
    print(
        f"grad_rows_sum {[round(v, 4) for v in x.grad.sum(2)[:3, 0].tolist()]} grad_fn {type(F.ctc_loss(x, padded[:2], input_lengths[:2], target_lengths[:2]).grad_fn).__name__}"
    )


if __name__ == "__main__":
    main()
