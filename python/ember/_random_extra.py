"""torch's samplers that the core has no kernel for, over ember.distributions.samplers:
poisson, binomial, _standard_gamma (differentiable), _standard_gamma_grad, _sample_dirichlet."""

from .distributions import samplers as _samplers

__all__ = ["_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad", "binomial", "poisson"]


def poisson(input, generator=None):
    """Poisson draws with rates input, of input's shape and dtype (generator is not supported)."""
    _no_generator(generator, "poisson")
    return _samplers.poisson(input)


def binomial(count, prob, generator=None):
    """Binomial draws with count trials of success probability prob (broadcast)."""
    _no_generator(generator, "binomial")
    return _samplers.binomial(count, prob)


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) draws; differentiable in input by implicit reparameterization."""
    _no_generator(generator, "_standard_gamma")
    return _samplers.gamma_rsample(input)


def _standard_gamma_grad(input, output):
    """d output / d input of standard gamma draws output at fixed quantile."""
    return _samplers.standard_gamma_grad(input, output)


def _sample_dirichlet(input, generator=None):
    """Dirichlet(input) draws over input's last dim (normalized gamma draws)."""
    _no_generator(generator, "_sample_dirichlet")
    draws = _samplers.gamma_rsample(input)
    return draws / draws.sum(-1, keepdim=True)


def _no_generator(generator, name):
    if generator is not None:
        raise NotImplementedError(f"{name}: a generator argument is not supported yet")
