"""Fixes found by session 17's programs (tests/python/torch_scripts: siamese_metric,
param_custom, rng_patterns): TripletMarginWithDistanceLoss's default distance is a
PairwiseDistance submodule, register_parametrization's consistency checks, generator= on the
rejection samplers (poisson, binomial, _standard_gamma, _sample_dirichlet), and manual_seed's
accepted range."""

import pytest

import ember
from ember import nn
from ember.nn.utils import parametrize


def test_triplet_with_distance_default_is_a_pairwise_distance_module():
    loss = nn.TripletMarginWithDistanceLoss()
    assert isinstance(loss.distance_function, nn.PairwiseDistance)
    assert [type(m).__name__ for m in loss.children()] == ["PairwiseDistance"]
    assert "(distance_function): PairwiseDistance()" in repr(loss)
    a, p, n = ember.zeros(2, 3), ember.ones(2, 3) * 0.1, ember.ones(2, 3)
    ref = nn.functional.triplet_margin_loss(a, p, n)
    assert loss(a, p, n).item() == pytest.approx(ref.item(), rel=1e-6)
    custom = nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: (x - y).abs().sum(-1))
    assert list(custom.children()) == []


class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class _Gram(nn.Module):
    def forward(self, u):
        return u @ u.T


class _Half(nn.Module):
    def forward(self, x):
        return x.double()


class _Flatten(nn.Module):
    def forward(self, x):
        return x

    def right_inverse(self, x):
        return x.flatten()


def test_register_parametrization_checks_shape_and_dtype_as_torch():
    with pytest.raises(ValueError, match="may not change the shape of the tensor, unless `unsafe`"):
        parametrize.register_parametrization(nn.Linear(4, 2), "weight", _Gram())
    with pytest.raises(ValueError, match="may not change the dtype") as info:
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", _Half())
    assert "parametrized dtype: torch.float64" in str(info.value)
    lin = nn.Linear(2, 4)
    parametrize.register_parametrization(lin, "weight", _Gram(), unsafe=True)
    assert lin.weight.shape == (4, 4) and lin.parametrizations.weight.original.shape == (4, 2)
    # appended on top of an existing parametrization: forward and right_inverse are checked
    sym = nn.Linear(3, 3)
    parametrize.register_parametrization(sym, "weight", _Symmetric())
    with pytest.raises(ValueError, match=r"module\.weight\.dtype: torch\.float32"):
        parametrize.register_parametrization(sym, "weight", _Half())
    with pytest.raises(ValueError, match="right_inverse must have the same shape") as info:
        parametrize.register_parametrization(sym, "weight", _Flatten())
    assert "returned shape: torch.Size([9])" in str(info.value)
    assert len(sym.parametrizations.weight) == 1  # the refused ones were not added
    parametrize.register_parametrization(sym, "weight", _Flatten(), unsafe=True)
    assert len(sym.parametrizations.weight) == 2


def test_rejection_samplers_take_a_generator():
    rate = ember.tensor([0.5, 4.0, 30.0])
    count, prob = ember.tensor([5.0, 200.0]), ember.tensor([0.3, 0.6])
    draws = []
    for _ in range(2):
        g = ember.Generator().manual_seed(3)
        state = ember.get_rng_state()
        draws.append(
            (
                ember.poisson(rate, generator=g),
                ember.binomial(count, prob, generator=g),
                ember._standard_gamma(ember.tensor([0.5, 3.0]), generator=g),
                ember._sample_dirichlet(ember.ones(3), generator=g),
            )
        )
        assert ember.equal(ember.get_rng_state(), state)  # the default stream is untouched
    for x, y in zip(*draws):
        assert ember.equal(x, y)
    assert draws[0][3].sum().item() == pytest.approx(1.0, rel=1e-6)


def test_manual_seed_accepts_signed_and_unsigned_64_bit_seeds():
    assert ember.manual_seed(2**64 - 1).initial_seed() == 2**64 - 1
    assert ember.manual_seed(-(2**63)).initial_seed() == 2**63
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            ember.manual_seed(bad)
    ember.manual_seed(0)


def test_causal_bias_masks_sdpa():
    import ember.nn.functional as F
    from ember.nn.attention.bias import CausalVariant, causal_lower_right, causal_upper_left

    q = ember.sin(ember.arange(24.0)).view(1, 2, 3, 4)
    k = ember.cos(ember.arange(40.0)).view(1, 2, 5, 4)
    lower = causal_lower_right(3, 5)
    assert lower.variant == CausalVariant.LOWER_RIGHT
    assert lower._materialize().int().tolist() == [
        [1, 1, 1, 0, 0],
        [1, 1, 1, 1, 0],
        [1, 1, 1, 1, 1],
    ]
    want = F.scaled_dot_product_attention(q, k, k, attn_mask=lower._materialize())
    assert ember.equal(F.scaled_dot_product_attention(q, k, k, attn_mask=lower), want)
    upper = F.scaled_dot_product_attention(q, k, k, attn_mask=causal_upper_left(3, 5))
    assert ember.equal(upper, F.scaled_dot_product_attention(q, k, k, is_causal=True))
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=lower, is_causal=True)
    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        causal_upper_left(3)


