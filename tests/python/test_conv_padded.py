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

Winograd F(2x2, 3x3) (Note [Winograd convolution] in cpu/conv_winograd.cpp), which takes float32
3x3 convolutions at unit stride with at least 8 channels each way (off in the tests above, on in
the WINOGRAD_CASES tests): forward, input gradient (the forward's adjoint, which shares the output
gradient's transform with the weight gradient, for convs to more channels; else the turned
convolution) and weight gradient against float64 over odd and even output sizes (a last tile half
outside), padding 0 to 3 (past the kernel's reach), tile counts that leave a part of a vector, and
several chunks of images with a remainder; either gradient alone and both together match float64;
the input gradient's error is at most torch's; bitwise the same at 1, 2 and 3 threads; infinities
and NaNs give the direct path's bits; the baseline tier (no AVX2: OpenBLAS's GEMM, SSE transforms)
in a subprocess.
"""

import json
import os
import subprocess
import sys

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
    """ember's kernels, not oneDNN's (which AVX-512 CPUs take for most of these shapes), nor
    Winograd's (which takes 3x3 kernels with enough channels; its tests switch it back on)."""
    monkeypatch.setenv("EMBER_ONEDNN_CONV", "0")
    monkeypatch.setenv("EMBER_WINOGRAD", "0")


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


# (input shape, weight shape, padding): Winograd's edges
WINOGRAD_CASES = [
    ((7, 32, 14, 14), (64, 32, 3, 3), (1, 1)),  # the main job's conv: 2 chunks of 4 and 3 images
    ((3, 8, 9, 11), (10, 8, 3, 3), (1, 1)),  # odd output sizes: the last tiles half outside
    ((2, 9, 8, 7), (8, 9, 3, 3), (0, 0)),  # no padding, 6 x 5 outputs
    ((2, 8, 3, 4), (12, 8, 3, 3), (2, 1)),  # padding 2 by 1, wider than the input
    ((3, 16, 3, 3), (8, 16, 3, 3), (0, 0)),  # one output per image: one tile of a vector
    ((2, 8, 4, 5), (9, 8, 3, 3), (3, 2)),  # padding past the kernel's reach: tiles of zeros only
]


def _all_passes(x, w, b, gy, padding):
    ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv2d(ex, ew, eb, 1, padding)
    y.backward(ember.tensor(gy))
    return y.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()


def _winograd_inputs(xs, ws, padding):
    x, w, b = rand(*xs), rand(*ws, seed=1), rand(ws[0], seed=3)
    y, _, _ = conv_ref(x, w, None, (1, 1), padding, (1, 1), 1)
    gy = rand(*y.shape, seed=2)
    _, gx, gw = conv_ref(x, w, gy, (1, 1), padding, (1, 1), 1)
    return (x, w, b, gy), (y + b.reshape(1, -1, 1, 1), gx, gw)


def _close_to(got, ref):
    for g, r, what in zip(got, ref, ("output", "input grad", "weight grad")):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4 * np.abs(r).max(), err_msg=what)


@pytest.fixture
def winograd(monkeypatch):
    monkeypatch.delenv("EMBER_WINOGRAD")


@pytest.mark.parametrize("xs,ws,padding", WINOGRAD_CASES)
def test_winograd_matches_float64(xs, ws, padding, winograd):
    args, ref = _winograd_inputs(xs, ws, padding)
    _close_to(_all_passes(*args, padding), ref)


def test_winograd_independent_of_threads(winograd):
    xs, ws, padding = WINOGRAD_CASES[0]
    args, _ = _winograd_inputs(xs, ws, padding)
    saved = ember.get_num_threads()
    try:
        runs = []
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            runs.append(_all_passes(*args, padding))
    finally:
        ember.set_num_threads(saved)
    for run in runs[1:]:
        for a, b in zip(run, runs[0]):
            np.testing.assert_array_equal(a, b)


