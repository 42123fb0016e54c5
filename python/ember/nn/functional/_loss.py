"""Softmax family and loss functions, with torch.nn.functional's signatures.

Reductions travel to the C++ kernels as PyTorch's enum values (0 none, 1 mean, 2 sum); the
legacy ``size_average``/``reduce`` arguments map onto them as in torch.
"""

import math
import os
import sys
import warnings

from ... import _C
from ..._autocast_policy import fp32 as _autocast_fp32
from ..._C import Tensor, broadcast_shapes, int64
from ..._ops import _names, _op_range
from ..._ops.creation import ones_like, tensor
from ..._ops.index import where
from ..._type_info import scalar_type_name
from ...autograd.grad_mode import no_grad
from ._activation import _float_kernel, _raise_if_not_tensor, pairwise_distance

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep

_nn = _C._nn

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "log_softmax",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_NONE, _MEAN, _SUM = 0, 1, 2


def _reduction_enum(reduction):
    if reduction == "none":
        return _NONE
    if reduction == "mean":
        return _MEAN
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead."
        )
        return _MEAN
    if reduction == "sum":
        return _SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce):
    """The reduction string for the deprecated size_average/reduce pair (with torch's warning)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead."
    )
    return ret


def _enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def _string(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _empty_softmax(input, dim, dtype, negate=False):
    """torch's softmax family of an empty input in a non-float dtype: no kernel runs, so the
    (checked) dim and the dtype are all there is; None where the kernels run."""
    if not isinstance(input, Tensor) or input.numel() != 0:
        return None
    target = input.dtype if dtype is None else dtype
    if target.is_floating_point or target.is_complex:
        return None
    input.size(dim)  # torch's dim check
    if negate and input.dtype == _C.bool:
        return None  # the negation refuses it, as torch's
    return input.to(target)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(input, dim=None, _stacklevel=3, dtype=None)

    Softmax along ``dim``: exp(x) / sum(exp(x)), computed stably in one fused pass."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    empty = _empty_softmax(input, dim, dtype)
    if empty is not None:
        return empty
    try:
        return _nn.softmax(input, dim, dtype)
    except TypeError:
        _raise_if_not_tensor(input, "softmax")
        raise


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmin(input, dim=None, _stacklevel=3, dtype=None)

    Softmin along ``dim``: softmax(-x)."""
    if not isinstance(input, Tensor):  # torch negates first: a number has no .softmax
        return (-input).softmax(dim)
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    empty = _empty_softmax(input, dim, dtype, negate=True)
    if empty is not None:
        return empty
    return _nn.softmin(input, dim, dtype)  # torch's -input raises TypeError on a non-tensor


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log_softmax(input, dim=None, _stacklevel=3, dtype=None)

    log(softmax(x)) along ``dim``, computed as x - logsumexp(x)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    empty = _empty_softmax(input, dim, dtype)
    if empty is not None:
        return empty
    try:
        return _nn.log_softmax(input, dim, dtype)
    except TypeError:
        _raise_if_not_tensor(input, "log_softmax")
        raise


@_autocast_fp32
def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
        reduction='mean', label_smoothing=0.0)

    Cross-entropy between logits and class indices or class probabilities."""
    red = _enum(size_average, reduce, reduction)
    return _nn.cross_entropy(input, target, weight, red, ignore_index, label_smoothing)


@_autocast_fp32
def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
        reduction='mean')

    Negative log-likelihood of class indices given log-probabilities."""
    red = _enum(size_average, reduce, reduction)
    if _C._profiler_enabled():  # torch's row of the N-d entry point around nll_loss
        handle = _op_range.enter(
            "aten::nll_loss_nd", input, target, weight, red, ignore_index, autograd=True
        )
        try:
            out = _nn.nll_loss(input, target, weight, red, ignore_index)
        finally:
            _C._record_function_exit(handle)
    else:
        out = _nn.nll_loss(input, target, weight, red, ignore_index)
    _float_kernel(
        "nll_loss_out_frame" if input.dim() <= 2 else "nll_loss2d_forward_out_frame", input.dtype
    )
    return out


