"""ember.distributions against torch.distributions 2.13: densities, moments, entropies and KL
divergences by value; samples by shape, dtype and support; parameter checks by error class."""

import numpy as np
import pytest
from _breadth_util import check, check_raises, rand

import ember


def T(m, a, dt="float32"):
    return m.tensor(np.asarray(a).tolist(), dtype=getattr(m, dt))


LOGITS = rand(2, 4)
PROBS = rand(2, 4, seed=1, low=0.05, high=1.0)
P01 = rand(3, seed=2, low=0.05, high=0.95)


def _normal(m):
    return m.distributions.Normal(T(m, rand(2, 3)), T(m, rand(2, 3, seed=1, low=0.2, high=2.0)))


CASES = {
    "normal": lambda m: [
        _normal(m).log_prob(T(m, rand(4, 2, 3, seed=5))),
        _normal(m).entropy(),
        _normal(m).cdf(T(m, rand(2, 3, seed=6))),
        _normal(m).icdf(T(m, [[0.1, 0.5, 0.9]] * 2)),
        _normal(m).mean,
        _normal(m).stddev,
        _normal(m).variance,
    ],
    "normal_scalar_params": lambda m: [
        m.distributions.Normal(0.0, 2.0).log_prob(T(m, [0.5, -1.0])),
        m.distributions.Normal(T(m, [0.0, 1.0]), 2.0).entropy(),
    ],
    "uniform": lambda m: [
        m.distributions.Uniform(T(m, [0.0, -1.0]), T(m, [2.0, 3.0])).log_prob(T(m, [1.0, 2.5])),
        m.distributions.Uniform(0.0, 4.0).entropy(),
        m.distributions.Uniform(1.0, 3.0).mean,
        m.distributions.Uniform(T(m, [0.0]), T(m, [2.0])).cdf(T(m, [0.5])),
    ],
    "bernoulli": lambda m: [
        m.distributions.Bernoulli(probs=T(m, P01)).log_prob(T(m, [1.0, 0.0, 1.0])),
        m.distributions.Bernoulli(logits=T(m, rand(3))).log_prob(T(m, [0.0, 1.0, 1.0])),
        m.distributions.Bernoulli(probs=T(m, P01)).entropy(),
        m.distributions.Bernoulli(probs=T(m, P01)).variance,
    ],
    "categorical": lambda m: [
        m.distributions.Categorical(logits=T(m, LOGITS)).log_prob(
            T(m, [[1, 3], [0, 2], [3, 3]], "int64")
        ),
        m.distributions.Categorical(probs=T(m, PROBS)).entropy(),
        m.distributions.Categorical(probs=T(m, PROBS)).probs,
        m.distributions.Categorical(logits=T(m, LOGITS)).logits,
        m.distributions.Categorical(probs=T(m, PROBS)).mode,
        m.distributions.Categorical(probs=T(m, PROBS)).enumerate_support(),
    ],
    "kl": lambda m: [
        m.distributions.kl_divergence(
            _normal(m), m.distributions.Normal(0.5, T(m, [1.0, 2.0, 0.5]))
        ),
        m.distributions.kl_divergence(
            m.distributions.Categorical(logits=T(m, LOGITS)),
            m.distributions.Categorical(probs=T(m, PROBS)),
        ),
        m.distributions.kl_divergence(
            m.distributions.Bernoulli(probs=T(m, P01)),
            m.distributions.Bernoulli(logits=T(m, rand(3, seed=4))),
        ),
        m.distributions.kl_divergence(
            m.distributions.Uniform(0.0, 1.0), m.distributions.Uniform(T(m, [-1.0, 0.5]), 2.0)
        ),
    ],
    "shapes": lambda m: [
        tuple(_normal(m).batch_shape),
        tuple(_normal(m).event_shape),
        tuple(m.distributions.Categorical(logits=T(m, LOGITS)).batch_shape),
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(torch, name):
    check(torch, CASES[name], rtol=1e-5, atol=1e-6)


def test_samples_shapes_and_support(torch):
    def draws(m):
        m.manual_seed(0)
        c = m.distributions.Categorical(logits=T(m, LOGITS))
        n = _normal(m)
        b = m.distributions.Bernoulli(probs=T(m, P01))
        u = m.distributions.Uniform(T(m, [0.0]), T(m, [2.0]))
        out = [
            c.sample(),
            c.sample((5,)),
            n.sample(),
            n.rsample((4,)),
            b.sample((2,)),
            u.sample((3, 2)),
        ]
        return [(tuple(x.shape), repr(x.dtype)) for x in out]

    check(torch, draws)
    ember.manual_seed(0)
    c = ember.distributions.Categorical(probs=ember.tensor([0.0, 1.0, 0.0]))
    assert set(c.sample((50,)).tolist()) == {1}
    u = ember.distributions.Uniform(1.0, 2.0).sample((200,))
    assert float(u.min()) >= 1.0 and float(u.max()) < 2.0
    b = ember.distributions.Bernoulli(probs=ember.tensor([0.0, 1.0])).sample((20,))
    assert b[:, 0].sum().item() == 0 and b[:, 1].sum().item() == 20


def test_rsample_is_differentiable():
    loc = ember.tensor([0.5, -1.0], requires_grad=True)
    scale = ember.tensor([1.0, 2.0], requires_grad=True)
    ember.distributions.Normal(loc, scale).rsample((3,)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    assert scale.grad is not None


def test_reinforce_step_runs():
    """The REINFORCE pattern of torch's examples: sample an action, backprop its log-prob."""
    policy = ember.nn.Linear(4, 2)
    probs = ember.softmax(policy(ember.tensor(rand(1, 4), dtype=ember.float32)), dim=1)
    m = ember.distributions.Categorical(probs)
    action = m.sample()
    (-m.log_prob(action) * 1.5).sum().backward()
    assert policy.weight.grad is not None and action.dtype == ember.int64


# validate_args=True explicitly: importing torch._dynamo (torch.compile) turns torch's default off.
ERRORS = {
    "normal_scale": lambda m: m.distributions.Normal(0.0, T(m, [-1.0]), validate_args=True),
    "uniform_order": lambda m: m.distributions.Uniform(2.0, 1.0, validate_args=True),
    "bernoulli_both": lambda m: m.distributions.Bernoulli(probs=T(m, [0.5]), logits=T(m, [0.0])),
    "bernoulli_range": lambda m: m.distributions.Bernoulli(probs=T(m, [1.5]), validate_args=True),
    "categorical_none": lambda m: m.distributions.Categorical(),
    "categorical_0d": lambda m: m.distributions.Categorical(probs=T(m, 1.0)),
    "uniform_value_outside": lambda m: m.distributions.Uniform(
        0.0, 1.0, validate_args=True
    ).log_prob(T(m, [2.0])),
    "bernoulli_value": lambda m: m.distributions.Bernoulli(
        probs=T(m, [0.5]), validate_args=True
    ).log_prob(T(m, [0.5])),
    "categorical_value": lambda m: m.distributions.Categorical(
        logits=T(m, LOGITS), validate_args=True
    ).log_prob(T(m, [4, 0], "int64")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check_raises(torch, ERRORS[name])
