"""float32 convolution on both of ember's paths against a float64 reference.

Float32 convolutions run on oneDNN where ember routes them (Note [Conv on oneDNN]) and on ember's
own kernels otherwise; EMBER_ONEDNN_CONV=0 (read on every call) forces ember's kernels, so each
case here runs both paths in one process: forward, input gradient and weight gradient, over
shapes that reach every edge (padding, stride, dilation, groups, depthwise, 1-D, batch 1 and 2,
odd sizes, 1x1, kernels as large as the padded input) and 3-D (composed of one 2-d
convolution). The reference is a float64 NumPy convolution written out tap by tap."""

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest
from _cpu_tier import avx512_tier

import ember

F = ember.nn.functional


def _windows(xp, kernel, stride, dilation, out):
    """For each kernel tap, the strided view of the padded input xp (N, C, *S) it multiplies."""
    for tap in itertools.product(*(range(k) for k in kernel)):
        idx = tuple(
            slice(t * d, t * d + s * (o - 1) + 1, s)
            for t, d, s, o in zip(tap, dilation, stride, out)
        )
        yield tap, (slice(None), slice(None)) + idx


def reference(x, w, gy, stride, padding, dilation, groups):
    """float64 (y, grad_input, grad_weight) of conv(x, w) with output gradient gy (None: zeros)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    kernel = w.shape[2:]
    pads = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    xp = np.pad(x, pads)
    out = [
        (xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)
    ]
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    cg, og = c // groups, o // groups
    y = np.zeros((n, o, *out))
    gy = np.zeros_like(y) if gy is None else gy.astype(np.float64)
    gxp = np.zeros_like(xp)
    gw = np.zeros_like(w)
    for tap, idx in _windows(xp, kernel, stride, dilation, out):
        win = xp[idx]  # (N, C, *out)
        for g in range(groups):
            xs = win[:, g * cg : (g + 1) * cg].reshape(n, cg, -1)
            ws = w[(slice(g * og, (g + 1) * og), slice(None)) + tap]  # (og, cg)
            gys = gy[:, g * og : (g + 1) * og].reshape(n, og, -1)
            y[:, g * og : (g + 1) * og] += np.einsum("ncl,oc->nol", xs, ws).reshape(n, og, *out)
            gw[(slice(g * og, (g + 1) * og), slice(None)) + tap] += np.einsum(
                "nol,ncl->oc", gys, xs
            )
            gxs = np.einsum("nol,oc->ncl", gys, ws).reshape(n, cg, *out)
            gxp[idx][:, g * cg : (g + 1) * cg] += gxs
    inner = (slice(None), slice(None)) + tuple(
        slice(p, p + s) for p, s in zip(padding, x.shape[2:])
    )
    return y, gxp[inner], gw


# (N, C, O, spatial, kernel, stride, padding, dilation, groups)
CASES = [
    (2, 3, 4, (7, 9), (3, 3), (1, 1), (1, 1), (1, 1), 1),  # odd sizes, "same" padding
    (1, 5, 6, (8, 8), (3, 3), (1, 1), (0, 0), (1, 1), 1),  # batch 1, no padding
    (3, 16, 32, (9, 11), (3, 3), (2, 2), (1, 1), (1, 1), 1),  # stride 2, odd sizes
    (2, 8, 8, (10, 10), (3, 3), (1, 1), (2, 2), (2, 2), 1),  # dilation 2
    (2, 6, 9, (9, 8), (2, 3), (3, 1), (1, 2), (2, 1), 3),  # mixed everything, groups 3
    (4, 12, 12, (13, 13), (3, 3), (1, 1), (1, 1), (1, 1), 12),  # depthwise
    (2, 12, 24, (7, 7), (3, 3), (2, 2), (1, 1), (1, 1), 12),  # depthwise, multiplier 2
    (5, 32, 16, (6, 6), (1, 1), (1, 1), (0, 0), (1, 1), 1),  # pointwise
    (2, 16, 16, (6, 5), (1, 1), (2, 2), (0, 0), (1, 1), 4),  # strided pointwise, grouped
    (3, 2, 5, (5, 5), (5, 5), (1, 1), (2, 2), (1, 1), 1),  # kernel as large as the input
    (2, 1, 8, (12, 12), (3, 3), (1, 1), (1, 1), (1, 1), 1),  # one input channel
    (17, 4, 6, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1), 2),  # batch not a multiple of chunks
    (2, 16, 16, (31,), (3,), (1,), (1,), (1,), 1),  # 1-D
    (3, 8, 12, (40,), (5,), (2,), (2,), (1,), 4),  # 1-D strided, grouped
    (1, 4, 4, (17,), (3,), (1,), (3,), (3,), 1),  # 1-D dilated, batch 1
    (2, 4, 6, (5, 6, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),  # 3-D
    (1, 6, 6, (6, 5, 4), (2, 3, 1), (2, 1, 1), (1, 0, 1), (2, 2, 1), 3),  # 3-D, everything
]


def _ids(case):
    n, c, o, sp, k, s, p, d, g = case
    return (
        f"n{n}c{c}o{o}s{'x'.join(map(str, sp))}k{'x'.join(map(str, k))}st{s[0]}p{p[0]}d{d[0]}g{g}"
    )


def _run(case, rng_seed, bias):
    n, c, o, sp, k, s, p, d, g = case
    rng = np.random.default_rng(rng_seed)
    x = rng.standard_normal((n, c, *sp)).astype(np.float32)
    w = rng.standard_normal((o, c // g, *k)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    y_ref, _, _ = reference(x, w, None, s, p, d, g)
    gy = rng.standard_normal(y_ref.shape).astype(np.float32)
    _, gx_ref, gw_ref = reference(x, w, gy, s, p, d, g)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(sp)]
    xs = ember.tensor(x, requires_grad=True)
    ws = ember.tensor(w, requires_grad=True)
    bs = ember.tensor(b, requires_grad=True) if bias else None
    y = conv(xs, ws, bs, s, p, d, g)
    y.backward(ember.tensor(gy))
    got = (y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy())
    ref = (y_ref + (b.reshape(1, -1, *([1] * len(sp))) if bias else 0), gx_ref, gw_ref)
    if bias:
        np.testing.assert_allclose(
            bs.grad.numpy(),
            gy.astype(np.float64).sum(axis=(0, *range(2, 2 + len(sp)))),
            rtol=1e-4,
            atol=1e-3,
        )
    return got, ref


def _close(got, ref, what):
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(got.astype(np.float64) - ref).max())
    assert got.shape == ref.shape, what
    assert err <= 1e-4 * scale, f"{what}: max error {err} (scale {scale})"


@pytest.fixture(params=["onednn", "fallback"])
def path(request, monkeypatch):
    """Both float32 paths: oneDNN where ember routes it, and ember's own kernels forced."""
    if request.param == "fallback":
        monkeypatch.setenv("EMBER_ONEDNN_CONV", "0")
    else:
        monkeypatch.delenv("EMBER_ONEDNN_CONV", raising=False)
    return request.param


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_conv_matches_float64(case, path):
    got, ref = _run(case, 0, bias=case[0] % 2 == 1)
    for g, r, what in zip(got, ref, ("output", "input grad", "weight grad")):
        _close(g, r, f"{path} {what}")


