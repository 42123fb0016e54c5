"""torch.distributions beyond Normal: Beta/Gamma/Dirichlet reparameterized gradients,
MultivariateNormal with scale_tril, LowRankMultivariateNormal, Independent, TransformedDistribution
with composed transforms, LogNormal, Poisson/Binomial/Geometric/NegativeBinomial log_prob,
OneHotCategorical, RelaxedOneHotCategorical, Laplace/Cauchy/StudentT/VonMises, constraints and
biject_to, kl_divergence between families, entropy, cdf/icdf, enumerate_support, batch and event
shapes, validate_args errors, and a variational fit of a Beta posterior by the ELBO."""

import torch
import torch.distributions as D
from torch.distributions import constraints, transforms


def r(t, n=5):
    if isinstance(t, torch.Tensor):
        return [round(v, n) for v in t.flatten().tolist()]
    return round(float(t), n)


def main():
    x = torch.tensor([0.2, 0.5, 0.9])
    beta = D.Beta(torch.tensor([2.0, 0.5, 1.5]), torch.tensor([3.0, 0.5, 1.0]))
    print("beta", r(beta.log_prob(x)), r(beta.mean), r(beta.variance), r(beta.entropy()))
    gam = D.Gamma(torch.tensor([2.0, 5.0]), torch.tensor([1.0, 0.5]))
    print("gamma", r(gam.log_prob(torch.tensor([1.5, 3.0]))), r(gam.cdf(torch.tensor([1.5, 3.0]))))
    dir_ = D.Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
    print(
        "dirichlet",
        r(dir_.log_prob(torch.tensor([0.2, 0.3, 0.5]))),
        r(dir_.mean),
        r(dir_.entropy()),
    )
    L = torch.tensor([[1.0, 0.0], [0.5, 2.0]])
    mvn = D.MultivariateNormal(torch.zeros(2), scale_tril=L)
    print(
        "mvn",
        r(mvn.log_prob(torch.tensor([[0.5, -1.0], [1.0, 1.0]]))),
        r(mvn.covariance_matrix),
        r(mvn.entropy()),
    )
    mvn2 = D.MultivariateNormal(
        torch.ones(2), covariance_matrix=torch.tensor([[2.0, 0.3], [0.3, 1.0]])
    )
    print("kl_mvn", r(D.kl_divergence(mvn, mvn2)))
    lr = D.LowRankMultivariateNormal(
        torch.zeros(3), torch.tensor([[1.0], [0.5], [0.0]]), torch.ones(3)
    )
    print(
        "lowrank", r(lr.log_prob(torch.tensor([0.1, 0.2, 0.3]))), r(lr.covariance_matrix.diagonal())
    )
    ind = D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
    print(
        "independent",
        tuple(ind.batch_shape),
        tuple(ind.event_shape),
        r(ind.log_prob(torch.zeros(2, 3))),
    )
    base = D.Normal(torch.zeros(2), torch.ones(2))
    flow = D.TransformedDistribution(
        base, [transforms.AffineTransform(1.0, 2.0), transforms.ExpTransform()]
    )
    y = torch.tensor([1.0, 5.0])
    print("transformed", r(flow.log_prob(y)), r(D.LogNormal(1.0, 2.0).log_prob(y)))
    sig = D.TransformedDistribution(base, [transforms.SigmoidTransform()])
    print("logitnormal", r(sig.log_prob(torch.tensor([0.3, 0.7]))))
    st = transforms.StickBreakingTransform()
    z = torch.tensor([0.1, -0.3])
    simplex = st(z)
    print("stickbreaking", r(simplex), r(st.inv(simplex)), r(st.log_abs_det_jacobian(z, simplex)))
    ct = transforms.ComposeTransform(
        [transforms.AffineTransform(0.0, 3.0), transforms.TanhTransform()]
    )
    print("compose", r(ct(torch.tensor([0.1]))), r(ct.inv(ct(torch.tensor([0.1])))))
    print(
        "biject",
        r(constraints.positive.check(torch.tensor([1.0, -1.0])).float()),
        r(D.biject_to(constraints.positive)(torch.tensor([0.0]))),
    )
    print(
        "biject_interval", r(D.biject_to(constraints.interval(-1.0, 3.0))(torch.tensor([0.0, 2.0])))
    )
    print(
        "support",
        str(D.Beta(1.0, 1.0).support),
        str(D.Poisson(1.0).support),
        str(D.Normal(0.0, 1.0).support),
    )
    k = torch.tensor([0.0, 1.0, 3.0])
    print("poisson", r(D.Poisson(torch.tensor(2.0)).log_prob(k)))
    print(
        "binomial",
        r(D.Binomial(5, torch.tensor(0.3)).log_prob(k)),
        r(D.Binomial(5, probs=torch.tensor(0.3)).mean),
    )
    print("geometric", r(D.Geometric(torch.tensor(0.25)).log_prob(k)))
    print("negbinomial", r(D.NegativeBinomial(3.0, torch.tensor(0.4)).log_prob(k)))
    print(
        "bernoulli_logits",
        r(D.Bernoulli(logits=torch.tensor([0.0, 2.0])).log_prob(torch.tensor([1.0, 0.0]))),
    )
    cat = D.Categorical(logits=torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    print("categorical", r(cat.probs), r(cat.entropy()), tuple(cat.enumerate_support().shape))
    oh = D.OneHotCategorical(probs=torch.tensor([0.2, 0.3, 0.5]))
    print("onehot", r(oh.log_prob(torch.tensor([0.0, 1.0, 0.0]))), r(oh.enumerate_support()))
    rel = D.RelaxedOneHotCategorical(torch.tensor(0.5), probs=torch.tensor([0.2, 0.3, 0.5]))
    print("relaxed", r(rel.log_prob(torch.tensor([0.1, 0.2, 0.7]))))
    print(
        "laplace",
        r(D.Laplace(0.0, 2.0).log_prob(y)),
        r(D.Laplace(0.0, 2.0).icdf(torch.tensor([0.1, 0.9]))),
    )
    print("cauchy", r(D.Cauchy(0.0, 1.0).log_prob(y)), r(D.Cauchy(0.0, 1.0).cdf(y)))
    print("studentt", r(D.StudentT(3.0).log_prob(y)), r(D.StudentT(3.0, 1.0, 2.0).variance))
    print("vonmises", r(D.VonMises(0.5, 2.0).log_prob(torch.tensor([0.0, 1.0]))))
    print("gumbel", r(D.Gumbel(0.0, 1.0).log_prob(y)), r(D.Gumbel(1.0, 2.0).mean))
    print("halfnormal", r(D.HalfNormal(2.0).log_prob(y)), r(D.HalfCauchy(1.0).log_prob(y)))
    print(
        "chi2_exp",
        r(D.Chi2(3.0).log_prob(y)),
        r(D.Exponential(0.5).log_prob(y)),
        r(D.Exponential(0.5).cdf(y)),
    )
    print(
        "uniform",
        r(D.Uniform(-1.0, 3.0).log_prob(torch.tensor([0.0]))),
        r(D.Uniform(-1.0, 3.0).entropy()),
    )
    print("weibull_pareto", r(D.Weibull(2.0, 1.5).log_prob(y)), r(D.Pareto(1.0, 2.0).log_prob(y)))
    print(
        "kumaraswamy",
        r(D.Kumaraswamy(2.0, 3.0).log_prob(torch.tensor([0.3]))),
        r(D.Kumaraswamy(2.0, 3.0).mean),
    )
    print(
        "lkj",
        r(
            D.LKJCholesky(3, 2.0).log_prob(
                torch.linalg.cholesky(
                    torch.tensor([[1.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.0]])
                )
            )
        ),
    )
    print(
        "wishart",
        r(
            D.Wishart(df=torch.tensor(4.0), covariance_matrix=torch.eye(2)).log_prob(
                torch.tensor([[2.0, 0.5], [0.5, 1.0]])
            )
        ),
    )
    pairs = [
        (D.Beta(2.0, 3.0), D.Beta(1.0, 1.0)),
        (D.Gamma(2.0, 1.0), D.Gamma(3.0, 2.0)),
        (D.Dirichlet(torch.tensor([1.0, 2.0])), D.Dirichlet(torch.tensor([2.0, 2.0]))),
        (D.Poisson(2.0), D.Poisson(3.0)),
        (D.Bernoulli(0.3), D.Bernoulli(0.6)),
        (D.Laplace(0.0, 1.0), D.Laplace(1.0, 2.0)),
        (D.Exponential(1.0), D.Gamma(2.0, 1.0)),
        (D.Uniform(0.0, 1.0), D.Normal(0.0, 1.0)),
        (ind, D.Independent(D.Normal(torch.ones(2, 3), torch.ones(2, 3)), 1)),
    ]
    print("kls", [r(D.kl_divergence(p, q)) for p, q in pairs])
    try:
        D.Normal(0.0, -1.0, validate_args=True)
    except ValueError as e:
        print("validate", type(e).__name__, "scale" in str(e))
    try:
        D.Categorical(probs=torch.tensor([0.5, 0.5]), validate_args=True).log_prob(torch.tensor(3))
    except ValueError as e:
        print("validate_sample", type(e).__name__)
    try:
        D.kl_divergence(D.Beta(1.0, 1.0), D.Poisson(1.0))
    except NotImplementedError:
        print("kl_missing NotImplementedError")

    # reparameterized gradients and a variational fit: q = Beta(a, b) to a Beta(8, 4) posterior
    torch.manual_seed(0)
    a_raw = torch.tensor(0.0, requires_grad=True)
    b_raw = torch.tensor(0.0, requires_grad=True)
    opt = torch.optim.Adam([a_raw, b_raw], lr=0.05)
    target = D.Beta(8.0, 4.0)
    for _ in range(150):
        q = D.Beta(
            torch.nn.functional.softplus(a_raw) + 0.1, torch.nn.functional.softplus(b_raw) + 0.1
        )
        s = q.rsample((64,))
        elbo = (target.log_prob(s) - q.log_prob(s)).mean()
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
    mean = (q.mean).item()
    print(f"rng_vi_mean {mean:.4f}")
    print(f"vi_close {abs(mean - 8 / 12) < 0.08}")
    g = torch.tensor([2.0, 3.0], requires_grad=True)
    smp = D.Gamma(g, 1.0).rsample((100,))
    smp.mean().backward()
    print(
        f"gamma_rsample_grad_finite {bool(torch.isfinite(g.grad).all())} "
        f"has_rsample {D.Gamma(g, 1.0).has_rsample} {D.Poisson(1.0).has_rsample}"
    )
    print(
        "sample_shapes",
        tuple(beta.sample((4,)).shape),
        tuple(dir_.sample((2, 5)).shape),
        tuple(mvn.rsample((3,)).shape),
        tuple(cat.sample().shape),
    )


if __name__ == "__main__":
    main()
