"""float64 NumPy references for convolution tests (test_kernels_s13.py, test_kernels_s14.py)."""

import itertools

import numpy as np


def conv_ref(x, w, gy, stride, padding, dilation, groups):
    """float64 (y, grad_input, grad_weight) of an N-d convolution; gy None gives zero gradients."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    cg, og = c // groups, o // groups
    y = np.zeros((n, o, *out))
    gy = np.zeros_like(y) if gy is None else gy.astype(np.float64)
    gxp, gw = np.zeros_like(xp), np.zeros_like(w)
    for tap in itertools.product(*(range(s) for s in k)):
        idx = (slice(None), slice(None)) + tuple(
            slice(t * d, t * d + s * (m - 1) + 1, s)
            for t, d, s, m in zip(tap, dilation, stride, out)
        )
        win = xp[idx]
        for g in range(groups):
            ci, co = slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)
            wt = w[(co, slice(None)) + tap]  # (og, cg)
            y[:, co] += np.einsum("nc...,oc->no...", win[:, ci], wt)
            gw[(co, slice(None)) + tap] += np.einsum(
                "nol,ncl->oc", gy[:, co].reshape(n, og, -1), win[:, ci].reshape(n, cg, -1)
            )
            gxp[idx][:, ci] += np.einsum("no...,oc->nc...", gy[:, co], wt)
    inner = (slice(None), slice(None)) + tuple(
        slice(p, p + s) for p, s in zip(padding, x.shape[2:])
    )
    return y, gxp[inner], gw


def close(got, ref, what, rel=1e-5):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == ref.shape, what
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(got - ref).max()) if ref.size else 0.0
    assert err <= rel * scale, f"{what}: max error {err} (scale {scale})"
