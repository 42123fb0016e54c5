"""The derivative table's rules for nn.functional ops (derivatives.py has the table and the
rest): convolution, softmax / log_softmax, layer_norm / batch_norm, dropout, the losses,
max_pool2d and embedding. Importing this module registers them into derivatives.TABLE (the
package's __init__.py does). Helper functions below (``conv_backward``, ``max_pool_backward``,
``embedding_backward``) become call_function targets of backward graphs and run eagerly.
"""

from __future__ import annotations

import math

from .derivatives import NoFormula, _count, _ember, _needs_v, _pairs, is_v, rule


def _F():
    from ..nn import functional as F

    return F


def _nn():
    from .._C import _nn

    return _nn


# Helpers that become call_function targets of backward graphs.


def conv_backward(name, input, weight, grad, stride, padding, dilation, groups, needs):
    """conv_backward(name, input, weight, grad, stride, padding, dilation, groups, needs)

    (grad_input, grad_weight) of ``ember.nn.functional.<name>`` (no bias): the convolution
    recomputed on detached inputs and differentiated by ember's own conv backward kernels."""
    ember = _ember()
    fn = getattr(_F(), name)
    x = input.detach().requires_grad_(needs[0])
    w = weight.detach().requires_grad_(needs[1])
    wanted = [t for t, n in zip((x, w), needs) if n]
    with ember.enable_grad():
        out = fn(x, w, None, stride, padding, dilation, groups)
        got = iter(ember.autograd.grad(out, wanted, grad))
    return tuple(next(got) if n else None for n in needs)


def max_pool_backward(grad, indices, input_shape):
    """max_pool_backward(grad, indices, input_shape) -> Tensor

    Scatters (adding) each pooled gradient to its argmax position of the input plane."""
    ember = _ember()
    n = math.prod(input_shape[:-2])
    plane = input_shape[-2] * input_shape[-1]
    out = ember.zeros((n, plane), dtype=grad.dtype)
    out.scatter_add_(1, indices.reshape(n, -1), grad.reshape(n, -1))
    return out.reshape(input_shape)


def embedding_backward(grad, indices, num_weights, padding_idx):
    """embedding_backward(grad, indices, num_weights, padding_idx) -> Tensor

    Rows of the weight gradient: the output gradients summed per index (none for padding_idx)."""
    ember = _ember()
    dim = grad.shape[-1]
    out = ember.zeros((num_weights, dim), dtype=grad.dtype)
    flat_idx = indices.reshape(-1)
    out.index_add_(0, flat_idx, grad.reshape(-1, dim))
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


# ---- convolution: ember's own conv backward kernels through a helper


def _conv_sig(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    pass


def _pair(v, n):
    if isinstance(v, int):
        return [v] * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(i, int) for i in v):
        return list(v)
    return None


@rule("conv1d conv2d conv3d", _conv_sig)
def _conv(b, a, out, g, ctx):
    x, w, bias = a["input"], a["weight"], a["bias"]
    needs = (bool(x.node.meta.get("needs_grad")), bool(w.node.meta.get("needs_grad")))
    kernel = getattr(_nn(), "convolution_backward", None)
    geometry = [_pair(a[k], 2) for k in ("stride", "padding", "dilation")]
    if ctx == "conv2d" and kernel is not None and x.ndim == 4 and None not in geometry:
        # ember's own conv backward kernels: one call for the input, weight and bias gradients
        res = b.call(kernel, g, x, w, *geometry, a["groups"], [*needs, is_v(bias)])
        return [(t, res[i]) for i, t in enumerate((x, w, bias)) if is_v(t) and (i == 2 or needs[i])]
    pairs = []
    if any(needs):
        res = b.call(
            conv_backward,
            ctx,
            x,
            w,
            g,
            a["stride"],
            a["padding"],
            a["dilation"],
            a["groups"],
            needs,
        )
        for i, t in enumerate((x, w)):
            if needs[i]:
                pairs.append((t, res[i]))
    if is_v(bias):
        pairs.append((bias, g.sum([0, *range(2, g.ndim)])))
    return pairs


