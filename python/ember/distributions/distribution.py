"""Distribution: the base class of ember.distributions (torch.distributions' interface)."""

import ember

__all__ = ["Distribution"]


class Distribution:
    """A batch of distributions with shapes batch_shape (independent members) and event_shape."""

    has_rsample = False
    _validate_default = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = ember.Size(batch_shape)
        self._event_shape = ember.Size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args

    @staticmethod
    def set_default_validate_args(value):
        Distribution._validate_default = bool(value)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return ember.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n):
        return self.sample((n,))

    @property
    def stddev(self):
        return self.variance.sqrt()

    def perplexity(self):
        return self.entropy().exp()

    def _check(self, ok, message):
        if self._validate_args and not bool(ok):
            raise ValueError(message)

    def __repr__(self):
        params = ", ".join(f"{k}: {v.shape if v.dim() else v}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self):
        return {}
