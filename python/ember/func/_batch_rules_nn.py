"""Batching rules of ember.func.vmap for nn.functional operations (convolution, pooling,
padding, normalization, losses, embedding, attention) and random operations (Note [vmap
levels] in _vmap.py); importing this module registers them into _batch_rules.RULES.
"""

from .._C import Tensor
from ..nn import functional as F
from ._batch_rules import (
    _MISSING,
    _arg,
    _batch_sizes,
    _is_b,
    _is_t,
    _no_rule,
    _pdim,
    _pointwise,
    _reduction,
    _shape_args,
    _shared,
    _weight_grad_route,
    _with,
    ember,
    op_name,
    register,
)
from ._vmap import BatchedTensor, _levels, align, first_order, levels_of, logical_dim, wrap

# -- nn.functional


def _trailing(k, name_of_k=None):
    """Ops on (N, C, *k spatial) or (C, *k spatial) inputs: every leading dimension becomes N."""

    def rule(func, args, kwargs):
        x = args[0]
        for a in (*args[1:], *kwargs.values()):
            if _is_b(a):
                return _no_rule(func)
        kk = k(args, kwargs) if callable(k) else k
        v = x._v
        lead = tuple(v.shape[: v.dim() - kk - 1])
        flat = v.reshape((-1,) + tuple(v.shape[v.dim() - kk - 1 :]))
        out = func(flat, *args[1:], **kwargs)

        def back(o):
            return o.reshape(lead + tuple(o.shape[1:]))

        out = tuple(back(o) for o in out) if isinstance(out, tuple) else back(out)
        return wrap(out, x._lv)

    return rule


