"""Sharding rules of vector norms (linalg.vector_norm, linalg.norm, Tensor.norm / torch.norm),
dist and F.normalize (_dispatch.py routes to them).

A p-norm over a sharded dim leaves torch's placements: each rank's norm of its piece, as
_NormPartial(p) (inf: Partial("max"), -inf: Partial("min"), 0: Partial("sum")), reduced only
when something needs the whole value (its p-th powers summed over the ranks, then the root).

Gradients: the local autograd differentiates the piece's norm n_i, while the value is
N = (sum_i n_i^p)^(1/p), so the gradient arriving at n_i (the global one, as for every
Partial) is scaled by dN/dn_i = (n_i / N)^(p-1). N is summed from the saved n_i during the
backward, one small all-reduce, so the forward moves no data (_NormGrad). max and min over a
sharded dim gather when a gradient is wanted, as amax/amin do (_sharding_rules.py).
"""

import math

from .. import distributed_c10d as c10d
from ._api import DTensor, Partial, Replicate, Shard, _function, _lib, _NormPartial
from ._dispatch_utils import _arg, _fallback, _move, _orig, _wrap
from ._sharding_rules import _elementwise

_FN = {}


def _norm_grad_fn():
    fn = _FN.get("grad")
    if fn is None:

        class _NormGrad(_function()):
            """Identity forward on this rank's piece norms n_i; the backward scales the
            gradient by (n_i / N)^(p-1), N the p-norm of the pieces over mesh dims `dims`."""

            @staticmethod
            def forward(ctx, local, mesh, dims, p):
                ctx.spec = (mesh, dims, p)
                ctx.save_for_backward(local)
                return local.view_as(local)

            @staticmethod
            def backward(ctx, grad):
                mesh, dims, p = ctx.spec
                (n,) = ctx.saved_tensors
                total = n.detach().pow(p).contiguous()
                for md in dims:
                    c10d.all_reduce(total, group=mesh.get_group(md))
                whole = total.pow(1.0 / p)
                lib = _lib()
                zero = (whole == 0) | (n == 0)
                scale = lib.where(zero, lib.zeros_like(n), (n / whole.masked_fill(zero, 1)))
                return grad * scale.pow(p - 1), None, None, None

        _FN["grad"] = fn = _NormGrad
    return fn


def _linalg():
    from ... import linalg

    return linalg


def _vector_args(func, name, args, kwargs, x):
    """(ord, dims or None, keepdim, dtype) of a vector norm call, or None for a matrix norm."""
    is_linalg = getattr(func, "__module__", "").endswith("linalg")
    if name == "vector_norm":
        ord_ = _arg(args, kwargs, 1, "ord", 2)
    elif is_linalg:  # linalg.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)
        ord_ = _arg(args, kwargs, 1, "ord", None)
        dim = _arg(args, kwargs, 2, "dim", None)
        two = dim is not None and not isinstance(dim, int) and len(dim) == 2
        if ord_ == "fro" and (dim is None and x.ndim == 2 or two):
            ord_ = 2
        elif two or (ord_ is not None and dim is None and x.ndim != 1) or isinstance(ord_, str):
            return None  # matrix norms (and the errors linalg.norm raises) take the fallback
        ord_ = 2.0 if ord_ is None else ord_
    else:  # Tensor.norm / torch.norm(input, p='fro', dim=None, keepdim=False, dtype=None)
        ord_ = _arg(args, kwargs, 1, "p", "fro")
        if ord_ == "fro":
            ord_ = 2
        elif isinstance(ord_, str) or ord_ is None:
            return None
    dim = _arg(args, kwargs, 2, "dim", None)
    keepdim = bool(_arg(args, kwargs, 3, "keepdim", False))
    dtype = kwargs.get("dtype", args[4] if len(args) > 4 and not is_linalg else None)
    if isinstance(dim, int):
        dim = (dim,)
    return ord_, (None if dim is None or len(dim) == 0 else tuple(dim)), keepdim, dtype


