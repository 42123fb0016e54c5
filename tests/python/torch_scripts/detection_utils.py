# ruff: noqa: E501
"""Object-detection helpers written in plain torch, as detection repos carry them: anchor
generation with meshgrid, box encoding / decoding, pairwise IoU and GIoU, greedy and
batched NMS, matching anchors to ground truth with max / argmax, sigmoid focal loss,
smooth-L1 box regression, top-k decoding of heatmaps with max_pool2d peaks, and the
indexing ops all of that leans on."""

import torch
import torch.nn.functional as F


def make_anchors(feat_h, feat_w, stride, sizes=(8.0, 16.0), ratios=(0.5, 1.0, 2.0)):
    base = []
    for s in sizes:
        for r in ratios:
            w, h = s * r**0.5, s / r**0.5
            base.append([-w / 2, -h / 2, w / 2, h / 2])
    base = torch.tensor(base)
    ys, xs = torch.meshgrid(
        torch.arange(feat_h, dtype=torch.float32),
        torch.arange(feat_w, dtype=torch.float32),
        indexing="ij",
    )
    shifts = torch.stack([xs, ys, xs, ys], dim=-1).reshape(-1, 1, 4) * stride + stride / 2
    return (shifts + base.view(1, -1, 4)).reshape(-1, 4)


def box_area(b):
    return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)


def box_iou(a, b):
    lt = torch.max(a[:, None, :2], b[:, :2])
    rb = torch.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = box_area(a)[:, None] + box_area(b) - inter
    return inter / union, union


def generalized_box_iou(a, b):
    iou, union = box_iou(a, b)
    lt = torch.min(a[:, None, :2], b[:, :2])
    rb = torch.max(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[..., 0] * wh[..., 1]
    return iou - (area - union) / area


def nms(boxes, scores, thresh):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i.item())
        if order.numel() == 1:
            break
        ious, _ = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])
        order = order[1:][ious[0] <= thresh]
    return torch.tensor(keep, dtype=torch.long)


def batched_nms(boxes, scores, idxs, thresh):
    offsets = idxs.to(boxes) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, thresh)


def encode(gt, anchors, weights=(10.0, 10.0, 5.0, 5.0)):
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = anchors[:, 0] + 0.5 * aw, anchors[:, 1] + 0.5 * ah
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    gx, gy = gt[:, 0] + 0.5 * gw, gt[:, 1] + 0.5 * gh
    wx, wy, ww, wh = weights
    return torch.stack(
        [
            wx * (gx - ax) / aw,
            wy * (gy - ay) / ah,
            ww * torch.log(gw / aw),
            wh * torch.log(gh / ah),
        ],
        dim=1,
    )


def decode(deltas, anchors, weights=(10.0, 10.0, 5.0, 5.0)):
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = anchors[:, 0] + 0.5 * aw, anchors[:, 1] + 0.5 * ah
    wx, wy, ww, wh = weights
    dx, dy = deltas[:, 0] / wx, deltas[:, 1] / wy
    dw = torch.clamp(deltas[:, 2] / ww, max=4.135)
    dh = torch.clamp(deltas[:, 3] / wh, max=4.135)
    cx, cy, w, h = dx * aw + ax, dy * ah + ay, torch.exp(dw) * aw, torch.exp(dh) * ah
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=1)


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(inputs)
    ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * loss).sum()


