"""The differential check of the edge tests (test_edges_s10.py, test_edges_s11.py): a call's
outcome (its value, or the class of the exception it raised) under ember, compared with the one
expected and with torch's where torch is installed."""

import numpy as np

import ember


def _outcome(lib, fn):
    """('ok', value as a nested list or a number) or ('raise', exception class name)."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 -- the class is what is compared
        return ("raise", type(e).__name__)
    if isinstance(r, tuple):
        return ("ok", [x.tolist() for x in r])
    return ("ok", r.tolist() if hasattr(r, "tolist") else r)


def _same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        return a[1] == b[1]
    return np.allclose(np.asarray(a[1], dtype=float), np.asarray(b[1], dtype=float), equal_nan=True)


def _check(fn, want):
    """fn(ember) gives `want` (an _outcome), and torch agrees where installed."""
    got = _outcome(ember, fn)
    assert _same(got, want), (got, want)
    try:
        import torch
    except ImportError:
        return
    ref = _outcome(torch, fn)
    assert _same(got, ref), (got, ref)


def _ok(v):
    return ("ok", v)


def _raises(cls):
    return ("raise", cls.__name__)
