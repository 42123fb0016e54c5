"""The rest of torch.nn's activations and losses on one batch, forward and backward, as a model
zoo's unit tests exercise them: PReLU (shared and per-channel), RReLU in eval, SELU, CELU, Mish,
Hardtanh, ReLU6, Threshold, Softmin, Softmax2d, GLU, LogSigmoid, Softshrink, Hardshrink,
Tanhshrink, Softsign, Hardsigmoid, SiLU; AlphaDropout / FeatureAlphaDropout in eval; the norms
InstanceNorm1d/2d (affine, track_running_stats), LocalResponseNorm, GroupNorm; and the losses
MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss (p, margin, weight),
CosineEmbeddingLoss, SoftMarginLoss, BCEWithLogitsLoss with pos_weight, NLLLoss with class
weights and ignore_index, CrossEntropyLoss with probabilities and label smoothing,
PoissonNLLLoss (log_input both ways, full), GaussianNLLLoss, HingeEmbeddingLoss, L1 / MSE / Huber
/ SmoothL1 with beta, and reduction='none' / 'sum'."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def r(t, n=4):
    return [round(v, n) for v in t.detach().flatten().tolist()]


def main():
    x = torch.linspace(-3, 3, 24).view(2, 3, 4)
    acts = [
        nn.PReLU(),
        nn.PReLU(3, init=0.1),
        nn.SELU(),
        nn.CELU(alpha=0.7),
        nn.Mish(),
        nn.Hardtanh(-1.5, 2.0),
        nn.ReLU6(),
        nn.Threshold(0.5, -1.0),
        nn.Softmin(dim=1),
        nn.GLU(dim=-1),
        nn.LogSigmoid(),
        nn.Softshrink(0.7),
        nn.Hardshrink(0.7),
        nn.Tanhshrink(),
        nn.Softsign(),
        nn.Hardsigmoid(),
        nn.Hardswish(),
        nn.SiLU(),
        nn.ELU(alpha=0.5),
        nn.LeakyReLU(0.2),
        nn.GELU(),
    ]
    for act in acts:
        inp = x.clone().requires_grad_(True)
        out = act(inp)
        (out * torch.arange(out.numel()).view_as(out).float().cos()).sum().backward()
        extra = r(act.weight.grad) if isinstance(act, nn.PReLU) else ""
        print(
            "act",
            repr(act),
            tuple(out.shape),
            round(out.sum().item(), 4),
            round(inp.grad.abs().sum().item(), 4),
            extra,
        )
    rrelu = nn.RReLU(0.1, 0.3).eval()
    print("rrelu_eval", r(rrelu(x[0, 0])))
    print("softmax2d", r(nn.Softmax2d()(x.view(1, 2, 3, 4))[0, :, 0, 0]))
    print(
        "alpha_dropout_eval",
        torch.equal(nn.AlphaDropout(0.5).eval()(x), x),
        torch.equal(nn.FeatureAlphaDropout(0.5).eval()(x), x),
    )

    inorm = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    with torch.no_grad():
        inorm.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
        inorm.bias.copy_(torch.tensor([0.0, 0.1, -0.1]))
    y = inorm(x * torch.tensor([1.0, 2.0, 3.0]).view(1, 3, 1) + 1)
    print("instnorm1d", r(y[0, :, 0]), r(inorm.running_mean), r(inorm.running_var))
    inorm.eval()
    print("instnorm1d_eval", r(inorm(x)[1, :, 1]))
    img = torch.sin(torch.arange(2 * 4 * 5 * 5, dtype=torch.float32)).view(2, 4, 5, 5)
    print("instnorm2d", r(nn.InstanceNorm2d(4)(img)[0, :, 2, 2]))
    print("lrn", r(nn.LocalResponseNorm(3, alpha=0.1, beta=0.75, k=1.0)(img)[0, :, 1, 1]))
    print("groupnorm", r(nn.GroupNorm(2, 4)(img)[1, :, 0, 0]))

    logits = torch.tensor(
        [[0.2, -1.0, 2.0, 0.5], [1.5, 0.3, -0.2, 0.0], [-0.5, 0.5, 1.0, 2.0]], requires_grad=True
    )
    ml_target = torch.tensor([[2, 0, -1, 1], [0, -1, 3, 2], [3, 2, 1, -1]])
    multi_hot = torch.tensor([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
    cls = torch.tensor([1, 0, 2])
    a = torch.linspace(-1, 1, 12).view(3, 4)
    b = torch.cos(torch.arange(12.0)).view(3, 4)
    losses = {
        "multilabel_margin": nn.MultiLabelMarginLoss()(logits, ml_target),
        "multilabel_soft": nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 1.0, 0.5]))(
            logits, multi_hot
        ),
        "multi_margin": nn.MultiMarginLoss()(logits, cls),
        "multi_margin_p2": nn.MultiMarginLoss(
            p=2, margin=0.5, weight=torch.tensor([1.0, 0.5, 2.0, 1.0])
        )(logits, cls),
        "cosine_embedding": nn.CosineEmbeddingLoss(margin=0.2)(logits, b, torch.tensor([1, -1, 1])),
        "soft_margin": nn.SoftMarginLoss()(logits, multi_hot * 2 - 1),
        "bce_pos_weight": nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0, 0.5, 2.0]))(
            logits, multi_hot
        ),
        "nll_weighted": nn.NLLLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0]), ignore_index=3)(
            F.log_softmax(logits, 1), cls
        ),
        "ce_probs_smooth": nn.CrossEntropyLoss(label_smoothing=0.1)(logits, F.softmax(b, 1)),
        "ce_smooth_weight": nn.CrossEntropyLoss(
            weight=torch.tensor([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.2
        )(logits, cls),
        "poisson_log": nn.PoissonNLLLoss()(logits, multi_hot * 3),
        "poisson_full": nn.PoissonNLLLoss(log_input=False, full=True)(logits.exp(), multi_hot * 3),
        "gaussian_nll": nn.GaussianNLLLoss(full=True)(logits, a, b.abs() + 0.1),
        "hinge": nn.HingeEmbeddingLoss(margin=1.5)(logits, multi_hot * 2 - 1),
        "l1_sum": nn.L1Loss(reduction="sum")(logits, a),
        "huber": nn.HuberLoss(delta=0.5)(logits, a),
        "smooth_l1": nn.SmoothL1Loss(beta=0.3)(logits, a),
        "kl_log_target": nn.KLDivLoss(reduction="batchmean", log_target=True)(
            F.log_softmax(logits, 1), F.log_softmax(b, 1)
        ),
    }
    for name, loss in losses.items():
        (g,) = torch.autograd.grad(loss, logits)
        print("loss", name, round(loss.item(), 5), round(g.abs().sum().item(), 5))
    print(
        "none",
        r(nn.MultiMarginLoss(reduction="none")(logits, cls)),
        r(nn.MultiLabelMarginLoss(reduction="none")(logits, ml_target)),
    )
    print(
        "none_shapes",
        tuple(nn.CosineEmbeddingLoss(reduction="none")(a, b, torch.tensor([1, -1, 1])).shape),
        tuple(nn.GaussianNLLLoss(reduction="none")(logits, a, torch.ones(3, 1)).shape),
    )


if __name__ == "__main__":
    main()