def _pad(func, args, kwargs):
    x = args[0]
    pad = _arg(args, kwargs, 1, "pad")
    mode = _arg(args, kwargs, 2, "mode", "constant")
    if any(_is_b(a) for a in (*args[1:], *kwargs.values())):
        return _no_rule(func)
    if mode == "constant":
        return wrap(func(x._v, *args[1:], **kwargs), x._lv)
    return _trailing(len(pad) // 2)(func, args, kwargs)


def _conv(func, args, kwargs):
    x, w = args[0], _arg(args, kwargs, 1, "weight")
    bias = _arg(args, kwargs, 2, "bias")
    rest = list(args[3:])
    stride = rest[0] if len(rest) > 0 else kwargs.get("stride", 1)
    padding = rest[1] if len(rest) > 1 else kwargs.get("padding", 0)
    dilation = rest[2] if len(rest) > 2 else kwargs.get("dilation", 1)
    groups = rest[3] if len(rest) > 3 else kwargs.get("groups", 1)
    k = logical_dim(w) - 2
    levels = levels_of(x, w, bias)
    nb = len(levels)
    unbatched_input = logical_dim(x) == k + 1
    if not _is_b(w):
        px = align(x, levels)
        lead = tuple(px.shape[: px.dim() - k - 1])
        flat = px.reshape((-1,) + tuple(px.shape[px.dim() - k - 1 :]))
        out = func(flat, w, None if _is_b(bias) else bias, stride, padding, dilation, groups)
        out = out.reshape(lead + tuple(out.shape[1:]))
        out = BatchedTensor(out, levels)
    elif k == 2 and groups == 1 and first_order() and _shared(align(w, levels, expand=True), nb):
        out = _conv_shared_weight(func, x, w, levels, stride, padding, dilation)
        out = BatchedTensor(out, levels)
        if bias is not None:
            out = _pointwise(Tensor.__add__, (out, _channel_bias(bias, k)), {})
        return out
    else:
        # Batched weights: one grouped convolution with the batch folded into the channels.
        sizes = _batch_sizes(levels)
        B = 1
        for s in sizes:
            B *= s
        px = align(x, levels, expand=True)
        if unbatched_input:
            px = px.unsqueeze(nb)
        px = px.reshape((B,) + tuple(px.shape[nb:]))  # [B, N, C, *sp]
        N, C = px.shape[1], px.shape[2]
        if N != 1:
            px = px.transpose(0, 1)
        px = px.reshape((N, B * C) + tuple(px.shape[3:]))
        pw = align(w, levels, expand=True)
        O = pw.shape[nb]
        pw = pw.reshape((B * O,) + tuple(pw.shape[nb + 1 :]))
        pb = None if bias is None else align(bias, levels, expand=True).reshape(B * O)
        out = func(px, pw, pb, stride, padding, dilation, groups * B)
        out = out.reshape((N, B, O) + tuple(out.shape[2:]))
        out = out.transpose(0, 1) if N != 1 else out.reshape((B, N, O) + tuple(out.shape[3:]))
        if unbatched_input:
            out = out.squeeze(1)
        out = BatchedTensor(out.reshape(sizes + tuple(out.shape[1:])), levels)
    if bias is not None and _is_b(bias) and not _is_b(w):
        out = _pointwise(Tensor.__add__, (out, _channel_bias(bias, k)), {})
    return out


def _channel_bias(bias, k):
    shape = (-1,) + (1,) * k
    if _is_b(bias):
        return BatchedTensor(
            bias._v.reshape(tuple(bias._v.shape[: len(bias._lv)]) + shape), bias._lv
        )
    return bias.reshape(shape)


def _conv_shared_weight(func, x, w, levels, stride, padding, dilation):
    """Note [Per-example conv weight gradients]: when every batch element's weight is the same
    tensor expanded and only first-order gradients are wanted (first_order()), the convolution
    runs once over the whole batch with that weight (detached), and a term whose value is
    zero (_weight_grad_route) routes each example's weight gradient through one batched matrix
    product of grad_output and the input's columns (F.unfold). ember's grouped-convolution
    backward (the general batched-weight path) is 2-3x slower than this at batch 64, and a
    weight materialized per example costs memory the shared one does not."""
    nb = len(levels)
    sizes = _batch_sizes(levels)
    B = 1
    for s in sizes:
        B *= s
    pw = align(w, levels, expand=True)
    O = pw.shape[nb]
    w0 = pw[(0,) * nb].detach()
    px = align(x, levels, expand=True)
    unbatched_input = px.dim() - nb == 3
    if unbatched_input:
        px = px.unsqueeze(nb)
    px = px.reshape((B,) + tuple(px.shape[nb:]))  # [B, N, C, H, W]
    N = px.shape[1]
    flat = px.reshape((B * N,) + tuple(px.shape[2:]))
    out = func(flat, w0, None, stride, padding, dilation, 1)  # [B*N, O, Ho, Wo]
    cols = F.unfold(flat.detach(), tuple(w0.shape[2:]), dilation, padding, stride)  # [BN, CK, L]
    cols = cols.reshape(B, N, cols.shape[1], cols.shape[2]).transpose(1, 2)
    cols = cols.reshape(B, cols.shape[1], -1)  # [B, CK, N*L]
    wf = pw.reshape(B, O, -1)
    corr = _weight_grad_route().apply(wf, cols)  # [B, O, N*L], zero
    L = out.shape[2] * out.shape[3]
    corr = corr.reshape(B, O, N, L).transpose(1, 2).reshape(tuple(out.shape))
    out = out + corr
    out = out.reshape((B, N) + tuple(out.shape[1:]))
    if unbatched_input:
        out = out.squeeze(1)
    return out.reshape(sizes + tuple(out.shape[1:]))


def _layer_norm(func, args, kwargs):
    x = args[0]
    shape = _arg(args, kwargs, 1, "normalized_shape")
    w = _arg(args, kwargs, 2, "weight")
    b = _arg(args, kwargs, 3, "bias")
    eps = _arg(args, kwargs, 4, "eps", 1e-5)
    if not _is_b(w) and not _is_b(b) and _is_b(x):
        return wrap(func(x._v, shape, w, b, eps), x._lv)
    out = func(x._v, shape, None, None, eps) if _is_b(x) else func(x, shape, None, None, eps)
    out = BatchedTensor(out, x._lv) if _is_b(x) else out
    if w is not None:
        out = _pointwise(Tensor.__mul__, (out, w), {})
    if b is not None:
        out = _pointwise(Tensor.__add__, (out, b), {})
    return out


def _batch_norm(func, args, kwargs):
    x = args[0]
    names = (
        "input",
        "running_mean",
        "running_var",
        "weight",
        "bias",
        "training",
        "momentum",
        "eps",
    )
    a = {
        n: _arg(args, kwargs, i, n, d)
        for i, (n, d) in enumerate(zip(names, (None,) * 5 + (False, 0.1, 1e-5)))
    }
    rm, rv = a["running_mean"], a["running_var"]
    if a["training"] and _is_b(x) and _is_b(rm) and _is_b(rv) and rm._lv == x._lv == rv._lv:
        # per-model running statistics (stack_module_state of train-mode models): each model
        # updates its own, as torch's rule does
        return _batch_norm_train_per_model(x, a)
    if a["training"] and rm is not None:
        raise RuntimeError(
            "vmap: batch_norm in training mode updates its running statistics once per example, "
            "which vmap cannot batch (torch raises as well); put the module in eval mode, or "
            "build it with track_running_stats=False"
        )
    if not a["training"] and any(_is_b(a[n]) for n in names[1:3]):
        # per-model running statistics (an ensemble of eval-mode models, stack_module_state):
        # eval-mode batch_norm is elementwise, so it is written with ops that have rules
        shape = (-1,) + (1,) * (x.dim() - 2)
        out = (x - a["running_mean"].reshape(shape)) * (
            a["running_var"].reshape(shape) + a["eps"]
        ).rsqrt()
        if a["weight"] is not None:
            out = out * a["weight"].reshape(shape)
        if a["bias"] is not None:
            out = out + a["bias"].reshape(shape)
        return out
    if any(_is_b(a[n]) for n in names[1:3]) or not _is_b(x):
        return _no_rule(func)
    if _is_b(a["weight"]) or _is_b(a["bias"]):
        # a batched affine (grad inside vmap expands the parameters): normalize, then apply it
        w, b = a["weight"], a["bias"]
        plain = {k: val for k, val in a.items() if k != "input"}
        out = _batch_norm(func, (x,), {**plain, "weight": None, "bias": None})
        shape = (-1,) + (1,) * (x.dim() - 2)
        if w is not None:
            out = out * w.reshape(shape)
        if b is not None:
            out = out + b.reshape(shape)
        return out
    nb = len(x._lv)
    v = x._v
    if a["training"]:
        nd = v.dim() - nb
        per_channel = 1
        for d, s in enumerate(x.shape):
            per_channel *= s if d != 1 else 1
        if per_channel == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {x.shape}"
            )
        dims = tuple(d + nb for d in range(nd) if d != 1)
        mean = v.mean(dims, keepdim=True)
        var = v.var(dims, keepdim=True, correction=0)
        out = (v - mean) / (var + a["eps"]).sqrt()
        shape = (-1,) + (1,) * (nd - 2)
        if a["weight"] is not None:
            out = out * a["weight"].reshape(shape)
        if a["bias"] is not None:
            out = out + a["bias"].reshape(shape)
        return wrap(out, x._lv)
    return _trailing(v.dim() - nb - 2)(func, args, kwargs)


