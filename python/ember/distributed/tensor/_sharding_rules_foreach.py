"""Sharding rules of the `_foreach_*` functions (one op over lists of tensors: gradient clipping,
optimizers, EMA updates; _dispatch.py routes to them), as torch's foreach strategies: each
position of the lists is computed as the per-tensor op would compute it.

The common call (gradient clipping's norms and scaling, an optimizer's updates) has lists whose
DTensors at each position share one layout with no Partial, and numbers or one-element tensors
beside them: the plain foreach function then runs once on the lists of local pieces and each
result takes its position's layout (a norm over a sharded mesh dim: linalg.vector_norm's
partial placement, reduced when needed). Every other call, and a norm whose gradient is
recorded (its backward needs _NormGrad), goes position by position through the per-tensor op's
rule.
"""

from ._api import DTensor, Partial, Shard, _lib
from ._dispatch_utils import _fallback, _orig, _wrap
from ._sharding_rules_norm import _placement_of

_PREFIX = "_foreach_"


def _scalar_like(x):
    """A number, or a one-element tensor (its local piece holds the value on every rank)."""
    if isinstance(x, DTensor):
        return x.numel() == 1 and not any(isinstance(p, Partial) for p in x._placements)
    return not isinstance(x, (list, tuple)) and (not hasattr(x, "numel") or x.numel() == 1)


def _locals(args, n):
    """The arguments with the DTensors of each list replaced by their pieces, or None when a
    position's DTensors differ in layout, hold a Partial, or an operand is no list of n nor a
    scalar."""
    first = args[0]
    out = [[t._local_tensor for t in first]]
    for a in args[1:]:
        if isinstance(a, (list, tuple)):
            if len(a) != n:
                return None
            items = []
            for t, x in zip(first, a):
                if isinstance(x, DTensor):
                    if (x._mesh, x._placements, x._shape) != (t._mesh, t._placements, t._shape):
                        return None
                    x = x._local_tensor
                elif hasattr(x, "numel"):
                    return None
                items.append(x)
            out.append(items)
        elif _scalar_like(a):
            out.append(a._local_tensor if isinstance(a, DTensor) else a)
        else:
            return None
    return out


def _foreach(func, name, args, kwargs):
    self = args[0] if args else None
    if not isinstance(self, (list, tuple)) or not self:
        return func(*args, **kwargs)
    op = name[len(_PREFIX) :]
    if op == "powsum" or any(
        hasattr(a, "numel") and not isinstance(a, (list, tuple)) and not _scalar_like(a)
        for a in (*args[1:], *kwargs.values())
    ):  # no per-tensor op, or one tensor of scalars for the whole list
        if name.endswith("_"):
            raise NotImplementedError(f"{name}: DTensors with a tensor of scalars")
        return _fallback(func, name, args, kwargs)
    pieces = None
    if op != "max" and all(
        isinstance(t, DTensor) and not any(isinstance(p, Partial) for p in t._placements)
        for t in self
    ):
        pieces = _locals(list(args), len(self))
    if op == "norm" and pieces is not None:
        if set(kwargs) - {"ord", "dtype"} or (
            _lib().is_grad_enabled() and any(t._local_tensor.requires_grad for t in self)
        ):
            pieces = None
    if pieces is None:
        return _each(op, args, kwargs)
    out = func(*pieces, **kwargs)
    if name.endswith("_"):
        return self
    if op == "norm":
        kind = _placement_of(kwargs.get("ord", args[1] if len(args) > 1 else 2))
        return tuple(
            _wrap(o, t._mesh, tuple(kind if isinstance(p, Shard) else p for p in t._placements), ())
            for o, t in zip(out, self)
        )
    return tuple(_wrap(o, t._mesh, t._placements, t._shape) for o, t in zip(out, self))


def _each(op, args, kwargs):
    """The call position by position, through the per-tensor op's rule (a list of n operands
    gives each position its own; anything else is passed to every position)."""
    from ._dispatch import dispatch

    self = args[0]
    n = len(self)
    if op == "norm":
        func, op = _orig("vector_norm", _linalg()), "vector_norm"
        ord_ = kwargs.get("ord", args[1] if len(args) > 1 else 2)
        args = (self, ord_)
        kwargs = {"dtype": kwargs["dtype"]} if kwargs.get("dtype") is not None else {}
    else:
        func = _orig(op, _lib().Tensor)
    rows = []
    for i, t in enumerate(self):
        rest = [a[i] if isinstance(a, (list, tuple)) and len(a) == n else a for a in args[1:]]
        call = (t, *rest)
        if any(isinstance(x, DTensor) for x in (*call, *kwargs.values())):
            rows.append(dispatch(func, call, dict(kwargs)))
        else:
            rows.append(func(*call, **kwargs))
    return self if op.endswith("_") else tuple(rows)


def _linalg():
    from ... import linalg

    return linalg


def rules(names):
    """The table entries of the `_foreach_*` functions among names."""
    return {n: _foreach for n in names if n.startswith(_PREFIX)}
