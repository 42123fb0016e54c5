"""ember.distributions: torch.distributions' families, transforms, constraints, biject_to /
transform_to and kl_divergence, built from ember's tensor ops so autograd flows through
log_prob, entropy and rsample."""

import sys

from . import (  # noqa: F401 (torch exposes both submodules)
    _aliases,
    constraints,
    kl_cross,  # noqa: F401 (registers the cross-family pairs)
    transforms,
)
from .basic import Cauchy, Exponential, Laplace, Normal, Uniform
from .bounded import GeneralizedPareto, Kumaraswamy
from .constraint_registry import biject_to, transform_to
from .counts import Binomial, Multinomial, Poisson
from .derived import Gumbel, HalfCauchy, HalfNormal, LogNormal, Pareto, Weibull
from .discrete import (
    Bernoulli,
    Categorical,
    Geometric,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from .distribution import Distribution, ExponentialFamily
from .extras import (
    ContinuousBernoulli,
    FisherSnedecor,
    InverseGamma,
    LogisticNormal,
    NegativeBinomial,
)
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .lkj import LKJCholesky
from .mixture import MixtureSameFamily, VonMises
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from .transformed import Independent, TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .wishart import Wishart

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]

_aliases.install(sys.modules[__name__])