def _batch_norm_train_per_model(x, a):
    from ..autograd.grad_mode import no_grad

    nb, v = len(x._lv), x._v
    dims = tuple(d + nb for d in range(v.dim() - nb) if d != 1)
    n = 1
    for d in dims:
        n *= v.shape[d]
    if n == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {x.shape}"
        )
    mean = v.mean(dims, keepdim=True)
    var = v.var(dims, keepdim=True, correction=0)
    m = a["momentum"]
    with no_grad():
        flat = tuple(v.shape[:nb]) + (v.shape[nb + 1],)
        a["running_mean"]._v.mul_(1 - m).add_(mean.detach().reshape(flat) * m)
        a["running_var"]._v.mul_(1 - m).add_(var.detach().reshape(flat) * (m * n / (n - 1)))
    out = (v - mean) / (var + a["eps"]).sqrt()
    shape = (-1,) + (1,) * (v.dim() - nb - 2)
    out = wrap(out, x._lv)
    if a["weight"] is not None:
        out = out * a["weight"].reshape(shape)
    if a["bias"] is not None:
        out = out + a["bias"].reshape(shape)
    return out


def _reduce_loss(out, reduction, denom=None):
    if reduction == "none":
        return out
    if reduction == "sum":
        return _reduction()(Tensor.sum, (out,), {})
    if reduction == "batchmean":
        s = _reduction()(Tensor.sum, (out,), {})
        return _pointwise(Tensor.__truediv__, (s, out.shape[0] if out.dim() else 1), {})
    if denom is not None:
        s = _reduction()(Tensor.sum, (out,), {})
        return _pointwise(Tensor.__truediv__, (s, denom), {})
    return _reduction()(Tensor.mean, (out,), {})


