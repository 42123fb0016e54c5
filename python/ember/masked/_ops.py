"""torch.masked's reductions and normalizations over strided tensors with a boolean mask.

Each op replaces the masked-out elements by its identity (0 for sum, 1 for prod, -inf for amax
and softmax, ...) and runs the plain op; mean, var and std divide by the number of masked-in
elements, so a fully masked-out slice gives nan there, as torch's. A mask smaller than the input
broadcasts to it. The input may be a MaskedTensor, whose own mask is then used."""

import builtins
import sys

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _ember():
    return sys.modules["ember"]


def _unwrap(input, mask):
    from .maskedtensor import MaskedTensor

    if isinstance(input, MaskedTensor):
        return input.get_data(), input.get_mask()
    return input, mask


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims; None and () mean all of them."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                f"but got {d})"
            )
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """The mask broadcast to input's shape, as bool."""
    ember = _ember()
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than of "
                "the input)"
            )
        mask = ember.broadcast_to(mask, input.shape)
    return mask.to(dtype=ember.bool)


def _identity(op, input, ord=2.0):
    """The value that leaves op's result unchanged (torch.masked's reduction identity)."""
    ember = _ember()
    dt = input.dtype
    if op in ("sum", "cumsum"):
        value = 0
    elif op in ("prod", "cumprod"):
        value = 1
    elif op in ("amax", "argmax", "logaddexp", "logsumexp", "amin", "argmin"):
        low = op in ("amax", "argmax", "logaddexp", "logsumexp")
        if dt.is_floating_point or dt.is_complex:
            value = -float("inf") if low else float("inf")
        else:
            info = ember.iinfo(dt)
            value = info.min if low else info.max
    elif op == "norm":
        value = float("inf") if ord == -float("inf") else 0
    elif op == "median":
        return ember.tensor(float("nan"), dtype=dt if dt.is_floating_point else ember.float32)
    else:
        raise NotImplementedError(f"identity of {op} on {dt} input")
    return ember.tensor(value, dtype=dt)


