"""Built-in parametrizations: orthogonal, weight_norm and spectral_norm (as
torch.nn.utils.parametrizations)."""

from ... import linalg
from ..._C import Tensor, cat, mv
from ..._ops.creation import eye, zeros_like
from ..._ops.products import vdot
from ..._ops.random import randn
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter
from . import parametrize
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """w = g * v / ||v|| as a parametrization: originals at parametrizations.<name>.original0/1."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(
        state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        # Checkpoints saved with the old utils.weight_norm use name_g / name_v.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """weight / sigma(weight), sigma from power iteration on the buffers _u and _v (updated in
    training mode only); a 1-d weight is just normalized."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # a good first estimate, so that sigma is accurate from the first forward
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # In place, so that the estimate carries over from one forward to the next.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.<name> by its largest singular value, as a parametrization: the original
    is at parametrizations.<name>.original, the power-iteration state in its _u and _v."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Parameter):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _orthonormalize(a):
    """The Q of A = QR with R's diagonal made positive (the orthogonal matrix nearest to the
    columns' span, unique for full-rank A)."""
    q, r = linalg.qr(a)
    d = r.diagonal(dim1=-2, dim2=-1)
    sign = d.sgn() if d.is_complex() else d.sign() + (d == 0).to(d.dtype)
    return q * sign.unsqueeze(-2)


class _Orthogonal(Module):
    """Maps an unconstrained matrix to one with orthonormal columns (rows, for a wide matrix):
    through the exponential or the Cayley transform of a skew-symmetric matrix built from its
    lower triangle, or through Householder reflections; with a trivialization the result
    multiplies the orthogonal buffer `base`, which right_inverse sets."""

    def __init__(self, weight, orthogonal_map, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        wide = n < k
        if wide:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # X's diagonal holds the signs (+-1) of the columns, not differentiated.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().unsqueeze(-2)
        else:
            L = X.tril()
            if n != k:
                L = cat([L, L.new_zeros(*L.shape[:-2], n, n - k)], dim=-1)
            A = L - L.mH
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return Q.mT if wide else Q

    def right_inverse(self, Q):
        with no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                    f"Got a tensor of shape {tuple(Q.shape)}."
                )
            given = Q
            n, k = Q.shape[-2], Q.shape[-1]
            if n < k:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                # Householder vectors whose product is Q's orthonormalization: reflect
                # column by column (geqrf), the diagonal keeping the signs.
                A = Q.clone()
                signs = []
                for i in range(k):
                    x = A[..., i:, i]
                    alpha = x[..., 0]
                    norm = linalg.vector_norm(x, dim=-1)
                    beta = -alpha.sign() * norm + (alpha == 0).to(A.dtype) * -norm
                    v = x / (alpha - beta).unsqueeze(-1)
                    v[..., 0] = 1
                    tau = (beta - alpha) / beta
                    A[..., i:, i:] = A[..., i:, i:] - tau.unsqueeze(-1).unsqueeze(-1) * (
                        v.unsqueeze(-1) @ (v.unsqueeze(-2) @ A[..., i:, i:])
                    )
                    A[..., i + 1 :, i] = v[..., 1:]
                    signs.append(beta.sign())
                for i, s in enumerate(signs):
                    A[..., i, i] = s
                return A.mT if given.shape[-2] < given.shape[-1] else A
            if n == k:
                eps = 10.0 * n * (1.2e-7 if Q.dtype.itemsize <= 4 else 2.3e-16)
                Id = eye(k, dtype=Q.dtype)
                ortho = bool(((Q.mH @ Q) - Id).abs().max() <= eps)
                Q = Q.clone() if ortho else _orthonormalize(Q)
            else:
                fill = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
                Q = _orthonormalize(cat([Q, fill], dim=-1))
            self.base = Q
            # -I: every map sends it to the identity (the Householder one reads its diagonal
            # as the column signs), so the weight starts equal to base.
            neg_id = zeros_like(given)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True) -> Module

    Constrains module.<name> (a matrix or batch of matrices) to have orthonormal columns, or
    rows when it is wide, through the map "matrix_exp", "cayley" or "householder" (default:
    matrix_exp for square or complex matrices, householder otherwise). With use_trivialization
    the map's result multiplies an orthogonal buffer `base` set when the weight is assigned."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    parametrize.register_parametrization(
        module,
        name,
        _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True,
    )
    return module
