"""kl_divergence(p, q) through a registry of closed forms keyed by the pair of classes;
register_kl adds one. A pair is looked up by the most specific registered base classes."""

import math

from .. import linalg
from .._C import broadcast_shapes
from .._ops.creation import full_like, zeros_like
from .._ops.index import where
from ..nn import functional
from .basic import Cauchy, Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Poisson
from .derived import Gumbel, Pareto
from .discrete import Bernoulli, Categorical, Geometric, OneHotCategorical
from .distribution import Distribution, ExponentialFamily
from .gamma import Beta, Dirichlet, Gamma
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal, _mahalanobis
from .transformed import Independent, TransformedDistribution
from .utils import euler_constant, sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """Decorator: registers fn(p, q) as KL(p || q) for p of type_p and q of type_q."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


def _dispatch_kl(type_p, type_q):
    """The registered function of the pair whose classes are nearest in the two MROs."""
    best, best_rank = None, None
    for (super_p, super_q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, super_p) and issubclass(type_q, super_q):
            rank = (
                type_p.__mro__.index(super_p) + type_q.__mro__.index(super_q),
                type_p.__mro__.index(super_p),
            )
            if best_rank is None or rank < best_rank:
                best, best_rank = fn, rank
    return best


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the broadcast batch shapes."""
    key = type(p), type(q)
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fn = _KL_MEMOIZE[key]
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}"
        )
    return fn(p, q)


def _inf_like(t):
    return full_like(t, math.inf)


def _where_inf(cond, t):
    return where(cond, _inf_like(t), t)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer: A(eta_q) - A(eta_p) - <eta_q - eta_p,
    dA/deta(eta_p)>, for two members of one exponential family."""
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot be computed "
            "using Bregman divergences"
        )
    params, value, grads = p._log_normalizer_and_grads()
    result = q._log_normalizer(*q._natural_params) - value
    for p_param, q_param, grad in zip(params, q._natural_params, grads):
        result = result - sum_rightmost((q_param - p_param) * grad, len(q.event_shape))
    return result


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, zeros_like(t1), _where_inf(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, zeros_like(t2), _where_inf(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, zeros_like(t), _where_inf(q.probs == 0, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _where_inf(p.total_count > q.total_count, kl)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _where_inf((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - rate_ratio.log() - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return -scale_ratio.log() + loc_abs_diff / q.scale + t3 - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    num = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (num / (4 * p.scale * q.scale)).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + ct1 * euler_constant + t3 - (1 + euler_constant)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # p puts mass below q's support when its scale is smaller.
    return _where_inf(p.scale < q.scale, result)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


def _kl_gaussian(p, q):
    """Both through their Cholesky factors: log-det ratio, trace term, Mahalanobis term."""
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot "
            "be computed"
        )
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    n = p.event_shape[0]
    batch = broadcast_shapes(lp.shape[:-2], lq.shape[:-2])
    lq_b, lp_b = lq.expand(batch + (n, n)), lp.expand(batch + (n, n))
    term2 = linalg.solve_triangular(lq_b, lp_b, upper=False).pow(2).sum((-2, -1))
    term3 = _mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


for _p in (MultivariateNormal, LowRankMultivariateNormal):
    for _q in (MultivariateNormal, LowRankMultivariateNormal):
        register_kl(_p, _q)(_kl_gaussian)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)
