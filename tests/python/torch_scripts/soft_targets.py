# ruff: noqa: E501
"""Classification losses as modern recipes configure them: label smoothing, probability
(soft) targets from mixup and cutmix with a fixed lambda, class weights with ignore_index on a
segmentation-shaped input, KLDivLoss with log_target for distillation, a focal loss written
from log_softmax/gather, BCE with pos_weight for multi-label, and top-k accuracy."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det(shape, phase):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n, dtype=torch.float32) * 0.61 + phase).view(shape)


def focal_loss(logits, target, gamma=2.0, alpha=None):
    logp = F.log_softmax(logits, dim=1)
    logp_t = logp.gather(1, target.unsqueeze(1)).squeeze(1)
    p_t = logp_t.exp()
    loss = -((1 - p_t) ** gamma) * logp_t
    if alpha is not None:
        loss = loss * alpha[target]
    return loss.mean()


def topk_acc(logits, target, ks=(1, 3)):
    top = logits.topk(max(ks), dim=1).indices
    hit = top == target.unsqueeze(1)
    return [hit[:, :k].any(1).float().mean().item() for k in ks]


def main():
    logits = det((6, 5), 0.0) * 3
    y = torch.tensor([0, 4, 2, 2, 1, 3])
    for ls in (0.0, 0.1, 0.3):
        print(f"ce_ls{ls} {F.cross_entropy(logits, y, label_smoothing=ls).item():.5f}")
    crit = nn.CrossEntropyLoss(
        weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5]), ignore_index=2, label_smoothing=0.05
    )
    print(f"ce_weighted_ignore {crit(logits, y).item():.5f}")
    print(
        f"ce_none {[round(v, 5) for v in F.cross_entropy(logits, y, reduction='none', ignore_index=2).tolist()]}"
    )

    # mixup / cutmix with a fixed lambda (probability targets).
    x = det((6, 1, 4, 4), 1.0)
    lam = 0.7
    perm = torch.tensor([5, 4, 3, 2, 1, 0])
    mixed = lam * x + (1 - lam) * x[perm]
    onehot = F.one_hot(y, 5).float()
    soft = lam * onehot + (1 - lam) * onehot[perm]
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 5))
    with torch.no_grad():
        model[1].weight.copy_(det((5, 16), 2.0) * 0.3)
        model[1].bias.zero_()
    out = model(mixed)
    a = F.cross_entropy(out, soft)
    b = lam * F.cross_entropy(out, y) + (1 - lam) * F.cross_entropy(out, y[perm])
    print(
        f"mixup_soft {a.item():.5f} two_term {b.item():.5f} agree {torch.allclose(a, b, atol=1e-6)}"
    )
    print(f"soft_smooth {F.cross_entropy(out, soft, label_smoothing=0.1).item():.5f}")
    cut = x.clone()
    cut[:, :, 1:3, 1:3] = x[perm][:, :, 1:3, 1:3]
    lam_cut = 1 - 4 / 16
    print(f"cutmix {cut[0, 0, 1].tolist()} lam {lam_cut}")

    seg_logits = det((2, 4, 3, 3), 3.0)
    seg_y = torch.tensor(
        [[[0, 1, 255], [3, 3, 2], [1, 255, 0]], [[2, 2, 2], [0, 1, 3], [255, 255, 1]]]
    )
    print(
        f"seg_ce {F.cross_entropy(seg_logits, seg_y, ignore_index=255).item():.5f} weighted {F.cross_entropy(seg_logits, seg_y, weight=torch.tensor([1.0, 0.5, 2.0, 1.0]), ignore_index=255).item():.5f}"
    )
    print(
        f"nll_2d {F.nll_loss(F.log_softmax(seg_logits, 1), seg_y, ignore_index=255, reduction='sum').item():.5f}"
    )

    teacher, student = det((6, 5), 4.0) * 2, logits
    T = 2.0
    kd = (
        nn.KLDivLoss(reduction="batchmean", log_target=True)(
            F.log_softmax(student / T, 1), F.log_softmax(teacher / T, 1)
        )
        * T
        * T
    )
    kd2 = (
        F.kl_div(F.log_softmax(student / T, 1), F.softmax(teacher / T, 1), reduction="batchmean")
        * T
        * T
    )
    print(f"kd {kd.item():.5f} same {torch.allclose(kd, kd2, atol=1e-6)}")
    print(
        f"focal {focal_loss(logits, y).item():.5f} alpha {focal_loss(logits, y, alpha=torch.tensor([0.25, 0.75, 0.5, 0.5, 0.5])).item():.5f} gamma0_is_ce {torch.allclose(focal_loss(logits, y, gamma=0.0), F.cross_entropy(logits, y))}"
    )

    ml_logits = det((4, 3), 5.0) * 2
    ml_y = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0, 0.5]))
    print(
        f"bce_pos_weight {bce(ml_logits, ml_y).item():.5f} plain {F.binary_cross_entropy_with_logits(ml_logits, ml_y).item():.5f}"
    )
    print(
        f"bce_weight {F.binary_cross_entropy(torch.sigmoid(ml_logits), ml_y, weight=torch.tensor([1.0, 2.0, 1.0])).item():.5f}"
    )
    print(f"multilabel_margin {F.multilabel_soft_margin_loss(ml_logits, ml_y).item():.5f}")
    print(f"topk_acc {topk_acc(logits, y)}")
    out.sum().backward()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(20):
        loss = F.cross_entropy(model(mixed), soft, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"train_soft {loss.item():.5f} pred {model(x).argmax(1).tolist()}")
    try:
        F.cross_entropy(logits, soft[:, :4])
    except RuntimeError as e:
        print(f"shape_error {str(e)[:60]}")


if __name__ == "__main__":
    main()
