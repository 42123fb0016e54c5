"""Top-level torch names that were missing (session 12): lobpcg, while_loop, the symbolic
number types SymFloat/SymBool and the size-constraint helpers for eager code, the legacy sparse
products (spmm, dsmm, hspmm, smm, sspaddmm), slice_inverse, legacy_contiguous_format and
thread_safe_generator."""

import math

from .. import _C
from .._process import contiguous_format
from .._type_info import finfo
from ..linalg import eigh
from . import tensor_api_s12
from .random import randn

__all__ = [
    "SymFloat",
    "SymBool",
    "lobpcg",
    "while_loop",
    "sym_constrain_range",
    "sym_constrain_range_for_size",
    "sym_fresh_size",
    "legacy_contiguous_format",
    "thread_safe_generator",
    "spmm",
    "dsmm",
    "hspmm",
    "smm",
    "sspaddmm",
    "slice_inverse",
]

legacy_contiguous_format = contiguous_format  # torch's is the same object too


class SymFloat:
    """SymFloat(node)

    The type of a symbolic float (a float that a capture with dynamic shapes keeps symbolic). A
    plain float is not an instance, as in torch. ember's captures specialise floats, so an
    instance only wraps a concrete value: float(), bool() and arithmetic read it."""

    def __init__(self, node):
        self.node = node

    def __float__(self):
        return float(self.node)

    def __bool__(self):
        return bool(float(self))

    def __repr__(self):
        return repr(float(self))

    def is_integer(self):
        return float(self).is_integer()

    def as_integer_ratio(self):
        return float(self).as_integer_ratio()

    def conjugate(self):
        return float(self)

    def hex(self):
        return float(self).hex()

    def _value(self, other):
        return float(other) if isinstance(other, (SymFloat, SymBool)) else other

    def __add__(self, other):
        return float(self) + self._value(other)

    __radd__ = __add__

    def __mul__(self, other):
        return float(self) * self._value(other)

    __rmul__ = __mul__

    def __sub__(self, other):
        return float(self) - self._value(other)

    def __rsub__(self, other):
        return self._value(other) - float(self)

    def __truediv__(self, other):
        return float(self) / self._value(other)

    def __rtruediv__(self, other):
        return self._value(other) / float(self)

    def __eq__(self, other):
        return float(self) == self._value(other)

    def __lt__(self, other):
        return float(self) < self._value(other)

    def __le__(self, other):
        return float(self) <= self._value(other)

    def __gt__(self, other):
        return float(self) > self._value(other)

    def __ge__(self, other):
        return float(self) >= self._value(other)

    def __hash__(self):
        return hash(float(self))


class SymBool:
    """SymBool(node)

    The type of a symbolic bool (a comparison of symbolic sizes). A plain bool is not an
    instance, as in torch; an instance wraps a concrete value that bool() reads."""

    def __init__(self, node):
        self.node = node

    def __bool__(self):
        return bool(self.node)

    def __repr__(self):
        return repr(bool(self))

    def __and__(self, other):
        return bool(self) and bool(other)

    def __or__(self, other):
        return bool(self) or bool(other)

    def __invert__(self):
        return not bool(self)

    def __eq__(self, other):
        return bool(self) == bool(other)

    def __hash__(self):
        return hash(bool(self))


def sym_constrain_range(size, *, min=None, max=None):
    """sym_constrain_range(size, *, min=None, max=None) -> None

    Declares that the size lies in [min, max]; on a concrete int (eager code) checks it and
    raises RuntimeError otherwise, as torch does."""
    value = int(size)
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    if not lo <= value <= hi:
        raise RuntimeError(
            f"Invalid value range for {value} between [{_bound(min, '-')}, {_bound(max, '')}]."
        )


