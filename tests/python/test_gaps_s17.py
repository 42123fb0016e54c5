"""Gaps found in session 17, each checked against torch 2.13's behaviour on the CPU."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.nn.attention import flex_attention

_STEPS = "params and state_steps"


@pytest.mark.parametrize(
    "name, foreach, names, xla",
    [
        ("Adam", None, _STEPS, True),
        ("Adam", True, _STEPS, False),
        ("AdamW", False, _STEPS, True),
        ("Adamax", True, _STEPS, False),
        ("Adadelta", None, _STEPS, False),
        ("RMSprop", True, _STEPS, True),
        ("Rprop", True, _STEPS, True),
        ("RAdam", None, _STEPS, True),
        ("NAdam", None, "params, mu_products and state_steps", True),
        ("NAdam", True, "params, mu_products, and state_steps", False),
        ("ASGD", True, "params, mus, etas, and state_steps", False),
    ],
)
def test_capturable_on_cpu_refused_at_step(name, foreach, names, xla):
    p = ember.nn.Parameter(ember.ones(3))
    opt = getattr(ember.optim, name)([p], capturable=True, foreach=foreach)
    opt.step()  # no gradient yet: nothing to update, nothing checked (as torch)
    p.grad = ember.ones(3)
    with pytest.raises(AssertionError) as info:
        opt.step()
    devices = "['cuda', 'xpu', 'hpu', 'privateuseone'" + (", 'xla']." if xla else "].")
    assert str(info.value) == f"If capturable=True, {names} must be on supported devices: {devices}"
    assert ember.equal(p.detach(), ember.ones(3))


@pytest.fixture(scope="module")
def qkv():
    q = ember.randn(2, 3, 4, 8)
    k = ember.randn(2, 3, 5, 8)
    return q, k, ember.randn(2, 3, 5, 8)


@pytest.mark.parametrize(
    "mask, error, message",
    [
        (lambda: ember.randn(5), IndexError, "Dimension out of range (expected to be in range of"),
        (lambda: ember.ones(5, dtype=ember.bool), IndexError, "Dimension out of range"),
        (lambda: ember.tensor(0.0), IndexError, "Dimension specified as -2 but tensor has no"),
        (
            lambda: ember.randn(1, 2, 3, 4, 5),
            RuntimeError,
            "output with shape [2, 3, 4, 5] doesn't match the broadcast shape [1, 2, 3, 4, 5]",
        ),
        (
            lambda: ember.ones(4, 5, dtype=ember.int64),
            RuntimeError,
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            "attn_mask.dtype: long int and  query.dtype: float instead.",
        ),
        (lambda: ember.zeros(4, 5, dtype=ember.float64), RuntimeError, "attn_mask.dtype: double"),
    ],
)
def test_sdpa_refuses_masks_as_torch(qkv, mask, error, message):
    with pytest.raises(error) as info:
        F.scaled_dot_product_attention(*qkv, attn_mask=mask())
    assert message in str(info.value)


def test_sdpa_broadcasts_small_masks_below_4d():
    # torch's 4-D kernel reads the mask's (L, S) sizes; 3-D inputs take the math path, which
    # broadcasts a 1-D (per key) or 0-D mask
    q = ember.linspace(-1.0, 1.0, 24).view(2, 3, 4)
    keep = ember.tensor([True, True, False])
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=keep)
    ref = F.scaled_dot_product_attention(q, q, q, attn_mask=keep.expand(3, 3))
    assert ember.equal(out, ref)
    half = F.scaled_dot_product_attention(q, q, q, attn_mask=ember.tensor(0.5))
    assert ember.allclose(half, F.scaled_dot_product_attention(q, q, q))


def test_sdpa_float32_mask_with_half_query():
    torch = pytest.importorskip("torch")
    q = ember.randn(1, 2, 3, 4).to(ember.bfloat16)
    mask = ember.randn(3, 3)
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    tq = torch.from_numpy(q.float().numpy()).bfloat16()
    ref = torch.nn.functional.scaled_dot_product_attention(
        tq, tq, tq, attn_mask=torch.from_numpy(mask.numpy())
    )
    assert out.dtype == ember.bfloat16
    assert ember.allclose(out.float(), ember.from_numpy(ref.float().numpy()), atol=2e-2)


def _ldl_inputs():
    rng = np.random.default_rng(0)
    real = rng.standard_normal((3, 6, 6))
    real[1] += real[1].T  # symmetric; the others use only their lower triangle
    real[2, 0, 0] = 0.0  # a zero leading pivot forces a 2x2 block
    cplx = rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5))
    return real, cplx


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_matches_torch(hermitian):
    torch = pytest.importorskip("torch")
    for arr in _ldl_inputs():
        ours = ember.linalg.ldl_factor_ex(ember.from_numpy(arr), hermitian=hermitian)
        ref = torch.linalg.ldl_factor_ex(torch.from_numpy(arr), hermitian=hermitian)
        assert type(ours).__name__ == "linalg_ldl_factor_ex"
        assert ours.pivots.dtype == ember.int32 and ours.LD.stride() == ref.LD.stride()
        np.testing.assert_array_equal(ours.pivots.numpy(), ref.pivots.numpy())
        np.testing.assert_array_equal(ours.info.numpy(), ref.info.numpy())
        np.testing.assert_allclose(ours.LD.numpy(), ref.LD.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_solve_solves(hermitian):
    for arr in _ldl_inputs():
        below = np.tril(arr, -1)
        diag = np.diagonal(arr, axis1=-2, axis2=-1)
        # the matrix ldl_factor reads: the lower triangle mirrored (hetrf: real diagonal)
        mirror = np.swapaxes(below, -1, -2)
        full = below + (np.conj(mirror) if hermitian else mirror)
        full = full + np.apply_along_axis(np.diag, -1, diag.real if hermitian else diag)
        fac = ember.linalg.ldl_factor(ember.from_numpy(arr), hermitian=hermitian)
        assert type(fac).__name__ == "linalg_ldl_factor" and fac.__match_args__ == ("LD", "pivots")
        b = np.ones(arr.shape[:-1] + (2,), dtype=arr.dtype)
        x = ember.linalg.ldl_solve(fac.LD, fac.pivots, ember.from_numpy(b), hermitian=hermitian)
        np.testing.assert_allclose(full @ x.numpy(), b, atol=1e-10)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: ember.linalg.ldl_factor(ember.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda: ember.linalg.ldl_factor(ember.ones(2, 3)), RuntimeError, "are 2 by 3 matrices"),
        (
            lambda: ember.linalg.ldl_factor(ember.ones(2, 2, dtype=ember.int64)),
            RuntimeError,
            "floating point or complex tensor as input. Got Long",
        ),
        (
            lambda: ember.linalg.ldl_factor(ember.ones(2, 2, dtype=ember.float16)),
            NotImplementedError,
            "\"ldl_factor_kernel_cpu\" not implemented for 'Half'",
        ),
        (
            lambda: ember.linalg.ldl_factor(ember.zeros(2, 2)),
            RuntimeError,
            "torch.linalg.ldl_factor: Unknown error code: 1.",
        ),
        (
            lambda: ember.linalg.ldl_solve(
                ember.eye(2), ember.tensor([1, 2], dtype=ember.int32), ember.ones(3, 1)
            ),
            RuntimeError,
            "each A matrix is 2 by 2 but each b matrix is 3 by 1",
        ),
    ],
)
def test_ldl_errors_as_torch(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
    assert str(info.value).startswith(("torch.linalg.ldl", "Incompatible", '"ldl'))


def test_ldl_factor_ex_reports_singular_block():
    out = ember.linalg.ldl_factor_ex(ember.zeros(3, 3))
    assert out.info.item() == 1 and out.pivots.tolist() == [1, 2, 3]


def _causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


@pytest.fixture(scope="module")
def causal_blocks():
    # ember's create_block_mask tiles; torch's own call compiles for seconds, so torch gets the
    # same tiles through from_kv_blocks
    bm = flex_attention.create_block_mask(_causal, 2, 3, 250, 384, BLOCK_SIZE=32, device="cpu")
    return [t.tolist() for t in (bm.kv_num_blocks, bm.kv_indices)] + [
        t.tolist() for t in (bm.full_kv_num_blocks, bm.full_kv_indices)
    ]


def _block_masks(lib, causal_blocks):
    import importlib

    fa = importlib.import_module(lib.__name__ + ".nn.attention.flex_attention")
    blocks = [lib.tensor(t, dtype=lib.int32) for t in causal_blocks]
    causal = fa.BlockMask.from_kv_blocks(
        *blocks, BLOCK_SIZE=32, mask_mod=_causal, seq_lengths=(250, 384)
    )
    kvn = lib.tensor([[[1, 2], [0, 1]]], dtype=lib.int32)
    kvi = lib.tensor([[[[0, 1], [1, 0]], [[0, 1], [1, 0]]]], dtype=lib.int32)
    partial = fa.BlockMask.from_kv_blocks(kvn, kvi, BLOCK_SIZE=16)
    both = fa.BlockMask.from_kv_blocks(
        kvn, kvi, kvn, kvi, BLOCK_SIZE=(8, 4), seq_lengths=(10, 7), compute_q_blocks=False
    )
    return causal, partial, both


def test_block_mask_str_repr_from_kv_blocks_as_torch(causal_blocks):
    torch = pytest.importorskip("torch")
    ours_all, refs = _block_masks(ember, causal_blocks), _block_masks(torch, causal_blocks)
    for ours, ref in zip(ours_all, refs):
        assert str(ours) == str(ref) and repr(ours) == repr(ref)
        for kw in ({"grid_size": -1, "limit": 1}, {"grid_size": (3, 5), "limit": 8}):
            assert ours.to_string(**kw) == ref.to_string(**kw)


def test_block_mask_from_kv_blocks(causal_blocks):
    causal, partial, both = _block_masks(ember, causal_blocks)
    made = flex_attention.create_block_mask(_causal, 2, 3, 250, 384, BLOCK_SIZE=32)
    assert str(causal) == str(made) and ember.equal(causal.q_indices, made.q_indices)
    assert partial.shape == (1, 2, 32, 32) and partial.sparsity() == 50.0
    assert partial.q_num_blocks.tolist() == [[[2, 1], [0, 1]]]
    assert partial.to_dense().tolist() == [[[[1, 0], [1, 1]], [[0, 0], [0, 1]]]]
    assert both.q_num_blocks is None and both.full_q_indices is None
    assert both.shape == (1, 2, 10, 7) and both.BLOCK_SIZE == (8, 4)
    BlockMask = flex_attention.BlockMask
    with pytest.raises(RuntimeError, match="BlockMask must have at least 2 dimensions"):
        BlockMask.from_kv_blocks(ember.tensor([1]), ember.tensor([1]))
    with pytest.raises(AssertionError, match="must be both provided or omitted"):
        BlockMask.from_kv_blocks(partial.kv_num_blocks, partial.kv_indices, partial.kv_num_blocks)


def test_pin_memory_without_accelerator():
    t = ember.ones(3)
    assert t.is_pinned() is False
    with pytest.raises(RuntimeError, match="^Cannot access accelerator device when none is avail"):
        t.pin_memory()
    with pytest.warns(DeprecationWarning, match="argument 'device' of Tensor.is_pinned"):
        assert t.is_pinned("cpu") is False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="^CPU device type not an accelerator.$"):
            t.pin_memory("cpu")
    # torch warns for pin_memory's argument, then for the is_pinned(device) it asks first
    assert [(w.category, str(w.message).split(" of ")[1][:20]) for w in caught] == [
        (DeprecationWarning, "Tensor.pin_memory() "),
        (DeprecationWarning, "Tensor.is_pinned() i"),
    ]
    data = ember.utils.data
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accel"):
        loader = data.DataLoader(
            data.TensorDataset(ember.arange(4.0)), batch_size=2, pin_memory=True
        )
    (batch,) = next(iter(loader))
    assert batch.tolist() == [0.0, 1.0] and not batch.is_pinned()
