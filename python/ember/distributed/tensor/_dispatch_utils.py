"""What the DTensor dispatcher (_dispatch.py) and its sharding rules (_sharding_rules.py,
_sharding_rules_nn.py) share: the original functions, operand specs, redistribution and
wrapping, and the fallback that computes an operator without a rule on whole (Replicate)
tensors.
"""

import threading

from ... import _C, overrides
from ._api import (
    DTensor,
    Replicate,
    _lib,
    _redistribute_autograd,
    _redistribute_local,
    _sync_grad,
)

_tls = threading.local()  # per thread: .rng_synced (_sync_rng)


def _orig(name, module=None):
    return overrides.original(getattr(module or _lib(), name))


# --- helpers ----------------------------------------------------------------------------------


def _is_t(x):
    return isinstance(x, _C.Tensor)


def _spec(x, mesh):
    """(local, shape, placements) of a DTensor, or of a plain tensor taken as Replicate."""
    if isinstance(x, DTensor):
        return x._local_tensor, x._shape, x._placements
    return x, tuple(x.shape), (Replicate(),) * mesh.ndim


def _wrap(out, mesh, placements, shape):
    return DTensor._make(out, mesh, placements, shape)


def _first_mesh(args, kwargs):
    for a in (*args, *kwargs.values()):
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, DTensor):
                return x._mesh
    raise AssertionError("no DTensor")


def _move(x, mesh, target, sync_dims=()):
    local, shape, pl = _spec(x, mesh)
    local = _redistribute_autograd(local, shape, mesh, pl, tuple(target))
    return _sync_grad(local, mesh, sync_dims)


def _full(x, mesh):
    if isinstance(x, DTensor):
        return _move(x, mesh, (Replicate(),) * mesh.ndim)
    return x


def _is_inplace(name):
    return (
        (name.endswith("_") and not name.endswith("__"))
        or name == "__setitem__"
        or (name.startswith("__i") and name[3:-2] in _INPLACE_DUNDERS)
    )


_INPLACE_DUNDERS = set("add sub mul truediv div floordiv mod pow and or xor matmul".split())


def _arg(args, kwargs, i, name, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[i] if len(args) > i else default


# --- the fallback: compute on whole tensors ------------------------------------------------

_RANDOM = {
    "dropout",
    "uniform_",
    "normal_",
    "bernoulli",
    "bernoulli_",
    "rand_like",
    "randn_like",
    "random_",
    "exponential_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "trunc_normal_",
    "orthogonal_",
}


def _sync_rng(mesh):
    """Every rank draws the same numbers for DTensors: on the first random operator, rank 0's
    generator state is sent to all (torch's DTensor does the same)."""
    if getattr(_tls, "rng_synced", False):
        return
    _tls.rng_synced = True
    lib = _lib()
    from .. import distributed_c10d as c10d

    state = lib.get_rng_state()
    c10d.broadcast(state, src=0)
    lib.set_rng_state(state)


def _fallback(func, name, args, kwargs):
    mesh = _first_mesh(args, kwargs)
    if name in _RANDOM:
        _sync_rng(mesh)

    def conv(a):
        if isinstance(a, (list, tuple)) and any(isinstance(x, DTensor) for x in a):
            return type(a)(_full(x, mesh) for x in a)
        return _full(a, mesh) if isinstance(a, DTensor) else a

    if _is_inplace(name) and args and isinstance(args[0], DTensor):
        self = args[0]
        full = _full(self, mesh)
        full = full.clone() if full is self._local_tensor else full
        rest = [conv(a) for a in args[1:]]
        func(full, *rest, **{k: conv(v) for k, v in kwargs.items()})
        src = tuple(Replicate() for _ in self._placements)
        piece = _redistribute_local(full.detach(), self._shape, mesh, src, self._placements)
        with _lib().no_grad():
            self._local_tensor.copy_(piece)
        return self
    out = func(*[conv(a) for a in args], **{k: conv(v) for k, v in kwargs.items()})
    return _wrap_all(out, mesh, (Replicate(),) * mesh.ndim)


def _wrap_all(out, mesh, placements, shape=None):
    """Every tensor of out as a DTensor of placements, each of the global shape given (by
    default its own shape: right only where nothing is sharded)."""
    if _is_t(out):
        return _wrap(out, mesh, placements, tuple(out.shape) if shape is None else shape)
    if isinstance(out, tuple) and any(_is_t(o) for o in out):
        items = [_wrap_all(o, mesh, placements, shape) for o in out]
        try:
            return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
        except TypeError:
            return tuple(items)
    return out
