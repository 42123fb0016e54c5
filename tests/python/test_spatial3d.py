"""3-D convolution and pooling (nn/functional/_spatial3d.py) against torch 2.13: values, shapes,
indices, module forms, errors, and gradients by gradcheck."""

import numpy as np
import pytest
from _breadth_util import check, check_raises, rand

import ember


def T(m, a, dt="float32"):
    return m.tensor(np.asarray(a).tolist(), dtype=getattr(m, dt))


X = rand(2, 4, 5, 6, 7)
W = rand(6, 2, 2, 3, 2, seed=1)


def fn(m, name):
    return getattr(m.nn.functional, name)


CASES = {
    "conv3d": lambda m: fn(m, "conv3d")(
        T(m, X), T(m, rand(3, 4, 2, 2, 2, seed=1)), T(m, [0.1, 0.2, -0.3])
    ),
    "conv3d_stride_pad_dil_groups": lambda m: fn(m, "conv3d")(
        T(m, X), T(m, W), None, (2, 1, 2), (1, 0, 2), (1, 2, 1), 2
    ),
    "conv3d_same": lambda m: fn(m, "conv3d")(
        T(m, X), T(m, rand(3, 4, 3, 2, 3, seed=2)), padding="same"
    ),
    "conv3d_unbatched": lambda m: fn(m, "conv3d")(T(m, X[0]), T(m, rand(3, 4, 1, 2, 3, seed=2))),
    "conv_transpose3d": lambda m: fn(m, "conv_transpose3d")(
        T(m, X), T(m, rand(4, 3, 2, 3, 2, seed=3)), T(m, [1.0, 0.0, -1.0])
    ),
    "conv_transpose3d_strided": lambda m: fn(m, "conv_transpose3d")(
        T(m, X),
        T(m, rand(4, 2, 3, 2, 2, seed=3)),
        None,
        (2, 1, 3),
        (1, 0, 1),
        (1, 0, 2),
        2,
        (1, 2, 1),
    ),
    "max_pool3d": lambda m: list(fn(m, "max_pool3d")(T(m, X), 2, return_indices=True)),
    "max_pool3d_pad_ceil": lambda m: list(
        fn(m, "max_pool3d")(T(m, X), (3, 2, 3), (2, 2, 1), (1, 1, 0), 1, True, True)
    ),
    "max_pool3d_dilation": lambda m: fn(m, "max_pool3d")(T(m, X), 2, 1, 0, (2, 1, 2)),
    "avg_pool3d": lambda m: [
        fn(m, "avg_pool3d")(T(m, X), 2),
        fn(m, "avg_pool3d")(T(m, X), 3, 2, 1),
        fn(m, "avg_pool3d")(T(m, X), 3, 2, 1, count_include_pad=False),
        fn(m, "avg_pool3d")(T(m, X), (2, 3, 3), 2, 1, ceil_mode=True),
        fn(m, "avg_pool3d")(T(m, X), 2, divisor_override=3),
    ],
    "adaptive": lambda m: [
        fn(m, "adaptive_avg_pool3d")(T(m, X), (2, 3, 4)),
        fn(m, "adaptive_avg_pool3d")(T(m, X[0]), 1),
        fn(m, "adaptive_avg_pool3d")(T(m, X), (None, 2, 3)),
        *fn(m, "adaptive_max_pool3d")(T(m, X), (3, 2, 4), return_indices=True),
    ],
    "modules": lambda m: [
        m.nn.MaxPool3d(2)(T(m, X)),
        m.nn.AvgPool3d(2, ceil_mode=True)(T(m, X)),
        m.nn.AdaptiveAvgPool3d(2)(T(m, X)),
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(torch, name):
    check(torch, CASES[name], rtol=1e-4, atol=1e-5)


def test_conv3d_module_matches_torch(torch):
    def run(m):
        conv = m.nn.Conv3d(4, 2, 3, stride=2, padding=1)
        with m.no_grad():
            conv.weight.copy_(T(m, rand(2, 4, 3, 3, 3, seed=5)))
            conv.bias.copy_(T(m, [0.5, -0.5]))
        x = T(m, X)
        x.requires_grad_(True)
        y = conv(x)
        y.pow(2).sum().backward()
        return [y, x.grad, conv.weight.grad, conv.bias.grad]

    check(torch, run, rtol=1e-4, atol=1e-4)


GRADS = {
    "conv3d": lambda x, w: ember.nn.functional.conv3d(x, w, None, 1, 1, 1, 2),
    "conv_transpose3d": lambda x, w: ember.nn.functional.conv_transpose3d(x, w, None, 2, 1, 1, 1),
    "max_pool3d": lambda x, w: ember.nn.functional.max_pool3d(x, 2, 1, 1),
    "avg_pool3d": lambda x, w: ember.nn.functional.avg_pool3d(x, 2, 1, 1, count_include_pad=False),
    "adaptive_avg": lambda x, w: ember.nn.functional.adaptive_avg_pool3d(x, (2, 1, 2)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    x = ember.tensor(rand(1, 2, 3, 3, 3, seed=8), dtype=ember.float64, requires_grad=True)
    w = ember.tensor(rand(2, 1, 2, 2, 2, seed=9), dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(GRADS[name], (x, w))


ERRORS = {
    "conv3d_channels": lambda m: fn(m, "conv3d")(T(m, X), T(m, rand(3, 3, 1, 1, 1))),
    "conv3d_3d_input": lambda m: fn(m, "conv3d")(T(m, rand(2, 3, 4)), T(m, rand(3, 2, 1, 1, 1))),
    "max_pool3d_pad": lambda m: fn(m, "max_pool3d")(T(m, X), 2, padding=2),
    "avg_pool3d_small": lambda m: fn(m, "avg_pool3d")(T(m, rand(1, 1, 1, 1, 1)), 2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check_raises(torch, ERRORS[name])