def _bound(v, sign):
    return f"{sign}int_oo" if v is None else str(v)


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """sym_constrain_range_for_size(size, *, min=None, max=None) -> None

    sym_constrain_range for a value used as a size (min defaults to 0)."""
    if isinstance(size, int) and not isinstance(size, bool):
        sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr):
    """sym_fresh_size(expr) -> int

    A fresh unbacked size equal to expr in a capture; eager code gets expr itself."""
    return expr


def while_loop(cond_fn, body_fn, carried_inputs):
    """while_loop(cond_fn, body_fn, carried_inputs) -> tuple

    Runs `carried = body_fn(*carried)` while `cond_fn(*carried)` (a boolean scalar tensor or a
    bool) holds, and returns the final carried values. body_fn must return as many values as
    carried_inputs, with the same shapes and dtypes (torch's rule)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(
            f"carried_inputs must be a tuple or list; got {type(carried_inputs).__name__}"
        )
    carried = tuple(carried_inputs)
    while True:
        c = cond_fn(*carried)
        if isinstance(c, _C.Tensor):
            if c.numel() != 1 or c.dtype != _C.bool:
                raise RuntimeError(
                    "while_loop: cond_fn must return a boolean scalar tensor or a bool; got "
                    f"a tensor of shape {tuple(c.shape)} and dtype {c.dtype}"
                )
            c = bool(c.item())
        if not c:
            return carried
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(
                f"while_loop: body_fn returned {len(out)} values; expected {len(carried)} "
                "(one per carried input)"
            )
        for new, old in zip(out, carried):
            if isinstance(old, _C.Tensor) and (
                not isinstance(new, _C.Tensor) or new.shape != old.shape or new.dtype != old.dtype
            ):
                raise RuntimeError(
                    "while_loop: body_fn must keep each carried tensor's shape and dtype; got "
                    f"{_describe(new)} for {_describe(old)}"
                )
        carried = out


def _describe(v):
    if isinstance(v, _C.Tensor):
        return f"a tensor of shape {tuple(v.shape)} and dtype {v.dtype}"
    return type(v).__name__


def thread_safe_generator():
    """thread_safe_generator() -> Generator | None

    The generator a DataLoader thread worker should draw from; ember's workers are processes
    (or the main thread), which use the default generator: None."""
    return None


# -- legacy sparse products


def spmm(input, mat2):
    """spmm(input, mat2) -> Tensor

    input @ mat2 with input sparse or dense (torch.spmm: an alias of mm)."""
    return _dense(input) @ mat2


def dsmm(input, mat2):
    """dsmm(input, mat2) -> Tensor

    The sparse input times the dense mat2, as a dense tensor."""
    return _dense(input) @ mat2


def hspmm(mat1, mat2):
    """hspmm(mat1, mat2) -> Tensor

    The sparse mat1 times the dense mat2, as a sparse (hybrid COO) tensor."""
    return (_dense(mat1) @ mat2).to_sparse(1)


def smm(input, mat):
    """smm(input, mat) -> Tensor

    The sparse input times the dense mat, as a sparse tensor."""
    return tensor_api_s12.smm(input, mat)


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> Tensor

    beta * input + alpha * (mat1 @ mat2), input and mat1 sparse, as a sparse tensor."""
    result = tensor_api_s12.sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)
    if out is not None:
        raise RuntimeError("sspaddmm: out= is not supported for sparse results")
    return result


def _dense(t):
    return t.to_dense() if getattr(t, "is_sparse", False) else t


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """slice_inverse(input, src, dim=0, start=None, end=None, step=1) -> Tensor

    The inverse of slicing src: a view of input's storage with src's sizes, strides and
    storage offset."""
    return tensor_api_s12.slice_inverse(input, src, dim, start, end, step)


# -- lobpcg


def _b_orthonormal(S, B, eps):
    """S's columns made B-orthonormal (S^T B S = I), dropping directions of S that are
    numerically dependent (eigenvalues of the scaled Gram matrix below eps)."""
    BS = S if B is None else B @ S
    gram = S.mT @ BS
    d = gram.diagonal().clamp_min(1e-300).rsqrt()
    scaled = gram * d.unsqueeze(0) * d.unsqueeze(1)
    w, v = eigh((scaled + scaled.mT) / 2)
    keep = w > eps**0.5 * w.abs().max()
    w, v = w[keep], v[:, keep]
    return S @ (d.unsqueeze(1) * v * w.rsqrt().unsqueeze(0))


