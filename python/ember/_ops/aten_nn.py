"""torch's top-level forms of nn ops named after their ATen operators (torch.kl_div,
torch.native_layer_norm, torch.lstm_cell, torch.grid_sampler, torch.convolution ...).

They differ from torch.nn.functional's forms in their arguments: reductions are ATen's integers
(0 none, 1 mean, 2 sum), modes are integers, and several return the statistics the forward pass
computed. Note [aten reduction default]: torch's Python binding of these losses reads the
ATen default `reduction=Mean` as 0, so a call that leaves reduction out returns the unreduced
loss; ours do the same (programs written against torch rely on what torch does)."""

from ..nn import functional as F
from ..nn.functional import conv_tbc  # noqa: F401  (torch.conv_tbc is F.conv_tbc)

__all__ = [
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "ctc_loss",
    "hinge_embedding_loss",
    "kl_div",
    "margin_ranking_loss",
    "poisson_nll_loss",
    "triplet_margin_loss",
    "native_layer_norm",
    "native_batch_norm",
    "native_group_norm",
    "native_dropout",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "affine_grid_generator",
    "rnn_tanh_cell",
    "rnn_relu_cell",
    "gru_cell",
    "lstm_cell",
    "conv_tbc",
    "convolution",
    "embedding_renorm_",
]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction, op):
    try:
        return _REDUCTIONS[int(reduction)]
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"{op}: expected reduction to be 0 (none), 1 (mean) or 2 (sum); got {reduction!r}"
        ) from None


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
    reduction=0) -> Tensor

    F.binary_cross_entropy_with_logits with ATen's integer reduction."""
    r = _reduction(reduction, "binary_cross_entropy_with_logits")
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=r, pos_weight=pos_weight
    )


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0) -> Tensor

    F.cosine_embedding_loss with ATen's integer reduction."""
    r = _reduction(reduction, "cosine_embedding_loss")
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=r)


def ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False
):
    """ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
    zero_infinity=False) -> Tensor

    F.ctc_loss with ATen's integer reduction (lengths as tensors or sequences)."""
    from .creation import tensor

    if not hasattr(input_lengths, "dim"):
        input_lengths = tensor(list(input_lengths))
    if not hasattr(target_lengths, "dim"):
        target_lengths = tensor(list(target_lengths))
    r = _reduction(reduction, "ctc_loss")
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, r, zero_infinity=zero_infinity
    )


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """hinge_embedding_loss(input, target, margin=1.0, reduction=0) -> Tensor

    F.hinge_embedding_loss with ATen's integer reduction."""
    r = _reduction(reduction, "hinge_embedding_loss")
    return F.hinge_embedding_loss(input, target, margin, reduction=r)


def kl_div(input, target, reduction=0, *, log_target=False):
    """kl_div(input, target, reduction=0, *, log_target=False) -> Tensor

    F.kl_div with ATen's integer reduction (1 is the plain mean over all elements)."""
    r = _reduction(reduction, "kl_div")
    return F.kl_div(input, target, reduction=r, log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0) -> Tensor

    F.margin_ranking_loss with ATen's integer reduction."""
    r = _reduction(reduction, "margin_ranking_loss")
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=r)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor

    F.poisson_nll_loss with every argument given and ATen's integer reduction."""
    r = _reduction(reduction, "poisson_nll_loss")
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=r)


def triplet_margin_loss(
    anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=0
):
    """triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
    reduction=0) -> Tensor

    F.triplet_margin_loss with ATen's integer reduction."""
    r = _reduction(reduction, "triplet_margin_loss")
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=r)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """native_layer_norm(input, normalized_shape, weight, bias, eps) -> (Tensor, Tensor, Tensor)

    Layer normalization returning (output, mean, rstd); mean and rstd keep the normalized
    dimensions as size 1."""
    from .. import rsqrt, var_mean

    shape = list(normalized_shape)
    out = F.layer_norm(input, shape, weight, bias, eps)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    var, mean = var_mean(input.detach(), dims, correction=0, keepdim=True)
    return out, mean, rsqrt(var + eps)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
    eps) -> (Tensor, Tensor, Tensor)

    Batch normalization returning (output, save_mean, save_invstd): the batch's per-channel
    mean and 1/sqrt(biased variance + eps) when training (running statistics updated), empty
    tensors in evaluation."""
    from .. import rsqrt, var_mean
    from .creation import empty

    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    dims = tuple(d for d in range(input.dim()) if d != 1)
    var, mean = var_mean(input.detach(), dims, correction=0)
    return out, mean, rsqrt(var + eps)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (Tensor, Tensor, Tensor)

    Group normalization returning (output, mean, rstd), mean and rstd of shape (N, group)."""
    from .. import rsqrt, var_mean

    out = F.group_norm(input, group, weight, bias, eps)
    var, mean = var_mean(input.detach().reshape(N, group, -1), 2, correction=0)
    return out, mean, rsqrt(var + eps)


def native_dropout(input, p, train):
    """native_dropout(input, p, train) -> (Tensor, Tensor)

    Dropout returning (output, mask): when training, each element is kept with probability
    1 - p (the bool mask) and scaled by 1/(1 - p); otherwise a copy of input and a mask of
    ones."""
    from .creation import ones_like

    if train is False or p == 0:
        return input.clone(), ones_like(input, dtype=_bool())
    from .random import rand_like

    mask = rand_like(input) >= p
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return input * mask * scale, mask


def _bool():
    from .. import bool as b

    return b


_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    F.grid_sample with ATen's integer modes (interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection)."""
    mode = _INTERPOLATION.get(int(interpolation_mode))
    pad = _PADDING.get(int(padding_mode))
    if mode is None or pad is None:
        raise ValueError(
            f"grid_sampler: expected interpolation_mode in 0..2 and padding_mode in 0..2; "
            f"got {interpolation_mode} and {padding_mode}"
        )
    return F.grid_sample(input, grid, mode, pad, bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    grid_sampler for a 4-D input."""
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler_2d: expected a 4-D input; got {input.dim()}-D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    grid_sampler for a 5-D input."""
    if input.dim() != 5:
        raise RuntimeError(f"grid_sampler_3d: expected a 5-D input; got {input.dim()}-D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    """affine_grid_generator(theta, size, align_corners) -> Tensor

    F.affine_grid with align_corners given."""
    return F.affine_grid(theta, list(size), bool(align_corners))


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    gi = F.linear(input, w_ih, b_ih)
    gh = F.linear(hx, w_hh, b_hh)
    return gi, gh


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One step of an Elman RNN: tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One step of an Elman RNN with ReLU: relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> (Tensor, Tensor)

    One LSTM step from hx = (h, c): gates in torch's order (input, forget, cell, output);
    returns (h', c')."""
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, -1)
    c1 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c1.tanh(), c1


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One GRU step: gates in torch's order (reset, update, new); the reset gate scales the
    hidden part of the new gate after its bias."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * hx


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
    groups) -> Tensor

    The general convolution: conv1d/2d/3d (or their transposes when transposed) by the
    weight's number of spatial dimensions."""
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight; got {weight.dim()}-D")
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(input, weight, bias, stride, padding, list(output_padding), groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """embedding_renorm_(input, indices, max_norm, norm_type) -> Tensor

    Rescales, in place and without autograd, the rows of input that indices names whose
    norm_type-norm exceeds max_norm to norm max_norm; returns input."""
    from ..autograd.grad_mode import no_grad

    with no_grad():
        for row in sorted(set(indices.reshape(-1).tolist())):
            norm = float(input[row].norm(norm_type))
            if norm > max_norm:
                input[row] *= max_norm / (norm + 1e-7)
    return input
