"""Batching rules of ember.func.vmap for ember.fft (Note [vmap levels] in _vmap.py): every
transform runs once on the physical tensor over the logical dims it names, shifted past the batch
dims. Importing this module registers them into _batch_rules.RULES.
"""

from ._batch_rules import _arg, _dimop, _is_b, _no_rule, _with, register
from ._vmap import logical_dim

_ONE_D = "fft ifft rfft irfft hfft ihfft"
_TWO_D = "fft2 ifft2 rfft2 irfft2 hfft2 ihfft2"
_N_D = "fftn ifftn rfftn irfftn hfftn ihfftn"

register(_ONE_D, _dimop((2, "dim", -1)), ("fft",))
register(_TWO_D, _dimop((2, "dim", (-2, -1))), ("fft",))


def _all_dims(pos, sizes_pos):
    """The rule of a transform whose dim=None means every logical dim (or, given the sizes `s`,
    the last len(s) dims): the default is made explicit before the dims are shifted, so the
    batch dims stay out of it."""
    shifted = _dimop((pos, "dim", None))

    def rule(func, args, kwargs):
        x = args[0]
        if not _is_b(x):
            return _no_rule(func)
        if _arg(args, kwargs, pos, "dim") is None:
            s = _arg(args, kwargs, sizes_pos, "s") if sizes_pos is not None else None
            nd = logical_dim(x)
            dims = tuple(range(nd)) if s is None else tuple(range(-len(s), 0))
            args, kwargs = _with(args, kwargs, pos, "dim", dims)
        return shifted(func, args, kwargs)

    return rule


register(_N_D, _all_dims(2, 1), ("fft",))
register("fftshift ifftshift", _all_dims(1, None), ("fft",))
