# ruff: noqa: E501
"""torch.distributions across a probabilistic-modelling notebook: continuous and discrete
log_prob / cdf / icdf / entropy, mean and variance, enumerate_support, MultivariateNormal from
covariance or precision, LowRankMultivariateNormal, Independent, TransformedDistribution built to
match LogNormal, transforms' log-det-Jacobians, MixtureSameFamily, expand, kl_divergence across
pairs, rsample gradients, and argument validation errors."""

import torch
import torch.distributions as D
from torch.distributions import constraints, transforms

torch.manual_seed(0)


def r(t, n=5):
    return [round(v, n) for v in (t.flatten().tolist() if torch.is_tensor(t) else t)]


x = torch.tensor([-1.0, 0.2, 1.5])
for name, d in [
    ("normal", D.Normal(0.5, 2.0)),
    ("laplace", D.Laplace(0.0, 1.5)),
    ("cauchy", D.Cauchy(0.0, 1.0)),
    ("studentt", D.StudentT(3.0, 0.0, 1.0)),
    ("gumbel", D.Gumbel(0.0, 1.0)),
    (
        "logistic_like",
        D.TransformedDistribution(
            D.Uniform(0.0, 1.0),
            [transforms.SigmoidTransform().inv, transforms.AffineTransform(0.0, 1.0)],
        ),
    ),
]:
    print(f"{name}_logp", r(d.log_prob(x)))
    if name in ("normal", "laplace", "cauchy", "gumbel"):
        print(f"{name}_cdf", r(d.cdf(x)), "icdf", r(d.icdf(torch.tensor([0.1, 0.5, 0.9]))))
    if name != "logistic_like":
        print(
            f"{name}_entropy",
            r(d.entropy().reshape(1)),
            "mean",
            r(d.mean.reshape(1)) if name not in ("cauchy",) else "nan",
        )

beta = D.Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5]))
print(
    "beta",
    r(beta.log_prob(torch.tensor([0.3, 0.9]))),
    r(beta.mean),
    r(beta.variance),
    r(beta.entropy()),
)
gamma = D.Gamma(torch.tensor(2.0), torch.tensor(3.0))
print(
    "gamma",
    r(gamma.log_prob(torch.tensor([0.5, 1.0]))),
    r(gamma.cdf(torch.tensor([0.5])) if hasattr(gamma, "cdf") else []),
    r(gamma.entropy().reshape(1)),
)
dir_ = D.Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
print(
    "dirichlet",
    r(dir_.log_prob(torch.tensor([0.2, 0.3, 0.5])).reshape(1)),
    r(dir_.mean),
    r(dir_.variance),
    r(dir_.entropy().reshape(1)),
)
print(
    "exponential",
    r(D.Exponential(2.0).log_prob(x.clamp(min=0))),
    r(D.Exponential(2.0).cdf(torch.tensor([0.5]))),
)
print(
    "chi2_lognormal",
    r(D.Chi2(3.0).log_prob(torch.tensor([1.0]))),
    r(D.LogNormal(0.0, 0.5).log_prob(torch.tensor([1.5]))),
    r(D.LogNormal(0.0, 0.5).mean.reshape(1)),
)
print(
    "halfnormal",
    r(D.HalfNormal(1.0).log_prob(torch.tensor([0.5]))),
    r(D.HalfCauchy(1.0).log_prob(torch.tensor([0.5]))),
)
print("vonmises", r(D.VonMises(0.0, 2.0).log_prob(torch.tensor([0.5, -2.0]))))
print(
    "weibull_pareto",
    r(D.Weibull(1.0, 1.5).log_prob(torch.tensor([0.7]))),
    r(D.Pareto(1.0, 2.0).log_prob(torch.tensor([1.5]))),
)
print(
    "kumaraswamy",
    r(D.Kumaraswamy(2.0, 3.0).log_prob(torch.tensor([0.4]))),
    r(D.Kumaraswamy(2.0, 3.0).mean.reshape(1)),
)