def _pointwise_loss(names):
    """mse_loss, l1_loss, ...: the 'none' loss by the pointwise rule, then the reduction."""

    def rule(func, args, kwargs):
        bound = {n: _arg(args, kwargs, i, n, _MISSING) for i, n in enumerate(names)}
        bound = {n: v for n, v in bound.items() if v is not _MISSING}
        reduction = bound.pop("reduction", kwargs.get("reduction", "mean"))
        bound.pop("size_average", None)
        bound.pop("reduce", None)
        first = [bound.pop(n) for n in names[:2]]
        out = _pointwise(func, tuple(first), {**bound, "reduction": "none"})
        return _reduce_loss(out, reduction)

    return rule


def _nll_like(func, args, kwargs):
    names = ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction")
    a = {n: _arg(args, kwargs, i, n, _MISSING) for i, n in enumerate(names)}
    inp, target = a["input"], a["target"]
    weight = None if a["weight"] is _MISSING else a["weight"]
    ignore = -100 if a["ignore_index"] is _MISSING else a["ignore_index"]
    reduction = "mean" if a["reduction"] is _MISSING else a["reduction"]
    extra = {}
    if "label_smoothing" in kwargs:
        extra["label_smoothing"] = kwargs["label_smoothing"]
    if _is_b(weight):
        return _no_rule(func)
    levels = levels_of(inp, target)
    nb = len(levels)
    pi = align(inp, levels, expand=True)
    pt = align(target, levels, expand=True)
    sizes = tuple(pi.shape[:nb])
    prob_target = target.dtype.is_floating_point
    if logical_dim(inp) == 1:
        fi = pi.reshape((-1, pi.shape[-1]))
        ft = pt.reshape((-1, pt.shape[-1])) if prob_target else pt.reshape(-1)
    else:
        fi = pi.reshape((-1,) + tuple(pi.shape[nb + 1 :]))
        ft = pt.reshape((-1,) + tuple(pt.shape[nb + 1 :]))
    loss = func(fi, ft, weight, None, ignore, None, "none", **extra)
    loss = BatchedTensor(loss.reshape(sizes + _loss_shape(inp, target, prob_target)), levels)
    if reduction != "mean" or prob_target:
        if reduction == "mean" and prob_target:
            n = inp.shape[0] if logical_dim(inp) > 1 else 1
            for s in inp.shape[2:]:
                n *= s
            return _reduce_loss(loss, "mean", n)
        return _reduce_loss(loss, reduction)
    keep = BatchedTensor(pt.reshape(sizes + tuple(_loss_shape(inp, target, False))), levels)
    mask = _pointwise(Tensor.__ne__, (keep, ignore), {})
    w = _pointwise(Tensor.to, (mask, inp.dtype), {})
    if weight is not None:
        safe = _pointwise(ember.where, (mask, keep, 0), {})
        cw = BatchedTensor(weight[safe._v], safe._lv)
        w = _pointwise(Tensor.__mul__, (w, cw), {})
    denom = _reduction()(Tensor.sum, (w,), {})
    return _reduce_loss(loss, "mean", denom)


def _loss_shape(inp, target, prob_target):
    if logical_dim(inp) == 1:
        return ()
    shape = tuple(inp.shape)
    return (shape[0],) + shape[2:]


