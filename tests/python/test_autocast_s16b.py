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


# Session 17: torch's CPU lists audited op by op against ember's. prod, cholesky_solve,
# triangular_solve, lu_solve, matrix_rank, geqrf and fake_quantize_per_tensor_affine are on the
# float32 list, index_copy on the promote list; linalg.lu_solve and matrix_exp are on none and are
# one kernel in torch, so the products ember composes them of keep float32 inputs in float32.
def _cases_s17(T):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    f = T.from_numpy(a)
    h = f.to(T.bfloat16)
    spd = T.from_numpy((a @ a.T + 4 * np.eye(4)).astype(np.float32))
    low = T.linalg.cholesky(spd)
    lu, piv = T.linalg.lu_factor(spd)
    return {
        "prod": lambda: T.prod(h),
        "prod_dim": lambda: h.prod(1),
        "prod_float": lambda: T.prod(f, 0),
        "cholesky_solve": lambda: T.cholesky_solve(h, low),
        "triangular_solve": lambda: T.triangular_solve(h, low, upper=False)[0],
        "lu_solve_old": lambda: T.lu_solve(h, lu, piv),
        "linalg_lu_solve": lambda: T.linalg.lu_solve(lu, piv, f),
        "matrix_exp": lambda: T.linalg.matrix_exp(f * 0.1),
        "matrix_rank": lambda: T.linalg.matrix_rank(h),
        "geqrf": lambda: T.geqrf(h)[0],
        "fake_quant": lambda: T.fake_quantize_per_tensor_affine(h, 0.1, 0, 0, 255),
        "index_copy": lambda: T.index_copy(f, 0, T.tensor([0, 2]), h[:2]),
        "stack": lambda: T.stack([h, f]),
    }


def test_autocast_lists_audited_against_torch():
    got = {}
    for name, fn in _cases_s17(ember).items():
        with ember.autocast("cpu", dtype=ember.bfloat16):
            got[name] = str(fn().dtype).replace("ember.", "torch.")
    want = dict.fromkeys(_cases_s17(ember), "torch.float32")
    want["matrix_rank"] = "torch.int64"
    assert got == want
    for T in _libs()[1:]:
        for name, fn in _cases_s17(T).items():
            with T.autocast("cpu", dtype=T.bfloat16):
                assert str(fn().dtype) == want[name], name


def test_autocast_prod_values_are_float32_products():
    h = ember.tensor([[1.5, 2.0, -3.0], [0.5, 4.0, 1.25]]).to(ember.bfloat16)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        p = ember.prod(h, 1)
    assert p.dtype == ember.float32 and p.tolist() == [-9.0, 2.5]


# Session 18: recurrent layers under CPU autocast (Note [RNN under autocast]). torch's RNN, GRU
# and cells are composites whose linears autocast; its LSTM layer is oneDNN's mkldnn_rnn_layer,
# on the lower-precision list (torch raises for it on CPUs without bfloat16 support, so the LSTM
# layer is compared with torch's bfloat16 LSTM, not with its autocast one).
_RNN_CASES = {
    "rnn": ("RNN", {}, ("bfloat16", "bfloat16")),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}, ("bfloat16", "bfloat16")),
    "rnn_packed": ("RNN", {}, ("bfloat16", "bfloat16")),
    "lstm_packed": ("LSTM", {}, ("float32", "float32", "float32")),  # torch's composite path
    "gru_bi2": ("GRU", {"bidirectional": True, "num_layers": 2}, ("float32", "float32")),
    "lstm_proj": ("LSTM", {"proj_size": 3}, ("bfloat16", "bfloat16", "float32")),
    "rnn_cell": ("RNNCell", {}, ("bfloat16",)),
    "lstm_cell": ("LSTMCell", {}, ("float32", "float32")),
    "gru_cell": ("GRUCell", {}, ("float32",)),
    "lstm": ("LSTM", {"batch_first": True, "num_layers": 2}, ("bfloat16", "bfloat16", "bfloat16")),
}


def _flat(out):
    if not isinstance(out, tuple):
        return [out]
    if hasattr(out[0], "batch_sizes"):  # a PackedSequence: its data
        out = (out[0].data, *out[1:])
    return [t for o in out for t in (o if isinstance(o, tuple) else (o,))]


def _rnn_run(T, name, lowered_copy=False):
    cls, kw, _ = _RNN_CASES[name]
    rng = np.random.default_rng(7)
    m = getattr(T.nn, cls)(4, 5, **kw)
    m.load_state_dict(
        {
            k: T.from_numpy(rng.uniform(-0.5, 0.5, v.shape).astype(np.float32))
            for k, v in m.state_dict().items()
        }
    )
    shape = (2, 4) if "Cell" in cls else (3, 2, 4)
    x = T.from_numpy(rng.standard_normal(shape).astype(np.float32)).requires_grad_()
    if lowered_copy:  # the same module and input in bfloat16, autocast off
        return _flat(m.bfloat16()(x.detach().bfloat16())), None
    inp = T.nn.utils.rnn.pack_padded_sequence(x, [3, 2]) if name.endswith("_packed") else x
    with T.autocast("cpu", dtype=T.bfloat16):
        out = _flat(m(inp))
    out[0].float().sum().backward()
    return out, next(m.parameters()).grad


@pytest.mark.parametrize("name", sorted(_RNN_CASES))
def test_recurrent_layers_under_autocast(name):
    out, grad = _rnn_run(ember, name)
    assert [str(t.dtype).split(".")[1] for t in out] == list(_RNN_CASES[name][2])
    assert grad.dtype == ember.float32 and bool(grad.abs().sum() > 0)
    if name == "lstm":  # wholly in bfloat16: its bfloat16 copy's result (to GEMM rounding)
        want, _ = _rnn_run(ember, name, lowered_copy=True)
        for a, b in zip(out, want):
            np.testing.assert_allclose(
                a.float().detach().numpy(), b.float().detach().numpy(), atol=4e-3
            )
    for T in _libs()[1:]:
        want, tgrad = _rnn_run(T, name, lowered_copy=name == "lstm")
        assert [str(t.dtype) for t in want] == [str(t.dtype).replace("ember", "torch") for t in out]
        for a, b in zip(out, want):
            np.testing.assert_allclose(
                a.float().detach().numpy(), b.float().detach().numpy(), atol=3e-2
            )
        if tgrad is not None:
            np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=5e-2, atol=5e-2)