# ---- softmax family


def _softmax_dim(a, ndim):
    if a["dtype"] is not None:
        raise NoFormula("softmax with dtype")
    if a["dim"] is None:
        raise NoFormula("softmax without dim")
    return a["dim"] % ndim


def _softmax_sig(input, dim=None, _stacklevel=3, dtype=None):
    pass


@rule("softmax", _softmax_sig)
def _softmax(b, a, out, g, ctx):
    d = _softmax_dim(a, out.ndim)
    gy = g * out
    return _pairs((a["input"], gy - out * gy.sum(d, keepdim=True)))


@rule("log_softmax", _softmax_sig)
def _log_softmax(b, a, out, g, ctx):
    d = _softmax_dim(a, out.ndim)
    return _pairs((a["input"], g - out.exp() * g.sum(d, keepdim=True)))


# ---- normalization (the statistics are recomputed from the input in backward)


def _norm_backward(x, g, weight, dims, eps, mean=None, rstd=None):
    """Input gradient of (x - mean) * rstd * weight over ``dims`` (batch statistics when
    mean/rstd are None, fixed ones otherwise), and xhat."""
    fixed = mean is not None
    if not fixed:
        mean = x.mean(dims, keepdim=True)
        centered = x - mean
        rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    else:
        centered = x - mean
    xhat = centered * rstd
    gxhat = g * weight if is_v(weight) else g
    if fixed:
        return gxhat * rstd, xhat
    n = _count(x.shape, dims)
    s1 = gxhat.sum(dims, keepdim=True)
    s2 = (gxhat * xhat).sum(dims, keepdim=True)
    return (gxhat - s1 / n - xhat * (s2 / n)) * rstd, xhat


@rule("layer_norm", lambda input, normalized_shape, weight=None, bias=None, eps=1e-5: None)
def _layer_norm(b, a, out, g, ctx):
    x, w, bias = a["input"], a["weight"], a["bias"]
    k = len(tuple(a["normalized_shape"]))
    dims = tuple(range(x.ndim - k, x.ndim))
    gx, xhat = _norm_backward(x, g, w, dims, a["eps"])
    return _pairs((x, gx), (w, g * xhat if is_v(w) else None), (bias, g))


