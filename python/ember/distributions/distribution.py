"""Distribution: the base class of ember.distributions (torch.distributions' interface).

A distribution is a batch of independent members (batch_shape), each over events of
event_shape. With validate_args (the default, as torch's under __debug__) parameters are checked
against arg_constraints at construction and values against support in log_prob/cdf.
"""

import warnings

from .. import autograd
from .._C import Tensor
from .._size import Size
from ..autograd.grad_mode import enable_grad, no_grad
from . import constraints
from .utils import as_tensor, lazy_property, sum_rightmost

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """A batch of distributions with shapes batch_shape (independent members) and event_shape."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            # A lazily derived parameter (probs from logits) is valid by construction.
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue
            value = getattr(self, param)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraint!r}, but found invalid values:\n{value}"
                )

    def expand(self, batch_shape, _instance=None):
        """A view of this distribution with a larger batch_shape (parameters are expanded)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raises ValueError when value's shape does not fit, or it lies outside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs "
                f"{self._event_shape}."
            )
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual} vs "
                    f"{expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, but "
                f"found invalid values:\n{value}"
            )

    def _checked(self, value, like):
        """value validated (when validate_args) and made a tensor of like's dtype."""
        if self._validate_args:
            self._validate_sample(value)
        return as_tensor(value, like)

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for name in names:
            value = self.__dict__[name]
            shown = value if value.numel() == 1 else value.size()
            parts.append(f"{name}: {shown}")
        return f"{type(self).__name__}({', '.join(parts)})"


class ExponentialFamily(Distribution):
    """Densities exp(<eta, t(x)> - A(eta) + k(x)). A subclass that gives _natural_params (eta),
    _log_normalizer (A) and _mean_carrier_measure (E[k(x)]) gets entropy() here, and KL to its
    own type through the Bregman divergence of A (kl.py); the families below override both."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def _log_normalizer_and_grads(self):
        """(A(eta), dA/deta for each natural parameter), differentiable again."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with enable_grad():
            value = self._log_normalizer(*params)
            grads = autograd.grad(value.sum(), params, create_graph=True)
        return params, value, grads

    def entropy(self):
        # H = A(eta) - <eta, E[t(x)]> - E[k(x)], with E[t(x)] = dA/deta.
        result = -self._mean_carrier_measure
        params, value, grads = self._log_normalizer_and_grads()
        result = result + value
        for param, grad in zip(params, grads):
            result = result - sum_rightmost(param * grad, len(self._event_shape))
        return result


def expand_params(self, cls, names, batch_shape, _instance):
    """A new instance of cls whose named parameters are self's expanded to batch_shape."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new
