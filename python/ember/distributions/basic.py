"""Normal, Uniform, Bernoulli and Categorical, with torch.distributions' formulas and checks."""

import math

import ember
from .distribution import Distribution

__all__ = ["Normal", "Uniform", "Bernoulli", "Categorical"]


def _as_float(x, like=None):
    if isinstance(x, ember.Tensor):
        return x
    dtype = like.dtype if isinstance(like, ember.Tensor) else ember.get_default_dtype()
    return ember.tensor(float(x), dtype=dtype)


def _broadcast(*values):
    like = next((v for v in values if isinstance(v, ember.Tensor)), None)
    return ember.broadcast_tensors(*[_as_float(v, like) for v in values])


def _logits_from_probs(probs, binary):
    eps = ember.finfo(probs.dtype).eps
    p = probs.clamp(eps, 1 - eps)
    return (p.log() - (1 - p).log()) if binary else p.log()


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)
        self._check(
            (self.scale > 0).all(),
            "Expected parameter scale of Normal to satisfy the "
            "constraint GreaterThan(lower_bound=0.0)",
        )

    def _params(self):
        return {"loc": self.loc, "scale": self.scale}

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(*shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value):
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast(low, high)
        super().__init__(self.low.shape, (), validate_args)
        self._check(
            (self.low < self.high).all(), "Expected parameter low of Uniform to be less than high"
        )

    def _params(self):
        return {"low": self.low, "high": self.high}

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(*shape, dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        self._check(
            ((self.low <= value) & (value < self.high)).all(),
            "Expected value argument to be within the support of the distribution Uniform",
        )
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def entropy(self):
        return (self.high - self.low).log()


class Bernoulli(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = _as_float(probs)
            self.logits = _logits_from_probs(self.probs, True)
        else:
            self.logits = _as_float(logits)
            self.probs = self.logits.sigmoid()
        super().__init__(self.probs.shape, (), validate_args)
        if probs is not None:
            self._check(
                ((self.probs >= 0) & (self.probs <= 1)).all(),
                "Expected parameter probs "
                "of Bernoulli to satisfy the constraint Interval(lower_bound=0.0, "
                "upper_bound=1.0)",
            )

    def _params(self):
        return {"probs": self.probs}

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        value = _as_float(value, self.logits)
        self._check(
            ((value == 0) | (value == 1)).all(),
            "Expected value argument to be within the "
            "support (Boolean()) of the distribution Bernoulli",
        )
        logits, value = ember.broadcast_tensors(self.logits, value)
        return -ember.nn.functional.binary_cross_entropy_with_logits(
            logits, value, reduction="none"
        )

    def entropy(self):
        return ember.nn.functional.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction="none"
        )


class Categorical(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = _logits_from_probs(self.probs, False)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1], (), validate_args)

    def _params(self):
        return {"probs": self.probs}

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        n = math.prod(sample_shape) if len(sample_shape) else 1
        flat = self.probs.detach().reshape(-1, self._num_events)
        drawn = ember.multinomial(flat, n, True).t()  # (n, batch)
        return drawn.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        self._check(
            ((value >= 0) & (value < self._num_events) & (value == value.floor())).all(),
            "Expected value argument to be within the support (IntegerInterval(lower_bound=0, "
            f"upper_bound={self._num_events - 1})) of the distribution Categorical",
        )
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
