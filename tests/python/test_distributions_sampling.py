"""Draws of ember.distributions: shapes and dtypes against torch, sample moments and supports
from many seeded draws, rsample gradients (pathwise identities and torch's gamma gradient),
and parameter/value validation errors against torch's classes and messages."""

import math

import numpy as np
import pytest
from _breadth_util import check, check_raises

import ember

D = ember.distributions


def T(m, a, dt="float32"):
    return m.tensor(np.asarray(a).tolist(), dtype=getattr(m, dt))


def t64(a):
    return ember.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=ember.float64)


# name -> the distribution built on module m (ember or torch); moments are compared in float64.
FAMILIES = {
    "normal": lambda m: m.distributions.Normal(T(m, [0.5, -1.0]), T(m, [1.0, 2.0])),
    "uniform": lambda m: m.distributions.Uniform(T(m, [0.0, -2.0]), T(m, [1.0, 3.0])),
    "exponential": lambda m: m.distributions.Exponential(T(m, [0.5, 3.0])),
    "laplace": lambda m: m.distributions.Laplace(T(m, [0.5, -1.0]), T(m, [1.0, 0.3])),
    "gamma": lambda m: m.distributions.Gamma(T(m, [0.3, 1.0, 7.5]), T(m, [1.0, 2.0, 0.5])),
    "chi2": lambda m: m.distributions.Chi2(T(m, [1.0, 5.0])),
    "beta": lambda m: m.distributions.Beta(T(m, [0.5, 2.0, 5.0]), T(m, [0.5, 3.0, 1.0])),
    "dirichlet": lambda m: m.distributions.Dirichlet(T(m, [[0.5, 1.0, 2.0], [3.0, 3.0, 0.2]])),
    "lognormal": lambda m: m.distributions.LogNormal(T(m, [0.0, 0.5]), T(m, [0.5, 0.25])),
    "halfnormal": lambda m: m.distributions.HalfNormal(T(m, [1.0, 2.5])),
    "gumbel": lambda m: m.distributions.Gumbel(T(m, [0.0, 1.0]), T(m, [1.0, 0.5])),
    "weibull": lambda m: m.distributions.Weibull(T(m, [1.0, 2.0]), T(m, [1.5, 3.0])),
    "pareto": lambda m: m.distributions.Pareto(T(m, [1.0, 2.0]), T(m, [5.0, 6.0])),
    "studentt": lambda m: m.distributions.StudentT(T(m, [5.0, 9.0]), T(m, [0.0, 1.0]), 2.0),
    "vonmises": lambda m: m.distributions.VonMises(T(m, [0.5, -2.0]), T(m, [0.5, 8.0])),
    "bernoulli": lambda m: m.distributions.Bernoulli(T(m, [0.2, 0.9])),
    "geometric": lambda m: m.distributions.Geometric(T(m, [0.2, 0.7])),
    "poisson": lambda m: m.distributions.Poisson(T(m, [0.5, 4.0, 30.0, 250.0])),
    "binomial": lambda m: m.distributions.Binomial(T(m, [10.0, 600.0]), T(m, [0.3, 0.8])),
    "categorical": lambda m: m.distributions.Categorical(T(m, [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
    "onehot": lambda m: m.distributions.OneHotCategorical(T(m, [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
    "multinomial": lambda m: m.distributions.Multinomial(7, T(m, [0.2, 0.3, 0.5])),
    "mvn": lambda m: m.distributions.MultivariateNormal(
        T(m, [1.0, -1.0]), T(m, [[2.0, 0.5], [0.5, 1.0]])
    ),
    "lowrank_mvn": lambda m: m.distributions.LowRankMultivariateNormal(
        T(m, [1.0, -1.0]), T(m, [[1.0], [0.5]]), T(m, [0.5, 0.2])
    ),
    "mixture": lambda m: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(T(m, [0.3, 0.7])),
        m.distributions.Normal(T(m, [-2.0, 2.0]), T(m, [0.5, 1.0])),
    ),
    "continuous_bernoulli": lambda m: m.distributions.ContinuousBernoulli(T(m, [0.1, 0.5, 0.8])),
    "negative_binomial": lambda m: m.distributions.NegativeBinomial(
        T(m, [2.0, 7.5]), T(m, [0.3, 0.6])
    ),
    "inverse_gamma": lambda m: m.distributions.InverseGamma(T(m, [5.0, 8.0]), T(m, [1.0, 3.0])),
    "fisher_snedecor": lambda m: m.distributions.FisherSnedecor(T(m, [6.0, 9.0]), 12.0),
    "logistic_normal": lambda m: m.distributions.LogisticNormal(T(m, [0.5, -1.0]), 0.5),
    "kumaraswamy": lambda m: m.distributions.Kumaraswamy(T(m, [0.7, 2.0]), T(m, [3.0, 1.5])),
    "generalized_pareto": lambda m: m.distributions.GeneralizedPareto(
        T(m, [0.0, 1.0]), T(m, [1.0, 2.0]), T(m, [0.1, -0.3])
    ),
    "relaxed_bernoulli": lambda m: m.distributions.RelaxedBernoulli(T(m, 0.5), T(m, [0.2, 0.9])),
    "relaxed_onehot": lambda m: m.distributions.RelaxedOneHotCategorical(
        T(m, 0.5), T(m, [0.2, 0.3, 0.5])
    ),
}

# Families whose variance is not defined or not implemented by torch.
NO_MOMENTS = {"relaxed_bernoulli", "relaxed_onehot", "vonmises", "logistic_normal"}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sample_shapes_against_torch(torch, name):
    def run(m):
        d = FAMILIES[name](m)
        out = [d.sample(), d.sample((3,)), d.sample((2, 1))]
        if d.has_rsample:
            out.append(d.rsample((4,)))
        return [(tuple(x.shape), repr(x.dtype)) for x in out] + [d.has_rsample]

    check(torch, run)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sample_moments_and_support(name):
    ember.manual_seed(1)
    d = FAMILIES[name](ember)
    x = d.sample((40000,))
    assert bool(d.support.check(x).all())
    if name in NO_MOMENTS:
        return
    got_mean = x.double().mean(0).numpy()
    got_var = x.double().var(0).numpy()
    mean, var = d.mean.double().numpy(), d.variance.double().numpy()
    if name == "categorical":  # torch defines no mean; compare the frequencies instead
        freq = [(x == k).double().mean(0).numpy() for k in range(3)]
        np.testing.assert_allclose(np.stack(freq, -1), d.probs.numpy(), atol=0.01)
        return
    np.testing.assert_allclose(got_mean, mean, rtol=0.03, atol=0.03)
    np.testing.assert_allclose(got_var, var, rtol=0.08, atol=0.02)


def test_vonmises_circular_moments():
    ember.manual_seed(2)
    d = D.VonMises(t64([0.5, -2.0]), t64([0.5, 8.0]))
    x = d.sample((40000,))
    assert float(x.min()) >= -math.pi and float(x.max()) < math.pi
    resultant = ember.stack([x.cos().mean(0), x.sin().mean(0)], -1).numpy()
    mean_angle = np.arctan2(resultant[:, 1], resultant[:, 0])
    np.testing.assert_allclose(mean_angle, [0.5, -2.0], atol=0.05)
    np.testing.assert_allclose(1 - np.hypot(*resultant.T), d.variance.numpy(), atol=0.01)


def test_relaxed_samples_approach_their_discrete_limit():
    ember.manual_seed(3)
    probs = ember.tensor([0.2, 0.3, 0.5])
    x = D.RelaxedOneHotCategorical(ember.tensor(0.05), probs).sample((20000,))
    np.testing.assert_allclose(x.mean(0).numpy(), probs.numpy(), atol=0.02)
    b = D.RelaxedBernoulli(ember.tensor(0.05), ember.tensor([0.2, 0.9])).sample((20000,))
    np.testing.assert_allclose(b.mean(0).numpy(), [0.2, 0.9], atol=0.02)


def test_location_scale_rsample_gradients():
    """x = loc + scale * eps: dx/dloc = 1, dx/dscale = (x - loc) / scale."""
    for cls in (D.Normal, D.Laplace, D.Cauchy):
        loc = ember.tensor([0.5, -1.0], requires_grad=True)
        scale = ember.tensor([1.0, 2.0], requires_grad=True)
        x = cls(loc, scale).rsample((5,))
        x.sum().backward()
        np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
        eps = ((x.detach() - loc.detach()) / scale.detach()).sum(0)
        np.testing.assert_allclose(scale.grad.numpy(), eps.numpy(), rtol=1e-5, atol=1e-5)
    rate = ember.tensor([0.5, 2.0], requires_grad=True)
    x = D.Exponential(rate).rsample((5,))
    x.sum().backward()
    want = (-x.detach() / rate.detach()).sum(0)
    np.testing.assert_allclose(rate.grad.numpy(), want.numpy(), rtol=1e-5)


def test_standard_gamma_grad_against_torch(torch):
    standard_gamma_grad = pytest.importorskip("ember.distributions.samplers").standard_gamma_grad

    for a in [0.05, 0.3, 1.0, 2.5, 10.0, 50.0, 300.0, 5000.0]:
        torch.manual_seed(0)
        x = torch._standard_gamma(torch.full((500,), a, dtype=torch.float64))
        want = torch._standard_gamma_grad(torch.full_like(x, a), x).numpy()
        got = standard_gamma_grad(ember.full([500], a, dtype=ember.float64), t64(x.numpy()))
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-3, atol=1e-12)


def test_standard_gamma_grad_by_finite_differences_of_the_cdf():
    """dx/dalpha = -(dF/dalpha) / f(x), with F integrated numerically in numpy."""
    standard_gamma_grad = pytest.importorskip("ember.distributions.samplers").standard_gamma_grad

    def cdf(a, x, n=200001):
        t = np.linspace(0, x, n)[1:]  # (t/x)^(a-1) form is integrable at 0 for a >= 1
        logf = (a - 1) * np.log(t) - t - math.lgamma(a)
        return (
            np.trapezoid(np.exp(logf), t) if hasattr(np, "trapezoid") else np.trapz(np.exp(logf), t)
        )

    for a, x in [(1.5, 0.7), (3.0, 2.0), (6.0, 9.0), (30.0, 24.0), (30.0, 37.0)]:
        h = 1e-4 * a
        dF = (cdf(a + h, x) - cdf(a - h, x)) / (2 * h)
        f = math.exp((a - 1) * math.log(x) - x - math.lgamma(a))
        got = float(standard_gamma_grad(t64([a]), t64([x]))[0])
        assert got == pytest.approx(-dF / f, rel=1e-4)


def test_gamma_cdf_gradients(torch):
    """d cdf / d value is the density (torch's); d cdf / d concentration, which torch does not
    implement, matches central differences of torch's gammainc."""
    pytest.importorskip("ember.distributions.samplers")  # torch itself has no such gradient
    a = [0.3, 2.0, 7.0, 150.0]
    x = [0.2, 3.5, 4.0, 160.0]
    conc = t64(a).requires_grad_()
    value = t64(x).requires_grad_()
    g_conc, g_value = ember.autograd.grad(D.Gamma(conc, 1.0).cdf(value).sum(), [conc, value])
    np.testing.assert_allclose(
        g_value.numpy(), D.Gamma(t64(a), 1.0).log_prob(t64(x)).exp().numpy(), rtol=1e-10
    )
    h = 1e-6
    ta, tx = torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)
    fd = (torch.special.gammainc(ta + h, tx) - torch.special.gammainc(ta - h, tx)) / (2 * h)
    np.testing.assert_allclose(g_conc.numpy(), fd.numpy(), rtol=1e-5)


@pytest.mark.parametrize("family", ["gamma", "beta", "dirichlet", "chi2", "studentt"])
def test_gamma_based_rsample_gradient_is_unbiased(family):
    """d/dtheta E[g(x)] from pathwise gradients matches the closed form."""
    ember.manual_seed(4)
    n = 100000
    if family == "gamma":
        a = t64([0.4, 2.0, 9.0]).requires_grad_()
        x = D.Gamma(a, 2.0).rsample((n,))
        (x.pow(2).mean(0).sum()).backward()  # E[x^2] = a (a + 1) / 4
        want = (2 * a.detach() + 1) / 4
        grad = a.grad
    elif family == "chi2":
        df = t64([1.5, 6.0]).requires_grad_()
        D.Chi2(df).rsample((n,)).mean(0).sum().backward()  # E[x] = df
        want, grad = ember.ones(2, dtype=ember.float64), df.grad
    elif family == "beta":
        a = t64([0.5, 3.0]).requires_grad_()
        b = t64([2.0, 1.5])
        D.Beta(a, b).rsample((n,)).mean(0).sum().backward()  # E[x] = a / (a + b)
        want, grad = b / (a.detach() + b).pow(2), a.grad
    elif family == "dirichlet":
        c = t64([0.7, 1.5, 3.0]).requires_grad_()
        D.Dirichlet(c).rsample((n,))[:, 0].mean().backward()  # E[x0] = c0 / sum c
        s = float(c.detach().sum())
        cd = c.detach().numpy()
        want = t64([(s - cd[0]) / s**2, -cd[0] / s**2, -cd[0] / s**2])
        grad = c.grad
    else:
        df = t64([4.0, 8.0]).requires_grad_()
        x = D.StudentT(df).rsample((n,))
        x.abs().mean(0).sum().backward()  # E|x| = 2 sqrt(df) Gamma((df+1)/2) / (sqrt(pi)(df-1)
        dfn = df.detach().numpy()

        def e_abs(v):
            return (
                2
                * math.sqrt(v)
                * math.exp(math.lgamma((v + 1) / 2) - math.lgamma(v / 2))
                / (math.sqrt(math.pi) * (v - 1))
            )

        want = t64([(e_abs(v + 1e-5) - e_abs(v - 1e-5)) / 2e-5 for v in dfn])
        grad = df.grad
    np.testing.assert_allclose(grad.numpy(), want.numpy(), rtol=0.06, atol=0.01)


def test_tanh_squashed_policy_step():
    """SAC's actor: rsample through tanh, log_prob of the same draw, gradient to both params."""
    mu = ember.zeros(4, 2, requires_grad=True)
    log_std = ember.zeros(4, 2, requires_grad=True)
    base = D.Normal(mu, log_std.exp())
    pi = D.TransformedDistribution(base, [D.transforms.TanhTransform(cache_size=1)])
    a = pi.rsample()
    logp = pi.log_prob(a).sum(-1)
    (logp - a.pow(2).sum(-1)).mean().backward()
    assert a.shape == (4, 2) and bool(ember.isfinite(logp).all())
    assert mu.grad is not None and log_std.grad is not None


def test_straight_through_gradient():
    logits = ember.tensor([0.1, 0.5, -0.3], requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample()
    assert float(s.sum()) == 1.0
    (s * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


ERRORS = {
    "gamma_neg": lambda m: m.distributions.Gamma(T(m, [1.0, -2.0]), 1.0, validate_args=True),
    "beta_neg": lambda m: m.distributions.Beta(1.0, -1.0, validate_args=True),
    "dirichlet_0d": lambda m: m.distributions.Dirichlet(T(m, 1.0)),
    "wishart_df": lambda m: m.distributions.Wishart(T(m, 0.5), m.eye(2)),
    "wishart_1d": lambda m: m.distributions.Wishart(3.0, m.ones(2)),
    "dirichlet_neg": lambda m: m.distributions.Dirichlet(T(m, [1.0, -1.0]), validate_args=True),
    "dirichlet_value": lambda m: m.distributions.Dirichlet(
        T(m, [1.0, 1.0]), validate_args=True
    ).log_prob(T(m, [0.3, 0.3])),
    "exponential_value": lambda m: m.distributions.Exponential(1.0, validate_args=True).log_prob(
        T(m, [-1.0])
    ),
    "value_not_tensor": lambda m: m.distributions.Normal(0.0, 1.0, validate_args=True).log_prob(
        0.5
    ),
    "value_shape": lambda m: m.distributions.Normal(m.zeros(3), 1.0, validate_args=True).log_prob(
        m.ones(2)
    ),
    "mvn_event_shape": lambda m: m.distributions.MultivariateNormal(
        m.zeros(3), m.eye(3), validate_args=True
    ).log_prob(m.ones(2)),
    "mvn_none": lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    "mvn_two": lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2), m.eye(2)),
    "mvn_0d_loc": lambda m: m.distributions.MultivariateNormal(T(m, 0.0), m.eye(1)),
    "mvn_not_pd": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), T(m, [[1.0, 2.0], [2.0, 1.0]]), validate_args=True
    ),
    "mvn_1d_tril": lambda m: m.distributions.MultivariateNormal(m.zeros(2), scale_tril=m.ones(2)),
    "lowrank_shapes": lambda m: m.distributions.LowRankMultivariateNormal(
        m.zeros(3), m.zeros(2, 1), m.ones(3)
    ),
    "poisson_neg": lambda m: m.distributions.Poisson(T(m, [-1.0]), validate_args=True),
    "poisson_value": lambda m: m.distributions.Poisson(T(m, [1.0]), validate_args=True).log_prob(
        T(m, [1.5])
    ),
    "binomial_probs": lambda m: m.distributions.Binomial(3, T(m, [1.5]), validate_args=True),
    "binomial_count": lambda m: m.distributions.Binomial(
        T(m, [-1.0]), T(m, [0.5]), validate_args=True
    ),
    "binomial_entropy_inhomogeneous": lambda m: m.distributions.Binomial(
        T(m, [2.0, 3.0]), T(m, [0.5, 0.5])
    ).entropy(),
    "multinomial_tensor_count": lambda m: m.distributions.Multinomial(T(m, 3.0), T(m, [0.5, 0.5])),
    "geometric_zero": lambda m: m.distributions.Geometric(T(m, [0.0]), validate_args=True),
    "onehot_value": lambda m: m.distributions.OneHotCategorical(
        T(m, [0.5, 0.5]), validate_args=True
    ).log_prob(T(m, [1.0, 1.0])),
    "independent_ndims": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.zeros(2), 1.0), 2
    ),
    "transformed_bad": lambda m: m.distributions.TransformedDistribution(
        m.distributions.Normal(0.0, 1.0), 3
    ),
    "mixture_not_categorical": lambda m: m.distributions.MixtureSameFamily(
        m.distributions.Normal(0.0, 1.0), m.distributions.Normal(m.zeros(2), 1.0)
    ),
    "mixture_components": lambda m: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(m.ones(3)), m.distributions.Normal(m.zeros(2), 1.0)
    ),
    "studentt_df": lambda m: m.distributions.StudentT(T(m, [0.0]), validate_args=True),
    "pareto_value": lambda m: m.distributions.Pareto(2.0, 1.0, validate_args=True).log_prob(
        T(m, [1.0])
    ),
    "vonmises_conc": lambda m: m.distributions.VonMises(0.0, T(m, [-1.0]), validate_args=True),
    "weibull_scale": lambda m: m.distributions.Weibull(T(m, [-1.0]), 1.0, validate_args=True),
    "laplace_scale": lambda m: m.distributions.Laplace(0.0, T(m, [0.0]), validate_args=True),
    "cauchy_scale": lambda m: m.distributions.Cauchy(0.0, T(m, [-1.0]), validate_args=True),
    "halfnormal_value": lambda m: m.distributions.HalfNormal(1.0, validate_args=True).log_prob(
        T(m, [-1.0])
    ),
    "chi2_df": lambda m: m.distributions.Chi2(T(m, [-1.0]), validate_args=True),
    "lognormal_value": lambda m: m.distributions.LogNormal(0.0, 1.0, validate_args=True).log_prob(
        T(m, [-1.0])
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    # torch.compile, which other tests in this process run, switches torch's default argument
    # validation off for good (torch/_dynamo/eval_frame.py); the comparison needs torch's default
    torch.distributions.Distribution.set_default_validate_args(True)
    check_raises(torch, ERRORS[name])

    def message(m):
        try:
            ERRORS[name](m)
        except Exception as e:  # noqa: BLE001 (the text is what is compared)
            return str(e)

    assert message(ember) == message(torch)


def test_validation_can_be_switched_off(torch):
    check(
        torch,
        lambda m: [
            m.distributions.Normal(0.0, T(m, [-1.0]), validate_args=False).scale,
            m.distributions.Exponential(1.0, validate_args=False).log_prob(T(m, [-1.0])),
        ],
    )


def test_lkj_samples_are_correlation_factors_with_lkj_marginals():
    """Off-diagonal correlations of LKJ(eta) in dimension d have variance 1 / (2 eta + d - 1)."""
    ember.manual_seed(5)
    d = D.LKJCholesky(4, t64([0.5, 2.0]))
    L = d.sample((20000,))
    assert L.shape == (20000, 2, 4, 4) and bool(d.support.check(L).all())
    corr = L @ L.mT
    var = corr[..., 1, 0].var(0).numpy()
    np.testing.assert_allclose(var, [1 / (2 * 0.5 + 3), 1 / (2 * 2.0 + 3)], rtol=0.05)
    np.testing.assert_allclose(corr[..., 3, 2].mean(0).numpy(), [0.0, 0.0], atol=0.02)


@pytest.mark.parametrize("count,prob", [(20, 0.2), (40, 0.35), (40, 0.8), (200, 0.5)])
def test_count_samplers_match_their_pmf(count, prob):
    """Frequencies of binomial (waiting times below count * p = 10, BTRS above) and Poisson
    (arrival counting below rate 10, PTRS above) draws against exp(log_prob)."""
    ember.manual_seed(6)
    for d, top in (
        (D.Binomial(count, ember.tensor(prob)), count),
        (D.Poisson(ember.tensor(count * prob)), 3 * count),
    ):
        x = d.sample((100000,))
        support = ember.arange(0, top + 1, dtype=ember.float32)
        freq = (x.unsqueeze(-1) == support).double().mean(0).numpy()
        np.testing.assert_allclose(freq, d.log_prob(support).exp().numpy(), atol=0.004)


def test_binomial_sampler_handles_huge_and_degenerate_counts():
    ember.manual_seed(7)
    x = (
        D.Binomial(
            ember.tensor([1e6, 1e6, 7.0, 7.0, 0.0]), ember.tensor([0.3, 1e-6, 0.0, 1.0, 0.5])
        )
        .sample((4000,))
        .double()
    )
    np.testing.assert_allclose(x.mean(0).numpy(), [3e5, 1.0, 0.0, 7.0, 0.0], rtol=0.002, atol=0.06)
    np.testing.assert_allclose(x[:, 0].var().item(), 2.1e5, rtol=0.1)


def test_wishart_draws_have_its_moments():
    ember.manual_seed(8)
    cov = t64([[2.0, 0.6], [0.6, 1.0]])
    d = D.Wishart(t64(5.0), cov)
    x = d.sample((40000,))
    assert x.shape == (40000, 2, 2) and bool(d.support.check(x[:100]).all())
    np.testing.assert_allclose(x.mean(0).numpy(), d.mean.numpy(), rtol=0.03)
    np.testing.assert_allclose(x.var(0).numpy(), d.variance.numpy(), rtol=0.08)


def test_sample_n_warns_like_torch(torch):
    with pytest.warns(FutureWarning, match="sample_n"):
        x = D.Normal(ember.zeros(2), 1.0).sample_n(3)
    assert x.shape == (3, 2)
