# ruff: noqa: E501
"""Evaluation code as training scripts write it: a confusion matrix by bincount, per-class
precision / recall / F1, ROC AUC and average precision from sort + cumsum + trapezoid, threshold
search with searchsorted, unique with counts and inverse, ties in argmax / topk / sort(stable) /
mode / median, quantiles by every interpolation, nan-aware reductions, isin, and running metrics
accumulated over an inference_mode loop."""

import torch


def det(n, phase, mod=None):
    x = torch.sin(torch.arange(n, dtype=torch.float32) * 1.731 + phase)
    return x if mod is None else ((x + 1) * mod / 2).long().clamp(max=mod - 1)


def confusion(pred, target, k):
    return torch.bincount(target * k + pred, minlength=k * k).view(k, k)


def roc_auc(scores, labels):
    order = torch.argsort(scores, descending=True, stable=True)
    y = labels[order].float()
    tps = torch.cumsum(y, 0)
    fps = torch.cumsum(1 - y, 0)
    tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
    fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
    return torch.trapezoid(tpr, fpr).item(), (tps / torch.arange(1, len(y) + 1)).mul(
        y
    ).sum().item() / y.sum().item()


def main():
    k = 4
    target = det(40, 0.0, k)
    pred = det(40, 0.4, k)
    cm = confusion(pred, target, k)
    print(f"confusion {cm.tolist()}")
    tp = cm.diag().float()
    prec = tp / cm.sum(0).clamp(min=1)
    rec = tp / cm.sum(1).clamp(min=1)
    f1 = torch.where(prec + rec > 0, 2 * prec * rec / (prec + rec), torch.zeros_like(prec))
    print(
        f"prf {[round(v, 4) for v in prec.tolist()]} {[round(v, 4) for v in rec.tolist()]} macro_f1 {f1.mean().item():.5f}"
    )
    print(f"accuracy {(pred == target).float().mean().item():.4f} balanced {rec.mean().item():.4f}")

    scores = torch.sigmoid(det(30, 1.0) * 3)
    labels = (det(30, 2.0) > -0.2).long()
    auc, ap = roc_auc(scores, labels)
    print(f"auc {auc:.5f} ap {ap:.5f}")
    thresholds = torch.linspace(0, 1, 6)
    print(
        f"searchsorted {torch.searchsorted(thresholds, scores[:6]).tolist()} right {torch.searchsorted(thresholds, torch.tensor([0.2, 0.6]), right=True).tolist()}"
    )
    print(f"bucketize {torch.bucketize(scores[:6], thresholds).tolist()}")

    vals = torch.tensor([3, 1, 2, 3, 1, 3, 0])
    u, inv, cnt = torch.unique(vals, return_inverse=True, return_counts=True)
    print(
        f"unique {u.tolist()} {inv.tolist()} {cnt.tolist()} sorted_false {torch.unique(vals, sorted=False).sort().values.tolist()}"
    )
    uc, cc = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 2, 1, 3]), return_counts=True)
    print(
        f"unique_consecutive {uc.tolist()} {cc.tolist()} dim {torch.unique(torch.tensor([[1, 2], [1, 2], [0, 1]]), dim=0).tolist()}"
    )
    ties = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0])
    print(
        f"argmax_ties {ties.argmax().item()} argmin {ties.argmin().item()} max_dim {torch.max(ties.view(1, -1), 1).indices.item()}"
    )
    print(
        f"topk_ties {ties.topk(2).indices.tolist()} sort_stable {torch.sort(ties, stable=True, descending=True).indices.tolist()}"
    )
    print(
        f"mode {torch.mode(torch.tensor([2, 1, 2, 1, 3])).values.item()} {torch.mode(torch.tensor([2, 1, 2, 1, 3])).indices.item()} median {torch.median(torch.tensor([4.0, 1.0, 3.0, 2.0])).item()} {torch.tensor([4.0, 1.0, 3.0, 2.0]).median(0).indices.item()}"
    )
    print(
        f"kthvalue {torch.kthvalue(ties, 2).values.item()} {torch.kthvalue(ties, 2).indices.item()} msort {torch.msort(ties).tolist()}"
    )
    q = torch.tensor([0.1, 0.5, 0.9])
    data = torch.tensor([1.0, 7.0, 3.0, 9.0, 4.0])
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        print(
            f"quantile_{method} {[round(v, 5) for v in torch.quantile(data, q, interpolation=method).tolist()]}"
        )
    nan_data = torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 6.0]])
    print(
        f"nan_reduce {nan_data.nanmean(1).tolist()} {nan_data.nansum().item()} {torch.nanmedian(nan_data, 1).values.tolist()} {torch.nanquantile(nan_data[0], 0.5).item()}"
    )
    print(
        f"nan_plain {nan_data.mean(1).tolist()} {nan_data.max(1).values.tolist()} {torch.isnan(nan_data).sum().item()}"
    )
    print(
        f"isin {torch.isin(vals, torch.tensor([1, 3])).tolist()} invert {torch.isin(vals, torch.tensor([1, 3]), invert=True).tolist()}"
    )
    print(
        f"count_nonzero {torch.count_nonzero(cm, dim=0).tolist()} histc {torch.histc(scores, bins=5, min=0, max=1).tolist()}"
    )
    print(
        f"cummax {torch.cummax(ties, 0).indices.tolist()} cummin {torch.cummin(torch.tensor([3.0, 1.0, 1.0, 2.0]), 0).indices.tolist()} logcumsumexp {[round(v, 4) for v in torch.logcumsumexp(ties, 0).tolist()]}"
    )

    correct = torch.zeros(k)
    total = torch.zeros(k)
    with torch.inference_mode():
        for b in range(4):
            t = target[b * 10 : (b + 1) * 10]
            p = pred[b * 10 : (b + 1) * 10]
            correct.index_add_(0, t, (p == t).float())
            total += torch.bincount(t, minlength=k)
    print(
        f"running {correct.tolist()} {total.tolist()} acc {(correct.sum() / total.sum()).item():.4f} inference {correct.is_inference()}"
    )
    top5 = torch.tensor([[0.1, 0.5, 0.2, 0.05, 0.15], [0.3, 0.1, 0.1, 0.4, 0.1]])
    print(
        f"topk_sorted_false {sorted(top5.topk(3, sorted=False).indices[1].tolist())} largest_false {top5.topk(2, largest=False).indices.tolist()}"
    )


if __name__ == "__main__":
    main()
