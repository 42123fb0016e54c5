# ruff: noqa: E501
"""Audio front ends in plain torch, as keyword-spotting and speech repos write them: windows
from torch.signal.windows (hann, hamming, kaiser, gaussian, blackman, periodic vs symmetric),
framing with Tensor.unfold and a windowed rfft checked against torch.stft, a mel filterbank and
log-mel features, MFCCs through an orthonormal DCT-II matrix, CMVN, SpecAugment-style time and
frequency masking, delta features by conv1d, and a small CNN classifier trained on them."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.signal import windows


def det_init(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.43 + 0.017 * k * k + i) * scale).view_as(p))


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_filterbank(n_mels, n_fft, sr):
    n_freqs = n_fft // 2 + 1
    mels = torch.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    freqs = torch.linspace(0, sr / 2, n_freqs)
    lower = (freqs[None] - hz[:-2, None]) / (hz[1:-1, None] - hz[:-2, None])
    upper = (hz[2:, None] - freqs[None]) / (hz[2:, None] - hz[1:-1, None])
    return torch.clamp(torch.minimum(lower, upper), min=0.0)  # n_mels x n_freqs


def dct_matrix(n_mfcc, n_mels):
    n = torch.arange(n_mels, dtype=torch.float32)
    k = torch.arange(n_mfcc, dtype=torch.float32)[:, None]
    d = torch.cos(math.pi / n_mels * (n + 0.5) * k) * math.sqrt(2.0 / n_mels)
    d[0] *= 1 / math.sqrt(2.0)
    return d  # n_mfcc x n_mels


def make_clips(n=24, sr=8000, length=2048):
    t = torch.arange(length, dtype=torch.float32) / sr
    labels = torch.arange(n) % 3
    base = torch.tensor([440.0, 880.0, 1500.0])[labels]
    sweep = (torch.arange(n, dtype=torch.float32) * 7.0)[:, None]
    clips = torch.sin(2 * math.pi * (base[:, None] + sweep) * t) + 0.2 * torch.sin(
        2 * math.pi * 3000 * t + torch.arange(n)[:, None].float()
    )
    envelope = 0.6 + 0.4 * torch.sin(2 * math.pi * 5.0 * t + torch.arange(n)[:, None].float() * 0.7)
    return clips * envelope, labels


class KWS(nn.Module):
    def __init__(self, n_feats, n_cls=3):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(n_feats, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveMaxPool1d(1)
        )
        self.fc = nn.Linear(16, n_cls)

    def forward(self, x):
        return self.fc(self.conv(x).squeeze(-1))


def main():
    torch.manual_seed(0)
    for name, w in [
        ("hann", windows.hann(8)),
        ("hann_periodic", windows.hann(8, sym=False)),
        ("hamming", windows.hamming(6)),
        ("blackman", windows.blackman(5)),
        ("kaiser", windows.kaiser(6, beta=8.0)),
        ("gaussian", windows.gaussian(5, std=1.2)),
        ("nuttall", windows.nuttall(4, sym=False)),
    ]:
        print(f"window_{name} {[round(v, 5) for v in w.tolist()]}")
    print(
        f"hann_vs_torch_hann_window {torch.allclose(windows.hann(16, sym=False), torch.hann_window(16))} {torch.allclose(windows.hamming(9), torch.hamming_window(9, periodic=False))} {torch.allclose(windows.kaiser(7, beta=12.0, sym=False), torch.kaiser_window(7))}"
    )

    sr, n_fft, hop = 8000, 256, 128
    clips, labels = make_clips(sr=sr)
    win = windows.hann(n_fft, sym=False)
    frames = clips.unfold(-1, n_fft, hop)  # B, T, n_fft
    spec = torch.fft.rfft(frames * win, dim=-1)
    power = spec.abs() ** 2
    ref = torch.stft(clips, n_fft, hop, window=win, center=False, return_complex=True).abs() ** 2
    print(
        f"frames {tuple(frames.shape)} stft_same {torch.allclose(power.transpose(1, 2), ref, rtol=1e-3, atol=1e-2)}"
    )
    fb = mel_filterbank(20, n_fft, sr)
    mel = power @ fb.T
    logmel = torch.log(mel + 1e-2)
    mfcc = logmel @ dct_matrix(13, 20).T
    print(
        f"fb {tuple(fb.shape)} rowsum {[round(v, 3) for v in fb.sum(1)[:4].tolist()]} logmel0 {[round(v, 3) for v in logmel[0, 0, :4].tolist()]} mfcc0 {[round(v, 3) for v in mfcc[0, 0, :4].tolist()]}"
    )
    d = dct_matrix(13, 20)
    print(f"dct_orthonormal {torch.allclose(d @ d.T, torch.eye(13), atol=1e-5)}")
    feats = (mfcc - mfcc.mean(dim=1, keepdim=True)) / (mfcc.std(dim=1, keepdim=True) + 1e-5)  # CMVN
    x = feats.transpose(1, 2)  # B, C=13, T
    kernel = torch.tensor([-1.0, 0.0, 1.0]).view(1, 1, 3).repeat(13, 1, 1) / 2
    delta = F.conv1d(F.pad(x, (1, 1), mode="replicate"), kernel, groups=13)
    x = torch.cat([x, delta], dim=1)
    print(f"features {tuple(x.shape)} delta0 {[round(v, 4) for v in delta[0, 0, :4].tolist()]}")

    def spec_augment(x, f0, fw, t0, tw):
        x = x.clone()
        x[:, f0 : f0 + fw, :] = 0.0
        x[:, :, t0 : t0 + tw] = 0.0
        return x

    aug = spec_augment(torch.ones_like(x), 2, 3, 4, 2)
    print(
        f"masked_fraction {(aug == 0).float().mean().item():.4f} kept_equal {torch.equal(spec_augment(x, 2, 3, 4, 2)[aug == 1], x[aug == 1])}"
    )
    g = torch.Generator().manual_seed(3)
    f0 = int(torch.randint(0, 20, (1,), generator=g))
    print(f"rng_mask_start {f0}")

    model = KWS(26)
    det_init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(30):
        inp = spec_augment(x, (step * 3) % 20, 2, (step * 5) % 10, 2)
        loss = F.cross_entropy(model(inp), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in (0, 29):
            print(f"kws_step{step} loss {loss.item():.5f}")
    with torch.no_grad():
        acc = (model(x).argmax(1) == labels).float().mean().item()
    print(f"kws_acc {acc:.4f}")


if __name__ == "__main__":
    main()
