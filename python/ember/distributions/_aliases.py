"""torch.distributions keeps one module per family (torch.distributions.normal.Normal, ...);
programs import from those paths, so each becomes a small module naming ember's classes."""

import sys
import types

# torch's module name -> the names it provides, as attribute paths from this package.
_MODULES = {
    "bernoulli": ("Bernoulli",),
    "beta": ("Beta",),
    "binomial": ("Binomial",),
    "categorical": ("Categorical",),
    "cauchy": ("Cauchy",),
    "chi2": ("Chi2",),
    "continuous_bernoulli": ("ContinuousBernoulli",),
    "dirichlet": ("Dirichlet",),
    "exp_family": ("ExponentialFamily",),
    "exponential": ("Exponential",),
    "fishersnedecor": ("FisherSnedecor",),
    "generalized_pareto": ("GeneralizedPareto",),
    "geometric": ("Geometric",),
    "gumbel": ("Gumbel",),
    "half_cauchy": ("HalfCauchy",),
    "half_normal": ("HalfNormal",),
    "independent": ("Independent",),
    "inverse_gamma": ("InverseGamma",),
    "kumaraswamy": ("Kumaraswamy",),
    "laplace": ("Laplace",),
    "lkj_cholesky": ("LKJCholesky",),
    "log_normal": ("LogNormal",),
    "logistic_normal": ("LogisticNormal",),
    "lowrank_multivariate_normal": ("LowRankMultivariateNormal",),
    "mixture_same_family": ("MixtureSameFamily",),
    "multinomial": ("Multinomial",),
    "negative_binomial": ("NegativeBinomial",),
    "normal": ("Normal",),
    "one_hot_categorical": ("OneHotCategorical", "OneHotCategoricalStraightThrough"),
    "pareto": ("Pareto",),
    "poisson": ("Poisson",),
    "relaxed_bernoulli": ("RelaxedBernoulli", "relaxed.LogitRelaxedBernoulli"),
    "relaxed_categorical": ("RelaxedOneHotCategorical", "relaxed.ExpRelaxedCategorical"),
    "studentT": ("StudentT",),
    "transformed_distribution": ("TransformedDistribution",),
    "uniform": ("Uniform",),
    "von_mises": ("VonMises",),
    "weibull": ("Weibull",),
    "wishart": ("Wishart",),
}


def install(package):
    """Registers the alias modules under package (so both import forms find them)."""
    for name, members in _MODULES.items():
        module = types.ModuleType(f"{package.__name__}.{name}")
        for path in members:
            value = package
            for part in path.split("."):
                value = getattr(value, part)
            setattr(module, path.rsplit(".", 1)[-1], value)
        sys.modules[module.__name__] = module
        setattr(package, name, module)