@_autocast_fp32
def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
        reduction='mean')

    Binary cross-entropy between probabilities and targets."""
    red = _enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) "
            "is deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:  # torch's kernel takes the target in input's dtype only
        from ..._type_info import scalar_type_name

        raise RuntimeError(
            f"Found dtype {scalar_type_name(target.dtype)} but expected "
            f"{scalar_type_name(input.dtype)}"
        )
    _float_kernel("binary_cross_entropy", input.dtype)
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.size(), weight.size()))
    return _nn.binary_cross_entropy(input, target, weight, red)


@_autocast_fp32
def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    """binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
        reduction='mean', pos_weight=None)

    Sigmoid + binary cross-entropy, in the numerically stable log-sigmoid form."""
    red = _enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size ({input.size()})"
        )
    _float_kernel("log_sigmoid_cpu", input.dtype)
    if isinstance(target, _C.Tensor) and not (
        target.dtype.is_floating_point or target.dtype.is_complex or target.dtype == _C.bool
    ):  # torch's loss is computed into a tensor of target's dtype
        raise RuntimeError(
            f"result type {scalar_type_name(_C.promote_types(input.dtype, target.dtype))} can't "
            f"be cast to the desired output type {scalar_type_name(target.dtype)}"
        )
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight, red)


def _warn_size(input, target):
    if target.size() != input.size():
        # The wrappers around a loss (autocast, grad_fn naming) vary in depth: point the warning
        # at the first frame outside ember, the caller's line, as torch's does.
        frame, stacklevel = sys._getframe(1), 2
        while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
            frame, stacklevel = frame.f_back, stacklevel + 1
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=stacklevel,
        )


def _weighted(loss, weight, input, reduction, mean_by_weight):
    """Applies per-element weights and a reduction the way torch's weighted mse/l1/huber do."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _pointwise_loss(kernel, input, target, size_average, reduce, reduction, weight, float_only=""):
    """`kernel` (mse or l1) on the broadcast pair, optionally weighted per element. torch checks
    the shapes, then the reduction, then (unweighted, in its kernel `float_only`) the dtype."""
    _warn_size(input, target)
    reduction = _string(size_average, reduce, reduction)
    input, target = _C.broadcast_tensors(input, target)
    # torch's l1 subtracts (refusing a bool), its mse kernel computes in the result dtype
    pair = _unbool(input, target) if float_only else (input, target)
    if weight is not None:
        return _weighted(kernel(*pair, _NONE), weight, input, reduction, True)
    red = _reduction_enum(reduction)
    if float_only:
        _float_kernel(float_only, _C.result_type(input, target))
    return kernel(*pair, red)


def _unbool(input, target):
    """The pair in its result dtype when one is bool and the other is not: torch's loss kernels
    compute there, where ember's would refuse subtracting a bool tensor."""
    if (input.dtype == _C.bool) != (target.dtype == _C.bool):
        dtype = _C.result_type(input, target)
        return input.to(dtype), target.to(dtype)
    return input, target


@_autocast_fp32
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mse_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None)

    Mean squared error (optionally weighted per element)."""
    return _pointwise_loss(
        _nn.mse_loss, input, target, size_average, reduce, reduction, weight, "mse_cpu"
    )


@_autocast_fp32
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """l1_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None)

    Mean absolute error (optionally weighted per element)."""
    complex_pair = any(isinstance(t, _C.Tensor) and t.is_complex() for t in (input, target))
    kernel = _complex_l1 if complex_pair else _nn.l1_loss
    return _pointwise_loss(kernel, input, target, size_average, reduce, reduction, weight)


def _complex_l1(input, target, red):
    """torch's l1 of complex operands: |input - target| (real), reduced."""
    d = (input - target).abs()
    return d if red == _NONE else d.mean() if red == _MEAN else d.sum()


def _no_bool(input, kernel, target=None):
    """torch's NotImplementedError for a bool or integer input its loss kernel lacks (ember's
    arithmetic would refuse a bool subtraction with a RuntimeError first); with `target`, for
    the dtype the pair promotes to."""
    if isinstance(input, _C.Tensor):
        dtype = input.dtype
        if isinstance(target, _C.Tensor):
            dtype = _C.result_type(input, target)
        _float_kernel(kernel, dtype)


