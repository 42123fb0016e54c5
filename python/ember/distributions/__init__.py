"""ember.distributions: the most used members of torch.distributions (Normal, Uniform,
Bernoulli, Categorical) and kl_divergence between members of one family."""

import ember
from .basic import Bernoulli, Categorical, Normal, Uniform
from .distribution import Distribution

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "kl_divergence"]


def kl_divergence(p, q):
    """KL(p || q) for two distributions of the same family."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        var_ratio = (p.scale / q.scale).pow(2)
        t1 = ((p.loc - q.loc) / q.scale).pow(2)
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        t = p.probs * (p.logits - q.logits)
        t = ember.where(q.probs == 0, ember.full([], float("inf"), dtype=t.dtype), t)
        t = ember.where(p.probs == 0, ember.zeros([], dtype=t.dtype), t)
        return t.sum(-1)
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        sp = ember.nn.functional.softplus
        t1 = p.probs * (sp(-q.logits) - sp(-p.logits))
        t2 = (1 - p.probs) * (sp(q.logits) - sp(p.logits))
        return t1 + t2
    if isinstance(p, Uniform) and isinstance(q, Uniform):
        result = ((q.high - q.low) / (p.high - p.low)).log()
        outside = (q.low > p.low) | (q.high < p.high)
        return ember.where(outside, ember.full([], float("inf"), dtype=result.dtype), result)
    raise NotImplementedError(
        f"No KL(p || q) is implemented for {type(p).__name__} and {type(q).__name__}"
    )
