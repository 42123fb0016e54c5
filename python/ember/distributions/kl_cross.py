"""KL divergences between different families that torch also registers: infinite where p has
mass outside q's support, and closed forms E_p[log p] - E_p[log q] built from p's moments."""

import math

from .. import linalg
from .._C import broadcast_shapes, erf
from .._ops.creation import full_like
from .._ops.elementwise import mvlgamma, xlogy
from .._ops.index import where
from .basic import Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Poisson
from .derived import Gumbel, Pareto
from .discrete import Bernoulli
from .extras import ContinuousBernoulli
from .gamma import Beta, Gamma
from .kl import register_kl
from .utils import euler_constant
from .wishart import Wishart, _mvdigamma

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _infinite(param):
    return full_like(param, math.inf)


_BOUNDED = (Beta, ContinuousBernoulli, Uniform)
# p -> (q families whose support misses part of p's, the parameter that gives the shape)
_INFINITE = {
    Normal: (_BOUNDED + (Exponential, Gamma, Pareto), "loc"),
    Laplace: (_BOUNDED + (Exponential, Gamma, Pareto), "loc"),
    Gumbel: (_BOUNDED + (Exponential, Gamma, Pareto), "loc"),
    Exponential: (_BOUNDED + (Pareto,), "rate"),
    Gamma: (_BOUNDED + (Pareto,), "concentration"),
    Pareto: (_BOUNDED, "scale"),
    Poisson: ((Bernoulli, Binomial), "rate"),
}


def _register_infinite(type_p, type_q, param):
    register_kl(type_p, type_q)(lambda p, q: _infinite(getattr(p, param)))


for _p, (_qs, _param) in _INFINITE.items():
    for _q in _qs:
        _register_infinite(_p, _q, _param)


def _normal_cross(p, q, mean, second_moment):
    """-H(p) - E_p[log N(x; q.loc, q.scale)] from p's E[x] and E[x^2]."""
    expected_sq = second_moment - 2 * q.loc * mean + q.loc.pow(2)
    return -p.entropy() + _HALF_LOG_2PI + q.scale.log() + expected_sq / (2 * q.scale.pow(2))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return _normal_cross(p, q, p.rate.reciprocal(), 2 * p.rate.pow(-2))


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    mean = p.concentration / p.rate
    return _normal_cross(p, q, mean, mean.pow(2) + p.concentration / p.rate.pow(2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return _normal_cross(p, q, p.loc, p.loc.pow(2) + 2 * p.scale.pow(2))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    mean = (p.low + p.high) / 2
    return _normal_cross(p, q, mean, mean.pow(2) + (p.high - p.low).pow(2) / 12)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    mean = p.loc + p.scale * euler_constant
    return _normal_cross(p, q, mean, mean.pow(2) + (math.pi * p.scale).pow(2) / 6)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return _normal_cross(p, q, p.mean, p.mean.pow(2) + p.variance)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, s): s sqrt(2/pi) exp(-d^2 / 2 s^2) + d erf(d / (s sqrt 2)).
    d = p.loc - q.loc
    s = p.scale
    abs_moment = s * math.sqrt(2 / math.pi) * (-d.pow(2) / (2 * s.pow(2))).exp() + d * erf(
        d / (s * math.sqrt(2))
    )
    return -p.entropy() + (2 * q.scale).log() + abs_moment / q.scale


def _gumbel_cross(p, q, mean, exp_moment):
    """-H(p) - E_p[log Gumbel(x; q)] from E[x] and E[exp(-(x - q.loc) / q.scale)]."""
    return -p.entropy() + q.scale.log() + (mean - q.loc) / q.scale + exp_moment


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    exp_moment = (-(p.loc - q.loc) / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2))).exp()
    return _gumbel_cross(p, q, p.loc, exp_moment)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    lo, hi = (p.low - q.loc) / q.scale, (p.high - q.loc) / q.scale
    exp_moment = q.scale / (p.high - p.low) * ((-lo).exp() - (-hi).exp())
    return _gumbel_cross(p, q, p.mean, exp_moment)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    # Under Exponential(l): E[log x] = -gamma - log l, E[x] = 1 / l.
    mean_log = -euler_constant - p.rate.log()
    return (
        -p.entropy()
        - q.concentration * q.rate.log()
        + q.concentration.lgamma()
        - (q.concentration - 1) * mean_log
        + q.rate / p.rate
    )


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


def _uniform_mean_log(p):
    """E[log x] for x ~ Uniform(low, high) with low >= 0."""
    width = p.high - p.low
    return (xlogy(p.high, p.high) - xlogy(p.low, p.low)) / width - 1


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return where(p.low < 0, _infinite(result), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    c, r = q.concentration, q.rate
    result = -p.entropy() - c * r.log() + c.lgamma() - (c - 1) * _uniform_mean_log(p) + r * p.mean
    return where(p.low < 0, _infinite(result), result)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # E_p[log q] = probs * log(rate) - rate: only x in {0, 1} carries mass.
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p, q):
    """(nu_q / 2)(log|V_q| - log|V_p|) + (nu_p / 2)(tr(V_q^-1 V_p) - d)
    + log Gamma_d(nu_q / 2) - log Gamma_d(nu_p / 2) + ((nu_p - nu_q) / 2) psi_d(nu_p / 2).
    torch reaches this pair through its generic exponential-family route, whose batched result
    is not per member; for a single pair the two agree."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Wisharts with different event shapes")
    d = p.event_shape[-1]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_det_p = lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    half_log_det_q = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = broadcast_shapes(lp.shape[:-2], lq.shape[:-2])
    solved = linalg.solve_triangular(
        lq.expand(batch + (d, d)), lp.expand(batch + (d, d)), upper=False
    )
    trace = solved.pow(2).sum((-2, -1))  # tr(V_q^-1 V_p) = |L_q^-1 L_p|_F^2
    nu_p, nu_q = p.df, q.df
    return (
        nu_q * (half_log_det_q - half_log_det_p)
        + nu_p / 2 * (trace - d)
        + mvlgamma(nu_q / 2, d)
        - mvlgamma(nu_p / 2, d)
        + (nu_p - nu_q) / 2 * _mvdigamma(nu_p / 2, d)
    )