@_autocast_fp32
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0)

    Smooth L1: quadratic below ``beta``, linear above."""
    _warn_size(input, target)
    red = _enum(size_average, reduce, reduction)
    if beta < 0:  # torch checks beta before the dtype
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:  # torch computes l1_loss here (its dtype rules and errors included)
        return l1_loss(input, target, reduction={_NONE: "none", _SUM: "sum"}.get(red, "mean"))
    _no_bool(input, "smooth_l1_cpu", target)  # after the reduction's check, as torch
    input, target = _unbool(*_C.broadcast_tensors(input, target))
    return _nn.smooth_l1_loss(input, target, red, beta)


@_autocast_fp32
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """huber_loss(input, target, reduction='mean', delta=1.0, weight=None)

    Huber loss: quadratic below ``delta``, linear (scaled by delta) above."""
    _warn_size(input, target)
    _reduction_enum(reduction)  # torch checks the reduction and delta before the dtype
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _no_bool(input, "huber_cpu", target)
    input, target = _C.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted(
            _nn.huber_loss(input, target, _NONE, delta), weight, input, reduction, False
        )
    return _nn.huber_loss(input, target, _reduction_enum(reduction), delta)


@_autocast_fp32
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False)

    Kullback-Leibler divergence with ``input`` in log space; 'batchmean' divides by the batch."""
    if size_average is not None or reduce is not None:
        red = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.",
                stacklevel=2,
            )
        red = _SUM if reduction == "batchmean" else _reduction_enum(reduction)
    out = _nn.kl_div(input, target, red, log_target)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.size()[0]
    return out


@_autocast_fp32
def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
        reduction='mean')

    1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    red = _enum(size_average, reduce, reduction)
    return _nn.cosine_embedding_loss(input1, input2, target, margin, red)


@_autocast_fp32
def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
        reduction='mean')

    max(0, -y (x1 - x2) + margin)."""
    red = _enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return _nn.margin_ranking_loss(input1, input2, target, margin, red)


@_autocast_fp32
def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-06,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
        size_average=None, reduce=None, reduction='mean')

    max(0, margin + d(a, p) - d(a, n)) with the p-norm pairwise distance."""
    red = _enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if any(isinstance(t, Tensor) and t.is_complex() for t in (anchor, positive, negative)):
        # the kernel is real; torch's composite of complex pairwise distances
        return triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=lambda a, b: pairwise_distance(a, b, p, eps),
            margin=margin,
            swap=swap,
            reduction=("none", "mean", "sum")[red],
        )
    return _nn.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, red)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6):
    return (x1 - x2 + eps).norm(p, dim=max(x1.dim(), x2.dim()) - 1)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
        margin=1.0, swap=False, reduction='mean')

    Triplet margin loss with a custom distance (default: pairwise Euclidean distance)."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if not dims[0] == dims[1] == dims[2]:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs"
        )
    red = _reduction_enum(reduction)
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, dist(positive, negative))
    loss = _C.clamp(margin + d_pos - d_neg, min=0)
    return loss.mean() if red == _MEAN else loss.sum() if red == _SUM else loss


_INTEGRAL = frozenset((_C.uint8, _C.int8, _C.int16, _C.int32, int64))


@_autocast_fp32
def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
        reduction='mean')

    x for target 1, max(0, margin - x) for target -1."""
    red = _enum(size_average, reduce, reduction)
    if isinstance(input, Tensor) and input.dtype in _INTEGRAL:
        # torch computes in input's integer dtype, the margin truncated to it; mean refuses it
        margin_part = (int(margin) - input).clamp_min(0)
        loss = where(target != 1, margin_part, 0) + where(target != -1, input, 0)
        return loss if red == _NONE else loss.mean() if red == _MEAN else loss.sum()
    return _nn.hinge_embedding_loss(input, target, margin, red)


@_autocast_fp32
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean')

    log(1 + exp(-y x))."""
    red = _enum(size_average, reduce, reduction)  # torch's Python layer checks it first
    if isinstance(input, Tensor) and isinstance(target, Tensor):
        shape = broadcast_shapes(input.shape, target.shape)
        if tuple(shape) != tuple(input.shape):  # torch writes the loss into input's shape
            raise RuntimeError(
                f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
        if not (input.dtype.is_floating_point or input.dtype.is_complex or input.dtype == _C.bool):
            from ..._type_info import scalar_type_name  # torch writes the float loss into input

            raise RuntimeError(
                "result type Float can't be cast to the desired output type "
                f"{scalar_type_name(input.dtype)}"
            )
    return _nn.soft_margin_loss(input, target, red)


@_autocast_fp32
def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-08,
    reduce=None,
    reduction="mean",
):
    """poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08,
        reduce=None, reduction='mean')

    Poisson negative log-likelihood; ``full`` adds the Stirling term."""
    reduction = _string(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    red = _reduction_enum(reduction)
    if not full and any(isinstance(t, _C.Tensor) and t.is_complex() for t in (input, target)):
        # the kernel is real; torch's composite over complex operands
        loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
        return loss if red == _NONE else loss.mean() if red == _MEAN else loss.sum()
    return _nn.poisson_nll_loss(input, target, log_input, full, eps, red)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction="mean"):
    """gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction='mean')

    Gaussian negative log-likelihood with predicted variance ``var`` (clamped at eps)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_C.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


@_autocast_fp32
def multi_margin_loss(
    input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
        reduce=None, reduction='mean')

    Multi-class hinge loss (p = 1 or 2)."""
    red = _enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _nn.multi_margin_loss(input, target, p, margin, weight, red)


