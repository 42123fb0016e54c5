"""Kumaraswamy (a Beta look-alike with a closed-form cdf) and GeneralizedPareto (the
peaks-over-threshold family)."""

import math
from numbers import Number

from .._ops.creation import full_like, ones_like, zeros_like
from .._ops.elementwise import isclose
from .._ops.index import where
from .._ops.random import rand
from .._size import Size
from . import constraints
from .basic import Uniform
from .distribution import Distribution, expand_params
from .transformed import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["GeneralizedPareto", "Kumaraswamy"]


def _kumaraswamy_moment(a, b, n):
    """E[x^n] = b B(1 + n / a, b)."""
    arg = 1 + n / a
    return b * (arg.lgamma() + b.lgamma() - (arg + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0): (1 - U^(1/b))^(1/a), density
    a b x^(a-1) (1 - x^a)^(b-1) on (0, 1)."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base = Uniform(zeros_like(c0), ones_like(c0), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=c0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1 / a), defined for a, b >= 1. torch 2.13 evaluates
        # log(1 - b) here, which is nan for every b > 1.
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        undefined = (a < 1) | (b < 1)
        return where(undefined, full_like(log_mode, math.nan), log_mode.exp())

    @property
    def variance(self):
        second = _kumaraswamy_moment(self.concentration1, self.concentration0, 2)
        return second - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        harmonic = (self.concentration0 + 1).digamma() + euler_constant
        return t0 + t1 * harmonic - self.concentration1.log() - self.concentration0.log()


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): survival (1 + c z)^(-1/c) for
    z = (x - loc) / scale (exp(-z) at c = 0); bounded above by loc - scale / c when c < 0."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        batch_shape = Size() if scalar else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("loc", "scale", "concentration")
        return expand_params(self, GeneralizedPareto, names, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = where(
            self.concentration < 0,
            self.loc - self.scale / self.concentration,
            full_like(self.loc, math.inf),
        )
        return constraints.interval(self.loc, upper)

    def _safe(self):
        """(c == 0, c with its zeros replaced by 1 so the c != 0 branch stays finite)."""
        zero = isclose(self.concentration, zeros_like(self.concentration))
        return zero, where(zero, ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(tuple(shape), dtype=self.loc.dtype))

    def log_prob(self, value):
        value = self._checked(value, self.loc)
        z = (value - self.loc) / self.scale
        zero, c = self._safe()
        y = 1 / c + ones_like(z)
        nonzero = where(y == 0, y, y * (c * z).log1p())
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value):
        value = self._checked(value, self.loc)
        z = (value - self.loc) / self.scale
        zero, c = self._safe()
        return where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, c = self._safe()
        log_u = (-value).log1p()
        nonzero = self.loc + self.scale / c * (-c * log_u).expm1()
        return where(zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        c = where(valid, self.concentration, full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - c)
        return where(valid, result, full_like(result, math.nan))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = where(valid, self.concentration, full_like(self.concentration, 0.25))
        result = self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c))
        return where(valid, result, full_like(result, math.nan))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)
