"""Transforms that act on a tensor's structure: ReshapeTransform, CatTransform and
StackTransform (pieces along a dim, each with its own transform), and
CumulativeDistributionTransform (a distribution's cdf)."""

from .._C import cat, stack
from .._ops.creation import zeros
from .._size import Size
from . import constraints
from .transform_base import Transform
from .utils import sum_rightmost

__all__ = ["CatTransform", "CumulativeDistributionTransform", "ReshapeTransform", "StackTransform"]


class ReshapeTransform(Transform):
    """Reshapes the rightmost in_shape dims to out_shape (log|det J| = 0)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = x.shape[: x.dim() - len(self.in_shape)]
        return x.reshape(batch_shape + self.out_shape)

    def _inverse(self, y):
        batch_shape = y.shape[: y.dim() - len(self.out_shape)]
        return y.reshape(batch_shape + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch_shape = x.shape[: x.dim() - len(self.in_shape)]
        return zeros(batch_shape, dtype=x.dtype)

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class CatTransform(Transform):
    """tseq[i] applied to the i-th piece (of lengths[i] along dim) of its input."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths must give one length per transform")
        super().__init__(cache_size=cache_size)
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, x):
        start = 0
        for length in self.lengths:
            yield x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y):
        return cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        event_dim = self.event_dim
        terms = []
        for t, xp, yp in zip(self.transforms, self._pieces(x), self._pieces(y)):
            terms.append(sum_rightmost(t.log_abs_det_jacobian(xp, yp), event_dim - t.event_dim))
        # The cat dim survives in the result only when it lies left of the event dims.
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + event_dim
        if dim < 0:
            return cat(terms, dim)
        return sum(terms[1:], terms[0])


class StackTransform(Transform):
    """tseq[i] applied to the i-th slice along dim of its input."""

    def __init__(self, tseq, dim=0, cache_size=0):
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        super().__init__(cache_size=cache_size)
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, x):
        return [x.select(self.dim, i) for i in range(x.size(self.dim))]

    def _call(self, x):
        return stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [
            t.log_abs_det_jacobian(xs, ys)
            for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y))
        ]
        return stack(terms, self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto the unit interval; log|dy/dx| is its log density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
