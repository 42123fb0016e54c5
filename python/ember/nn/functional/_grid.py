"""affine_grid and grid_sample (spatial transformers), composed from matmul, gather and
elementwise ops: gradients reach both the input (through gather) and the grid (through the
interpolation weights), as torch's do."""

from ..._C import stack
from ..._ops import _names
from ..._ops.creation import linspace, ones, zeros, zeros_like
from ..._ops.index import where
from ..._type_info import scalar_type_name
from ...autograd.function import Function

__all__ = ["affine_grid", "grid_sample"]


def _base(n, align_corners, dtype):
    """The normalized pixel centres along a side of n, computed as torch's (its linspace scaled
    by (n - 1) / n without align_corners): grid_sample clips the samples that land on the border,
    so a last-bit difference here decides whether an edge pixel gets a coordinate gradient."""
    if n <= 1:
        return zeros(n, dtype=dtype)
    steps = linspace(-1.0, 1.0, n, dtype=dtype)
    return steps if align_corners else steps * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """affine_grid(theta, size, align_corners=None)

    Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta over size."""
    align_corners = bool(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{size}. Got {list(theta.shape)}."
            )
        n, _, h, w = size
        xs, ys = _base(w, align_corners, theta.dtype), _base(h, align_corners, theta.dtype)
        base = stack(
            [xs.expand(h, w), ys.unsqueeze(1).expand(h, w), ones(h, w, dtype=theta.dtype)], -1
        )
        return (base.reshape(1, h * w, 3) @ theta.transpose(1, 2)).reshape(n, h, w, 2)
    if len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{size}. Got {list(theta.shape)}."
            )
        n, _, d, h, w = size
        xs, ys, zs = (_base(s, align_corners, theta.dtype) for s in (w, h, d))
        shape = (d, h, w)
        base = stack(
            [
                xs.expand(shape),
                ys.reshape(1, h, 1).expand(shape),
                zs.reshape(d, 1, 1).expand(shape),
                ones(shape, dtype=theta.dtype),
            ],
            -1,
        )
        return (base.reshape(1, d * h * w, 4) @ theta.transpose(1, 2)).reshape(n, d, h, w, 3)
    raise NotImplementedError(
        f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
        f"transforms, respectively. Got size {size}."
    )


def _reflect(x, low, high):
    span = high - low
    if span <= 0:
        return zeros_like(x)
    x = (x - low).abs()
    flips = (x / span).floor()
    extra = x - flips * span
    return where(flips % 2 == 0, extra + low, span - extra + low)


def _clip(x, size):
    """x clamped to [0, size - 1], passing its gradient only strictly inside: torch counts the
    borders themselves as outside (a point on the last pixel gets no coordinate gradient)."""
    inside = (x > 0) & (x < size - 1)
    return where(inside, x, x.detach().clamp(0, size - 1))


def _source_coords(g, size, align_corners, padding_mode):
    x = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
    if padding_mode == "border":
        x = _clip(x, size)
    elif padding_mode == "reflection":
        x = _reflect(x, 0.0, size - 1.0) if align_corners else _reflect(x, -0.5, size - 0.5)
        x = _clip(x, size)
    return x


_CUBIC_A = -0.75  # the cubic convolution kernel's parameter, as torch's bicubic modes use


def _cubic_weights(t):
    """The weights of the four taps at offsets -1, 0, 1, 2 from floor(x), for t = x - floor(x)."""
    a = _CUBIC_A

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _source_coords_int(x, size, align_corners, padding_mode):
    """A bicubic tap's integer coordinate after the padding mode (border: clamped;
    reflection: mirrored, then clamped; zeros: kept, the tap reading zero outside)."""
    if padding_mode == "border":
        return x.clamp(0, size - 1)
    if padding_mode == "reflection":
        x = _reflect(x, 0.0, size - 1.0) if align_corners else _reflect(x, -0.5, size - 0.5)
        return x.clamp(0, size - 1)
    return x


class _ZeroGridGradient(Function):
    """Nearest sampling reads no interpolation weight, so the grid is not in its graph; torch's
    backward still gives the grid a gradient of zeros (not None)."""

    @staticmethod
    def forward(ctx, out, grid):
        ctx.grid_meta = (grid.shape, grid.dtype)
        return out.view_as(out)

    @staticmethod
    def backward(ctx, grad):
        shape, dtype = ctx.grid_meta
        return grad, zeros(shape, dtype=dtype)


def _with_zero_grid_gradient(out, grid):
    return _ZeroGridGradient.apply(out, grid) if grid.requires_grad else out