@_autocast_fp32
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean')

    Multi-label hinge loss; each target row lists classes up to the first -1."""
    return _nn.multilabel_margin_loss(input, target, _enum(size_average, reduce, reduction))


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
        reduction='mean')

    Per-class binary cross-entropy with logits, averaged over classes."""
    red = _enum(size_average, reduce, reduction)
    if isinstance(input, Tensor) and input.dtype == _C.bool:  # torch's logsigmoid refuses it first
        _float_kernel("log_sigmoid_cpu", input.dtype)
    return _nn.multilabel_soft_margin_loss(input, target, weight, red)


def _lengths(lengths):
    if isinstance(lengths, Tensor):
        return lengths
    return tensor(list(lengths) if not isinstance(lengths, int) else lengths, dtype=int64)


@_autocast_fp32
def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean',
        zero_infinity=False)

    Connectionist temporal classification loss over (T, N, C) log-probabilities."""
    red = _reduction_enum(reduction)
    return _nn.ctc_loss(
        log_probs,
        targets,
        _lengths(input_lengths),
        _lengths(target_lengths),
        blank,
        red,
        zero_infinity,
    )


# ---- torch's grad_fn names (see ember/_ops/_names.py) ----


def _nll_name(input, reduction):
    """nll_loss's node: 2-D inputs NllLossBackward0, 4-D NllLoss2DBackward0; other ranks go
    through nll_loss2d on a reshape, which is a view when unreduced."""
    dim = input.dim() if isinstance(input, Tensor) else 0
    if dim <= 2:
        return "NllLossBackward0"
    if dim == 4 or reduction != "none":
        return "NllLoss2DBackward0"
    return None


def _reduction_of(args, kwargs):
    """The reduction of a cross_entropy / nll_loss call (both keep it at position 6)."""
    red = _names.arg(args, kwargs, 6, "reduction", "mean")
    size_average = _names.arg(args, kwargs, 3, "size_average")
    reduce = _names.arg(args, kwargs, 5, "reduce")
    if size_average is None and reduce is None:
        return red
    return "none" if reduce is False else ("sum" if size_average is False else "mean")


def _ce_name(args, kwargs):
    input, target = args[0] if args else kwargs.get("input"), _names.arg(args, kwargs, 1, "target")
    if not isinstance(target, Tensor) or target.is_floating_point():
        # class probabilities: torch's composite ends in a division by the number of samples
        # ('mean'), a negation ('sum'), or its own nodes ('none')
        return {"mean": "DivBackward1", "sum": "NegBackward0"}.get(_reduction_of(args, kwargs))
    if _names.arg(args, kwargs, 7, "label_smoothing", 0.0):
        return "AddBackward0"
    return _nll_name(input, _reduction_of(args, kwargs))


def _nll_loss_name(args, kwargs):
    input = args[0] if args else kwargs.get("input")
    return _nll_name(input, _reduction_of(args, kwargs))


cross_entropy = _names.named(cross_entropy, _ce_name)
nll_loss = _names.named(nll_loss, _nll_loss_name)
binary_cross_entropy = _names.named(binary_cross_entropy, "BinaryCrossEntropyBackward0")
binary_cross_entropy_with_logits = _names.named(
    binary_cross_entropy_with_logits, "BinaryCrossEntropyWithLogitsBackward0"
)
mse_loss = _names.named(mse_loss, _names.unweighted("MseLossBackward0", 5))
smooth_l1_loss = _names.named(smooth_l1_loss, "SmoothL1LossBackward0")
huber_loss = _names.named(huber_loss, _names.unweighted("HuberLossBackward0", 4))
soft_margin_loss = _names.named(soft_margin_loss, "SoftMarginLossBackward0")
multi_margin_loss = _names.named(multi_margin_loss, "MultiMarginLossBackward0")
multilabel_margin_loss = _names.named(multilabel_margin_loss, "MultilabelMarginLossBackward0")
