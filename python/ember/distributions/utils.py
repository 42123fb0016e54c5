"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy
attributes (so a distribution built from logits computes probs only when asked)."""

from numbers import Number

from .._C import Tensor, broadcast_tensors, get_default_dtype, int64
from .._ops.creation import tensor, zeros
from .._ops.nn import softmax
from .._ops.random import rand, randn
from .._type_info import finfo
from ..autograd.grad_mode import enable_grad

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Tensors broadcast to one shape; numbers become tensors of the first tensor's dtype."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        dtype = get_default_dtype()
        return tuple(tensor(float(v), dtype=dtype) for v in values)
    values = [as_tensor(v, like) for v in values]
    return tuple(broadcast_tensors(*values))


def as_tensor(value, like):
    """value as a tensor of like's dtype (numbers given to log_prob/cdf)."""
    if isinstance(value, Tensor):
        return value
    return tensor(value, dtype=like.dtype)


def clamp_probs(probs):
    """Probabilities kept in [eps, 1 - eps] so their logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    p = clamp_probs(probs)
    return (p.log() - (-p).log1p()) if is_binary else p.log()


def _standard_normal(shape, dtype, device):
    """torch's private helper (programs import it): N(0, 1) draws of shape."""
    return randn(tuple(shape), dtype=dtype, device=device)


def uniform_open(shape, like):
    """Uniform draws in (0, 1): the 0 of rand would make log(u) infinite."""
    tiny = finfo(like.dtype).tiny
    return rand(tuple(shape), dtype=like.dtype).clamp(min=tiny)


def sum_rightmost(value, dim):
    """value summed over its rightmost dim dims."""
    return value.sum(tuple(range(-dim, 0))) if dim > 0 else value


_sum_rightmost = sum_rightmost  # torch's private name, which programs import


class lazy_property:
    """A property computed on first access and then stored on the instance, as torch's is."""

    def __init__(self, fn):
        self.wrapped = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_flat_index(n, diag):
    """Flat indices (row-major) of the entries (i, j) with j <= i + diag of an n x n matrix."""
    return tensor([i * n + j for i in range(n) for j in range(n) if j <= i + diag], dtype=int64)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (j <= i + diag) of mat's last two dims, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat.flatten(-2).index_select(-1, _tril_flat_index(n, diag))


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a matrix with zeros above the diag-th diagonal."""
    # n solves n^2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 len = 0.
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-6:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the "
            "lower triangular part of a square D x D matrix."
        )
    n = round(n)
    index = _tril_flat_index(n, diag).expand(tuple(vec.shape[:-1]) + (vec.shape[-1],))
    flat = zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype)
    return flat.scatter(-1, index, vec).reshape(tuple(vec.shape[:-1]) + (n, n))
