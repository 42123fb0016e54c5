"""The differential check of the documentation tests (test_fx_docs.py, test_compile_docs.py): a
case runs under ember and, where torch is installed, under torch with the same code, and the
results must agree."""

import numpy as np

import ember


def _libs():
    libs = [ember]
    try:
        import torch
    except ImportError:
        return libs
    return libs + [torch]


def _np(t):
    return t.detach().numpy()


def _same(a, b):
    if isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _each(case, before=None):
    """Runs ``case(T)`` for ember and torch (after ``before(T)`` when given); returns ember's
    result after checking torch gives the same (numpy arrays compared to 1e-5, everything else
    equal)."""
    results = []
    for T in _libs():
        if before is not None:
            before(T)
        results.append(case(T))
    for other in results[1:]:
        _same(results[0], other)
    return results[0]