def _placement_of(p):
    if p == math.inf:
        return Partial("max")
    if p == -math.inf:
        return Partial("min")
    if p == 0:
        return Partial("sum")
    return _NormPartial(p)


def _norm(func, name, args, kwargs):
    x = args[0]
    spec = _vector_args(func, name, args, kwargs, x) if isinstance(x, DTensor) else None
    if spec is None or not x.dtype.is_floating_point or x.ndim == 0:
        return _fallback(func, name, args, kwargs)
    ord_, dims, keepdim, dtype = spec
    p = float(ord_)
    nd = x.ndim
    dims = list(range(nd)) if dims is None else sorted(d % nd for d in dims)
    mesh = x._mesh
    lib = _lib()
    kind = _placement_of(ord_)
    # the local autograd of a max/min over one piece differentiates that piece's own extreme:
    # with a gradient wanted, the reduced dims are gathered (as amax/amin)
    exact = abs(p) == math.inf and x.requires_grad and lib.is_grad_enabled()
    target, out_pl, norm_dims = [], [], []
    for md, pl in enumerate(x._placements):
        if isinstance(pl, Partial):
            target.append(Replicate())
            out_pl.append(Replicate())
        elif isinstance(pl, Shard) and pl.dim in dims:
            target.append(Replicate() if exact else pl)
            out_pl.append(kind)
            if isinstance(kind, _NormPartial):
                norm_dims.append(md)
        elif isinstance(pl, Shard):
            target.append(pl)
            out_pl.append(Shard(pl.dim if keepdim else pl.dim - sum(d < pl.dim for d in dims)))
        else:
            target.append(pl)
            out_pl.append(pl)
    local = _move(x, mesh, target)
    if abs(p) == math.inf and any(local.shape[d] == 0 for d in dims):
        # an empty piece: the identity of the max (norms are >= 0) or of the min
        shape = [1 if d in dims else s for d, s in enumerate(local.shape)]
        res = lib.full(shape, 0.0 if p > 0 else math.inf, dtype=dtype or local.dtype)
        res = res if keepdim else res.reshape([s for d, s in enumerate(shape) if d not in dims])
    else:
        res = _orig("vector_norm", _linalg())(local, p, dims, keepdim, dtype=dtype)
    if norm_dims and res.requires_grad:
        res = _norm_grad_fn().apply(res, mesh, tuple(norm_dims), p)
    shape = [1 if d in dims else s for d, s in enumerate(x._shape) if keepdim or d not in dims]
    return _wrap(res, mesh, tuple(out_pl), tuple(shape))


def _normalize(func, name, args, kwargs):
    """F.normalize as torch composes it: input / norm(input, p, dim, keepdim).clamp_min(eps);
    the norm's partial pieces are reduced (a small all-reduce) and the input keeps its shards."""
    x = args[0]
    if not isinstance(x, DTensor) or _arg(args, kwargs, 4, "out", None) is not None:
        return _fallback(func, name, args, kwargs)
    p = float(_arg(args, kwargs, 1, "p", 2.0))
    dim = _arg(args, kwargs, 2, "dim", 1)
    eps = _arg(args, kwargs, 3, "eps", 1e-12)
    vn = _orig("vector_norm", _linalg())
    n = _norm(vn, "vector_norm", (x, p, dim, True), {})
    n = _elementwise(_orig("clamp_min"), "clamp_min", (n, eps), {})
    return _elementwise(_orig("div"), "div", (x, n), {})


def _dist(func, name, args, kwargs):
    """dist(input, other, p=2): the p-norm of their difference."""
    diff = _elementwise(_orig("sub"), "sub", (args[0], args[1]), {})
    p = _arg(args, kwargs, 2, "p", 2)
    return _norm(_orig("vector_norm", _linalg()), "vector_norm", (diff, p), {})


RULES = {"vector_norm": _norm, "norm": _norm, "normalize": _normalize, "dist": _dist}
