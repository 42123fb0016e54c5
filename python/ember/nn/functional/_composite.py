"""Attention, RMS norm, shuffles and the recurrent-layer loops, built from other F functions."""

import math
import sys
import warnings

from ... import _C
from ..._argparse import _CPP_NAMES
from ..._autocast_policy import fp32 as _autocast_fp32
from ..._autocast_policy import lower_precision as _autocast_lower
from ..._C import (
    Tensor,
    _nn,
    bfloat16,
    cat,
    float16,
    float64,
    int64,
    matmul,
    relu,
    rsqrt,
    sigmoid,
    sign,
    stack,
    tanh,
)
from ..._ops import _names
from ..._ops import creation as _creation
from ..._ops.creation import ones, tensor
from ..._ops.index import where
from ..._type_info import scalar_type_name as _type_name
from ..attention.bias import CausalBias
from ._spatial import _check_int32

__all__ = [
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    "rms_norm",
    "_canonical_mask",
    "_none_or_dtype",
    "_in_projection_packed",
    "_in_projection",
    "_rnn_forward",
    "_cell_step",
    "local_response_norm",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "native_channel_shuffle",
    "lp_pool1d",
    "max_unpool1d",
    "max_unpool2d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool3d",
]


# The package itself (partially initialised while this file loads): the sibling files fill it
# with the # F names, which are looked up at call time.
F = sys.modules[__package__]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor

    x / sqrt(mean(x^2 over the trailing dims) + eps) * weight; eps defaults to dtype eps."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    n = len(normalized_shape)
    if tuple(input.shape[input.dim() - n :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*{', '.join(str(d) for d in normalized_shape)}], but got input of size"
            f"{list(input.shape)}"
        )
    if eps is None:
        eps = {
            float64: 2.220446049250313e-16,
            float16: 0.0009765625,
            bfloat16: 0.0078125,
        }.get(input.dtype, 1.1920928955078125e-07)
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{_type_name(input.dtype)}'")
    dims = list(range(input.dim() - n, input.dim()))
    ms = input.pow(2).mean(dims, keepdim=True) + eps
    out = input / ms.sqrt() if input.is_complex() else input * rsqrt(ms)
    return out * weight if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0)

    x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (zero-padded window)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality" + " " * 26 + f"input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    # torch averages the window with avg_pool2d (3-d input) or avg_pool3d: floating dtypes and
    # int64, whose average truncates
    if not (input.is_floating_point() or input.dtype == int64):
        kernel = "avg_pool2d" if dim == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")
    sq = input.mul(input)
    before, after = size // 2, (size - 1) // 2
    shape = list(sq.shape)
    parts = []
    if before:
        parts.append(_creation.zeros(shape[:1] + [before] + shape[2:], dtype=sq.dtype))
    parts.append(sq)
    if after:
        parts.append(_creation.zeros(shape[:1] + [after] + shape[2:], dtype=sq.dtype))
    padded = cat(parts, 1) if len(parts) > 1 else sq
    channels = shape[1]
    window = padded.narrow(1, 0, channels)
    for i in range(1, size):
        window = window + padded.narrow(1, i, channels)
    mean = window.div(size, rounding_mode="trunc") if window.dtype == int64 else window / size
    div = mean.mul(alpha).add(k).pow(beta)
    return input / div


