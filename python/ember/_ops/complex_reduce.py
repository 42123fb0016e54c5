"""Complex paths of reductions the core's kernels lack for complex tensors (see complex.py):
all/any, logsumexp/logcumsumexp, var_mean/std_mean, each composed over ops that take complex
tensors (the parts, the sum, the complex exp/log paths)."""

from .. import _C
from .._C import view_as_real
from ._util import wrap_dim


def _nonzero(z):
    r = view_as_real(z)
    return _C.ne(r.select(-1, 0), 0) | _C.ne(r.select(-1, 1), 0)


def _all(z, *args, **kwargs):
    return _nonzero(z).all(*args, **kwargs)


def _any(z, *args, **kwargs):
    return _nonzero(z).any(*args, **kwargs)


def _shift(z, dim, keepdim):
    """The largest real part over dim (0 where it is infinite), as torch's complex logsumexp
    shifts by: kept and reduced forms."""
    re = view_as_real(z).select(-1, 0)
    kept = re.amax(dim, keepdim=True)
    kept = kept.masked_fill(kept.abs() == float("inf"), 0.0)
    return kept, (kept if keepdim else kept.squeeze(dim))


def _logsumexp(z, dim, keepdim=False):
    if z.numel() == 0:  # log(0): -inf
        return z.exp().sum(dim, keepdim).log()
    kept, reduced = _shift(z, dim, keepdim)
    return (z - kept).exp().sum(dim, keepdim).log() + reduced


def _logcumsumexp(z, dim):
    wrap_dim(dim, z.dim())
    if z.numel() == 0:
        return z.clone()
    kept, _ = _shift(z, dim, True)
    return (z - kept).exp().cumsum(dim).log() + kept


def _var_mean(z, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(variance, mean) of complex z: the parts' variances summed (real, as torch's) and the
    complex mean."""
    from .complex import _make
    from .reduce import var_mean

    r = view_as_real(z)
    v_re, m_re = var_mean(r.select(-1, 0), dim, unbiased, keepdim, correction=correction)
    v_im, m_im = var_mean(r.select(-1, 1), dim, unbiased, keepdim, correction=correction)
    return v_re + v_im, _make(m_re, m_im)


def _std_mean(z, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v, m = _var_mean(z, dim, unbiased, keepdim, correction=correction)
    return v.sqrt(), m


# (name, path, which positional args may be complex), as complex._PATHS
PATHS = {
    "all": (_all, 1),
    "any": (_any, 1),
    "logsumexp": (_logsumexp, 1),
    "logcumsumexp": (_logcumsumexp, 1),
    "var_mean": (_var_mean, 1),
    "std_mean": (_std_mean, 1),
}
