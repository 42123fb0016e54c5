"""MultivariateNormal and LowRankMultivariateNormal, computed through a lower Cholesky factor L
of the covariance (Sigma = L L^T): log_prob needs |L^-1 (x - loc)|^2 and sum(log diag L)."""

import math

from .. import linalg
from .._C import broadcast_shapes, broadcast_tensors, matmul
from .._ops import creation as _creation
from .._ops.random import randn
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal", "MultivariateNormal"]


def _batch_mv(mat, vec):
    return matmul(mat, vec.unsqueeze(-1)).squeeze(-1)


def _mahalanobis(scale_tril, diff):
    """|L^-1 diff|^2 over the last dim, L and diff broadcast over their batch dims."""
    batch = broadcast_shapes(scale_tril.shape[:-2], diff.shape[:-1])
    n = diff.shape[-1]
    L = scale_tril.expand(batch + (n, n))
    d = diff.expand(batch + (n,)).unsqueeze(-1)
    solved = linalg.solve_triangular(L, d, upper=False).squeeze(-1)
    return solved.pow(2).sum(-1)


def _half_log_det(scale_tril):
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _tril_inverse(scale_tril):
    eye = _creation.eye(scale_tril.shape[-1], dtype=scale_tril.dtype).expand(scale_tril.shape)
    return linalg.solve_triangular(scale_tril, eye, upper=False)


class _GaussianBase(Distribution):
    """What both normals compute from _unbroadcasted_scale_tril and loc."""

    support = constraints.real_vector
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (k * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


class MultivariateNormal(_GaussianBase):
    """MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        matrix = given[0]
        name = (
            "scale_tril"
            if scale_tril is not None
            else "covariance_matrix"
            if covariance_matrix is not None
            else "precision_matrix"
        )
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(
                f"{what} must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self._event_shape
        cov_shape = loc_shape + self._event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        shape = self._batch_shape + self._event_shape + self._event_shape
        return self._unbroadcasted_scale_tril.expand(shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        shape = self._batch_shape + self._event_shape + self._event_shape
        return matmul(L, L.mT).expand(shape)

    @lazy_property
    def precision_matrix(self):
        inv = _tril_inverse(self._unbroadcasted_scale_tril)
        shape = self._batch_shape + self._event_shape + self._event_shape
        return matmul(inv.mT, inv).expand(shape)

    @property
    def variance(self):
        shape = self._batch_shape + self._event_shape
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)


class LowRankMultivariateNormal(_GaussianBase):
    """LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D).
    Densities go through the Cholesky factor of the full covariance (O(n^3), fine for the
    event sizes programs use); samples through W and D directly."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        cov = matmul(cov_factor, cov_factor.mT) + cov_diag.diag_embed()
        self._unbroadcasted_scale_tril = linalg.cholesky(cov)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self._event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def variance(self):
        var = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return var.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        shape = self._batch_shape + self._event_shape + self._event_shape
        return self._unbroadcasted_scale_tril.expand(shape)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        cov = matmul(W, W.mT) + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        inv = _tril_inverse(self._unbroadcasted_scale_tril)
        shape = self._batch_shape + self._event_shape + self._event_shape
        return matmul(inv.mT, inv).expand(shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        rank = self.cov_factor.shape[-1]
        eps_w = randn(tuple((shape[:-1] + (rank,))), dtype=self.loc.dtype)
        eps_d = randn(tuple(shape), dtype=self.loc.dtype)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )
