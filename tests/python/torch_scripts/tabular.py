# ruff: noqa: E501
"""Tabular classification as notebooks do it: numpy arrays turned into tensors with
from_numpy / as_tensor, standardization with mean / std, categorical columns through
embeddings concatenated with numeric features, class-weighted and label-smoothed cross
entropy, early stopping on a validation split, a confusion matrix via bincount,
precision / recall / F1, ROC-AUC from sorted scores, quantiles, and predictions back to numpy."""

import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_table(n=120):
    i = np.arange(n)
    num = np.stack(
        [np.sin(i * 0.37) * 3 + 10, np.cos(i * 0.23) * 50 + 100, (i % 7) * 1.5], axis=1
    ).astype(np.float64)
    cat = np.stack([i % 4, (i * 3) % 5], axis=1).astype(np.int64)
    score = (
        0.8 * np.sin(i * 0.37)
        - 0.5 * np.cos(i * 0.23)
        + 0.4 * (cat[:, 0] == 2)
        - 0.3 * (cat[:, 1] >= 3)
    )
    y = np.digitize(score, [-0.5, 0.4]).astype(np.int64)
    return num, cat, y


class TabularNet(nn.Module):
    def __init__(self, n_num, cardinalities, emb_dim=3, n_classes=3):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, emb_dim) for c in cardinalities])
        self.bn = nn.BatchNorm1d(n_num)
        d = n_num + emb_dim * len(cardinalities)
        self.mlp = nn.Sequential(
            nn.Linear(d, 32), nn.SiLU(), nn.LayerNorm(32), nn.Linear(32, n_classes)
        )
        with torch.no_grad():
            for i, (name, p) in enumerate(self.named_parameters()):
                if p.dim() > 1:
                    k = torch.arange(p.numel(), dtype=torch.float32)
                    p.copy_((torch.sin(k * 0.67 + 0.023 * k * k + i) * 0.3).view_as(p))
                else:
                    nn.init.constant_(p, 1.0 if name.endswith("weight") else 0.0)

    def forward(self, x_num, x_cat):
        embs = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat([self.bn(x_num)] + embs, dim=1))


def main():
    torch.manual_seed(0)
    num, cat, y = make_table()
    x_num = torch.from_numpy(num).float()
    x_cat = torch.as_tensor(cat)
    y_t = torch.from_numpy(y)
    print(
        f"dtypes {torch.from_numpy(num).dtype} {x_cat.dtype} shares_memory {torch.from_numpy(num).numpy() is not None and np.shares_memory(torch.from_numpy(num).numpy(), num)}"
    )
    print(f"class_counts {torch.bincount(y_t).tolist()}")
    train_idx, val_idx = torch.arange(0, 120) % 5 != 0, torch.arange(0, 120) % 5 == 0
    mean, std = x_num[train_idx].mean(0), x_num[train_idx].std(0, unbiased=True)
    x_std = (x_num - mean) / std
    print(
        f"standardized_mean {[round(v, 5) for v in x_std[train_idx].mean(0).tolist()]} std {[round(v, 4) for v in x_std[train_idx].std(0).tolist()]}"
    )
    counts = torch.bincount(y_t[train_idx], minlength=3).float()
    class_w = counts.sum() / (3 * counts)
    print(f"class_weights {[round(v, 4) for v in class_w.tolist()]}")
    train_dl = DataLoader(
        TensorDataset(x_std[train_idx], x_cat[train_idx], y_t[train_idx]),
        batch_size=16,
        shuffle=False,
    )
    model = TabularNet(3, [4, 5])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-3)
    crit = nn.CrossEntropyLoss(weight=class_w, label_smoothing=0.05)
    best, best_state, patience, bad = float("inf"), None, 4, 0
    for epoch in range(40):
        model.train()
        for xn, xc, yy in train_dl:
            opt.zero_grad()
            loss = crit(model(xn, xc), yy)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = F.cross_entropy(model(x_std[val_idx], x_cat[val_idx]), y_t[val_idx]).item()
        if val_loss < best - 1e-4:
            best, best_state, bad = val_loss, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= patience:
                break
    print(f"stopped_epoch {epoch} best_val {best:.5f} state_keys {len(best_state)}")
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        logits = model(x_std, x_cat)
        probs = logits.softmax(1)
        pred = probs.argmax(1)
    cm = torch.bincount(y_t * 3 + pred, minlength=9).reshape(3, 3)
    print(f"confusion {cm.tolist()}")
    tp = cm.diag().float()
    precision = tp / cm.sum(0).clamp(min=1)
    recall = tp / cm.sum(1).clamp(min=1)
    f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
    print(
        f"precision {[round(v, 4) for v in precision.tolist()]} recall {[round(v, 4) for v in recall.tolist()]} macro_f1 {f1.mean().item():.4f} acc {(pred == y_t).float().mean().item():.4f}"
    )
    # One-vs-rest ROC-AUC for class 2 with the rank formula.
    s = probs[:, 2]
    pos = y_t == 2
    ranks = torch.empty_like(s)
    ranks[s.argsort()] = torch.arange(1, len(s) + 1, dtype=s.dtype)
    auc = (ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum())
    print(f"auc_class2 {auc.item():.4f}")
    q = torch.quantile(x_num[:, 1], torch.tensor([0.1, 0.5, 0.9]))
    print(
        f"quantiles {[round(v, 3) for v in q.tolist()]} nanquantile {torch.nanquantile(torch.tensor([1.0, float('nan'), 3.0, 2.0]), 0.5).item()} median {x_num[:, 2].median().item()} mode {torch.mode(x_cat[:, 0]).values.item()}"
    )
    print(
        f"nanmean {torch.nanmean(torch.tensor([1.0, float('nan'), 3.0])).item()} nansum {torch.nansum(torch.tensor([1.0, float('nan')])).item()} std_mean {[round(v.item(), 4) for v in torch.std_mean(x_num[:, 0])]} var_mean {[round(v.item(), 3) for v in torch.var_mean(x_num[:, 1], correction=0)]}"
    )
    out = pred.numpy()
    print(
        f"to_numpy {type(out).__name__} {out.dtype} {out[:10].tolist()} probs_np {probs.detach().numpy().sum(1)[:3].round(5).tolist()}"
    )
    print(
        f"tensor_from_list_of_np {torch.tensor(np.array([[1, 2], [3, 4]]), dtype=torch.float32).sum().item()} np_scalar {torch.tensor(np.float32(2.5)).item()} np_index {x_num[np.int64(3)].shape}"
    )
    print(
        f"histc {torch.histc(x_num[:, 0], bins=4, min=7, max=13).tolist()} histogram {torch.histogram(x_num[:, 2], bins=3).hist.tolist()}"
    )
    print(
        f"cov {[round(v, 3) for v in torch.cov(x_std[:, :2].T).flatten().tolist()]} corrcoef {round(torch.corrcoef(x_num[:, :2].T)[0, 1].item(), 4)}"
    )


if __name__ == "__main__":
    main()
