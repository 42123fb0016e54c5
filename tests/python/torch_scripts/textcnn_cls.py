# ruff: noqa: E501
"""Kim's CNN for sentence classification as the popular repos write it: a vocabulary built
with collections.Counter, padding with pad_sequence and padding_idx, a static + non-static
two-channel embedding (Embedding.from_pretrained(freeze=True) beside a trainable copy),
parallel Conv1d filters of widths 2-4 with max-over-time pooling, dropout, max-norm weight
constraint on the classifier (renorm_), Adadelta training, and per-class precision/recall."""

from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

SENTS = [
    ("the movie was great and fun", 1),
    ("terrible plot and bad acting", 0),
    ("great acting great fun", 1),
    ("bad movie , boring and long", 0),
    ("a fun and moving story", 1),
    ("boring , bad , terrible", 0),
    ("moving and great story", 1),
    ("long and terrible movie", 0),
]


class TextCNN(nn.Module):
    def __init__(self, pretrained, n_classes=2, widths=(2, 3, 4), n_filters=4):
        super().__init__()
        self.static = nn.Embedding.from_pretrained(pretrained, freeze=True, padding_idx=0)
        self.dynamic = nn.Embedding.from_pretrained(pretrained.clone(), freeze=False, padding_idx=0)
        d = pretrained.shape[1]
        self.convs = nn.ModuleList(nn.Conv1d(2 * d, n_filters, w) for w in widths)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(n_filters * len(widths), n_classes)

    def forward(self, tokens):
        e = torch.cat([self.static(tokens), self.dynamic(tokens)], dim=2).transpose(1, 2)
        pooled = [F.relu(conv(e)).max(dim=2).values for conv in self.convs]
        return self.fc(self.drop(torch.cat(pooled, dim=1)))


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if "static" in name or "dynamic" in name:
                continue
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.61 + 0.009 * k * k + i) * scale).view_as(p))


def main():
    counts = Counter(w for s, _ in SENTS for w in s.split())
    itos = ["<pad>", "<unk>"] + [
        w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    stoi = {w: i for i, w in enumerate(itos)}
    print(f"vocab {len(itos)} top {itos[2:7]}")
    seqs = [torch.tensor([stoi.get(w, 1) for w in s.split()]) for s, _ in SENTS]
    tokens = pad_sequence(seqs, batch_first=True, padding_value=0)
    labels = torch.tensor([y for _, y in SENTS])
    print(f"batch {tuple(tokens.shape)} pads {(tokens == 0).sum().item()}")

    k = torch.arange(len(itos) * 6, dtype=torch.float32)
    pretrained = (torch.cos(k * 0.77) * 0.5).view(len(itos), 6)
    pretrained[0] = 0
    model = TextCNN(pretrained)
    det_init(model)
    print(
        f"trainable {sum(p.numel() for p in model.parameters() if p.requires_grad)} frozen {sum(p.numel() for p in model.parameters() if not p.requires_grad)}"
    )
    opt = torch.optim.Adadelta([p for p in model.parameters() if p.requires_grad], lr=1.0, rho=0.95)
    model.train()
    model.drop.p = 0.0
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.fc.weight.renorm_(2, 0, 3.0)
        losses.append(round(loss.item(), 4))
    print(f"losses {losses}")
    print(f"fc_row_norms {[round(v, 4) for v in model.fc.weight.norm(dim=1).tolist()]}")
    print(
        f"static_unchanged {torch.equal(model.static.weight, pretrained)} pad_row_zero {model.dynamic.weight[0].abs().sum().item()} dynamic_moved {(model.dynamic.weight - pretrained).abs().max().item():.4f}"
    )
    model.eval()
    with torch.no_grad():
        pred = model(tokens).argmax(1)
        test = pad_sequence(
            [
                torch.tensor([stoi.get(w, 1) for w in s.split()])
                for s in ["great fun story", "bad boring unknownword"]
            ],
            batch_first=True,
        )
        try:
            model(test)
        except RuntimeError as e:
            print(f"too_short {e}")
        test = F.pad(test, (0, 4 - test.shape[1]))
        test_pred = model(test).softmax(1)
    for c in (0, 1):
        tp = ((pred == c) & (labels == c)).sum().item()
        prec = tp / max((pred == c).sum().item(), 1)
        rec = tp / (labels == c).sum().item()
        print(f"class{c} precision {prec:.3f} recall {rec:.3f}")
    print(f"test_probs {[[round(v, 4) for v in row] for row in test_pred.tolist()]}")


if __name__ == "__main__":
    main()
