# ruff: noqa: E501
"""Classical image processing with torch ops, as kornia-style code and tutorials write it:
separable Gaussian blur with depthwise conv2d and reflect padding, Sobel gradients and
magnitude/orientation with atan2, non-maximum suppression via max_pool2d, morphological
dilation/erosion/opening with max_pool2d, histogram equalization with histc + cumsum +
lookup, bilateral-free median filter via unfold + median, Conway's game of life with a conv2d
neighbour count, and connected-component counting by iterated max-pool label propagation."""

import math

import torch
import torch.nn.functional as F


def gaussian_kernel1d(sigma, radius):
    x = torch.arange(-radius, radius + 1, dtype=torch.float32)
    k = torch.exp(-(x**2) / (2 * sigma**2))
    return k / k.sum()


def gaussian_blur(img, sigma=1.0, radius=2):
    c = img.shape[1]
    k = gaussian_kernel1d(sigma, radius)
    img = F.pad(img, (radius, radius, radius, radius), mode="reflect")
    img = F.conv2d(img, k.view(1, 1, 1, -1).repeat(c, 1, 1, 1), groups=c)
    return F.conv2d(img, k.view(1, 1, -1, 1).repeat(c, 1, 1, 1), groups=c)


def sobel(img):
    kx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
    k = torch.stack([kx, kx.T]).unsqueeze(1)
    g = F.conv2d(F.pad(img, (1, 1, 1, 1), mode="replicate"), k)
    return g[:, :1], g[:, 1:]


def main():
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
    img = ((xx**2 + yy**2) < 0.4).float() * 0.8 + 0.1 * torch.sin(xx * 7) * torch.cos(yy * 5)
    img = img[None, None]
    blur = gaussian_blur(img)
    print(
        f"blur_stats {blur.mean().item():.5f} {blur.std().item():.5f} {blur[0, 0, 8, :5].tolist()[0]:.5f}"
    )
    gx, gy = sobel(blur)
    mag = torch.sqrt(gx**2 + gy**2)
    ang = torch.atan2(gy, gx)
    print(
        f"grad_mag_max {mag.max().item():.4f} mean {mag.mean().item():.4f} angle_hist {torch.histc(ang, bins=4, min=-math.pi, max=math.pi).int().tolist()}"
    )
    local_max = F.max_pool2d(mag, 3, stride=1, padding=1)
    edges = (mag == local_max) & (mag > 0.5 * mag.max())
    print(f"nms_edges {int(edges.sum())}")

    binary = (img > 0.4).float()
    dil = F.max_pool2d(binary, 3, stride=1, padding=1)
    ero = -F.max_pool2d(-binary, 3, stride=1, padding=1)
    opening = F.max_pool2d(-F.max_pool2d(-binary, 3, 1, 1), 3, 1, 1)
    print(
        f"morph {int(binary.sum())} dil {int(dil.sum())} ero {int(ero.sum())} open {int(opening.sum())} gradient {int((dil - ero).sum())}"
    )

    q = (img.clamp(0, 1) * 255).round()
    hist = torch.histc(q, bins=256, min=0, max=255)
    cdf = hist.cumsum(0)
    cdf_min = cdf[cdf > 0][0]
    lut = ((cdf - cdf_min) / (cdf[-1] - cdf_min) * 255).round().clamp(0, 255)
    eq = lut[q.long()]
    print(
        f"equalized_mean {eq.mean().item():.3f} unique {torch.unique(eq).numel()} max {eq.max().item()}"
    )

    noisy = img.clone()
    noisy[0, 0, ::5, ::3] = 1.0
    patches = F.unfold(F.pad(noisy, (1, 1, 1, 1), mode="reflect"), 3)
    med = patches.median(dim=1).values.view_as(noisy)
    print(
        f"median_err {(med - img).abs().mean().item():.5f} noisy_err {(noisy - img).abs().mean().item():.5f}"
    )

    board = torch.zeros(1, 1, 10, 10)
    board[0, 0, 1, 2] = board[0, 0, 2, 3] = board[0, 0, 3, 1] = board[0, 0, 3, 2] = board[
        0, 0, 3, 3
    ] = 1
    board[0, 0, 6, 6:9] = 1
    kernel = torch.ones(1, 1, 3, 3)
    kernel[0, 0, 1, 1] = 0
    for _ in range(4):
        n = F.conv2d(F.pad(board, (1, 1, 1, 1), mode="circular"), kernel)
        board = ((n == 3) | ((board == 1) & (n == 2))).float()
    print(f"life_alive {int(board.sum())} cells {board[0, 0].nonzero().tolist()}")

    mask = torch.zeros(1, 1, 12, 12)
    mask[0, 0, 1:4, 1:4] = 1
    mask[0, 0, 6:10, 2:4] = 1
    mask[0, 0, 2:5, 7:11] = 1
    labels = (torch.arange(1, 145, dtype=torch.float32).view(1, 1, 12, 12)) * mask
    for _ in range(12):
        labels = F.max_pool2d(labels, 3, stride=1, padding=1) * mask
    print(
        f"components {torch.unique(labels[labels > 0]).numel()} sizes {sorted(torch.unique(labels[labels > 0], return_counts=True)[1].tolist())}"
    )


if __name__ == "__main__":
    main()