@pytest.mark.parametrize(
    "case",
    [
        (6, 16, 16, (10, 10), (3, 3), (1, 1), (1, 1), (1, 1), 1),
        (40, 8, 8, (7, 7), (3, 3), (1, 1), (1, 1), (1, 1), 8),  # 16 chunks of 3 samples
        (6, 16, 16, (10, 10), (3, 3), (2, 2), (1, 1), (1, 1), 1),  # on oneDNN (not Winograd's)
    ],
    ids=["chunk1", "chunk3", "chunk1-strided"],
)
def test_results_independent_of_thread_count(case, path):
    """Bitwise the same output and gradients at 1, 2 and 3 threads (Note [Conv threading])."""
    saved = ember.get_num_threads()
    results = []
    try:
        for t in (1, 2, 3):
            ember.set_num_threads(t)
            results.append(_run(case, 1, bias=True)[0])
    finally:
        ember.set_num_threads(saved)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert a.tobytes() == b.tobytes()


def test_fallback_switch_is_read_per_call(monkeypatch):
    """EMBER_ONEDNN_CONV=0 set while running still gives the same (correct) results."""
    case = CASES[2]
    got_on, ref = _run(case, 2, bias=True)
    monkeypatch.setenv("EMBER_ONEDNN_CONV", "0")
    got_off, _ = _run(case, 2, bias=True)
    for a, b, r in zip(got_on, got_off, ref):
        _close(a, r, "onednn")
        _close(b, r, "fallback")


@avx512_tier
@pytest.mark.parametrize(
    "case",
    [
        (3, 16, 24, (12, 10), (3, 3), (1, 1), (1, 1), (1, 1), 1),
        (2, 8, 8, (9, 9), (3, 3), (1, 1), (0, 0), (1, 1), 1),
        (2, 32, 8, (6, 7), (3, 3), (1, 1), (2, 2), (1, 1), 1),
    ],
    ids=_ids,
)
def test_winograd_shapes_skip_onednn(case, monkeypatch):
    """3x3 stride-1 passes with 8+ channels run on Winograd's kernels even where oneDNN runs, as
    they measured faster (Note [Conv on oneDNN]): the same bits with oneDNN switched off."""
    monkeypatch.delenv("EMBER_ONEDNN_CONV", raising=False)
    routed, ref = _run(case, 3, bias=True)
    monkeypatch.setenv("EMBER_ONEDNN_CONV", "0")
    own, _ = _run(case, 3, bias=True)
    for a, b, r, what in zip(routed, own, ref, ("output", "input grad", "weight grad")):
        _close(a, r, what)
        assert a.tobytes() == b.tobytes(), what


def test_empty_and_zero_channel_shapes(path):
    x = ember.zeros(0, 4, 5, 5)
    w = ember.ones(3, 4, 3, 3)
    assert tuple(F.conv2d(x, w, padding=1).shape) == (0, 3, 5, 5)
    y = F.conv2d(ember.ones(2, 0, 5, 5), ember.ones(3, 0, 3, 3), ember.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y.numpy()[:, :, 0, 0], [[1, 2, 3], [1, 2, 3]])


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux's /proc")
def test_onednn_threads_follow_set_num_threads():
    """oneDNN's OpenMP threads follow ember.set_num_threads, not OMP_NUM_THREADS (Note [oneDNN
    threads]): at one thread a bf16 product and a float32 convolution start no thread."""
    code = (
        "import os, ember\n"
        "ember.set_num_threads(1)\n"
        "a = ember.randn(256, 256).bfloat16()\n"
        "x, w = ember.randn(4, 16, 12, 12), ember.randn(16, 16, 5, 5)\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "for _ in range(3):\n"
        "    a @ a\n"
        "    ember.nn.functional.conv2d(x, w, padding=2)\n"
        "print(len(os.listdir('/proc/self/task')) - before)\n"
    )
    env = dict(os.environ, OMP_NUM_THREADS="4")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "0", out.stdout + out.stderr
