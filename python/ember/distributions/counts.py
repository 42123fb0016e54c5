"""Count families: Poisson, Binomial, Multinomial (torch's samplers, in the core)."""

from numbers import Number

from .._ops.creation import arange, ones_like, tensor, zeros, zeros_like
from .._ops.elementwise import xlogy
from .._ops.index import where
from .._ops.random import binomial, poisson
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .discrete import Categorical, _BinaryLogits, _one_of
from .distribution import Distribution, ExponentialFamily, expand_params
from .utils import broadcast_all

__all__ = ["Binomial", "Multinomial", "Poisson"]


class Poisson(ExponentialFamily):
    """Poisson(rate): counts with mean and variance rate."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        value = self._checked(value, self.rate)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - (value + 1).lgamma()


class _Trials(_BinaryLogits, Distribution):
    """total_count trials, each with probs in [0, 1] or logits in R (Binomial, NegativeBinomial);
    `_param` is the one given."""

    def __init__(self, total_count, probs, logits, validate_args):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self._param = self.logits
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def _expand(self, cls, batch_shape, _instance):
        new = expand_params(self, cls, ("total_count", "probs", "logits"), batch_shape, _instance)
        new._param = new.probs if "probs" in new.__dict__ else new.logits
        return new

    @property
    def param_shape(self):
        return self._param.size()


class Binomial(_Trials):
    """Binomial(total_count=1, probs | logits): successes in total_count trials."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand(Binomial, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        value = self._checked(value, self._param)
        n, logits = self.total_count, self.logits
        log_choose = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        # k log p + (n - k) log(1 - p) = k * logits - n * log(1 + e^logits), written so a
        # large |logits| neither overflows nor loses the small term.
        log_norm = n * logits.clamp(min=0) + n * (-logits.abs()).exp().log1p()
        return log_choose + value * logits - log_norm

    def _homogeneous_count(self, what):
        total = int(self.total_count.max())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = arange(1 + total, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Multinomial(Distribution):
    """Multinomial(total_count=1, probs | logits): category counts of total_count draws."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        # Draw total_count category indices per member, then count them per category.
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)
        counts = zeros(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        counts.scatter_add_(-1, draws, ones_like(draws, dtype=counts.dtype))
        return counts

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # A category with probability 0 that was drawn 0 times contributes 0, not 0 * -inf.
        unused = (value == 0) & (logits == -float("inf"))
        logits = where(unused, zeros_like(logits), logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = tensor(float(self.total_count))
        counts = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(counts).exp()
        weights = (counts + 1).lgamma()
        return (
            n * self._categorical.entropy()
            - (n + 1).lgamma()
            + (weights * binomial_probs).sum([0, -1])
        )
