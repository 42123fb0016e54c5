"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy
attributes (so a distribution built from logits computes probs only when asked)."""

from numbers import Number

import ember

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Tensors broadcast to one shape; numbers become tensors of the first tensor's dtype."""
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    like = next((v for v in values if isinstance(v, ember.Tensor)), None)
    if like is None:
        dtype = ember.get_default_dtype()
        return tuple(ember.tensor(float(v), dtype=dtype) for v in values)
    values = [as_tensor(v, like) for v in values]
    return tuple(ember.broadcast_tensors(*values))


def as_tensor(value, like):
    """value as a tensor of like's dtype (numbers given to log_prob/cdf)."""
    if isinstance(value, ember.Tensor):
        return value
    return ember.tensor(value, dtype=like.dtype)


def clamp_probs(probs):
    """Probabilities kept in [eps, 1 - eps] so their logs stay finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else ember.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    p = clamp_probs(probs)
    return (p.log() - (-p).log1p()) if is_binary else p.log()


def standard_normal(shape, like):
    return ember.randn(*shape, dtype=like.dtype)


def uniform_open(shape, like):
    """Uniform draws in (0, 1): the 0 of rand would make log(u) infinite."""
    tiny = ember.finfo(like.dtype).tiny
    return ember.rand(*shape, dtype=like.dtype).clamp(min=tiny)


def sum_rightmost(value, dim):
    """value summed over its rightmost dim dims."""
    return value.sum(tuple(range(-dim, 0))) if dim > 0 else value


class lazy_property:
    """A property computed on first access and then stored on the instance, as torch's is."""

    def __init__(self, fn):
        self.wrapped = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