cat = D.Categorical(probs=torch.tensor([2.0, 1.0, 1.0]))
print(
    "categorical",
    r(cat.probs),
    r(cat.logits),
    r(cat.log_prob(torch.tensor([0, 2]))),
    r(cat.entropy().reshape(1)),
)
print(
    "categorical_support",
    cat.enumerate_support().tolist(),
    cat.enumerate_support(expand=False).shape,
    cat.support,
)
cl = D.Categorical(logits=torch.tensor([[0.0, 1.0], [2.0, -1.0]]))
print("categorical_logits", r(cl.logits), cl.batch_shape, cl.event_shape, cl.param_shape)
oh = D.OneHotCategorical(logits=torch.tensor([0.0, 1.0, 2.0]))
print(
    "onehot",
    r(oh.log_prob(torch.tensor([0.0, 0.0, 1.0])).reshape(1)),
    oh.event_shape,
    oh.enumerate_support().tolist(),
)
bern = D.Bernoulli(logits=torch.tensor([-1.0, 0.0, 3.0]))
print(
    "bernoulli",
    r(bern.probs),
    r(bern.log_prob(torch.tensor([1.0, 0.0, 1.0]))),
    r(bern.entropy()),
    r(bern.variance),
)
binom = D.Binomial(total_count=torch.tensor([5.0, 10.0]), probs=torch.tensor([0.3, 0.6]))
print("binomial", r(binom.log_prob(torch.tensor([2.0, 7.0]))), r(binom.mean), r(binom.variance))
print("poisson", r(D.Poisson(torch.tensor([1.5, 4.0])).log_prob(torch.tensor([0.0, 3.0]))))
print(
    "geometric",
    r(D.Geometric(probs=torch.tensor(0.25)).log_prob(torch.tensor([0.0, 3.0]))),
    r(D.Geometric(0.25).mean.reshape(1)),
)
print("negbinom", r(D.NegativeBinomial(3.0, probs=torch.tensor(0.4)).log_prob(torch.tensor([2.0]))))
print(
    "multinomial",
    r(
        D.Multinomial(6, probs=torch.tensor([0.2, 0.3, 0.5]))
        .log_prob(torch.tensor([1.0, 2.0, 3.0]))
        .reshape(1)
    ),
)

cov = torch.tensor([[2.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])
mvn = D.MultivariateNormal(torch.tensor([0.0, 1.0, -1.0]), covariance_matrix=cov)
mvn_p = D.MultivariateNormal(torch.tensor([0.0, 1.0, -1.0]), precision_matrix=torch.linalg.inv(cov))
pts = torch.tensor([[0.5, 0.5, -0.5], [1.0, 2.0, 0.0]])
print(
    "mvn_logp",
    r(mvn.log_prob(pts)),
    torch.allclose(mvn.log_prob(pts), mvn_p.log_prob(pts), atol=1e-5),
)
print("mvn_tril", r(mvn.scale_tril, 4), r(mvn.entropy().reshape(1)))
print("mvn_shapes", mvn.batch_shape, mvn.event_shape, mvn.expand((4,)).batch_shape)
lr = D.LowRankMultivariateNormal(
    torch.zeros(3),
    cov_factor=torch.tensor([[1.0], [0.5], [0.0]]),
    cov_diag=torch.tensor([1.0, 0.5, 0.2]),
)
print("lowrank", r(lr.log_prob(pts)), r(lr.covariance_matrix), r(lr.entropy().reshape(1)))
ind = D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
print("independent", ind.batch_shape, ind.event_shape, r(ind.log_prob(torch.ones(2, 3))))
ln = D.LogNormal(0.3, 0.8)
tln = D.TransformedDistribution(D.Normal(0.3, 0.8), [transforms.ExpTransform()])
print(
    "transformed_eq",
    torch.allclose(ln.log_prob(torch.tensor([0.5, 2.0])), tln.log_prob(torch.tensor([0.5, 2.0]))),
)
aff = D.TransformedDistribution(
    D.Normal(0.0, 1.0), [transforms.AffineTransform(loc=2.0, scale=3.0)]
)
print("affine_logp", r(aff.log_prob(torch.tensor([2.0, 5.0]))))
z = torch.tensor([-2.0, 0.0, 1.0])
for tname, tr in [
    ("sigmoid", transforms.SigmoidTransform()),
    ("tanh", transforms.TanhTransform()),
    ("softplus", transforms.SoftplusTransform()),
    ("exp", transforms.ExpTransform()),
]:
    y = tr(z)
    print(f"t_{tname}", r(y), r(tr.log_abs_det_jacobian(z, y)), r(tr.inv(y)))
sb = transforms.StickBreakingTransform()
print("stickbreaking", r(sb(torch.tensor([0.0, 1.0]))), r(sb.inv(sb(torch.tensor([0.0, 1.0])))))
print("biject_to_positive", r(D.biject_to(constraints.positive)(torch.tensor([0.0, 1.0]))))
mix = D.MixtureSameFamily(
    D.Categorical(torch.tensor([0.3, 0.7])),
    D.Normal(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])),
)
print(
    "mixture",
    r(mix.log_prob(torch.tensor([0.0, 1.5, -1.0]))),
    r(mix.mean.reshape(1)),
    r(mix.variance.reshape(1)),
    r(mix.cdf(torch.tensor([0.0]))),
)
mix2 = D.MixtureSameFamily(
    D.Categorical(torch.ones(2)), D.Independent(D.Normal(torch.zeros(2, 2), torch.ones(2, 2)), 1)
)
print("mixture_event", mix2.event_shape, r(mix2.log_prob(torch.zeros(3, 2))))

for name, p, q in [
    ("normal", D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)),
    ("beta", D.Beta(2.0, 3.0), D.Beta(1.0, 1.0)),
    ("gamma", D.Gamma(2.0, 1.0), D.Gamma(3.0, 2.0)),
    ("cat", D.Categorical(torch.tensor([0.2, 0.8])), D.Categorical(torch.tensor([0.5, 0.5]))),
    ("bern", D.Bernoulli(0.3), D.Bernoulli(0.6)),
    ("mvn", mvn, D.MultivariateNormal(torch.zeros(3), torch.eye(3))),
    ("dirichlet", dir_, D.Dirichlet(torch.ones(3))),
    ("indep", ind, D.Independent(D.Normal(torch.ones(2, 3), 2 * torch.ones(2, 3)), 1)),
    ("exp", D.Exponential(1.0), D.Exponential(3.0)),
    ("laplace", D.Laplace(0.0, 1.0), D.Laplace(1.0, 2.0)),
    ("poisson", D.Poisson(2.0), D.Poisson(3.0)),
    ("uniform_normal", D.Uniform(0.0, 1.0), D.Normal(0.0, 1.0)),
]:
    print(f"kl_{name}", r(D.kl_divergence(p, q).reshape(-1)))

mu = torch.tensor([0.5], requires_grad=True)
sig = torch.tensor([1.2], requires_grad=True)
s = D.Normal(mu, sig).rsample((1000,))
s.mean().backward()
print("rsample_grad", r(mu.grad), sig.grad.shape)
print(
    "has_rsample",
    D.Normal(0, 1).has_rsample,
    D.Categorical(torch.ones(2)).has_rsample,
    D.Gamma(1.0, 1.0).has_rsample,
)
print("rng_sample", r(D.Gamma(2.0, 1.0).sample((3,))), r(D.Dirichlet(torch.ones(3)).sample()))
print(
    "sample_shapes",
    D.Normal(torch.zeros(2), 1.0).sample((4, 3)).shape,
    D.Categorical(torch.ones(2, 5)).sample((7,)).shape,
)
for i, bad in enumerate(
    [
        lambda: D.Normal(0.0, -1.0),
        lambda: D.Categorical(probs=torch.tensor([-0.1, 1.0])),
        lambda: D.Normal(0.0, 1.0).log_prob("a"),
        lambda: D.Bernoulli(0.5).log_prob(torch.tensor([0.5])),
    ]
):
    try:
        bad()
        print(f"err{i}", "none")
    except Exception as e:
        print(f"err{i}", type(e).__name__, str(e).split("\n")[0][:90])
print(
    "support_check",
    D.Beta(1.0, 1.0).support.check(torch.tensor([0.5, 1.5])).tolist(),
    constraints.simplex.check(torch.tensor([0.5, 0.5])).item(),
)
