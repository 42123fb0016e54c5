"""Sharding rules of the pointwise losses (mse_loss, l1_loss, smooth_l1_loss, huber_loss,
binary_cross_entropy(_with_logits), kl_div, poisson_nll_loss), cosine_similarity,
pairwise_distance and einsum (_dispatch.py routes to them).

They are composed of rules that keep the shards, as torch's DTensor decomposes them: a
pointwise loss is its elementwise 'none' form, then sum or mean (Partial over a sharded dim);
cosine_similarity and pairwise_distance are built from vector norms (_NormPartial) the way
torch builds them; einsum shards one subscript per mesh dim across every operand that has it.
"""

from ._api import DTensor, Partial, Replicate, Shard, _lib
from ._dispatch_utils import _arg, _fallback, _first_mesh, _move, _orig, _spec, _wrap
from ._sharding_rules import _elementwise, _reduction
from ._sharding_rules_norm import _linalg, _norm

# loss -> (position of reduction, its options by position, positions of the deprecated
# size_average/reduce, which take the fallback with the weights of mse/l1/huber); the other
# options (bce's weight and pos_weight too) go to the elementwise 'none' form as they are
_LOSSES = {
    "mse_loss": (4, {"weight": 5}, (2, 3)),
    "l1_loss": (4, {"weight": 5}, (2, 3)),
    "smooth_l1_loss": (4, {"beta": 5}, (2, 3)),
    "huber_loss": (2, {"delta": 3, "weight": 4}, ()),
    "binary_cross_entropy": (5, {"weight": 2}, (3, 4)),
    "binary_cross_entropy_with_logits": (5, {"weight": 2, "pos_weight": 6}, (3, 4)),
    "kl_div": (4, {"log_target": 5}, (2, 3)),
    "poisson_nll_loss": (7, {"log_input": 2, "full": 3, "eps": 5}, (4, 6)),
    "soft_margin_loss": (4, {}, (2, 3)),
}
_WEIGHT_FALLBACK = ("mse_loss", "l1_loss", "huber_loss")


def _pointwise_loss(func, name, args, kwargs):
    pos, names, old_pos = _LOSSES[name]
    opts = {k: _arg(args, kwargs, i, k) for k, i in names.items()}
    old = any(
        _arg(args, kwargs, i, ("size_average", "reduce")[j]) is not None
        for j, i in enumerate(old_pos)
    )
    reduction = _arg(args, kwargs, pos, "reduction", "mean")
    known = ("none", "sum", "mean", "batchmean") if name == "kl_div" else ("none", "sum", "mean")
    weighted = opts.get("weight") is not None and name in _WEIGHT_FALLBACK
    if old or weighted or reduction not in known:
        return _fallback(func, name, args, kwargs)
    kw = {k: v for k, v in opts.items() if v is not None}
    loss = _elementwise(
        func, name, (args[0], _arg(args, kwargs, 1, "target")), {**kw, "reduction": "none"}
    )
    if reduction == "none":
        return loss
    if reduction == "batchmean":  # torch's: the sum over the batch size (a whole 0-d is 1)
        total = _reduction(_orig("sum"), "sum", (loss,), {})
        return _ew("div", total, loss.shape[0]) if loss.ndim else total
    return _reduction(_orig(reduction), reduction, (loss,), {})


# ember._C._nn's loss kernels, which nn.functional's Python losses call (a loss kept before any
# mesh existed reaches the DTensor mode through them): the position of the reduction (torch's
# enum) and of the other options, by the public function's names
_KERNELS = {
    "mse_loss": (2, {}),
    "l1_loss": (2, {}),
    "soft_margin_loss": (2, {}),
    "smooth_l1_loss": (2, {"beta": 3}),
    "huber_loss": (2, {"delta": 3}),
    "binary_cross_entropy": (3, {"weight": 2}),
    "binary_cross_entropy_with_logits": (4, {"weight": 2, "pos_weight": 3}),
    "kl_div": (2, {"log_target": 3}),
    "poisson_nll_loss": (5, {"log_input": 2, "full": 3, "eps": 4}),
}
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _loss_kernel(func, name, args, kwargs):
    """A loss kernel's call as the public loss's, whose rule keeps the shards."""
    public = name.rpartition(".")[2]
    pos, names = _KERNELS[public]
    if kwargs or len(args) <= pos or args[pos] not in _REDUCTIONS:
        return _fallback(func, name, args, kwargs)
    kw = {k: args[i] for k, i in names.items()}
    kw["reduction"] = _REDUCTIONS[args[pos]]
    return _pointwise_loss(_orig(public, _lib().nn.functional), public, tuple(args[:2]), kw)


def _vector_norm(x, p, dim, keepdim):
    return _norm(_orig("vector_norm", _linalg()), "vector_norm", (x, p, dim, keepdim), {})


