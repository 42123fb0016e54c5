"""torch.library.register_vmap for ember's custom ops: the user's rule
``func(info, in_dims, *args, **kwargs) -> (output, out_dims)`` becomes the op's batching rule in
ember.func.vmap (Note [vmap levels] in func/_vmap.py). The rule sees plain tensors with the batch
dimension of the vmap level where it is (``in_dims``: 0 for a batched tensor, None otherwise)
and says where its outputs carry it."""

import collections

from ._C import Tensor

VmapInfo = collections.namedtuple("VmapInfo", ["batch_size", "randomness"])


def _rule(user_fn):
    from .func import _vmap

    def rule(func, args, kwargs):
        batched = [a for a in (*args, *kwargs.values()) if type(a) is _vmap.BatchedTensor]
        levels = _vmap.levels_of(*batched)
        if len(levels) != 1:
            raise NotImplementedError(
                f"vmap: the rule registered for {func} with register_vmap runs under one vmap "
                "level here; this call is batched over nested vmaps"
            )

        def unwrap(a):
            return a._v if type(a) is _vmap.BatchedTensor else a

        def dim_of(a):
            return 0 if type(a) is _vmap.BatchedTensor else None

        in_dims = tuple(dim_of(a) for a in args)
        (level,) = [lv for lv in _vmap._levels() if lv.id == levels[0]]
        info = VmapInfo(batch_size=level.size, randomness=level.randomness)
        out, out_dims = user_fn(
            info, in_dims, *[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()}
        )
        return _rewrap(out, out_dims, levels, _vmap)

    return rule


def _rewrap(out, out_dims, levels, _vmap):
    if isinstance(out, Tensor):
        if out_dims is None:
            return out
        return _vmap.BatchedTensor(out.movedim(out_dims, 0), levels)
    if isinstance(out, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(out)
        return type(out)(_rewrap(o, d, levels, _vmap) for o, d in zip(out, dims))
    return out


def register(opoverload, user_fn):
    """Installs user_fn as the batching rule of `opoverload`."""
    from .func import _vmap

    _vmap._load_rules().RULES[id(opoverload)] = _rule(user_fn)