def _embedding(func, args, kwargs):
    idx, w = args[0], _arg(args, kwargs, 1, "weight")
    if not _is_b(w):
        return wrap(func(idx._v, w, *args[2:], **kwargs), idx._lv)
    from .._ops.creation import arange

    levels = levels_of(idx, w)
    nb = len(levels)
    pw = align(w, levels, expand=True)
    sizes = _batch_sizes(levels)
    B = 1
    for s in sizes:
        B *= s
    pw = pw.reshape((B,) + tuple(pw.shape[nb:]))
    pi = align(idx, levels, expand=True)
    pi = pi.reshape((B,) + tuple(pi.shape[nb:]))
    rows = arange(B).reshape((B,) + (1,) * (pi.dim() - 1))
    out = pw[rows, pi]
    return BatchedTensor(out.reshape(sizes + tuple(out.shape[1:])), levels)


def _binary_dim(pos, name, default):
    def rule(func, args, kwargs):
        a, b = args[0], args[1]
        levels = levels_of(a, b)
        rank = max(logical_dim(a), logical_dim(b))
        pa, pb = align(a, levels, rank), align(b, levels, rank)
        d = _arg(args, kwargs, pos, name, default)
        args2, kwargs2 = _with((pa, pb, *args[2:]), kwargs, pos, name, _pdim(d, rank, len(levels)))
        return wrap(func(*args2, **kwargs2), levels)

    return rule


def _sdpa(func, args, kwargs):
    q, k, v = args[0], args[1], args[2]
    mask = _arg(args, kwargs, 3, "attn_mask")
    ts = [t for t in (q, k, v, mask) if _is_t(t)]
    levels = levels_of(*ts)
    rank = max(logical_dim(t) for t in ts)

    def conv(t):
        return align(t, levels, rank, expand=True) if _is_t(t) else t

    sizes = _batch_sizes(levels)
    new = [conv(t) for t in (q, k, v)]
    rest = list(args[3:])
    if rest:
        rest[0] = conv(rest[0])
    kw = {kk: conv(vv) for kk, vv in kwargs.items()}
    flat = [
        t.reshape((-1,) + tuple(t.shape[len(levels) :])) if t.dim() > len(levels) else t
        for t in new
    ]
    if rest and _is_t(rest[0]):
        rest[0] = rest[0].reshape((-1,) + tuple(rest[0].shape[len(levels) :]))
    if _is_t(kw.get("attn_mask")):
        m = kw["attn_mask"]
        kw["attn_mask"] = m.reshape((-1,) + tuple(m.shape[len(levels) :]))
    out = func(*flat, *rest, **kw)
    return wrap(out.reshape(sizes + tuple(out.shape[1:])), levels)


# -- randomness (torch's modes: 'error' raises, 'different' draws per example, 'same' once)


def _random_levels(func):
    levels = _levels()
    for lv in levels:
        if lv.randomness == "error":
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either use "
                "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                "operation out of vmap"
            )
    return tuple(lv.id for lv in levels if lv.randomness == "different")


def _random_factory(size_start=0):
    def rule(func, args, kwargs):
        diff = _random_levels(func)
        if not diff:
            return func(*args, **kwargs)
        sizes = _batch_sizes(diff)
        head = args[:size_start]
        shape = (
            _shape_args(args, size_start)
            if len(args) > size_start
            else tuple(kwargs.pop("size", ()))
        )
        kwargs = {k: v for k, v in kwargs.items() if k != "size"}
        return BatchedTensor(func(*head, sizes + tuple(shape), **kwargs), diff)

    rule.random = True
    return rule


def _random_like(func, args, kwargs):
    diff = _random_levels(func)
    x = args[0]
    if set(levels_of(x)) <= set(diff) and _is_b(x) and levels_of(x) == diff:
        return wrap(func(x._v, *args[1:], **kwargs), x._lv)
    base = ember.empty(_batch_sizes(diff) + tuple(x.shape), dtype=x.dtype)
    return wrap(func(base, *args[1:], **kwargs), diff)


_random_like.random = True


def _dropout(func, args, kwargs):
    x = args[0]
    p = _arg(args, kwargs, 1, "p", 0.5)
    training = _arg(args, kwargs, 2, "training", _arg(args, kwargs, 2, "train", True))
    if not training or p == 0:
        return x
    diff = _random_levels(func)
    if _is_b(x) and x._lv == diff:
        return wrap(func(x._v, *args[1:], **kwargs), x._lv)
    kw = {k: v for k, v in kwargs.items() if k != "inplace"}
    ones = ember.ones(_batch_sizes(diff) + tuple(x.shape), dtype=x.dtype)
    mask = func(ones, *args[1:3], **kw)
    mask = BatchedTensor(mask, diff) if diff else mask
    return _pointwise(Tensor.__mul__, (x, mask), {})


