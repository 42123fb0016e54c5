"""F.affine_grid and F.grid_sample against torch 2.13: every mode, padding mode and
align_corners setting, gradients for input and grid, and torch's argument errors."""

import numpy as np
import pytest
from _breadth_util import check, check_raises, rand

import ember


def T(m, a, dt="float32"):
    return m.tensor(np.asarray(a).tolist(), dtype=getattr(m, dt))


THETA = rand(2, 2, 3, seed=3) * 0.8 + np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
IMG = rand(2, 3, 5, 6)
GRID = rand(2, 4, 7, 2, seed=4, low=-1.3, high=1.3)  # some points fall outside


def test_affine_grid(torch):
    check(
        torch,
        lambda m: [
            m.nn.functional.affine_grid(T(m, THETA), [2, 3, 4, 5], align_corners=a)
            for a in (False, True)
        ],
    )
    check(
        torch,
        lambda m: m.nn.functional.affine_grid(
            T(m, rand(2, 3, 4)), [2, 1, 3, 4, 5], align_corners=False
        ),
    )


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample(torch, mode, padding, align):
    check(
        torch,
        lambda m: m.nn.functional.grid_sample(T(m, IMG), T(m, GRID), mode, padding, align),
        rtol=1e-5,
        atol=1e-5,
    )


def test_grid_sample_gradients_match_torch(torch):
    def run(m):
        img, grid = T(m, IMG), T(m, GRID * 0.9)
        img.requires_grad_(True)
        grid.requires_grad_(True)
        out = m.nn.functional.grid_sample(img, grid, align_corners=False)
        (out * T(m, rand(*out.shape, seed=5))).sum().backward()
        return [img.grad, grid.grad]

    check(torch, run, rtol=1e-4, atol=1e-5)


def test_spatial_transformer_step(torch):
    def run(m):
        theta = T(m, THETA)
        theta.requires_grad_(True)
        grid = m.nn.functional.affine_grid(theta, [2, 3, 5, 6], align_corners=False)
        out = m.nn.functional.grid_sample(T(m, IMG), grid, align_corners=False)
        out.pow(2).mean().backward()
        return [out, theta.grad]

    check(torch, run, rtol=1e-4, atol=1e-5)


VOL = rand(2, 2, 3, 4, 5, seed=7)
GRID3 = rand(2, 3, 2, 4, 3, seed=8, low=-1.3, high=1.3)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_volume(torch, mode, padding, align):
    def run(m):
        vol, grid = T(m, VOL), T(m, GRID3)
        vol.requires_grad_(True)
        grid.requires_grad_(True)
        out = m.nn.functional.grid_sample(vol, grid, mode, padding, align)
        (out * T(m, rand(*out.shape, seed=9))).sum().backward()
        grads = [vol.grad] if mode == "nearest" else [vol.grad, grid.grad]
        return [out, type(out.grad_fn).__name__, *grads]

    check(torch, run, rtol=1e-4, atol=1e-5)


def test_grid_sample_volume_without_torch():
    """The identity grid reads the volume back; a point midway between eight voxels averages
    them (trilinear)."""
    F = ember.nn.functional
    vol = ember.tensor(VOL.tolist())
    theta = ember.tensor([[[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]]]).expand(2, 3, 4)
    grid = F.affine_grid(theta, list(vol.shape), align_corners=True)
    assert ember.allclose(F.grid_sample(vol, grid, align_corners=True), vol, atol=1e-6)
    mid = ember.tensor([[[[[-0.25, 0.0, 0.0]]]]] * 2)  # x between voxels 1, 2; y 1, 2; z 1
    got = F.grid_sample(vol, mid, align_corners=True)[:, :, 0, 0, 0]
    want = ember.tensor(VOL[:, :, 1, 1:3, 1:3].mean(axis=(2, 3)).tolist())
    assert ember.allclose(got, want, atol=1e-6)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(vol, grid, mode="bicubic")


@pytest.mark.parametrize("padding", ["border", "reflection"])
def test_points_on_the_border_get_no_coordinate_gradient(padding):
    """torch counts the border itself as outside when clipping: a sample exactly on the last
    pixel (an identity grid's edge) gets no gradient for that coordinate."""
    F = ember.nn.functional
    img = ember.tensor([[[[0.0, 1.0, 4.0], [2.0, 3.0, 9.0]]]])
    grid = ember.tensor([[[[1.0, 0.0], [0.5, 0.0]]]], requires_grad=True)  # x on the border, inside
    F.grid_sample(img, grid, padding_mode=padding, align_corners=True).sum().backward()
    assert grid.grad[0, 0, 0, 0].item() == 0.0 and grid.grad[0, 0, 1, 0].item() == 4.5


@pytest.mark.parametrize("volume", [False, True])
def test_nearest_gives_the_grid_a_zero_gradient(volume):
    """torch's nearest backward writes zeros for the grid (not None); the input's gradient counts
    each sample once."""
    F = ember.nn.functional
    img = ember.arange(24.0).reshape([1, 1, 2, 3, 4] if volume else [1, 2, 3, 4]).requires_grad_()
    grid = ember.zeros([1, 1, 1, 2, 3] if volume else [1, 1, 2, 2], requires_grad=True)
    out = F.grid_sample(img, grid, mode="nearest", align_corners=True)
    (out * 2).sum().backward()
    assert grid.grad is not None and grid.grad.abs().sum().item() == 0.0
    assert img.grad.sum().item() == 2.0 * out.numel()


@pytest.mark.parametrize("volume", [False, True])
def test_identity_grid_gradients_match_torch(torch, volume):
    shape = [1, 2, 3, 4, 5] if volume else [1, 2, 4, 5]
    eye = np.eye(3, 4) if volume else np.eye(2, 3)

    def run(m):
        F = m.nn.functional
        grid = F.affine_grid(T(m, eye[None]), shape, align_corners=False).requires_grad_(True)
        out = F.grid_sample(T(m, rand(*shape, seed=10)), grid, padding_mode="border")
        (out * T(m, rand(*shape, seed=11))).sum().backward()
        return grid.grad

    check(torch, run, rtol=1e-4, atol=1e-6)


def test_gradcheck():
    img = ember.tensor(rand(1, 2, 3, 4), dtype=ember.float64, requires_grad=True)
    grid = ember.tensor(
        rand(1, 2, 3, 2, seed=6, low=-0.9, high=0.9), dtype=ember.float64, requires_grad=True
    )
    assert ember.autograd.gradcheck(
        lambda a, g: ember.nn.functional.grid_sample(a, g, align_corners=True), (img, grid)
    )


ERRORS = {
    "theta_shape": lambda m: m.nn.functional.affine_grid(T(m, rand(2, 3, 3)), [2, 3, 4, 5]),
    "mode": lambda m: m.nn.functional.grid_sample(T(m, IMG), T(m, GRID), mode="area"),
    "padding": lambda m: m.nn.functional.grid_sample(T(m, IMG), T(m, GRID), padding_mode="wrap"),
    "batch": lambda m: m.nn.functional.grid_sample(T(m, IMG), T(m, GRID[:1])),
    "grid_last_dim": lambda m: m.nn.functional.grid_sample(T(m, VOL), T(m, GRID)),
    "volume_bicubic": lambda m: m.nn.functional.grid_sample(T(m, VOL), T(m, GRID3), "bicubic"),
    "dtypes": lambda m: m.nn.functional.grid_sample(T(m, IMG), T(m, GRID, "float64")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check_raises(torch, ERRORS[name])
