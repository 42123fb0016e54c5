# ruff: noqa: E501
"""Bits of vision and training utilities that real projects mix in: a spatial transformer
(affine_grid / grid_sample), sub-pixel super-resolution with PixelShuffle and PSNR, unfold
patches, evaluation metrics, SWA/EMA averaging, weight/spectral norm, pruning, knowledge
distillation, param groups, gradient accumulation and CPU autocast."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.parametrizations import spectral_norm, weight_norm
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn


def det_(module, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                (
                    torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + i) * scale
                ).view_as(p)
            )
    return module


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(4 * 3 * 3, 8), nn.ReLU(True), nn.Linear(8, 3 * 2))

    def init_identity(self):
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def forward(self, x):
        theta = self.fc_loc(self.loc(x).view(-1, 4 * 3 * 3)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False), theta


class SubPixel(nn.Module):
    def __init__(self, r=2):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, r * r, 3, padding=1)
        self.shuffle = nn.PixelShuffle(r)

    def forward(self, x):
        return self.shuffle(self.conv2(torch.tanh(self.conv1(x))))


def main():
    torch.manual_seed(0)
    img = torch.sin(torch.arange(64, dtype=torch.float32).view(1, 1, 8, 8) * 0.3).repeat(2, 1, 1, 1)
    stn = det_(STN())
    stn.init_identity()
    out, theta = stn(img)
    print(f"stn_identity {torch.allclose(out, img, atol=1e-5)} theta {tuple(theta.shape)}")
    rot = torch.tensor(
        [[[math.cos(0.3), -math.sin(0.3), 0.1], [math.sin(0.3), math.cos(0.3), 0.0]]]
    )
    grid = F.affine_grid(rot, (1, 1, 8, 8), align_corners=True)
    warped = F.grid_sample(
        img[:1], grid, mode="bilinear", padding_mode="border", align_corners=True
    )
    print(
        f"grid_sample_sum {warped.sum().item():.5f} nearest {F.grid_sample(img[:1], grid, mode='nearest', align_corners=True).sum().item():.5f}"
    )

    hr = torch.cos(torch.arange(256, dtype=torch.float32).view(1, 1, 16, 16) * 0.21)
    lr = F.interpolate(hr, scale_factor=0.5, mode="bilinear", align_corners=False, antialias=False)
    sr = det_(SubPixel(), 0.1)
    opt = torch.optim.Adam(sr.parameters(), lr=1e-2)
    for _ in range(30):
        loss = F.mse_loss(sr(lr), hr)
        opt.zero_grad()
        loss.backward()
        opt.step()
    psnr = 10 * math.log10(4.0 / loss.item())
    print(f"subpixel_shape {tuple(sr(lr).shape)} loss {loss.item():.6f} psnr {psnr:.3f}")
    print(
        f"interp_modes {F.interpolate(lr, size=(16, 16), mode='nearest').sum().item():.4f} {F.interpolate(lr, scale_factor=2, mode='bicubic', align_corners=True).sum().item():.4f}"
    )
    small = F.interpolate(hr, size=(5, 7), mode="bilinear", antialias=True)
    print(
        f"antialias_resize {tuple(small.shape)} {small.sum().item():.5f} {F.interpolate(hr, scale_factor=0.3, mode='bicubic', antialias=True).abs().sum().item():.5f}"
    )
    print(
        f"upsample {nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)(lr).sum().item():.4f}"
    )
    print(
        f"pixel_unshuffle {torch.equal(F.pixel_unshuffle(F.pixel_shuffle(torch.arange(16.0).view(1, 4, 2, 2), 2), 2), torch.arange(16.0).view(1, 4, 2, 2))}"
    )
    patches = F.unfold(hr, kernel_size=4, stride=4)
    print(
        f"unfold {tuple(patches.shape)} fold_roundtrip {torch.allclose(F.fold(patches, (16, 16), 4, stride=4), hr)}"
    )
    print(f"tensor_unfold {tuple(hr.unfold(2, 4, 4).unfold(3, 4, 4).shape)}")

    # Metrics.
    preds = torch.tensor([0, 2, 1, 1, 0, 2, 2, 1])
    target = torch.tensor([0, 1, 1, 1, 0, 2, 0, 1])
    cm = torch.bincount(target * 3 + preds, minlength=9).reshape(3, 3)
    print(f"confusion {cm.tolist()}")
    tp = cm.diag().float()
    print(f"precision {(tp / cm.sum(0).clamp(min=1)).tolist()} recall {(tp / cm.sum(1)).tolist()}")
    scores = torch.tensor([[0.1, 0.5, 0.4], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5]])
    top2 = scores.topk(2, dim=1).indices
    print(f"top2 {top2.tolist()} hit {(top2 == torch.tensor([[2], [0], [1]])).any(1).tolist()}")
    vals, counts = torch.unique(preds, return_counts=True)
    print(
        f"unique {vals.tolist()} {counts.tolist()} sorted {torch.sort(scores[:, 0], descending=True).indices.tolist()}"
    )
    print(f"histc {torch.histc(scores, bins=4, min=0, max=1).tolist()}")
    print(f"cdist {torch.cdist(scores, scores).diagonal().tolist()}")
    print(f"einsum {torch.einsum('bi,bi->b', scores, scores).tolist()}")

    # Weight averaging.
    net = det_(nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2)))
    swa = AveragedModel(net)
    ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=2, anneal_strategy="cos")
    xs = torch.linspace(-1, 1, 32).view(8, 4)
    ys = torch.tensor([0, 1] * 4)
    for _ in range(4):
        loss = F.cross_entropy(net(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        swa.update_parameters(net)
        ema.update_parameters(net)
        swa_sched.step()
    update_bn([(xs,)], swa)
    print(f"swa_n {swa.n_averaged.item()} lr {opt.param_groups[0]['lr']:.6f}")
    print(
        f"swa_w {swa.module[0].weight.sum().item():.6f} ema_w {ema.module[0].weight.sum().item():.6f}"
    )
    print(f"swa_bn_mean {swa.module[1].running_mean.sum().item():.6f}")

    # Reparametrizations and pruning.
    lin = det_(nn.Linear(5, 3))
    wn = weight_norm(lin)
    print(f"weight_norm {sorted(n for n, _ in wn.named_parameters())}")
    print(f"weight_norm_same {torch.allclose(wn.weight, det_(nn.Linear(5, 3)).weight, atol=1e-6)}")
    sn = spectral_norm(det_(nn.Linear(5, 3)))
    sn.eval()
    print(f"spectral_norm_sigma {torch.linalg.matrix_norm(sn.weight, ord=2).item():.3f}")
    pl = det_(nn.Linear(6, 4))
    prune.l1_unstructured(pl, name="weight", amount=0.5)
    print(
        f"pruned_zeros {(pl.weight == 0).sum().item()} buffers {[n for n, _ in pl.named_buffers()]}"
    )
    prune.remove(pl, "weight")
    print(f"pruned_removed {[n for n, _ in pl.named_parameters()]}")
    vec = parameters_to_vector(lin.parameters())
    vector_to_parameters(vec * 2, lin.parameters())
    print(
        f"param_vector {vec.numel()} doubled {torch.allclose(parameters_to_vector(lin.parameters()), vec * 2)}"
    )

    # Knowledge distillation loss.
    s_logits = torch.tensor([[1.0, 2.0, 0.5], [0.3, 0.2, 2.0]])
    t_logits = torch.tensor([[1.5, 1.0, 0.2], [0.1, 0.1, 3.0]])
    T = 2.0
    kd = (
        F.kl_div(
            F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean"
        )
        * T
        * T
    )
    kd_log = F.kl_div(
        F.log_softmax(s_logits / T, -1),
        F.log_softmax(t_logits / T, -1),
        reduction="batchmean",
        log_target=True,
    )
    print(f"kd {kd.item():.6f} log_target_same {torch.allclose(kd, kd_log * T * T)}")

    # Param groups and gradient accumulation.
    model = det_(nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.Linear(4, 1)))
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim == 1 else decay).append(p)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2
    )
    opt.add_param_group({"params": [nn.Parameter(torch.ones(2))], "lr": 0.5})
    print(f"groups {[(len(g['params']), g['weight_decay'], g['lr']) for g in opt.param_groups]}")
    accum = 4
    opt.zero_grad()
    for k in range(8):
        xb = xs[k % 8 : k % 8 + 1]
        loss = model(xb).pow(2).mean() / accum
        loss.backward()
        if (k + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
    print(f"accum_w {model[0].weight.sum().item():.6f}")
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        y = model[0](xs)
        print(f"autocast_dtype {y.dtype} {torch.is_autocast_enabled('cpu')}")
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    loss = model(xs).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(f"scaler_disabled_scale {scaler.get_scale()} {scaler.is_enabled()}")
    bag = det_(nn.EmbeddingBag(10, 3, mode="mean"))
    print(
        f"embedding_bag {bag(torch.tensor([1, 2, 4, 5, 4]), torch.tensor([0, 2])).sum().item():.6f}"
    )
    emb = nn.Embedding.from_pretrained(torch.arange(12.0).view(4, 3), freeze=True)
    print(
        f"from_pretrained {emb(torch.tensor([2])).tolist()} frozen {not emb.weight.requires_grad}"
    )
    ctc = nn.CTCLoss(blank=0)
    lp = F.log_softmax(torch.sin(torch.arange(6 * 2 * 4, dtype=torch.float32)).view(6, 2, 4), 2)
    print(
        f"ctc {ctc(lp, torch.tensor([[1, 2], [3, 3]]), torch.tensor([6, 6]), torch.tensor([2, 2])).item():.5f}"
    )
    trip = nn.TripletMarginLoss(margin=1.0)(scores[:1], scores[1:2], scores[2:3])
    print(
        f"triplet {trip.item():.6f} cos_emb {nn.CosineEmbeddingLoss()(scores[:2], scores[1:], torch.tensor([1, -1])).item():.6f}"
    )


if __name__ == "__main__":
    main()