_dropout.random = True


def _random_inplace(func, args, kwargs):
    diff = _random_levels(func)
    x = args[0]
    if _is_b(x):
        if x._lv == diff:
            func(x._v, *args[1:], **kwargs)
            return x
        return _no_rule(func)
    if diff:
        raise RuntimeError(
            f"vmap: {op_name(func)} with randomness='different' on a tensor that is not vmapped "
            "over cannot give each example its own values in place; use randomness='same' or "
            "an out-of-place random function"
        )
    return func(*args, **kwargs)


_random_inplace.random = True


def _random_other(func, args, kwargs):
    # Random ops without a batched form here: allowed outside 'error' mode on unbatched inputs.
    if any(_is_b(a) for a in (*args, *kwargs.values())):
        return _no_rule(func)
    if _random_levels(func):
        raise RuntimeError(
            f"vmap: {op_name(func)} has no batching rule for randomness='different' (each "
            "example would need its own draw); use randomness='same' or draw outside vmap"
        )
    return func(*args, **kwargs)


_random_other.random = True


# -- registrations

register("conv1d conv2d conv3d", _conv, ("F", "ember"))
register(
    "max_pool1d avg_pool1d adaptive_avg_pool1d adaptive_max_pool1d lp_pool1d",
    _trailing(1),
    ("F", "ember"),
)
register(
    "max_pool2d avg_pool2d adaptive_avg_pool2d adaptive_max_pool2d lp_pool2d pixel_shuffle "
    "pixel_unshuffle",
    _trailing(2),
    ("F", "ember"),
)
register(
    "max_pool3d avg_pool3d adaptive_avg_pool3d adaptive_max_pool3d", _trailing(3), ("F", "ember")
)
register("pad", _pad, ("F",))
register("layer_norm", _layer_norm, ("F", "ember"))
register("batch_norm", _batch_norm, ("F",))
register("cross_entropy nll_loss", _nll_like, ("F",))
register(
    "mse_loss l1_loss",
    _pointwise_loss(("input", "target", "size_average", "reduce", "reduction")),
    ("F",),
)
register(
    "smooth_l1_loss",
    _pointwise_loss(("input", "target", "size_average", "reduce", "reduction")),
    ("F",),
)
register("huber_loss", _pointwise_loss(("input", "target", "reduction")), ("F",))
register(
    "binary_cross_entropy binary_cross_entropy_with_logits",
    _pointwise_loss(("input", "target", "weight", "size_average", "reduce", "reduction")),
    ("F",),
)
register(
    "kl_div", _pointwise_loss(("input", "target", "size_average", "reduce", "reduction")), ("F",)
)
register("embedding", _embedding, ("F",))
register("cosine_similarity", _binary_dim(2, "dim", 1), ("F", "ember"))
register("scaled_dot_product_attention", _sdpa, ("F",))
register("rand randn", _random_factory(0), ("ember",))
register("randint", _random_factory(2), ("ember",))
register("rand_like randn_like randint_like bernoulli poisson", _random_like, ("ember", "Tensor"))
register(
    "dropout alpha_dropout feature_alpha_dropout dropout1d dropout2d dropout3d",
    _dropout,
    ("F", "ember"),
)
register(
    "uniform_ normal_ bernoulli_ random_ exponential_ geometric_ cauchy_ log_normal_",
    _random_inplace,
    ("Tensor",),
)
register("randperm multinomial normal", _random_other, ("ember", "Tensor"))


# -- compositions without a rule of their own: the body runs under vmap, each op it calls
# reaching its rule (nn.MultiheadAttention's functional form is views, linears, bmm and softmax)


def _composite(func, args, kwargs):
    from ._vmap import _VmapMode

    with _VmapMode():
        return func(*args, **kwargs)


register("multi_head_attention_forward", _composite, ("F",))
