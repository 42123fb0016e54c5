"""Helpers of the API-breadth tests: run one call on ember and on torch with the same inputs and
compare values, dtypes and shapes (recursively through tuples and named tuples)."""

import numpy as np

import ember


def rand(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def run_both(torch, fn):
    """fn(m) builds its tensors with m.tensor(...) and calls m's API; returns (ember, torch)."""
    return fn(ember), fn(torch)


def assert_same(got, want, rtol=1e-5, atol=1e-6, what="result"):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{what}: expected a sequence; got {type(got)}"
        assert len(got) == len(want), f"{what}: {len(got)} outputs; torch has {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{what}[{i}]")
        return
    if not hasattr(want, "dtype"):
        if isinstance(want, float) and np.isnan(want):
            assert np.isnan(got), what
        else:
            assert got == want, f"{what}: {got} != {want}"
        return
    assert repr(got.dtype) == repr(want.dtype), f"{what}: dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), (
        f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    )
    g = got.detach().double().numpy() if got.dtype.is_floating_point else got.detach().numpy()
    w = want.detach().double().numpy() if want.dtype.is_floating_point else want.detach().numpy()
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def check(torch, fn, rtol=1e-5, atol=1e-6):
    got, want = run_both(torch, fn)
    assert_same(got, want, rtol, atol)


def check_raises(torch, fn):
    """Both libraries raise, and ember's error is an instance of torch's class."""
    try:
        fn(torch)
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        want = type(e)
    else:
        raise AssertionError("torch did not raise")
    try:
        fn(ember)
    except Exception as e:  # noqa: BLE001
        # torch's LinAlgError and the like subclass RuntimeError; ember's may be that base.
        base = [c for c in want.__mro__ if c.__module__ == "builtins"][0]
        assert isinstance(e, base), f"ember raised {type(e).__name__}; torch raises {want.__name__}"
        return
    raise AssertionError(f"ember did not raise; torch raises {want.__name__}")
