"""LKJCholesky: the LKJ distribution over correlation matrices, on their Cholesky factors."""

import math

from .. import linalg
from .._C import cat
from .._ops.creation import arange, zeros
from .._ops.elementwise import mvlgamma
from .._ops.random import randn
from .._size import Size
from .._type_info import finfo
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.0): density proportional to det(L L^T)^(eta - 1) over
    lower Cholesky factors L of dim x dim correlation matrices (uniform at eta = 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # The onion method draws row i's squared off-diagonal length from a Beta whose
        # parameters grow with i; row 0 gets a dummy Beta (it has no off-diagonal part).
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([zeros(1, dtype=offset.dtype), offset])
        conc1 = offset + 0.5
        conc0 = marginal.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(conc1, conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            direction = randn(tuple(shape), dtype=y.dtype).tril(-1)
            norm = linalg.vector_norm(direction, dim=-1, keepdim=True)
            direction = direction / norm.clamp(min=finfo(y.dtype).tiny)
            w = y.sqrt() * direction
            w[..., 0, :] = 0.0  # the first row is (1, 0, ..., 0)
            diag = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = arange(2, self.dim + 1, dtype=value.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (
            0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        )
        return unnormalized - normalizer
