# ruff: noqa: E501
"""Text classification in the style of the AG_NEWS tutorial: a vocabulary built from a
tokenizer, a collate_fn that concatenates token ids and builds offsets, nn.EmbeddingBag
(mean / sum / max, per_sample_weights, padding_idx), SGD with StepLR and clip_grad_norm_."""

from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

TEXTS = [
    (0, "the team won the match in the final minute"),
    (1, "stocks fell as the market closed lower today"),
    (2, "new phone chip makes the battery last longer"),
    (0, "the striker scored twice and the crowd cheered"),
    (1, "the bank raised interest rates again this month"),
    (2, "the software update fixes the wifi bug"),
    (0, "coach praised the defence after the win"),
    (1, "oil prices climbed and the dollar weakened"),
    (2, "researchers built a faster quantum chip"),
    (0, "the match ended in a draw after extra time"),
    (1, "investors sold shares as profits dropped"),
    (2, "the laptop battery and screen were improved"),
]


def tokenizer(s):
    return s.lower().split()


class Vocab:
    def __init__(self, counter, specials=("<unk>", "<pad>")):
        self.itos = list(specials) + sorted(w for w, c in counter.items() if c >= 1)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __call__(self, tokens):
        return [self.stoi.get(t, 0) for t in tokens]

    def __len__(self):
        return len(self.itos)


class TextDS(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def make_collate(vocab):
    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for label, text in batch:
            label_list.append(label)
            ids = torch.tensor(vocab(tokenizer(text)), dtype=torch.int64)
            text_list.append(ids)
            offsets.append(ids.size(0))
        labels = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        return labels, torch.cat(text_list), offsets

    return collate_batch


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        with torch.no_grad():
            w = self.embedding.weight
            w.copy_(torch.cos(torch.arange(w.numel(), dtype=torch.float32) * 0.37).view_as(w) * 0.5)
            f = self.fc.weight
            f.copy_(torch.sin(torch.arange(f.numel(), dtype=torch.float32) * 0.71).view_as(f) * 0.3)
            self.fc.bias.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


def main():
    torch.manual_seed(0)
    counter = Counter()
    for _, t in TEXTS:
        counter.update(tokenizer(t))
    vocab = Vocab(counter)
    print(f"vocab_size {len(vocab)} ids {vocab(tokenizer('the chip zebra'))}")
    collate = make_collate(vocab)
    loader = DataLoader(TextDS(TEXTS), batch_size=4, shuffle=False, collate_fn=collate)
    labels, text, offsets = next(iter(loader))
    print(f"first_batch {labels.tolist()} {tuple(text.shape)} {offsets.tolist()}")

    model = TextClassificationModel(len(vocab), 16, 3)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.9)
    for epoch in range(1, 16):
        model.train()
        total_acc, total_count, total_loss = 0, 0, 0.0
        for label, text, offsets in loader:
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            total_loss += loss.item()
        scheduler.step()
        if epoch in (1, 5, 15):
            print(
                f"epoch{epoch} loss {total_loss / len(loader):.5f} acc {total_acc / total_count:.4f} lr {scheduler.get_last_lr()[0]:.5f}"
            )

    model.eval()
    with torch.no_grad():
        text = torch.tensor(vocab(tokenizer("the chip and the battery")))
        out = model(text, torch.tensor([0]))
        print(
            f"predict {out.argmax(1).item()} probs {[round(p, 4) for p in F.softmax(out, 1)[0].tolist()]}"
        )

    # The other bag modes, 2-D input, per-sample weights, padding_idx and from_pretrained.
    weight = torch.arange(24, dtype=torch.float32).view(6, 4) / 10
    inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 0])
    offs = torch.tensor([0, 3, 3, 6])
    for mode in ("sum", "mean", "max"):
        bag = nn.EmbeddingBag.from_pretrained(weight, mode=mode)
        r = bag(inp, offs)
        print(f"bag_{mode} {[[round(v, 3) for v in row] for row in r.tolist()]}")
    bag = nn.EmbeddingBag.from_pretrained(weight, mode="sum")
    psw = torch.linspace(0.5, 2.0, 8)
    print(
        f"bag_psw {[round(v, 3) for v in bag(inp, offs, per_sample_weights=psw).sum(1).tolist()]}"
    )
    bag2d = nn.EmbeddingBag.from_pretrained(weight, mode="mean", padding_idx=0)
    r = bag2d(torch.tensor([[1, 2, 0], [0, 0, 3]]))
    print(f"bag_2d_pad {[[round(v, 3) for v in row] for row in r.tolist()]}")
    incl = nn.EmbeddingBag.from_pretrained(weight, mode="sum", include_last_offset=True)
    print(f"bag_last_offset {tuple(incl(inp, torch.tensor([0, 3, 8])).shape)}")
    fb = F.embedding_bag(inp, weight.requires_grad_(), offs, mode="mean")
    fb.sum().backward()
    print(f"bag_grad_rows {weight.grad.sum(1).tolist()}")
    emb = nn.Embedding(6, 4, max_norm=1.0)
    with torch.no_grad():
        emb.weight.copy_(weight.detach())
    emb(torch.tensor([5, 1]))
    print(f"max_norm_renorm {[round(v, 4) for v in emb.weight.norm(dim=1).tolist()]}")


if __name__ == "__main__":
    main()
