# ruff: noqa: E501
"""A Conformer speech encoder as torchaudio/ESPnet recipes write it: SpecAugment time and
frequency masking (masked_fill over index ranges), a Conv2d subsampling front end, Conformer
blocks (macaron half-step feed-forwards with SiLU, MultiheadAttention with key_padding_mask
from lengths, a convolution module with pointwise conv + GLU + depthwise Conv1d + BatchNorm1d),
CTC training for a few steps with lengths after subsampling, and greedy CTC decoding."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.23 + 0.003 * k * k + i) * scale).view_as(p))


def spec_augment(x, time_masks, freq_masks):
    x = x.clone()
    t = torch.arange(x.shape[1])
    f = torch.arange(x.shape[2])
    for b, (t0, tw) in enumerate(time_masks):
        x[b] = x[b].masked_fill(((t >= t0) & (t < t0 + tw))[:, None], 0.0)
    for b, (f0, fw) in enumerate(freq_masks):
        x[b] = x[b].masked_fill(((f >= f0) & (f < f0 + fw))[None, :], 0.0)
    return x


class Subsample(nn.Module):
    def __init__(self, n_mels, d):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2), nn.ReLU(), nn.Conv2d(4, 4, 3, stride=2), nn.ReLU()
        )
        self.out = nn.Linear(4 * (((n_mels - 1) // 2 - 1) // 2), d)

    def forward(self, x, lengths):
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.shape
        x = self.out(x.transpose(1, 2).reshape(b, t, c * f))
        lengths = torch.div(lengths - 1, 2, rounding_mode="floor")
        lengths = torch.div(lengths - 1, 2, rounding_mode="floor")
        return x, lengths


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(d),
            nn.Linear(d, 4 * d),
            nn.SiLU(),
            nn.Dropout(0.1),
            nn.Linear(4 * d, d),
            nn.Dropout(0.1),
        )

    def forward(self, x):
        return self.net(x)


class ConvModule(nn.Module):
    def __init__(self, d, k=5):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d, bias=False)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)

    def forward(self, x, pad_mask):
        x = self.norm(x).masked_fill(pad_mask[..., None], 0.0).transpose(1, 2)
        x = F.glu(self.pw1(x), dim=1)
        x = F.silu(self.bn(self.dw(x)))
        return self.pw2(x).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ff1, self.ff2 = FeedForward(d), FeedForward(d)
        self.attn_norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.1, batch_first=True)
        self.conv = ConvModule(d)
        self.final_norm = nn.LayerNorm(d)

    def forward(self, x, pad_mask):
        x = x + 0.5 * self.ff1(x)
        h = self.attn_norm(x)
        x = x + self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)[0]
        x = x + self.conv(x, pad_mask)
        x = x + 0.5 * self.ff2(x)
        return self.final_norm(x)


class Conformer(nn.Module):
    def __init__(self, n_mels=16, d=16, heads=2, layers=2, vocab=6):
        super().__init__()
        self.sub = Subsample(n_mels, d)
        self.blocks = nn.ModuleList(ConformerBlock(d, heads) for _ in range(layers))
        self.ctc = nn.Linear(d, vocab)

    def forward(self, feats, lengths):
        x, lengths = self.sub(feats, lengths)
        pad_mask = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        return self.ctc(x).log_softmax(-1), lengths


def greedy_ctc(log_probs, lengths, blank=0):
    out = []
    for lp, n in zip(log_probs, lengths):
        ids = torch.unique_consecutive(lp[:n].argmax(-1))
        out.append(ids[ids != blank].tolist())
    return out


def main():
    torch.manual_seed(0)
    b, t, n_mels = 3, 40, 16
    tt = torch.arange(b * t * n_mels, dtype=torch.float32)
    feats = torch.sin(tt * 0.013) * torch.cos(tt * 0.0007) + 0.1 * torch.cos(tt * 0.9)
    feats = feats.view(b, t, n_mels)
    lengths = torch.tensor([40, 33, 27])
    feats = feats.masked_fill((torch.arange(t)[None, :] >= lengths[:, None])[..., None], 0.0)
    aug = spec_augment(feats, [(5, 4), (10, 3), (0, 0)], [(2, 3), (0, 0), (12, 2)])
    print(f"masked_fraction {(aug == 0).float().mean().item():.4f}")

    model = Conformer()
    det_init(model)
    print(f"params {sum(p.numel() for p in model.parameters())}")
    targets = torch.tensor([[1, 2, 3], [2, 4, 0], [5, 1, 0]])
    target_lengths = torch.tensor([3, 2, 2])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    model.train()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    model.blocks[0].attn.dropout = 0.0
    model.blocks[1].attn.dropout = 0.0
    losses = []
    for _ in range(4):
        opt.zero_grad()
        log_probs, out_lengths = model(aug, lengths)
        loss = F.ctc_loss(
            log_probs.transpose(0, 1), targets, out_lengths, target_lengths, zero_infinity=True
        )
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 4))
    print(f"out_lengths {out_lengths.tolist()} frames {log_probs.shape[1]}")
    print(f"ctc_losses {losses}")
    model.eval()
    with torch.no_grad():
        lp, ol = model(feats, lengths)
    print(
        f"eval_logprob_mean {lp.mean().item():.4f} bn_running_mean {[round(v, 4) for v in model.blocks[0].conv.bn.running_mean[:4].tolist()]}"
    )
    print(f"greedy {greedy_ctc(lp, ol)}")


if __name__ == "__main__":
    main()
