# ruff: noqa: E501
"""Signal processing with torch.fft and complex tensors: spectra of a two-tone signal with
rfft / rfftfreq, band-stop filtering and irfft, FFT convolution checked against conv1d,
STFT / ISTFT with a Hann window, a mel-like filterbank with log power, 2-D FFT low-pass of
an image, and a spectral loss trained by Adam."""

import math

import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    sr, n = 64, 256
    t = torch.arange(n, dtype=torch.float32) / sr
    sig = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.sin(2 * math.pi * 12 * t + 0.3)
    spec = torch.fft.rfft(sig)
    freqs = torch.fft.rfftfreq(n, d=1 / sr)
    mag = spec.abs()
    top = mag.topk(2).indices.sort().values
    print(
        f"rfft {spec.dtype} {tuple(spec.shape)} peaks_hz {freqs[top].tolist()} amp {[round(v, 3) for v in (2 * mag[top] / n).tolist()]}"
    )
    print(
        f"phase_12hz {torch.angle(spec[top[1]]).item():.4f} parseval {(sig.pow(2).sum() - (mag.pow(2)[0] + 2 * mag.pow(2)[1:-1].sum() + mag.pow(2)[-1]) / n).abs().item() < 1e-2}"
    )
    filt = spec.clone()
    filt[(freqs > 10) & (freqs < 14)] = 0
    clean = torch.fft.irfft(filt, n=n)
    print(f"bandstop_err {(clean - torch.sin(2 * math.pi * 5 * t)).abs().max().item():.5f}")
    full = torch.fft.fft(sig)
    print(
        f"fft_hermitian {torch.allclose(full[1:], full[1:].flip(0).conj(), atol=1e-3)} ifft_real {torch.fft.ifft(full).imag.abs().max().item() < 1e-5}"
    )
    print(
        f"fftfreq {torch.fft.fftfreq(6, d=0.5).tolist()} shift {torch.fft.fftshift(torch.arange(6)).tolist()} ishift {torch.fft.ifftshift(torch.arange(5)).tolist()}"
    )
    print(
        f"norm_ortho {torch.fft.rfft(torch.ones(4), norm='ortho').tolist()} forward {torch.fft.fft(torch.ones(4), norm='forward').real.tolist()}"
    )

    # Convolution theorem: FFT convolution equals conv1d (which is correlation) with a flipped kernel.
    x = torch.cos(torch.arange(50, dtype=torch.float32) * 0.3)
    k = torch.tensor([0.25, 0.5, 0.25, -0.1])
    L = x.numel() + k.numel() - 1
    fftconv = torch.fft.irfft(torch.fft.rfft(x, n=L) * torch.fft.rfft(k, n=L), n=L)
    direct = F.conv1d(x.view(1, 1, -1), k.flip(0).view(1, 1, -1), padding=k.numel() - 1).view(-1)
    print(f"fft_conv_matches {torch.allclose(fftconv, direct, atol=1e-5)} len {L}")

    # STFT / ISTFT round trip.
    window = torch.hann_window(32)
    S = torch.stft(sig, n_fft=32, hop_length=8, window=window, return_complex=True)
    print(f"stft {tuple(S.shape)} {S.dtype} max_bin {S.abs().mean(dim=1).argmax().item()}")
    rec = torch.istft(S, n_fft=32, hop_length=8, window=window, length=n)
    print(f"istft_err {(rec - sig).abs().max().item() < 1e-4}")
    S2 = torch.stft(
        sig.unsqueeze(0).repeat(2, 1),
        n_fft=32,
        hop_length=16,
        win_length=24,
        window=torch.hann_window(24),
        center=False,
        return_complex=True,
    )
    print(
        f"stft_batch {tuple(S2.shape)} onesided_false {tuple(torch.stft(sig, 16, window=torch.hann_window(16), onesided=False, return_complex=True).shape)}"
    )
    power = S.abs() ** 2
    n_mels, n_bins = 6, power.shape[0]
    centers = torch.linspace(0, n_bins - 1, n_mels + 2)
    bins = torch.arange(n_bins, dtype=torch.float32).unsqueeze(0)
    fb = torch.clamp(
        1 - (bins - centers[1:-1].unsqueeze(1)).abs() / (centers[1] - centers[0]), min=0
    )
    logmel = torch.log(fb @ power + 1e-6)
    print(f"logmel {tuple(logmel.shape)} {[round(v, 3) for v in logmel.mean(dim=1).tolist()]}")

    # Complex tensor arithmetic.
    z = torch.complex(torch.tensor([1.0, 0.0, -1.0]), torch.tensor([1.0, 2.0, 0.5]))
    print(
        f"complex {z.real.tolist()} {z.imag.tolist()} abs {[round(v, 4) for v in z.abs().tolist()]} conj_imag {z.conj().imag.tolist()}"
    )
    w = z * (1 + 2j) / z.abs()
    print(f"complex_ops {[round(v, 4) for v in torch.view_as_real(w).flatten().tolist()]}")
    p = torch.polar(torch.tensor([2.0, 1.0]), torch.tensor([math.pi / 2, math.pi]))
    print(
        f"polar {[round(v, 4) for v in torch.view_as_real(p).flatten().tolist()]} is_complex {p.is_complex()}"
    )
    print(
        f"exp_i {[round(v, 4) for v in torch.view_as_real(torch.exp(1j * torch.tensor([0.0, math.pi / 3]))).flatten().tolist()]}"
    )
    zz = torch.view_as_complex(torch.tensor([[1.0, 2.0], [3.0, -4.0]]))
    print(
        f"view_as_complex {zz.dtype} {zz.abs().tolist()} matmul {[round(v, 3) for v in torch.view_as_real(zz.unsqueeze(0) @ zz.unsqueeze(1)).flatten().tolist()]}"
    )

    # 2-D FFT low-pass of an image.
    img = (
        torch.sin(torch.arange(16.0).unsqueeze(1) * 0.4) * torch.cos(torch.arange(16.0) * 0.9)
        + (torch.arange(256.0).view(16, 16) % 3 == 0).float() * 0.3
    )
    F2 = torch.fft.fftshift(torch.fft.fft2(img))
    yy, xx = torch.meshgrid(torch.arange(16) - 8, torch.arange(16) - 8, indexing="ij")
    mask = (yy**2 + xx**2) <= 16
    low = torch.fft.ifft2(torch.fft.ifftshift(F2 * mask)).real
    print(
        f"lowpass {low.std().item():.5f} energy_kept {((F2 * mask).abs().pow(2).sum() / F2.abs().pow(2).sum()).item():.5f}"
    )
    print(
        f"rfft2 {tuple(torch.fft.rfft2(img).shape)} roundtrip {torch.allclose(torch.fft.irfft2(torch.fft.rfft2(img), s=img.shape), img, atol=1e-5)}"
    )
    print(
        f"fftn_dims {tuple(torch.fft.fftn(img.view(2, 8, 16), dim=(1, 2)).shape)} rfftn {tuple(torch.fft.rfftn(img.view(4, 4, 16)).shape)}"
    )

    # Learn a 5-tap FIR filter whose magnitude response matches a target (gradients through rfft).
    taps = torch.zeros(5, requires_grad=True)
    target = torch.fft.rfft(torch.tensor([0.1, 0.2, 0.4, 0.2, 0.1]), n=32).abs()
    opt = torch.optim.Adam([taps], lr=0.05)
    for step in range(60):
        opt.zero_grad()
        loss = F.mse_loss(torch.fft.rfft(taps, n=32).abs(), target)
        loss.backward()
        opt.step()
    print(f"fir_loss {loss.item():.6f} dc {taps.sum().item():.4f}")
    zg = torch.tensor([1.0 + 1.0j, 2.0 - 1.0j], requires_grad=True)
    (zg.abs() ** 2).sum().backward()
    print(f"complex_grad {[round(v, 4) for v in torch.view_as_real(zg.grad).flatten().tolist()]}")


if __name__ == "__main__":
    main()
