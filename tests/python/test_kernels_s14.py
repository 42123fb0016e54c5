"""Session 14's kernels: conv3d as one op on 3-d kernels, and the CPU tier forced down.

- conv3d (Note [conv3d] in cpu/conv3d.cpp): float32 on both routes (oneDNN's 3-d primitive and
  the 2-d convolution over the depth taps that EMBER_ONEDNN_CONV=0 forces; on a CPU without
  AVX-512 both cases run the latter) and float64, against
  a float64 NumPy reference over strides, padding (also past the kernel's reach), dilation,
  groups, depthwise, batch 1 and odd sizes: output, input, weight and bias gradients; bitwise the
  same at 1, 2 and 3 threads; padding 'same' with even kernels, unbatched and channels_last_3d
  input, double backward, forward-mode AD and vmap against torch; torch's errors.
- ATEN_CPU_CAPABILITY (Note [CPU capability] in cpu/isa.h), read at start-up as torch reads it:
  a subprocess at the AVX2 and the baseline tier computes the same kernels as this process, up
  to rounding, and reports its tier as torch does."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from _conv_ref import close, conv_ref

import ember

F = ember.nn.functional


# (N, C, O, spatial, kernel, stride, padding, dilation, groups)
CONV3D = [
    (2, 4, 6, (6, 7, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
    (1, 3, 5, (5, 6, 7), (3, 2, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 1),  # batch 1
    (3, 8, 8, (7, 9, 8), (3, 3, 3), (2, 1, 2), (1, 0, 1), (1, 1, 1), 1),  # strides
    (2, 6, 4, (9, 8, 8), (3, 3, 3), (3, 2, 1), (2, 1, 3), (1, 1, 1), 2),  # padding past reach
    (2, 4, 8, (8, 8, 9), (3, 3, 3), (1, 1, 1), (2, 2, 2), (2, 2, 1), 1),  # dilation
    (2, 8, 12, (5, 6, 6), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 4),  # groups, kD 1
    (4, 16, 16, (6, 6, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 16),  # depthwise
    (17, 16, 16, (4, 5, 4), (2, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),  # short last chunk
    (2, 16, 8, (4, 5, 6), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),  # pointwise
    (2, 3, 4, (3, 4, 3), (3, 4, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),  # kernel = input
]


def _id(c):
    return f"n{c[0]}c{c[1]}o{c[2]}k{''.join(map(str, c[4]))}s{''.join(map(str, c[5]))}g{c[8]}"


def _run3d(case, dtype, seed=3):
    """ember's (output, input grad, weight grad, bias grad) and the float64 reference's."""
    n, c, o, sp, k, s, p, d, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *sp))
    w = rng.standard_normal((o, c // g, *k))
    b = rng.standard_normal(o)
    y_ref, _, _ = conv_ref(x, w, None, s, p, d, g)
    gy = rng.standard_normal(y_ref.shape)
    _, gx_ref, gw_ref = conv_ref(x, w, gy, s, p, d, g)
    xs, ws, bs = (ember.tensor(a, dtype=dtype, requires_grad=True) for a in (x, w, b))
    y = F.conv3d(xs, ws, bs, s, p, d, g)
    y.backward(ember.tensor(gy, dtype=dtype))
    got = (y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy())
    ref = (y_ref + b.reshape(1, -1, 1, 1, 1), gx_ref, gw_ref, gy.sum((0, 2, 3, 4)))
    return got, ref


@pytest.mark.parametrize("case", CONV3D, ids=_id)
def test_conv3d_float32_matches_float64(case, route):
    got, ref = _run3d(case, ember.float32)
    for a, r, what in zip(got, ref, ("output", "input grad", "weight grad", "bias grad")):
        close(a, r, f"{route} {what}", 3e-5)


@pytest.mark.parametrize("case", CONV3D, ids=_id)
def test_conv3d_float64_matches_reference(case):
    got, ref = _run3d(case, ember.float64)
    for a, r, what in zip(got, ref, ("output", "input grad", "weight grad", "bias grad")):
        close(a, r, what, 1e-12)


@pytest.mark.parametrize("case", [CONV3D[0], CONV3D[3], CONV3D[7]], ids=_id)
def test_conv3d_bitwise_across_threads(case, route):
    saved = ember.get_num_threads()
    runs = []
    try:
        for t in (1, 2, 3):
            ember.set_num_threads(t)
            runs.append(_run3d(case, ember.float32)[0])
    finally:
        ember.set_num_threads(saved)
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            assert a.tobytes() == b.tobytes()


def _pair(torch, shape, seed, grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (
        ember.tensor(a, requires_grad=grad),
        torch.tensor(a, requires_grad=grad),
    )


@pytest.mark.parametrize(
    "kw",
    [
        {"padding": "same"},  # kernel (2, 3, 4): odd totals, padded on the far side
        {"padding": "same", "dilation": (2, 1, 1)},
        {"padding": "valid", "stride": 2},
    ],
)
def test_conv3d_padding_modes_and_unbatched_match_torch(kw):
    torch = pytest.importorskip("torch")
    xe, xt = _pair(torch, (3, 6, 7, 8), 0, grad=True)  # unbatched
    we, wt = _pair(torch, (4, 3, 2, 3, 4), 1, grad=True)
    ye = F.conv3d(xe.unsqueeze(0), we, **kw).squeeze(0)
    yt = torch.nn.functional.conv3d(xt.unsqueeze(0), wt, **kw).squeeze(0)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)
    ue = F.conv3d(xe.detach(), we.detach(), **kw)
    np.testing.assert_allclose(ue.numpy(), ye.detach().numpy(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv3d_channels_last_3d_layout_matches_torch(dtype):
    """torch's float32 conv3d keeps channels_last_3d; its float64 one gives contiguous results."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 5, 6, 7)).astype(dtype)
    w = rng.standard_normal((6, 4, 3, 3, 3)).astype(dtype)
    for x_cl, w_cl in ((True, False), (False, True)):
        runs = []
        for lib in (ember, torch):
            cl = lib.channels_last_3d
            xs = lib.tensor(x).contiguous(memory_format=cl) if x_cl else lib.tensor(x)
            ws = lib.tensor(w).contiguous(memory_format=cl) if w_cl else lib.tensor(w)
            xs, ws = xs.detach().requires_grad_(), ws.detach().requires_grad_()
            y = lib.nn.functional.conv3d(xs, ws, padding=1)
            y.backward(lib.ones_like(y))
            runs.append((y.stride(), xs.grad.stride(), ws.grad.stride(), y.detach().numpy()))
        (*se, ye), (*st, yt) = runs
        assert se == st
        np.testing.assert_allclose(ye, yt, rtol=1e-4, atol=1e-4)


