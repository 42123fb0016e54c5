"""ember.finfo / ember.iinfo against numpy and, where installed, torch."""

import numpy as np
import pytest

import ember

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_numpy(name):
    f, n = ember.finfo(getattr(ember, name)), np.finfo(name)
    assert (f.bits, f.eps, f.max, f.min, f.tiny) == (n.bits, n.eps, n.max, n.min, n.tiny)


def test_finfo_defaults_to_default_dtype_and_rejects_ints():
    assert ember.finfo().eps == np.finfo(np.float32).eps
    with pytest.raises(TypeError):
        ember.finfo(ember.int64)
    with pytest.raises(TypeError):
        ember.iinfo(ember.float32)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_numpy(name):
    i, n = ember.iinfo(getattr(ember, name)), np.iinfo(name)
    assert (i.bits, i.max, i.min) == (n.bits, n.max, n.min)


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    f, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "resolution"):
        assert getattr(f, attr) == getattr(t, attr), attr