def pixel_shuffle(input, upscale_factor):
    """pixel_shuffle(input, upscale_factor) -> Tensor

    (*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle: expected a positive upscale_factor; got {r}")
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r * r > 2**63 - 1:
        raise ValueError(
            f"upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor={r}"
        )
    *batch, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            "square of "
            f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(batch)
    x = input.reshape(list(batch) + [c // (r * r), r, r, h, w])
    x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return x.reshape(list(batch) + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """pixel_unshuffle(input, downscale_factor) -> Tensor

    (*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    *batch, c, h, w = input.shape
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r != 0:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({d})={size} is not divisible by {r}"
            )
    n = len(batch)
    x = input.reshape(list(batch) + [c, h // r, r, w // r, r])
    x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return x.reshape(list(batch) + [c * r * r, h // r, w // r])


def channel_shuffle(input, groups):
    """channel_shuffle(input, groups) -> Tensor

    Interleaves channel groups: (N, g*k, *) viewed (N, g, k, *) -> (N, k, g, *)."""
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = list(input.shape[2:])
    x = input.reshape([n, groups, c // groups] + rest).transpose(1, 2)
    return x.reshape([n, c] + rest)


native_channel_shuffle = channel_shuffle


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False)

    (sum over each window of x^p)^(1/p), via avg_pool2d."""
    _check_int32(input, kernel_size, stride)
    kw, kh = _pair(kernel_size)
    out = F.avg_pool2d(
        input.pow(norm_type),
        kernel_size,
        stride if stride is not None else kernel_size,
        0,
        ceil_mode,
    )
    return (sign(out) * relu(_C.abs(out))).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False)

    (sum over each window of x^p)^(1/p), via avg_pool3d."""
    kd, kh, kw = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 3
    out = F.avg_pool3d(
        input.pow(norm_type),
        kernel_size,
        stride if stride is not None else kernel_size,
        0,
        ceil_mode,
    )
    return (sign(out) * relu(_C.abs(out))).mul(kd * kh * kw).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False)

    (sum over each window of x^p)^(1/p), via avg_pool1d."""
    _check_int32(input, kernel_size, stride)
    out = F.avg_pool1d(
        input.pow(norm_type),
        kernel_size,
        stride if stride is not None else kernel_size,
        0,
        ceil_mode,
    )
    return (sign(out) * relu(_C.abs(out))).mul(kernel_size).pow(1.0 / norm_type)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    default = [
        (input.size(-len(kernel_size) + d) - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
        for d in range(len(kernel_size))
    ]
    if output_size is None:
        return default
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(
            f"output_size should be a sequence containing {len(kernel_size)} or "
            f"{len(kernel_size) + 2} elements, but it has a length of '{len(output_size)}'"
        )
    for d in range(len(kernel_size)):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
            )
    return list(output_size)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    def as_tuple(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n

    kernel_size = as_tuple(kernel_size)
    stride = as_tuple(stride) if stride is not None else kernel_size
    size = _unpool_output_size(input, kernel_size, stride, as_tuple(padding), output_size)
    lead = list(input.shape[: input.dim() - n])
    plane = 1
    for v in size:
        plane *= v
    # Each index is a position in its (flattened) output plane, as max_pool's return_indices gives.
    flat = _creation.zeros(lead + [plane], dtype=input.dtype)
    out = flat.scatter(-1, indices.flatten(-n), input.flatten(-n))
    return out.view(lead + list(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None)

    Inverse of max_pool1d: puts each value at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@_autocast_fp32
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None)

    Inverse of max_pool2d: puts each value at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


@_autocast_fp32
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None)

    Inverse of max_pool3d: puts each value at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


@_autocast_lower
def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,

    softmax(Q K^T * scale + mask) V; a boolean mask is True where attending, a float one adds."""
    if isinstance(attn_mask, CausalBias):
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        attn_mask = attn_mask._materialize(query.device)
    if attn_mask is not None:
        _check_sdpa_mask_dtype(attn_mask, query)
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
        value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
    scores = matmul(query * scale_factor, key.transpose(-2, -1))
    if is_causal:
        keep = ones(L, S, dtype=_C.bool, device=query.device).tril(0)
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        _check_sdpa_mask_shape(attn_mask, scores)
        if attn_mask.dtype == _C.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask.to(scores.dtype)
    # A fully masked row attends to nothing: torch returns zeros there (its "safe softmax"), and the
    # row is neutralised before the softmax so no NaN reaches the gradients.
    dead = (scores == float("-inf")).all(dim=-1, keepdim=True)
    attn = F.softmax(scores.masked_fill(dead, 0.0), dim=-1).masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        attn = F.dropout(attn, dropout_p, training=True)
    return matmul(attn, value)


def _check_sdpa_mask_dtype(attn_mask, query):
    # torch takes a boolean mask, a float32 one whatever the query's dtype, or the query's dtype
    if attn_mask.dtype not in (_C.bool, _C.float32, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_CPP_NAMES.get(str(attn_mask.dtype).rpartition('.')[2])} and  "
            f"query.dtype: {_CPP_NAMES.get(str(query.dtype).rpartition('.')[2])} instead."
        )


def _check_sdpa_mask_shape(attn_mask, scores):
    """torch adds the mask to the scores in place (a mask of more dims than the scores is refused
    with that step's error); its fused CPU kernel, which takes 4-D inputs, reads the mask's (L, S)
    sizes first, so there a mask of under two dims is refused (the other paths broadcast it)."""
    if scores.dim() == 4 and attn_mask.dim() == 0:
        raise IndexError("Dimension specified as -2 but tensor has no dimensions")
    if scores.dim() == 4 and attn_mask.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if attn_mask.dim() > scores.dim():
        shape = list(_C.broadcast_shapes(scores.shape, attn_mask.shape))
        raise RuntimeError(
            f"output with shape {list(scores.shape)} doesn't match the broadcast shape {shape}"
        )


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """Turns a boolean mask (True = masked out) into an additive float mask of `target_type`."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _C.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
            "both instead.",
            stacklevel=3,
        )
    if not is_float:
        mask = _creation.zeros(mask.shape, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _in_projection_packed(q, k, v, w, b=None):
    if k is v and q is k:
        return F.linear(q, w, b).chunk(3, dim=-1)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                f"but found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                    f"3-D but found {attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                    )
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
        "query tensor"
    )


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
        in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
        out_proj_bias, training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
        use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
        v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
        is_causal=False)

    Multi-head attention over sequence-first (L, N, E) or unbatched (L, E) inputs, as torch's."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # sdpa builds the causal mask itself.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, check_other=False
        )
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v
        )
    else:
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    def pad_last(mask):
        return (
            None
            if mask is None
            else cat([mask, _creation.zeros(list(mask.shape[:-1]) + [1], dtype=mask.dtype)], -1)
        )

    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = pad_last(attn_mask), pad_last(key_padding_mask)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (
        k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
        if static_k is None
        else static_k
    )
    v = (
        v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
        if static_v is None
        else static_v
    )
    if add_zero_attn:
        zeros = _creation.zeros((bsz * num_heads, 1, head_dim), dtype=q.dtype)
        k = cat([k, zeros], dim=1)
        v = cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = pad_last(attn_mask), pad_last(key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        key_padding_mask = (
            key_padding_mask.view(bsz, 1, 1, src_len)
            .expand(-1, num_heads, -1, -1)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        # Tensor.bmm, not _C's bmm bound at import: function and dispatch modes see the call
        scores = (q * math.sqrt(1.0 / float(head_dim))).bmm(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _cell_step(mode, gi, h, c, w_hh, b_hh, w_hr):
    """One time step given the precomputed input projection `gi`; returns (h, c)."""
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        if w_hr is not None:
            h = F.linear(h, w_hr)
        return h, c
    if mode == "GRU":
        i_r, i_z, i_n = gi.chunk(3, -1)
        h_r, h_z, h_n = gh.chunk(3, -1)
        r = sigmoid(i_r + h_r)
        z = sigmoid(i_z + h_z)
        n = tanh(i_n + r * h_n)
        return n + z * (h - n), None
    pre = gi + gh
    return (tanh(pre) if mode == "RNN_TANH" else relu(pre)), None


# Note [RNN under autocast]
# torch's CPU recurrent layers are composites of linear and elementwise ops, except the LSTM
# layer, which runs as one oneDNN op (mkldnn_rnn_layer) on torch's autocast lower-precision list.
# So under CPU autocast an RNN or GRU layer and every cell take the step-by-step path (its linears
# autocast; the elementwise ops then promote: an RNN comes out in bfloat16, a GRU or an LSTM cell
# in float32 through its float32 hidden state), and an LSTM layer runs wholly in the autocast
# dtype (output, h_n and c_n in bfloat16). With a projection (proj_size) torch's LSTM leaves
# oneDNN for the composite, as here. (On CPUs without bfloat16 support torch's oneDNN LSTM
# raises "could not create a primitive descriptor"; ember gives the result of CPUs that have it.)
_lstm_layer_lower = _autocast_lower(_nn.rnn_layer)


def _rnn_forward(
    mode, input, hx, cx, weights, num_layers, bidirectional, dropout, training, lengths=None
):
    """Runs a stacked (bi)directional RNN over sequence-first `input` (T, B, I).

    Each layer direction is one fused op, except with projections (LSTM proj_size) or `lengths`,
    which run the steps here.

    `weights[layer * dirs + d]` is (w_ih, w_hh, b_ih, b_hh, w_hr) with None for absent ones;
    hx/cx are (layers * dirs, B, H). With `lengths` (a packed batch, padded), steps past a
    sequence's end keep its state and output zeros, so each direction starts and ends at the
    sequence's own bounds.
    Returns (output, h_n, c_n) with c_n None unless mode is LSTM."""
    dirs = 2 if bidirectional else 1
    steps = input.size(0)
    h_n, c_n = [], []
    layer_input = input
    masks = None
    if lengths is not None:
        lens = tensor(lengths, dtype=int64).unsqueeze(1)
        masks = [(lens > t) for t in range(steps)]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            idx = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[idx]
            c = cx[idx] if cx is not None else None
            autocast = _C._autocast_is_active()
            if masks is None and w_hr is None and (not autocast or mode == "LSTM"):
                # The whole direction in one op (Note [Fused RNN layer] in ops/rnn.cpp); an LSTM
                # under autocast in the lower precision (Note [RNN under autocast]).
                run = _lstm_layer_lower if autocast else _nn.rnn_layer
                out, h, c = run(layer_input, hx[idx], c, w_ih, w_hh, b_ih, b_hh, mode, d == 1)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
                continue
            # One GEMM for the whole sequence's input projection.
            # unbind: one backward node for all steps; indexing per step would give each step's
            # gradient the whole sequence's size.
            gi_steps = F.linear(layer_input, w_ih, b_ih).unbind(0)
            h = hx[idx]
            seq = [None] * steps
            order = range(steps - 1, -1, -1) if d == 1 else range(steps)
            for t in order:
                h_new, c_new = _cell_step(mode, gi_steps[t], h, c, w_hh, b_hh, w_hr)
                if masks is None:
                    h, c = h_new, c_new
                    seq[t] = h
                else:
                    # a finished sequence keeps its last step's state, in that step's dtype (an
                    # RNN under autocast steps in bfloat16 from a float32 initial state)
                    h = where(masks[t], h_new, h.to(h_new.dtype))
                    c = where(masks[t], c_new, c.to(c_new.dtype)) if c is not None else None
                    seq[t] = h_new * masks[t]
            outs.append(
                stack(seq, 0)
                if steps
                else _creation.zeros(0, hx.size(1), hx.size(2), dtype=hx.dtype)
            )
            h_n.append(h)
            c_n.append(c)
        layer_input = outs[0] if dirs == 1 else cat(outs, -1)
        if dropout > 0 and training and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    return layer_input, stack(h_n, 0), (stack(c_n, 0) if mode == "LSTM" else None)


# ---- torch's grad_fn names (see ember/_ops/_names.py) ----

pixel_shuffle = _names.named(pixel_shuffle, "PixelShuffleBackward0")
pixel_unshuffle = _names.named(pixel_unshuffle, "PixelUnshuffleBackward0")


def _sdpa_name(args, kwargs):
    """torch's CPU flash kernel (4-D, no dropout, value's head size = query's) or its math path,
    which ends in a reshape."""
    q, v = _names.arg(args, kwargs, 0, "query"), _names.arg(args, kwargs, 2, "value")
    if not isinstance(q, _C.Tensor) or not isinstance(v, _C.Tensor):
        return None
    flash = q.dim() == 4 and not _names.arg(args, kwargs, 4, "dropout_p", 0.0)
    if flash and q.shape[-1] == v.shape[-1]:
        return "ScaledDotProductFlashAttentionForCpuBackward0"
    return "UnsafeViewBackward0"


scaled_dot_product_attention = _names.named(scaled_dot_product_attention, _sdpa_name)
