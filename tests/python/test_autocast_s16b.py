"""autocast(bfloat16) on CPU for the ops ember writes in Python (session 16): quantile and
nanquantile run in float32 (torch's float32 list), linalg.vecdot in bfloat16 (its lower
precision list), einsum of two or more operands in bfloat16 as torch's bmm inside it makes it,
mixed float32/bfloat16 operands included (ember refused them). Dtypes and values are written
here; where torch is installed its output dtypes are compared too."""

import numpy as np
import pytest
from _docs_check import _libs

import ember


def _cases(T):
    rng = np.random.default_rng(0)
    f = T.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))
    h = f.to(T.bfloat16)
    return {
        "quantile": lambda: T.quantile(h, 0.5),
        "quantile_dim": lambda: T.quantile(h, T.tensor([0.25, 0.75]), dim=1),
        "quantile_method": lambda: h.quantile(0.3),
        "nanquantile": lambda: T.nanquantile(h, 0.5),
        "vecdot_mixed": lambda: T.linalg.vecdot(h, f),
        "vecdot_float": lambda: T.linalg.vecdot(f, f),
        "einsum_mixed": lambda: T.einsum("ij,jk->ik", h, f),
        "einsum_float": lambda: T.einsum("ij,jk->ik", f, f),
        "einsum_three": lambda: T.einsum("ij,jk,kl->il", f, h, f),
        "einsum_one": lambda: T.einsum("ij->j", f),
    }


def _dtypes(T):
    out = {}
    for name, fn in _cases(T).items():
        with T.autocast("cpu", dtype=T.bfloat16):
            out[name] = str(fn().dtype).replace("ember.", "torch.")
    return out


def test_autocast_dtypes_of_python_ops():
    got = _dtypes(ember)
    assert got == {
        "quantile": "torch.float32",
        "quantile_dim": "torch.float32",
        "quantile_method": "torch.float32",
        "nanquantile": "torch.float32",
        "vecdot_mixed": "torch.bfloat16",
        "vecdot_float": "torch.bfloat16",
        "einsum_mixed": "torch.bfloat16",
        "einsum_float": "torch.bfloat16",
        "einsum_three": "torch.bfloat16",
        "einsum_one": "torch.float32",
    }
    for T in _libs()[1:]:
        assert _dtypes(T) == got


def test_autocast_values_match_the_cast_inputs():
    rng = np.random.default_rng(0)
    f = ember.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))
    h = f.to(ember.bfloat16)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        q = ember.quantile(h, 0.5)
        e = ember.einsum("ij,jk->ik", h, f)
    assert float(q) == pytest.approx(float(np.quantile(h.float().numpy(), 0.5)), abs=1e-6)
    ref = h.float().numpy() @ f.to(ember.bfloat16).float().numpy()
    np.testing.assert_allclose(e.float().numpy(), ref, rtol=2e-2, atol=2e-2)
    # outside autocast nothing is cast: mixed operands are refused as torch refuses them
    with pytest.raises(RuntimeError):
        ember.einsum("ij,jk->ik", h, f)
