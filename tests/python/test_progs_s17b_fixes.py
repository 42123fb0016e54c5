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