def _check_grid_sampler(input, grid, mode):
    """torch's grid_sampler checks, in its order."""

    def sizes():
        return f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"

    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(input.dtype)} but found "
            f"{scalar_type_name(grid.dtype)}"
        )
    if input.dim() > 0 and grid.dim() > 0 and input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {sizes()}"
        )
    if grid.dim() > 0 and grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, "
            f"but got grid with sizes {list(grid.shape)}"
        )
    for d in range(2, input.dim()):
        if input.shape[d] <= 0:
            raise RuntimeError(
                f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                f"has sizes {list(input.shape)} with dimension {d} being empty"
            )
    want = 4 if input.dim() == 4 else 5
    if input.dim() != want or grid.dim() != want:
        raise RuntimeError(
            f"grid_sampler(): expected {want}D input and grid with same number of dimensions, "
            f"but got {sizes()}"
        )
    if want == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _grid_sample_3d(input, grid, mode, padding_mode, align_corners):
    """grid_sample of a volume (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) of normalized (x, y, z):
    trilinear ("bilinear") or nearest."""
    n, c, d, h, w = input.shape
    out_shape = list(grid.shape[1:4])
    m = out_shape[0] * out_shape[1] * out_shape[2]
    x = _source_coords(grid[..., 0], w, align_corners, padding_mode)
    y = _source_coords(grid[..., 1], h, align_corners, padding_mode)
    z = _source_coords(grid[..., 2], d, align_corners, padding_mode)
    flat = input.reshape(n, c, d * h * w)

    def tap(xi, yi, zi):
        # Values at integer (xi, yi, zi); zero outside the volume.
        valid = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1) & (zi >= 0) & (zi <= d - 1)
        idx = (zi.clamp(0, d - 1) * h + yi.clamp(0, h - 1)) * w + xi.clamp(0, w - 1)
        idx = idx.long().reshape(n, 1, m).expand(n, c, m)
        vals = flat.gather(2, idx).reshape([n, c] + out_shape)
        return vals.masked_fill(~valid.unsqueeze(1), 0)

    if mode == "nearest":
        return _with_zero_grid_gradient(tap(x.round(), y.round(), z.round()), grid)
    x0, y0, z0 = x.floor(), y.floor(), z.floor()
    wx1, wy1, wz1 = ((v - v0).unsqueeze(1) for v, v0 in ((x, x0), (y, y0), (z, z0)))
    wx0, wy0, wz0 = 1 - wx1, 1 - wy1, 1 - wz1
    out = 0
    for zi, wz in ((z0, wz0), (z0 + 1, wz1)):
        for yi, wy in ((y0, wy0), (y0 + 1, wy1)):
            for xi, wx in ((x0, wx0), (x0 + 1, wx1)):
                out = out + tap(xi, yi, zi) * (wx * wy * wz)
    return out


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)

    Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) of normalized (x, y) in [-1, 1], with
    bilinear, nearest or bicubic (cubic convolution, a = -0.75) interpolation; or a volume
    (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) of (x, y, z), trilinear or nearest."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    _check_grid_sampler(input, grid, mode)
    align_corners = bool(align_corners)
    if input.dim() == 5:
        return _grid_sample_3d(input, grid, mode, padding_mode, align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    if mode == "bicubic":
        # Padding applies to each tap's coordinate, not to the sampling point.
        x = _source_coords(grid[..., 0], w, align_corners, "zeros")
        y = _source_coords(grid[..., 1], h, align_corners, "zeros")
    else:
        x = _source_coords(grid[..., 0], w, align_corners, padding_mode)
        y = _source_coords(grid[..., 1], h, align_corners, padding_mode)
    flat = input.reshape(n, c, h * w)

    def tap(xi, yi):
        # Values at integer (xi, yi); zero outside the image.
        valid = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().reshape(n, 1, ho * wo)
        vals = flat.gather(2, idx.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return vals.masked_fill(~valid.unsqueeze(1), 0)  # +0.0 outside, as torch's

    if mode == "nearest":
        return _with_zero_grid_gradient(tap(x.round(), y.round()), grid)
    if mode == "bicubic":
        x0, y0 = x.floor(), y.floor()
        wxs, wys = _cubic_weights(x - x0), _cubic_weights(y - y0)
        out = 0
        for j in range(4):
            yj = _source_coords_int(y0 + (j - 1), h, align_corners, padding_mode)
            row = 0
            for i in range(4):
                xi = _source_coords_int(x0 + (i - 1), w, align_corners, padding_mode)
                row = row + tap(xi, yj) * wxs[i].unsqueeze(1)
            out = out + row * wys[j].unsqueeze(1)
        return out
    x0, y0 = x.floor(), y.floor()
    wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (
        tap(x0, y0) * wx0 * wy0
        + tap(x0 + 1, y0) * wx1 * wy0
        + tap(x0, y0 + 1) * wx0 * wy1
        + tap(x0 + 1, y0 + 1) * wx1 * wy1
    )


# ---- torch's grad_fn names (see ember/_ops/_names.py) ----

affine_grid = _names.named(affine_grid, "AffineGridGeneratorBackward0")
grid_sample = _names.named(
    grid_sample,
    lambda args, kwargs: f"GridSampler{_names.arg(args, kwargs, 0, 'input').dim() - 2}DBackward0",
)
