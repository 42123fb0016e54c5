"""MixtureSameFamily (a Categorical over components of one family) and VonMises."""

import math

from .. import _C, special
from .._C import float64
from .._ops.creation import ones, zeros
from .._ops.index import where
from .._ops.nn import log_softmax
from .._ops.random import rand
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .discrete import Categorical
from .distribution import Distribution, expand_params
from .utils import broadcast_all, lazy_property

__all__ = ["MixtureSameFamily", "VonMises"]


class MixtureSameFamily(Distribution):
    """A mixture whose weights are mixture_distribution (a Categorical) and whose components
    are the rightmost batch dim of component_distribution."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            # torch's text, stray spaces included, for code that matches on it.
            raise ValueError(
                " The Mixture distribution needs to be an  instance of "
                "torch.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution needs to be an instance of "
                "torch.distributions.Distribution"
            )
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        comp = self._component_distribution.expand(batch_shape + (self._num_component,))
        mix = self._mixture_distribution.expand(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution, new._mixture_distribution = comp, mix
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        """x with a singleton component dim, just left of the event dims."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _weights(self):
        """Mixture probabilities shaped to broadcast against the components' values."""
        probs = self._mixture_distribution.probs
        return probs.reshape(probs.shape + (1,) * self._event_ndims)

    @property
    def mean(self):
        dim = -1 - self._event_ndims
        return (self._weights() * self._component_distribution.mean).sum(dim)

    @property
    def variance(self):
        dim = -1 - self._event_ndims
        probs = self._weights()
        comp = self._component_distribution
        within = (probs * comp.variance).sum(dim)
        between = (probs * (comp.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return within + between

    def cdf(self, x):
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = log_softmax(self._mixture_distribution.logits, dim=-1)
        return (log_prob_x + log_mix).logsumexp(dim=-1)

    def sample(self, sample_shape=Size()):
        with no_grad():
            sample_shape = Size(sample_shape)
            which = self._mixture_distribution.sample(sample_shape)
            comp = self._component_distribution.sample(sample_shape)
            gather_dim = len(sample_shape) + len(self._batch_shape)
            index = which.reshape(which.shape + (1,) * (self._event_ndims + 1))
            index = index.expand(which.shape + (1,) + tuple(self._event_shape))
            return comp.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return (
            f"MixtureSameFamily(\n  {self._mixture_distribution},\n"
            f"  {self._component_distribution})"
        )


class VonMises(Distribution):
    """VonMises(loc, concentration): the circular normal on [-pi, pi)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, VonMises, ("loc", "concentration"), batch_shape, _instance)

    @staticmethod
    def _log_i0(k):
        return special.i0e(k).log() + k

    def log_prob(self, value):
        value = self._checked(value, self.loc)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - self._log_i0(self.concentration)

    @lazy_property
    def _proposal_r(self):
        """The wrapped-Cauchy envelope of Best and Fisher (1979), in float64."""
        k = self.concentration.double()
        tau = 1 + (1 + 4 * k**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        r = (1 + rho**2) / (2 * rho)
        # rho ~ k / 2 for small k, where the closed form cancels catastrophically.
        return where(k < 1e-5, 1 / k + k / 4, r)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            k = self.concentration.double().expand(shape)
            loc = self.loc.double().expand(shape)
            r = self._proposal_r.expand(shape)
            x = zeros(tuple(shape), dtype=float64)
            pending = ones(tuple(shape), dtype=_C.bool)
            while bool(pending.any()):
                u1, u2, u3 = (rand(tuple(shape), dtype=float64) for _ in range(3))
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                take = pending & accept
                x = where(take, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
                pending = pending & ~take
            # Wrap to [-pi, pi).
            x = (x + math.pi + loc).remainder(2 * math.pi) - math.pi
            return x.to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - (special.i1e(k) / special.i0e(k))