def test_winograd_gradients_alone(winograd):
    """With the weight gradient, the input gradient of a conv to more channels is the forward's
    adjoint (sharing the output gradient's transform); alone, it is the turned convolution. Both
    match float64, and the weight gradient alone has the bits it has with the input gradient."""
    xs, ws, padding = WINOGRAD_CASES[0]
    (x, w, _, gy), (_, ref_gx, _) = _winograd_inputs(xs, ws, padding)
    _, gx, gw = _all_passes(x, w, np.zeros(ws[0], np.float32), gy, padding)
    grads = []
    for x_grad in (True, False):
        ex = ember.tensor(x, requires_grad=x_grad)
        ew = ember.tensor(w, requires_grad=not x_grad)
        F.conv2d(ex, ew, None, 1, padding).backward(ember.tensor(gy))
        grads.append((ex if x_grad else ew).grad.numpy())
    np.testing.assert_array_equal(grads[1], gw)
    scale = 1e-4 * np.abs(ref_gx).max()
    for got in (gx, grads[0]):
        np.testing.assert_allclose(got, ref_gx, rtol=1e-4, atol=scale)


def test_winograd_input_grad_error_at_most_torchs(winograd):
    """The input gradient (the adjoint of the forward's transforms) is no further from float64
    than torch's, on the main job's shape."""
    torch = pytest.importorskip("torch")
    xs, ws, padding = WINOGRAD_CASES[0]
    (x, w, _, gy), (_, ref, _) = _winograd_inputs(xs, ws, padding)
    _, got, _ = _all_passes(x, w, np.zeros(ws[0], np.float32), gy, padding)
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.conv2d(tx, torch.tensor(w), None, 1, padding).backward(torch.tensor(gy))
    theirs = tx.grad.numpy()
    assert np.abs(got - ref).max() <= np.abs(theirs - ref).max()


def _same_non_finite(got, ref):
    """got's infinities and NaNs where float64's are, and its finite values close to ref's."""
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    scale = np.abs(ref[finite]).max()
    np.testing.assert_allclose(got[finite], ref[finite], rtol=1e-4, atol=1e-4 * scale)


def test_winograd_non_finite_operands_take_the_direct_path(monkeypatch):
    """inf - inf in the transforms would give NaN where the direct sum gives +-inf: a pass that
    meets an infinity or NaN in its operands runs on the direct path (the output and weight
    gradient bit for bit; the input gradient as the turned convolution's direct path)."""
    xs, ws, padding = WINOGRAD_CASES[1]
    (x, w, b, gy), _ = _winograd_inputs(xs, ws, padding)
    x[1, 2, 4, 5], x[2, 0, 0, 0], gy[0, 3, 2, 2] = np.inf, np.nan, -np.inf
    direct = _all_passes(x, w, b, gy, padding)
    monkeypatch.delenv("EMBER_WINOGRAD")
    got = _all_passes(x, w, b, gy, padding)
    np.testing.assert_array_equal(got[0], direct[0])
    np.testing.assert_array_equal(got[2], direct[2])
    _, gx, _ = conv_ref(x, w, gy, (1, 1), padding, (1, 1), 1)
    assert not np.isfinite(gx).all()
    _same_non_finite(got[1], gx)
    w[3, 1, 0, 2] = np.inf  # in the weight only: the forward's own check
    x = rand(*xs)
    y = F.conv2d(ember.tensor(x), ember.tensor(w), None, 1, padding).numpy()
    ref, _, _ = conv_ref(x, w, None, (1, 1), padding, (1, 1), 1)
    _same_non_finite(y, ref)


_TIER_SCRIPT = """
import json, sys
import numpy as np
import ember
args = [np.asarray(a, dtype=np.float32) for a in json.loads(sys.stdin.read())]
ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in args[:3])
y = ember.nn.functional.conv2d(ex, ew, eb, 1, 1)
y.backward(ember.tensor(args[3]))
got = [y.detach().numpy(), ex.grad.numpy(), ew.grad.numpy()]
json.dump([ember.backends.cpu.get_cpu_capability()] + [g.tolist() for g in got], sys.stdout)
"""


def test_winograd_on_the_baseline_tier():
    xs, ws, padding = WINOGRAD_CASES[1]
    args, ref = _winograd_inputs(xs, ws, padding)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    env["ATEN_CPU_CAPABILITY"] = "default"
    run = subprocess.run(
        [sys.executable, "-c", _TIER_SCRIPT],
        input=json.dumps([a.tolist() for a in args]),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    tier, *got = json.loads(run.stdout)
    assert tier == "DEFAULT"
    _close_to([np.asarray(g) for g in got], ref)