def main():
    torch.manual_seed(0)
    anchors = make_anchors(4, 5, stride=8)
    print(
        f"anchors {tuple(anchors.shape)} first {[round(v, 3) for v in anchors[0].tolist()]} last {[round(v, 3) for v in anchors[-1].tolist()]}"
    )
    gt = torch.tensor([[4.0, 4.0, 20.0, 18.0], [22.0, 6.0, 38.0, 30.0]])
    gt_labels = torch.tensor([1, 2])
    iou, _ = box_iou(anchors, gt)
    max_iou, matched = iou.max(dim=1)
    labels = gt_labels[matched].clone()
    labels[max_iou < 0.4] = 0
    labels[(max_iou >= 0.3) & (max_iou < 0.4)] = -1
    best_anchor = iou.argmax(dim=0)
    labels[best_anchor] = gt_labels
    print(
        f"matching pos {(labels > 0).sum().item()} ignore {(labels == -1).sum().item()} best_anchor {best_anchor.tolist()} max_iou {max_iou.max().item():.4f}"
    )
    deltas = encode(gt[matched], anchors)
    rec = decode(deltas, anchors)
    print(
        f"encode_decode {torch.allclose(rec, gt[matched], atol=1e-3)} delta_pos {[round(v, 4) for v in deltas[best_anchor[0]].tolist()]}"
    )
    giou = generalized_box_iou(gt, anchors[:4])
    print(f"giou {[[round(v, 4) for v in r] for r in giou.tolist()]}")

    # Scores from a deterministic "network", then post-processing.
    n = anchors.size(0)
    cls_logits = torch.sin(torch.arange(n * 3, dtype=torch.float32) * 0.37).view(n, 3) * 3
    box_deltas = torch.cos(torch.arange(n * 4, dtype=torch.float32) * 0.11).view(n, 4) * 0.5
    targets = F.one_hot(labels.clamp(min=0), num_classes=3).float()[:, 1:]
    valid = labels >= 0
    fl = sigmoid_focal_loss(cls_logits[valid, 1:], targets[valid]) / max(
        1, (labels > 0).sum().item()
    )
    pos = labels > 0
    reg = F.smooth_l1_loss(box_deltas[pos], deltas[pos], beta=1 / 9, reduction="sum") / pos.sum()
    print(
        f"focal {fl.item():.5f} smooth_l1 {reg.item():.5f} l1 {F.l1_loss(box_deltas[pos], deltas[pos]).item():.5f}"
    )
    scores, cls = cls_logits[:, 1:].sigmoid().max(dim=1)
    keep_mask = scores > 0.5
    boxes = decode(box_deltas, anchors)[keep_mask]
    boxes[:, 0::2] = boxes[:, 0::2].clamp(0, 40)
    boxes[:, 1::2] = boxes[:, 1::2].clamp(0, 32)
    sc, cl = scores[keep_mask], cls[keep_mask]
    topk = sc.topk(min(20, sc.numel()))
    boxes, sc, cl = boxes[topk.indices], topk.values, cl[topk.indices]
    keep = batched_nms(boxes, sc, cl, 0.5)
    print(
        f"candidates {keep_mask.sum().item()} after_nms {keep.numel()} kept_scores {[round(v, 4) for v in sc[keep][:5].tolist()]} classes {torch.bincount(cl[keep], minlength=2).tolist()}"
    )
    plain = nms(boxes, sc, 0.5)
    print(f"plain_nms {plain.numel()} first {plain[:5].tolist()}")

    # CenterNet-style peak decoding.
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    heat = torch.exp(-((xx - 4) ** 2 + (yy - 5) ** 2) / 4) + 0.8 * torch.exp(
        -((xx - 11) ** 2 + (yy - 10) ** 2) / 6
    )
    heat = heat.view(1, 1, 16, 16)
    hmax = F.max_pool2d(heat, 3, stride=1, padding=1)
    peaks = heat * (hmax == heat).float()
    vals, inds = peaks.view(1, -1).topk(2)
    ys_, xs_ = (inds // 16).float(), (inds % 16).float()
    print(
        f"peaks {[round(v, 4) for v in vals[0].tolist()]} ys {ys_[0].tolist()} xs {xs_[0].tolist()}"
    )

    # The indexing toolkit.
    t = torch.tensor([[3, 1, 2], [9, 7, 8], [6, 4, 5]])
    print(
        f"gather {t.gather(1, torch.tensor([[2], [0], [1]])).flatten().tolist()} index_select {t.index_select(0, torch.tensor([2, 0]))[:, 0].tolist()} take_along {torch.take_along_dim(t, t.argsort(1), 1)[0].tolist()}"
    )
    s = torch.zeros(3, 4).scatter_(
        1, torch.tensor([[0, 1], [2, 3], [1, 1]]), torch.ones(3, 2), reduce="add"
    )
    print(
        f"scatter_add {s.tolist()} scatter_reduce {torch.zeros(3).scatter_reduce(0, torch.tensor([0, 1, 0, 2, 1]), torch.tensor([5.0, 2.0, 7.0, 1.0, 3.0]), reduce='amax', include_self=False).tolist()}"
    )
    print(
        f"index_add {torch.zeros(3).index_add_(0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0])).tolist()} index_fill {torch.zeros(2, 3).index_fill_(1, torch.tensor([1]), -1.0).tolist()}"
    )
    print(
        f"nonzero {torch.nonzero(t > 5).tolist()} as_tuple {[x.tolist() for x in torch.nonzero(t > 7, as_tuple=True)]} argwhere {torch.argwhere(t == 4).tolist()}"
    )
    print(
        f"masked_select {torch.masked_select(t, t % 2 == 0).tolist()} where {torch.where(t > 4, t, -t)[0].tolist()} unique {torch.unique(torch.tensor([3, 1, 3, 2, 1]), return_counts=True, return_inverse=True)}"
    )
    print(
        f"sort_stable {torch.sort(torch.tensor([2, 1, 2, 1, 0]), stable=True).indices.tolist()} kthvalue {torch.kthvalue(torch.tensor([5.0, 1.0, 4.0]), 2).values.item()} searchsorted {torch.searchsorted(torch.tensor([1.0, 3.0, 5.0]), torch.tensor([0.0, 3.0, 6.0]), right=True).tolist()} bucketize {torch.bucketize(torch.tensor([0.5, 2.0, 9.0]), torch.tensor([1.0, 2.0, 5.0])).tolist()}"
    )
    print(
        f"cummax {torch.cummax(torch.tensor([1, 3, 2, 5, 4]), 0).values.tolist()} cumprod {torch.cumprod(torch.tensor([1.0, 2.0, 3.0]), 0).tolist()} diff {torch.diff(torch.tensor([1, 4, 9, 16])).tolist()} roll {torch.roll(torch.arange(5), 2).tolist()} flip {torch.flip(t, [0, 1])[0].tolist()}"
    )
    print(
        f"repeat_interleave {torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([2, 3])).tolist()} tril_indices {torch.tril_indices(3, 3, -1).tolist()} combinations {torch.combinations(torch.arange(4), 2).shape[0]} clamp_t {torch.clamp(torch.arange(5.0), min=torch.tensor(1.0), max=torch.tensor(3.0)).tolist()}"
    )
    m = torch.arange(12.0).view(3, 4)
    m[m > 8] = 0
    m[[0, 2], [1, 3]] += 100
    m[:, torch.tensor([True, False, True, False])] *= -1
    print(f"setitem {m.tolist()}")
    print(
        f"index_put {torch.zeros(4).index_put_((torch.tensor([0, 0, 3]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()} masked_fill {t.masked_fill(t > 5, 0)[1].tolist()} masked_scatter {torch.zeros(4).masked_scatter(torch.tensor([True, False, True, False]), torch.tensor([7.0, 8.0])).tolist()}"
    )


if __name__ == "__main__":
    main()
