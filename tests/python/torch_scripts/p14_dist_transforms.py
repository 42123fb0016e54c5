"""Probabilistic modelling with torch.distributions: transforms and bijectors, mixtures,
Independent, constraints, validation errors, expand, enumerate_support, cdf/icdf, reprs."""

import torch
import torch.distributions as D
from torch.distributions import constraints
from torch.distributions import transforms as T


def r(t, n=5):
    if not torch.is_tensor(t):
        t = torch.as_tensor(t)
    return [round(v, n) for v in t.flatten().tolist()]


x = torch.linspace(0.05, 0.95, 5)
for name, d in [
    ("cbern", D.ContinuousBernoulli(probs=torch.tensor([0.2, 0.5, 0.8]))),
    ("kuma", D.Kumaraswamy(torch.tensor(2.0), torch.tensor(3.0))),
    ("beta", D.Beta(torch.tensor(2.0), torch.tensor(5.0))),
    ("lognormal", D.LogNormal(0.0, 0.5)),
    ("weibull", D.Weibull(torch.tensor(1.5), torch.tensor(2.0))),
    ("pareto", D.Pareto(torch.tensor(0.01), torch.tensor(3.0))),
    ("halfcauchy", D.HalfCauchy(torch.tensor(1.0))),
    ("halfnormal", D.HalfNormal(torch.tensor(0.7))),
    ("studentt", D.StudentT(torch.tensor(4.0))),
    ("gumbel", D.Gumbel(torch.tensor(0.0), torch.tensor(1.0))),
    ("fisher", D.FisherSnedecor(torch.tensor(3.0), torch.tensor(5.0))),
    ("chi2", D.Chi2(torch.tensor(3.0))),
    ("vonmises", D.VonMises(torch.tensor(0.5), torch.tensor(2.0))),
    ("laplace", D.Laplace(0.2, 0.5)),
    ("invgamma", D.InverseGamma(torch.tensor(3.0), torch.tensor(2.0))),
    ("gennorm", D.GeneralizedPareto(torch.tensor(0.0), torch.tensor(1.0), torch.tensor(0.2))),
]:
    lp = d.log_prob(x if d.event_shape == () and d.batch_shape == () else x[:3])
    line = [r(lp)]
    for attr in ("mean", "variance", "entropy", "cdf"):
        try:
            v = getattr(d, attr)
            v = v(x if d.batch_shape == () else x[:3]) if attr == "cdf" else v
            v = v() if callable(v) else v
            line.append(r(v))
        except NotImplementedError:
            line.append("NI")
    print("dist", name, line)

# transformed distributions
base = D.Normal(torch.zeros(2), torch.ones(2))
flow = D.TransformedDistribution(
    base,
    [T.AffineTransform(torch.tensor([1.0, -1.0]), torch.tensor([2.0, 0.5])), T.SigmoidTransform()],
)
pts = torch.tensor([[0.3, 0.6], [0.9, 0.1]])
print("flow_logprob", r(flow.log_prob(pts)), flow.event_shape, flow.batch_shape)
comp = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)])
y = comp(torch.tensor([0.0, 1.0]))
print("compose", r(y), r(comp.inv(y)), r(comp.log_abs_det_jacobian(torch.tensor([0.0, 1.0]), y)))
print("compose_domain", comp.domain, comp.codomain)
sb = T.StickBreakingTransform()
simplex = sb(torch.tensor([0.2, -0.4, 1.0]))
print("stickbreak", r(simplex), round(simplex.sum().item(), 5), r(sb.inv(simplex)))
tanh = T.TanhTransform(cache_size=1)
print("tanh", r(tanh(torch.tensor([0.5, -2.0]))), tanh.sign, tanh.bijective)
pw = T.PowerTransform(torch.tensor(2.0))
print("power", r(pw(torch.tensor([1.5, 3.0]))), r(pw.inv(torch.tensor([4.0]))))
sm = T.SoftmaxTransform()
print("softmax_t", r(sm(torch.tensor([1.0, 2.0, 3.0]))))
cat_t = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=0, lengths=[2, 2])
print("cat_transform", r(cat_t(torch.tensor([0.0, 1.0, 2.0, 3.0]))))
stack_t = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0)
print("stack_transform", r(stack_t(torch.tensor([[0.0, 1.0], [0.0, 1.0]]))))
ind_t = T.IndependentTransform(T.ExpTransform(), 1)
print("indep_ladj", r(ind_t.log_abs_det_jacobian(torch.ones(2, 3), torch.ones(2, 3).exp())))
ltc = T.LowerCholeskyTransform()
print("lower_cholesky", r(ltc(torch.tensor([[1.0, 2.0], [-0.5, 0.0]]))))
cc = T.CorrCholeskyTransform()
L = cc(torch.tensor([0.3, -0.2, 0.5]))
print("corr_cholesky", r(L), r((L @ L.T).diagonal()))