def _b_orthonormalize(S, B, eps):
    # twice: one pass leaves an error of about cond * eps in the Gram matrix
    return _b_orthonormal(_b_orthonormal(S, B, eps), B, eps)


def _lobpcg_one(A, k, B, X, n, iK, niter, tol, largest):
    m = A.shape[-1]
    eps = finfo(A.dtype).eps
    if X is None:
        X = randn(m, n, dtype=A.dtype)
    tol = eps**0.5 if tol is None else tol
    niter = 1000 if niter is None else niter
    sign = 1.0 if largest else -1.0

    def rayleigh_ritz(S, count):
        S = _b_orthonormalize(S, B, eps)
        H = S.mT @ (A @ S)
        w, v = eigh((H + H.mT) / 2)
        order = (w * sign).argsort(descending=True)[:count]
        return w[order], S @ v[:, order], S, v, order

    E, X, _, _, _ = rayleigh_ritz(X, n)
    P = None
    for _ in range(niter):
        BX = X if B is None else B @ X
        R = A @ X - BX * E.unsqueeze(0)
        rnorm = R.norm(dim=0)
        scale = (A.norm() + E.abs()) * X.norm(dim=0)
        if bool((rnorm[:k] <= tol * scale[:k]).all()):
            break
        if iK is not None:
            R = iK @ R
        S = _C.cat([X, R] + ([P] if P is not None else []), 1)
        E_new, X_new, Sb, v, order = rayleigh_ritz(S, n)
        # the implicit search direction: the new Ritz vectors' components outside X
        C = v[:, order]
        P = Sb[:, n:] @ C[n:] if Sb.shape[1] > n else None
        E, X = E_new, X_new
    return E[:k], X[:, :k]


def lobpcg(
    A,
    k=None,
    B=None,
    X=None,
    n=None,
    iK=None,
    niter=None,
    tol=None,
    largest=None,
    method=None,
    tracker=None,
    ortho_iparams=None,
    ortho_fparams=None,
    ortho_bparams=None,
):
    """lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None) -> (Tensor, Tensor)

    The k largest (or, with largest=False, smallest) eigenpairs of the symmetric positive
    definite generalized problem A x = lambda B x (B the identity when None) by LOBPCG:
    Rayleigh-Ritz on [X, residuals, previous directions] with B-orthonormal bases (dependent
    directions dropped), iK a preconditioner of the residuals. Returns (E, X): eigenvalues of
    shape (*, k) and B-orthonormal eigenvectors of shape (*, m, k); A may be batched (*, m,
    m). method and the ortho_* parameters are accepted for torch's signature: one method."""  # noqa: E501
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(
            f"lobpcg: A must be a square matrix or a batch of them; got {tuple(A.shape)}"
        )
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if n is None:
        n = k if X is None else max(k, X.shape[-1])
    if m < 3 * n:
        raise ValueError(
            f"LPBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    largest = True if largest is None else largest
    if A.dim() == 2:
        return _lobpcg_one(A, k, B, X, n, iK, niter, tol, largest)
    batch = A.shape[:-2]
    flat = A.reshape(-1, m, m)

    def part(t, i):
        return None if t is None else (t if t.dim() == 2 else t.reshape(-1, *t.shape[-2:])[i])

    pairs = [
        _lobpcg_one(flat[i], k, part(B, i), part(X, i), n, part(iK, i), niter, tol, largest)
        for i in range(flat.shape[0])
    ]
    E = _C.stack([p[0] for p in pairs]).reshape(*batch, k)
    V = _C.stack([p[1] for p in pairs]).reshape(*batch, m, k)
    return E, V