def _masked_input(op, input, mask, ord=2.0):
    if mask is None:
        return input
    return _ember().where(_input_mask(input, mask), input, _identity(op, input, ord))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return _ember().int64 if str(input.dtype).split(".")[-1] in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """sum(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The sum of the masked-in elements over dim (0 where all are masked out)."""
    input, mask = _unwrap(input, mask)
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.dim())
    return _ember().sum(
        _masked_input("sum", input, mask), dims, builtins.bool(keepdim), dtype=dtype
    )


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """prod(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The product of the masked-in elements over dim (1 where all are masked out)."""
    input, mask = _unwrap(input, mask)
    dtype = _sum_dtype(input, dtype)
    result = _masked_input("prod", input, mask).to(dtype=dtype)
    for d in reversed(_canonical_dim(dim, input.dim())):
        result = result.prod(dim=d, keepdim=builtins.bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    """cumsum(input, dim, *, dtype=None, mask=None) -> Tensor

    The running sum along dim, masked-out elements counting as 0."""
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _ember().cumsum(_masked_input("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """cumprod(input, dim, *, dtype=None, mask=None) -> Tensor

    The running product along dim, masked-out elements counting as 1."""
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _ember().cumprod(_masked_input("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def _extremum(op, input, dim, keepdim, dtype, mask):
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    masked = _masked_input(op, input, mask)
    dims = _canonical_dim(dim, masked.dim())
    return getattr(_ember(), op)(masked, dims, builtins.bool(keepdim)).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """amax(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The largest masked-in element over dim (-inf, or the dtype's minimum, where all are masked
    out)."""
    return _extremum("amax", input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """amin(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The smallest masked-in element over dim (inf, or the dtype's maximum, where all are masked
    out)."""
    return _extremum("amin", input, dim, keepdim, dtype, mask)


def _arg(op, input, dim, keepdim, dtype, mask):
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype  # torch's masked argmax keeps the input's dtype
    masked = _masked_input(op, input, mask)
    return getattr(_ember(), op)(masked, dim, builtins.bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The index of the largest masked-in element along dim, in input's dtype unless dtype."""
    return _arg("argmax", input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The index of the smallest masked-in element along dim, in input's dtype unless dtype."""
    return _arg("argmin", input, dim, keepdim, dtype, mask)


def _count_and_total(input, dim, keepdim, dtype, mask):
    ember = _ember()
    if mask is None:
        count = sum(ember.ones(input.shape, dtype=ember.int64), dim, keepdim=keepdim)
        return count, sum(input, dim, keepdim=keepdim, dtype=dtype), None
    inmask = _input_mask(input, mask)
    count = inmask.sum(dim=_canonical_dim(dim, input.dim()), keepdim=builtins.bool(keepdim))
    return count, sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), inmask


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """mean(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The mean of the masked-in elements over dim (nan where all are masked out)."""
    input, mask = _unwrap(input, mask)
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(
            f"mean(): Could not infer output dtype. {source} dtype must be either a floating "
            f"point or complex dtype. Got: {dtype}"
        )
    count, total, _ = _count_and_total(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """median(input, dim=-1, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The median of the masked-in elements along dim (nan where all are masked out)."""
    ember = _ember()
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=ember.float32)
    out = ember.nanmedian(_masked_input("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if ember.isnan(out).any():
        raise ValueError(
            "masked median expects no fully masked out rows if dtype is not floating point"
        )
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    log(sum(exp)) of the masked-in elements over dim (-inf where all are masked out)."""
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    dims = _canonical_dim(dim, input.dim())
    masked = _masked_input("logsumexp", input, mask)
    return _ember().logsumexp(masked, dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None) -> Tensor

    logaddexp of input and other, the masked-out elements of each counting as -inf."""
    dtype = dtype or input.dtype
    a = _masked_input("logaddexp", input, input_mask)
    b = _masked_input("logaddexp", other, other_mask)
    return _ember().logaddexp(a, b).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The vector ord-norm of the masked-in elements over dim."""
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    masked = _masked_input("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.dim())
    return _ember().linalg.vector_norm(masked, ord, dims, builtins.bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    ember = _ember()
    input, mask = _unwrap(input, mask)
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = ember.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else ember.float32
    count, sample_total, inmask = _count_and_total(input, dim, True, dtype, mask)
    x = input - sample_total / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        real = {ember.complex64: ember.float32, ember.complex128: ember.float64}.get(
            compute, compute
        )
        count = ember.clamp_min(count.to(real) - corr, 0)
    out = (total / count).to(dtype=dtype)
    return out.sqrt() if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor

    The variance of the masked-in elements over dim (nan where all are masked out)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor

    The standard deviation of the masked-in elements over dim (nan where all are masked out)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalization(fname, identity, input, dim, dtype, mask):
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    masked = _masked_input(identity, input, mask)
    return getattr(_ember().nn.functional, fname)(masked, d, dtype=dtype)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax(input, dim, *, dtype=None, mask=None) -> Tensor

    softmax along dim over the masked-in elements; masked-out ones get 0 (nan where all are)."""
    return _normalization("softmax", "amax", input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax(input, dim, *, dtype=None, mask=None) -> Tensor

    log_softmax along dim over the masked-in elements; masked-out ones get -inf."""
    return _normalization("log_softmax", "amax", input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin(input, dim, *, dtype=None, mask=None) -> Tensor

    softmin along dim over the masked-in elements; masked-out ones get 0."""
    return _normalization("softmin", "amin", input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None) -> Tensor

    input divided by the ord-norm of its masked-in elements along dim (at least eps); masked-out
    elements give 0."""
    input, mask = _unwrap(input, mask)
    dtype = dtype or input.dtype
    masked = _masked_input("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return masked / _ember().clamp_min(nrm, eps)
