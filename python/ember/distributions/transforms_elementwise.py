"""Elementwise and simplex transforms: exp, power, sigmoid, softplus, tanh, abs, affine,
softmax, stick-breaking and the Cholesky-factor maps."""

import math

from .. import _type_info, linalg
from .._C import Tensor, broadcast_shapes
from .._ops.creation import arange, eye, full_like, tensor
from .._size import Size
from ..nn import functional
from . import constraints
from .transform_base import Transform
from .utils import clamp_probs, sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CorrCholeskyTransform",
    "ExpTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StickBreakingTransform",
    "TanhTransform",
]


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _as_tensors(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size)

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _same(a, b):
    """Equal parameters, numbers or tensors (then every element)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return bool((a == b).all()) if isinstance(a, Tensor) else bool((b == a).all())
    return a == b


def _as_tensors(*values):
    return tuple(v if isinstance(v, Tensor) else tensor(float(v)) for v in values)


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside (0, 1) so its logit stays finite."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return clamp_probs(x.sigmoid())

    def _inverse(self, y):
        finfo = _type_info.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = functional.softplus
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return functional.softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -functional.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); log|dy/dx| = 2 (log 2 - x - softplus(-2x)), stable for large |x|."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - functional.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: inv returns the nonnegative preimage)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over event_dim rightmost dims for the log|det J|."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, (int, float)):
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = sum_rightmost(result, self._event_dim)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim (not injective: inv returns log y)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True).values).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex by breaking off sigmoid fractions of the remaining stick; the
    offset log(K - i) makes x = 0 map to the simplex's centre."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset(n, like):
        return (n - arange(n, dtype=like.dtype)).log()

    def _call(self, x):
        z = (x - self._offset(x.shape[-1], x)).sigmoid()
        remaining = (1 - z).cumprod(-1)
        pad = functional.pad
        return pad(z, [0, 1], value=1) * pad(remaining, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        rest = (1 - y_crop.cumsum(-1)).clamp(min=_type_info.finfo(y.dtype).tiny)
        return y_crop.log() - rest.log() + self._offset(y_crop.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x.shape[-1], x)
        return (-x + functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Square matrices -> lower-triangular ones with a positive diagonal (exp of the diagonal)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices -> positive definite ones: L L^T of the LowerCholeskyTransform image."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) -> Cholesky factors of D x D correlation matrices (unit-norm rows).

    Row i takes r = tanh(x) for its i entries left of the diagonal; entry j keeps the fraction
    r_ij of the squared length still unused, y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2), and the
    diagonal takes the rest (Stan's canonical partial correlations).
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = _type_info.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # sqrt(1 - sum_{k<j} y_ik^2) = prod_{k<j} sqrt(1 - r_ik^2).
        remaining = (1 - r.pow(2)).sqrt().cumprod(-1)
        shifted = functional.pad(remaining[..., :-1], [1, 0], value=1)
        return (r + eye(r.shape[-1], dtype=r.dtype)) * shifted

    def _inverse(self, y):
        unused = 1 - (y * y).cumsum(-1)
        unused = functional.pad(unused[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(unused, diag=-1).sqrt()
        return ((t).log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y):
        # dy_ij / dr_ij = sqrt(1 - sum_{k<j} y_ik^2), so the strictly-below-subdiagonal cumsums
        # carry the stick-breaking part; tanh adds log(1 - tanh(x)^2).
        unused = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        tanh_part = -2 * (x + functional.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return 0.5 * unused.log().sum(-1) + tanh_part

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))