for c in (constraints.positive, constraints.simplex, constraints.unit_interval, constraints.real):
    bij = D.biject_to(c)
    print("biject", c, type(bij).__name__, r(bij(torch.tensor([0.5, -0.5]))))
print("constraint_check", r(constraints.interval(0, 2).check(torch.tensor([-1.0, 1.0, 3.0]))))
print("pos_def", constraints.positive_definite.check(torch.eye(2) * 2).item())

# mixtures and Independent
mix = D.MixtureSameFamily(
    D.Categorical(torch.tensor([0.3, 0.7])),
    D.Normal(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])),
)
grid = torch.linspace(-3, 4, 5)
print(
    "mixture",
    r(mix.log_prob(grid)),
    r(mix.cdf(grid)),
    round(mix.mean.item(), 5),
    round(mix.variance.item(), 5),
)
mix2 = D.MixtureSameFamily(
    D.Categorical(logits=torch.zeros(3)),
    D.Independent(D.Normal(torch.arange(6.0).reshape(3, 2), torch.ones(3, 2)), 1),
)
print("mixture_mv", r(mix2.log_prob(torch.tensor([[1.0, 2.0], [3.0, 3.0]]))), mix2.event_shape)
ind = D.Independent(D.Bernoulli(probs=torch.full((4, 3), 0.3)), 1)
print(
    "independent",
    ind.batch_shape,
    ind.event_shape,
    r(ind.log_prob(torch.ones(4, 3))[:1]),
    r(ind.entropy()[:1]),
)
exp = D.Normal(torch.tensor(0.0), torch.tensor(1.0)).expand([2, 3])
print("expand", exp.batch_shape, r(exp.log_prob(torch.zeros(2, 3))[0]))
print(
    "icdf",
    r(D.Normal(1.0, 2.0).icdf(torch.tensor([0.1, 0.5, 0.9]))),
    r(D.Cauchy(0.0, 1.0).icdf(torch.tensor([0.75]))),
)
print(
    "support",
    r(D.Binomial(3, torch.tensor([0.2, 0.6])).enumerate_support()),
    D.Bernoulli(0.3).has_enumerate_support,
)
oh = D.OneHotCategorical(probs=torch.tensor([0.2, 0.3, 0.5]))
print("onehot_support", r(oh.enumerate_support()), r(oh.log_prob(oh.enumerate_support())))
print("cat_support", r(D.Categorical(torch.ones(2, 3)).enumerate_support(expand=False)))

# validation errors
for label, build in [
    ("scale_neg", lambda: D.Normal(0.0, -1.0)),
    ("probs_big", lambda: D.Bernoulli(probs=torch.tensor(1.5))),
    ("both", lambda: D.Categorical(probs=torch.ones(2), logits=torch.ones(2))),
    ("sample_bad", lambda: D.Poisson(torch.tensor(2.0)).log_prob(torch.tensor(-1.0))),
]:
    try:
        build()
        print("validate", label, "no error")
    except ValueError as e:
        print("validate", label, type(e).__name__, str(e).split("\n")[0][:90])
D.Distribution.set_default_validate_args(False)
print("validate_off", r(D.Poisson(torch.tensor(2.0)).log_prob(torch.tensor(1.5))))
D.Distribution.set_default_validate_args(True)

print("repr", D.Normal(torch.zeros(2), torch.ones(2)))
print("repr", D.Categorical(probs=torch.tensor([0.25, 0.75])))
print("repr", mix.__class__.__name__, D.Independent(D.Normal(torch.zeros(3), 1.0), 1))
print("repr", flow)
torch.manual_seed(0)
s = mix.sample((4,))
print("rng_mix", r(s))
print("sample_shapes", mix.sample((4,)).shape, mix2.sample((5,)).shape, flow.rsample((2,)).shape)
