"""Less common families torch ships: ContinuousBernoulli, NegativeBinomial, InverseGamma,
FisherSnedecor, LogisticNormal."""

import math
from numbers import Number

from .._ops.creation import full_like, ones_like, zeros_like
from .._ops.index import where
from .._ops.random import poisson, rand
from .._size import Size
from .._type_info import finfo
from ..autograd.grad_mode import no_grad
from ..nn import functional
from . import constraints
from .basic import Normal
from .counts import _Trials
from .discrete import _BinaryParams, _one_of
from .distribution import Distribution, ExponentialFamily, expand_params
from .gamma import Gamma
from .transformed import TransformedDistribution
from .transforms import PowerTransform, StickBreakingTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = [
    "ContinuousBernoulli",
    "FisherSnedecor",
    "InverseGamma",
    "LogisticNormal",
    "NegativeBinomial",
]

_nan = float("nan")


class ContinuousBernoulli(_BinaryParams, ExponentialFamily):
    """ContinuousBernoulli(probs | logits, lims): density C(p) p^x (1-p)^(1-x) on [0, 1].

    Its normalizer C(p) = 2 atanh(1 - 2p) / (1 - 2p) is 0/0 at p = 1/2, so inside lims the
    moments and log C use their Taylor expansions about 1/2.
    """

    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (probs,) = broadcast_all(probs)
            # Checked before clamping, which would make any value pass.
            if validate_args is not None and not bool(
                self.arg_constraints["probs"].check(probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            probs = clamp_probs(probs)
        self._lims = lims
        super().__init__(probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        """Where the closed forms are used: probs outside (lims[0], lims[1]]."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, moved off the unstable band so the unused closed-form branch stays finite."""
        return where(self._stable(), self.probs, full_like(self.probs, self._lims[0]))

    def _log_odds_gap(self, p):
        return (-p).log1p() - p.log()

    def _cont_bern_log_norm(self):
        p = self._cut_probs()
        below = where(p <= 0.5, p, zeros_like(p))
        above = where(p >= 0.5, p, ones_like(p))
        log_denominator = where(p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        closed = self._log_odds_gap(p).abs().log() - log_denominator
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._stable(), closed, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + 1.0 / self._log_odds_gap(p)
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._stable(), closed, taylor)

    @property
    def variance(self):
        p = self._cut_probs()
        closed = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / self._log_odds_gap(p).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._stable(), closed, taylor)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(tuple(shape), dtype=self.probs.dtype))

    def log_prob(self, value):
        value = self._checked(value, self.probs)
        logits, value = broadcast_all(self.logits, value)
        bce = functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        value = self._checked(value, self.probs)
        p = self._cut_probs()
        closed = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._stable(), closed, value)
        inside = where(value >= 1.0, ones_like(inside), inside)
        return where(value <= 0.0, zeros_like(inside), inside)

    def icdf(self, value):
        p = self._cut_probs()
        closed = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return where(self._stable(), closed, value)

    def entropy(self):
        log_q = (-self.probs).log1p()
        log_p = self.probs.log()
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q


class NegativeBinomial(_Trials):
    """NegativeBinomial(total_count, probs | logits): failures before total_count successes,
    where probs is each trial's probability of a counted event (torch's convention)."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand(NegativeBinomial, batch_shape, _instance)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        # The negative binomial is a Poisson whose rate is Gamma(total_count, e^-logits).
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        value = self._checked(value, self._param)
        logsigmoid = functional.logsigmoid
        log_unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(
            self.logits
        )
        n = self.total_count
        log_norm = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        # With total_count + value == 0 the pmf is 1 at 0; lgamma(0) would make it nan.
        log_norm = where(n + value == 0, zeros_like(log_norm), log_norm)
        return log_unnormalized - log_norm


class InverseGamma(TransformedDistribution):
    """InverseGamma(concentration, rate): 1 / X for X ~ Gamma(concentration, rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -ones_like(base.rate)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return where(self.concentration > 1, result, full_like(result, math.inf))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        result = self.rate.pow(2) / ((c - 1).pow(2) * (c - 2))
        return where(c > 2, result, full_like(result, math.inf))

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2): the F distribution, (X1 / df1) / (X2 / df2) of chi-squares."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, Number) and isinstance(df2, Number)
        batch_shape = Size() if scalar else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, FisherSnedecor, ("df1", "df2"), batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = where(self.df2 <= 2, full_like(self.df2, _nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, full_like(mode, _nan), mode)

    @property
    def variance(self):
        df1 = self.df1
        df2 = where(self.df2 <= 4, full_like(self.df2, _nan), self.df2)
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()):
        tiny = finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        value = self._checked(value, self.df1)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        t2 = half1 * ratio.log() + (half1 - 1) * value.log()
        t3 = (half1 + half2) * (ratio * value).log1p()
        return t1 + t2 - t3


class LogisticNormal(TransformedDistribution):
    """LogisticNormal(loc, scale): stick-breaking of a diagonal Normal onto the simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
