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
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check_raises(torch, ERRORS[name])
