"""The float32 convolution forward on AVX2 CPUs from zero-bordered copies of the images (Note
[Padded panels] in cpu/conv_panels.h): at unit strides sgemm packs each panel row as one run of a
padded plane instead of reading a stored im2col matrix.

The cases hit the layout's edges: rows whose right border is the next row's left one, padding past
the kernel's reach (rows OW wide then), dilation, non-square kernels, groups, panels that cross
images, a chunk remainder and one-column images. Values are checked against float64; results must
not depend on the thread count; and on CPUs that run ember's sgemm each output is the same FMA
chain as im2col (unfold) times the weight, so the bits equal that product's.

The weight gradient over the same edges (and GRAD_CASES: a column matrix of 100 rows, more
channels per group) is checked against float64 too, and with an infinity in the input, whose
gradient must have float64's infinities and NaNs: a route that multiplies dropped columns of the
planes by zeros would add inf * 0 = NaN where no window reads that pixel (docs/ARCHITECTURE.md,
"A weight gradient from padded planes").
"""

import numpy as np
import pytest
from _conv_ref import conv_ref

import ember
import ember.nn.functional as F

# (input shape, weight shape, padding, dilation, groups)
CASES = [
    ((7, 32, 14, 14), (64, 32, 3, 3), (1, 1), (1, 1), 1),  # the Fashion-MNIST CNN's second conv
    ((5, 1, 28, 28), (32, 1, 3, 3), (1, 1), (1, 1), 1),  # its first
    ((3, 4, 9, 13), (6, 4, 3, 5), (1, 2), (1, 1), 1),
    ((2, 3, 5, 5), (4, 3, 3, 3), (3, 3), (1, 1), 1),  # padding past the kernel's reach
    ((2, 5, 10, 11), (6, 5, 3, 3), (2, 2), (2, 2), 1),
    ((3, 6, 8, 7), (6, 2, 3, 3), (1, 1), (1, 1), 3),
    ((2, 4, 6, 9), (5, 4, 2, 3), (0, 1), (1, 1), 1),  # no vertical padding
    ((4, 3, 7, 1), (2, 3, 3, 1), (1, 0), (1, 1), 1),  # one-column images
    ((9, 2, 12, 12), (3, 2, 5, 5), (2, 2), (1, 1), 1),
]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def conv(x, w, padding, dilation, groups):
    return F.conv2d(ember.tensor(x), ember.tensor(w), None, 1, padding, dilation, groups).numpy()


@pytest.fixture(autouse=True)
def own_kernels(monkeypatch):
    """ember's kernels, not oneDNN's (which AVX-512 CPUs take for most of these shapes)."""
    monkeypatch.setenv("EMBER_ONEDNN_CONV", "0")


@pytest.mark.parametrize("xs,ws,padding,dilation,groups", CASES)
def test_forward_matches_float64(xs, ws, padding, dilation, groups):
    x, w = rand(*xs), rand(*ws, seed=1)
    ref, _, _ = conv_ref(x, w, None, (1, 1), padding, dilation, groups)
    np.testing.assert_allclose(conv(x, w, padding, dilation, groups), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,padding,dilation,groups", CASES[:1] + CASES[3:6])
def test_forward_independent_of_threads(xs, ws, padding, dilation, groups):
    x, w = rand(*xs), rand(*ws, seed=1)
    saved = ember.get_num_threads()
    try:
        runs = []
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            runs.append(conv(x, w, padding, dilation, groups))
    finally:
        ember.set_num_threads(saved)
    for run in runs[1:]:
        np.testing.assert_array_equal(run, runs[0])


@pytest.mark.skipif(
    ember.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"),
    reason="the bits are sgemm's, which needs AVX2",
)
@pytest.mark.parametrize("xs,ws,padding,dilation,groups", [c for c in CASES if c[4] == 1])
def test_forward_bits_equal_unfold_times_weight(xs, ws, padding, dilation, groups):
    x, w = rand(*xs), rand(*ws, seed=1)
    out = conv(x, w, padding, dilation, groups)
    cols = F.unfold(ember.tensor(x), ws[2:], dilation=dilation, padding=padding)
    ref = ember.tensor(w).reshape(ws[0], -1) @ cols
    np.testing.assert_array_equal(out.reshape(ref.shape), ref.numpy())


# (input shape, weight shape, padding, dilation, groups): more channels per group than CASES'
GRAD_CASES = [
    CASES[0],
    ((3, 4, 9, 13), (6, 4, 5, 5), (2, 2), (1, 1), 1),  # 100 rows of the column matrix
    ((3, 16, 8, 7), (6, 8, 3, 3), (1, 1), (1, 1), 2),
    ((2, 8, 10, 11), (5, 8, 3, 3), (2, 2), (2, 2), 1),
    ((2, 8, 5, 5), (4, 8, 3, 3), (3, 3), (1, 1), 1),  # padding past the kernel's reach
    ((4, 32, 7, 1), (2, 32, 3, 1), (1, 0), (1, 1), 1),  # one-column images
    ((2, 12, 6, 9), (5, 12, 2, 3), (0, 1), (1, 1), 1),
]


def weight_grad(x, w, gy, padding, dilation, groups):
    ew = ember.tensor(w, requires_grad=True)
    F.conv2d(ember.tensor(x), ew, None, 1, padding, dilation, groups).backward(ember.tensor(gy))
    return ew.grad.numpy()


@pytest.mark.parametrize("xs,ws,padding,dilation,groups", GRAD_CASES + CASES[1:])
def test_weight_grad_matches_float64(xs, ws, padding, dilation, groups):
    x, w = rand(*xs), rand(*ws, seed=1)
    y, _, _ = conv_ref(x, w, None, (1, 1), padding, dilation, groups)
    gy = rand(*y.shape, seed=2)
    _, _, ref = conv_ref(x, w, gy, (1, 1), padding, dilation, groups)
    got = weight_grad(x, w, gy, padding, dilation, groups)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_weight_grad_infinite_input_matches_float64():
    xs, ws, padding, dilation, groups = GRAD_CASES[2]
    x, w = rand(*xs), rand(*ws, seed=1)
    x[1, 3, 2, -1] = np.inf  # a last column, which tap kj = 0 never reads
    y, _, _ = conv_ref(x, w, None, (1, 1), padding, dilation, groups)
    gy = rand(*y.shape, seed=2)
    _, _, ref = conv_ref(x, w, gy, (1, 1), padding, dilation, groups)
    got = weight_grad(x, w, gy, padding, dilation, groups)
    assert np.isfinite(ref).sum() > 0 and not np.isfinite(ref).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(got[finite], ref[finite], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got[~finite], ref[~finite])