def test_flex_attention_applies_mods_as_a_materialized_mask():
    import ember.nn.functional as F
    from ember.nn.attention import flex_attention as fa

    q = ember.sin(ember.arange(2 * 4 * 6 * 8.0) * 0.3).view(2, 4, 6, 8)
    k = ember.cos(ember.arange(2 * 2 * 6 * 8.0) * 0.7).view(2, 2, 6, 8)
    lengths = ember.tensor([6, 4])

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def padding(b, h, q_idx, kv_idx):
        return kv_idx < lengths[b]

    mask_mod = fa.and_masks(causal, padding)
    bm = fa.create_block_mask(mask_mod, 2, None, 6, 6, device="cpu", BLOCK_SIZE=2)
    assert bm.shape == (2, 1, 6, 6) and bm.BLOCK_SIZE == (2, 2)
    assert bm.to_dense().tolist() == [
        [[[1, 0, 0], [1, 1, 0], [1, 1, 1]]],
        [[[1, 0, 0], [1, 1, 0], [1, 1, 0]]],
    ]
    assert bm.kv_num_blocks.tolist() == [[[1, 1, 1]], [[1, 1, 0]]]  # diagonal tiles are partial
    assert bm.full_kv_num_blocks.tolist() == [[[0, 1, 2]], [[0, 1, 2]]]
    assert bm.sparsity() == pytest.approx(100 * (1 - 11 * 4 / 72))
    out, lse = fa.flex_attention(q, k, k, block_mask=bm, enable_gqa=True, return_lse=True)
    kk = k.repeat_interleave(2, 1)
    dense = fa.create_mask(mask_mod, 2, 1, 6, 6)
    assert ember.allclose(
        out, F.scaled_dot_product_attention(q, kk, kk, attn_mask=dense), atol=1e-6
    )
    scores = (q @ kk.transpose(-2, -1) / 8**0.5).masked_fill(~dense, float("-inf"))
    assert ember.allclose(lse, scores.logsumexp(-1), atol=1e-6)
    # a score_mod indexing a captured tensor with the head index, differentiable
    slopes = ember.tensor([0.5, 0.25, 0.125, 0.0625], requires_grad=True)
    alibi = fa.flex_attention(
        q, kk, kk, score_mod=lambda s, b, h, qi, ki: s + slopes[h] * (ki - qi)
    )
    bias = slopes.detach().view(1, 4, 1, 1) * (ember.arange(6.0) - ember.arange(6.0).view(6, 1))
    assert ember.allclose(
        alibi, F.scaled_dot_product_attention(q, kk, kk, attn_mask=bias), atol=1e-6
    )
    alibi.sum().backward()
    assert slopes.grad is not None and slopes.grad.shape == (4,)
    dead_mask = fa.create_block_mask(lambda b, h, qi, ki: ki > qi + 10, 1, 1, 6, 6)
    dead, dead_lse = fa.flex_attention(q, kk, kk, block_mask=dead_mask, return_lse=True)
    assert dead.abs().sum().item() == 0 and dead_lse.isneginf().all()
    with pytest.raises(ValueError, match="Try setting enable_gqa=True"):
        fa.flex_attention(q, k, k)
    with pytest.raises(ValueError, match="created for a larger length"):
        fa.flex_attention(q[:, :, :4], kk, kk, block_mask=bm)
    with pytest.raises(AssertionError, match="requires a mask_mod function"):
        fa.create_block_mask(lambda s, b, h, qi, ki: s, 1, 1, 2, 2)


def test_muon_orthogonalizes_2d_updates():
    w = nn.Parameter(ember.eye(4))
    opt = ember.optim.Muon([w], lr=0.1, momentum=0.0, nesterov=False, weight_decay=0.0)
    w.grad = ember.diag(ember.tensor([4.0, 0.5, 2.0, 0.1])) + ember.eye(4).roll(1, 1) * 0.3
    opt.step()
    assert sorted(opt.state[w]) == ["momentum_buffer"]
    # the step's singular values are pulled towards lr whatever the gradient's spread (40x here)
    s = ember.linalg.svdvals(ember.eye(4) - w.detach())
    assert 0.05 < s.min().item() and s.max().item() < 0.15
    tall = nn.Parameter(ember.zeros(6, 2))
    steps = {}
    for fn in ("original", "match_rms_adamw"):
        with ember.no_grad():
            tall.zero_()
        tall.grad = ember.ones(6, 2)
        kw = {"momentum": 0.0, "nesterov": False, "weight_decay": 0.0}
        ember.optim.Muon([tall], lr=0.1, adjust_lr_fn=fn, **kw).step()
        steps[fn] = tall.detach().abs().max().item()
    # lr * sqrt(max(1, 6/2)) against lr * 0.2 * sqrt(6)
    assert steps["original"] / steps["match_rms_adamw"] == pytest.approx(3**0.5 / (0.2 * 6**0.5))
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters .* size: torch.Size"):
        ember.optim.Muon([nn.Parameter(ember.ones(3))])
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        ember.optim.Muon([w], adjust_lr_fn="x")
    torch = pytest.importorskip("torch")
    g = [[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 1.0]]
    tw = torch.nn.Parameter(torch.eye(3))
    tw.grad = torch.tensor(g)
    torch.optim.Muon([tw], lr=0.1, momentum=0.5).step()
    ew = nn.Parameter(ember.eye(3))
    ew.grad = ember.tensor(g)
    ember.optim.Muon([ew], lr=0.1, momentum=0.5).step()
    assert ew.detach().flatten().tolist() == pytest.approx(tw.detach().flatten().tolist(), abs=1e-6)