def test_conv3d_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    xe, xt = _pair(torch, (2, 4, 5, 6, 5), 4, grad=True)
    we, wt = _pair(torch, (6, 2, 3, 2, 3), 5, grad=True)
    args = dict(stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)
    outs = []
    for lib, x, w in ((ember, xe, we), (torch, xt, wt)):
        y = lib.nn.functional.conv3d(x, w, **args)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        gx2, gw2 = lib.autograd.grad((gx * gx).sum() + (gw**3).sum(), (x, w))
        outs.append([t.detach().numpy() for t in (gx, gw, gx2, gw2)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_conv3d_forward_ad_and_vmap_match_torch():
    torch = pytest.importorskip("torch")
    xe, xt = _pair(torch, (2, 3, 4, 5, 6), 6)
    we, wt = _pair(torch, (4, 3, 3, 3, 2), 7)
    te, tt = _pair(torch, (2, 3, 4, 5, 6), 8)
    ve, vt = _pair(torch, (4, 3, 3, 3, 2), 9)

    def f(lib):
        return lambda x, w: lib.nn.functional.conv3d(x, w, stride=(1, 2, 1), padding=1)

    pe, je = ember.func.jvp(f(ember), (xe, we), (te, ve))
    pt, jt = torch.func.jvp(f(torch), (xt, wt), (tt, vt))
    np.testing.assert_allclose(pe.numpy(), pt.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(je.numpy(), jt.numpy(), rtol=1e-10, atol=1e-10)
    xs_e, xs_t = _pair(torch, (3, 2, 3, 4, 5, 6), 10)  # a batch of inputs, vmapped
    be = ember.func.vmap(f(ember), in_dims=(0, None))(xs_e, we)
    bt = torch.func.vmap(f(torch), in_dims=(0, None))(xs_t, wt)
    np.testing.assert_allclose(be.numpy(), bt.numpy(), rtol=1e-12, atol=1e-12)


def test_conv3d_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        ((1, 2, 2, 2, 2), (3, 2, 3, 3, 3), {}),  # kernel larger than the input
        ((1, 3, 4, 4, 4), (3, 2, 3, 3, 3), {}),  # channels
        ((1, 4, 4, 4, 4), (3, 2, 3, 3, 3), {"groups": 2}),  # out channels not divisible
        ((1, 2, 4, 4, 4), (3, 2, 3, 3, 3), {"stride": 0}),
        ((1, 2, 4, 4, 4), (3, 2, 3, 3, 3), {"padding": -1}),
    ]
    for xs, ws, kw in cases:
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.conv3d(torch.zeros(xs), torch.zeros(ws), **kw)
        with pytest.raises(RuntimeError) as got:
            F.conv3d(ember.zeros(xs), ember.zeros(ws), **kw)
        assert str(got.value) == str(want.value)


_TIER_SCRIPT = r"""
import json, sys
import numpy as np
import ember
F = ember.nn.functional
rng = np.random.default_rng(0)
def t(*shape):
    return ember.tensor(rng.standard_normal(shape).astype(np.float32))
x4, w4 = t(4, 16, 12, 12), t(24, 16, 3, 3)
x5, w5 = t(2, 8, 6, 6, 6), t(8, 8, 3, 3, 3)
a, b = t(70, 300), t(300, 130)
xs = t(2, 8, 9, 9).requires_grad_()
y = F.conv2d(xs, t(8, 1, 3, 3), padding=1, groups=8)
y.backward(ember.ones_like(y))
out = {
    "tier": ember.backends.cpu.get_cpu_capability(),
    "conv2d": F.conv2d(x4, w4, padding=1).numpy().tolist(),
    "conv3d": F.conv3d(x5, w5, padding=1).numpy().tolist(),
    "mm": (a @ b).numpy().tolist(),
    "softmax": ember.softmax(a, 1).numpy().tolist(),
    "exp_tanh": (ember.exp(a.clamp(-5, 5)) + ember.tanh(a)).numpy().tolist(),
    "pool": F.max_pool2d(x4, 2).numpy().tolist(),
    "depthwise_grad": xs.grad.numpy().tolist(),
    "bf16": (a.bfloat16() @ b.bfloat16()).float().numpy().tolist(),
}
json.dump(out, sys.stdout)
"""


def _at_tier(cap):
    env = dict(os.environ)
    env.pop("EMBER_ONEDNN_CONV", None)
    if cap is None:
        env.pop("ATEN_CPU_CAPABILITY", None)
    else:
        env["ATEN_CPU_CAPABILITY"] = cap
    run = subprocess.run(
        [sys.executable, "-c", _TIER_SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_capped_cpu_tiers_compute_what_the_default_tier_does():
    best = _at_tier(None)
    order = ["DEFAULT", "AVX2", "AVX512"]
    assert best["tier"] in order
    for cap, name in (("avx2", "AVX2"), ("default", "DEFAULT"), ("bogus", best["tier"])):
        got = _at_tier(cap)
        # the cap lowers the tier, never raises it; an unknown value is ignored, as in torch
        assert got["tier"] == order[min(order.index(name), order.index(best["tier"]))]
        for key in best:
            if key == "tier":
                continue
            ref = np.asarray(best[key])
            tol = 2e-2 if key == "bf16" else 1e-4
            np.testing.assert_allclose(np.asarray(got[key]), ref, rtol=tol, atol=tol, err_msg=key)