def _bn_sig(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    pass


def _bn_forward(b, a, node, env):
    kernel = getattr(_nn(), "native_batch_norm", None)
    if kernel is None or not hasattr(_nn(), "native_batch_norm_backward"):
        return b.copy(node, env), None
    res = b.call(
        kernel,
        a["input"],
        a["weight"],
        a["bias"],
        a["running_mean"],
        a["running_var"],
        a["training"],
        a["momentum"],
        a["eps"],
    )
    return res[0], (res[1], res[2])


@rule("batch_norm", _bn_sig, forward=_bn_forward)
def _batch_norm(b, a, out, g, ctx):
    x, w, bias = a["input"], a["weight"], a["bias"]
    if ctx is not None:  # ember's batch_norm backward kernel over the saved statistics
        mean, invstd = ctx
        res = b.call(_nn().native_batch_norm_backward, g, x, w, mean, invstd, a["training"])
        return [(t, res[i]) for i, t in enumerate((x, w, bias)) if is_v(t)]
    dims = (0, *range(2, x.ndim))
    bshape = [1, x.shape[1]] + [1] * (x.ndim - 2)
    wb = w.reshape(bshape) if is_v(w) else None
    if a["training"] or a["running_mean"] is None:
        gx, xhat = _norm_backward(x, g, wb, dims, a["eps"])
    else:
        mean = a["running_mean"].reshape(bshape)
        rstd = (a["running_var"].reshape(bshape) + a["eps"]).rsqrt()
        gx, xhat = _norm_backward(x, g, wb, dims, a["eps"], mean, rstd)
    gw = (g * xhat).sum(dims) if is_v(w) else None
    return _pairs((x, gx), (w, gw), (bias, g.sum(dims) if is_v(bias) else None))


# ---- dropout: the mask is drawn as ember's kernel draws it and saved


def _dropout_forward(b, a, node, env):
    x, p, training = a["input"], a["p"], a["training"]
    if a["inplace"]:
        raise NoFormula("in-place dropout")
    if not training or p == 0 or x.numel() == 0:
        return x, None
    if p == 1:
        scale = b.call(_ember().zeros_like, x)
    else:
        mask = b.call(_ember().empty_like, x).bernoulli_(1 - p)
        scale = mask / (1 - p)
    return x * scale, scale


@rule(
    "dropout",
    lambda input, p=0.5, training=True, inplace=False: None,
    forward=_dropout_forward,
)
def _dropout(b, a, out, g, ctx):
    return _pairs((a["input"], g if ctx is None else g * ctx))


# ---- losses


def _reduce_grad(g, reduction, count):
    if reduction == "mean":
        return g / count
    return g


def _class_targets(x, t, ignore_index):
    """(one-hot of the targets in x's dtype, valid mask (N, 1...) in x's dtype) for class
    indices ``t`` over dim 1 of ``x``."""
    ember = _ember()
    F = _F()
    valid = t.ne(ignore_index)
    safe = t.masked_fill(x.b.call(ember.logical_not, valid), 0)
    onehot = x.b.call(F.one_hot, safe, x.shape[1]).to(x.dtype)
    if x.ndim > 2:  # (N, d..., C) -> (N, C, d...)
        onehot = onehot.movedim(-1, 1)
    return onehot, valid.to(x.dtype).unsqueeze(1)


def _ce_sig(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    pass


def _loss_checks(a):
    if a.get("size_average") is not None or a.get("reduce") is not None:
        raise NoFormula("legacy reduction arguments")
    if a["input"].ndim < 2:
        raise NoFormula("unbatched loss")
    if _needs_v(a.get("weight")):
        raise NoFormula("class weights that require grad")
    if a["reduction"] not in ("mean", "sum", "none"):
        raise NoFormula(f"reduction {a['reduction']!r}")


def _class_shape(x):
    return [1, x.shape[1]] + [1] * (x.ndim - 2)


def _gscale(g, a, denom):
    """The per-element output gradient for a class loss of reduction a['reduction'] (``denom``:
    what the mean divides by)."""
    reduction = a["reduction"]
    if reduction == "none":
        return g.unsqueeze(1)
    if reduction == "mean":
        return g / denom
    return g


def _class_loss_grad(a):
    """The gradient of the loss with respect to the log-probabilities (dim 1 of the input) for
    cross_entropy / nll_loss: class indices (weights, ignore_index, label smoothing) or class
    probabilities (weights, label smoothing)."""
    x, t, w = a["input"], a["target"], a.get("weight")
    eps = a.get("label_smoothing", 0.0)
    ncls = x.shape[1]
    wb = w.reshape(_class_shape(x)) if is_v(w) else None
    if is_v(t) and t.dtype.is_floating_point:  # probabilities
        q = t * (1 - eps) + eps / ncls if eps else t
        G = q * wb if wb is not None else q
        denom = x.numel() // ncls
        return -(G * _gscale(a["g"], a, denom)), q
    onehot, valid = _class_targets(x, t, a["ignore_index"])
    if wb is not None:
        wt = (onehot * wb).sum(1, keepdim=True) * valid  # the weight of each sample's class
        G = onehot * wt
        denom = wt.sum()
    else:
        G = onehot * valid
        denom = valid.sum()
    if eps:
        smooth = (wb * valid if wb is not None else valid) * (eps / ncls)
        G = G * (1 - eps) + smooth
    return -(G * _gscale(a["g"], a, denom)), None


def _batched(a, g):
    """An unbatched class loss (input (C,)) as a batch of one: (arguments, output gradient)."""
    x, t = a["input"], a["target"]
    if not is_v(x) or x.ndim != 1 or not is_v(t):
        return a, g
    a = dict(a, input=x.unsqueeze(0), target=t.unsqueeze(0))
    return a, (g.reshape(1) if a["reduction"] == "none" else g)


@rule("cross_entropy", _ce_sig)
def _cross_entropy(b, a, out, g, ctx):
    x0, t0 = a["input"], a["target"]
    a, g = _batched(a, g)
    _loss_checks(a)
    x = a["input"]
    Glog, q = _class_loss_grad(dict(a, g=g))
    p = x.softmax(1)
    gx = Glog - p * Glog.sum(1, keepdim=True)
    gt = None
    if _needs_v(t0) and q is not None:  # d loss / d target = -(1 - eps) * w * scale * log p
        gt = -(x.log_softmax(1) * _gscale(g, a, x.numel() // x.shape[1]))
        if is_v(a["weight"]):
            gt = gt * a["weight"].reshape(_class_shape(x))
        if a["label_smoothing"]:
            gt = gt * (1 - a["label_smoothing"])
    return _pairs((x0, gx), (t0, gt))


def _nll_sig(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    pass


@rule("nll_loss", _nll_sig)
def _nll_loss(b, a, out, g, ctx):
    x0 = a["input"]
    a, g = _batched(a, g)
    _loss_checks(a)
    if a["target"].dtype.is_floating_point:
        raise NoFormula("nll_loss with probability targets")
    Glog, _ = _class_loss_grad(dict(a, g=g))
    return _pairs((x0, Glog))


@rule(
    "mse_loss",
    lambda input, target, size_average=None, reduce=None, reduction="mean", weight=None: None,
)
def _mse_loss(b, a, out, g, ctx):
    if a["weight"] is not None or a["size_average"] is not None or a["reduce"] is not None:
        raise NoFormula("mse_loss with weight or legacy arguments")
    x, t = a["input"], a["target"]
    d = x - t
    n = math.prod(d.shape) if a["reduction"] == "mean" else 1
    gd = d * (g * (2 / n)) if a["reduction"] != "none" else d * g * 2
    return _pairs((x, gd), (t, -gd if is_v(t) else None))


# ---- pooling and embedding


def _pool_sig(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    pass


def _max_pool_forward(b, a, node, env):
    if a["return_indices"]:
        raise NoFormula("max_pool2d returning indices")
    F = _F()
    both = b.call(
        F.max_pool2d,
        a["input"],
        a["kernel_size"],
        a["stride"],
        a["padding"],
        a["dilation"],
        ceil_mode=a["ceil_mode"],
        return_indices=True,
    )
    return both[0], both[1]


@rule("max_pool2d", _pool_sig, forward=_max_pool_forward)
def _max_pool2d(b, a, out, g, ctx):
    x = a["input"]
    kernel = getattr(_nn(), "max_pool2d_backward", None)
    if kernel is not None and x.ndim == 4:
        return _pairs((x, b.call(kernel, g, ctx, list(x.shape))))
    return _pairs((x, b.call(max_pool_backward, g, ctx, x.shape)))


def _embedding_sig(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    pass


@rule("embedding", _embedding_sig)
def _embedding(b, a, out, g, ctx):
    if a["max_norm"] is not None or a["scale_grad_by_freq"] or a["sparse"]:
        raise NoFormula("embedding with max_norm / scale_grad_by_freq / sparse")
    w = a["weight"]
    pad = a["padding_idx"]
    if pad is not None and pad < 0:
        pad += w.shape[0]
    return _pairs((w, b.call(embedding_backward, g, a["input"], w.shape[0], pad)))