def _ew(name, *args):
    return _elementwise(_orig(name), name, args, {})


def _cosine_similarity(func, name, args, kwargs):
    """torch's composition: (x1 / max(|x1|, eps) * (x2 / max(|x2|, eps))).sum(dim), the norms
    over dim; a Shard of dim leaves Partial(sum), the others stay."""
    x1, x2 = args[0], _arg(args, kwargs, 1, "x2")
    dim = _arg(args, kwargs, 2, "dim", 1)
    eps = _arg(args, kwargs, 3, "eps", 1e-8)
    mesh = _first_mesh(args, kwargs)
    s1, s2 = _spec(x1, mesh)[1], _spec(x2, mesh)[1]
    floats = all(isinstance(x, DTensor) and x.dtype.is_floating_point for x in (x1, x2))
    if not floats or len(s1) != len(s2) or not s1 or not isinstance(dim, int):
        return _fallback(func, name, args, kwargs)
    dim %= len(s1)  # the operands broadcast in the div and mul, as torch's
    n1 = _ew("clamp_min", _vector_norm(x1, 2, dim, True), eps)
    n2 = _ew("clamp_min", _vector_norm(x2, 2, dim, True), eps)
    prod = _ew("mul", _ew("div", x1, n1), _ew("div", x2, n2))
    return _reduction(_orig("sum"), "sum", (prod, dim), {})


def _pairwise_distance(func, name, args, kwargs):
    """torch's composition: the p-norm of x1 - x2 + eps over the last dim."""
    x1, x2 = args[0], _arg(args, kwargs, 1, "x2")
    p = float(_arg(args, kwargs, 2, "p", 2.0))
    eps = _arg(args, kwargs, 3, "eps", 1e-6)
    keepdim = bool(_arg(args, kwargs, 4, "keepdim", False))
    mesh = _first_mesh(args, kwargs)
    nd = max(len(_spec(x1, mesh)[1]), len(_spec(x2, mesh)[1]))
    if nd == 0 or not all(isinstance(x, DTensor) for x in (x1, x2)) or p < 0:
        return _fallback(func, name, args, kwargs)
    diff = _ew("add", _ew("sub", x1, x2), eps)
    return _vector_norm(diff, p, nd - 1, keepdim)


def _einsum(func, name, args, kwargs):
    """One subscript per mesh dim is sharded in every operand that has it (the first operand's
    Shard on that mesh dim, else the next one's), the operands without it are Replicate; the
    output is Shard where it keeps that subscript and Partial(sum) where it sums it away.
    Equations with '...' or a subscript repeated within an operand take the fallback."""
    eq = args[0] if isinstance(args[0], str) else None
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    if eq is None or kwargs or "..." in eq:
        return _fallback(func, name, args, kwargs)
    lhs, _, out = eq.replace(" ", "").partition("->")
    if "->" not in eq:  # the implicit output: the subscripts seen once, in alphabetical order
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    subs = lhs.split(",")
    if len(subs) != len(ops) or any(len(set(s)) != len(s) for s in subs):
        return _fallback(func, name, args, kwargs)
    mesh = _first_mesh(ops, {})
    specs = [_spec(o, mesh) for o in ops]
    if any(len(s) != len(sp[1]) for s, sp in zip(subs, specs)):
        return _fallback(func, name, args, kwargs)
    size = {c: n for s, sp in zip(subs, specs) for c, n in zip(s, sp[1]) if n != 1}
    targets = [[] for _ in ops]
    syncs = [[] for _ in ops]
    out_pl = []
    for md in range(mesh.ndim):
        letter = None
        for s, sp in zip(subs, specs):
            p = sp[2][md]
            if isinstance(p, Shard) and sp[1][p.dim] == size.get(s[p.dim]):
                letter = s[p.dim]
                break
        for i, s in enumerate(subs):
            if letter is not None and letter in s and specs[i][1][s.index(letter)] != 1:
                targets[i].append(Shard(s.index(letter)))
            else:
                targets[i].append(Replicate())
                if letter is not None:
                    syncs[i].append(md)
        if letter is None:
            out_pl.append(Replicate())
        else:
            out_pl.append(Shard(out.index(letter)) if letter in out else Partial())
    locals_ = [_move(o, mesh, t, sy) for o, t, sy in zip(ops, targets, syncs)]
    res = _orig("einsum")(eq, *locals_)
    shape = tuple(size.get(c, 1) for c in out)
    return _wrap(res, mesh, tuple(out_pl), shape)


RULES = {
    **dict.fromkeys(_LOSSES, _pointwise_loss),
    **dict.fromkeys(("_C._nn." + n for n in _KERNELS), _loss_kernel),
    "cosine_similarity": _cosine_similarity,
    "pairwise_distance": _pairwise_distance,
    "einsum": _einsum,
}
