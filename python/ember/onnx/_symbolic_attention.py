"""Mappings of attention: F.scaled_dot_product_attention and nn.MultiheadAttention, decomposed
into MatMul, Softmax, Reshape and Transpose (the ONNX Attention operator is newer than the
opsets exported here)."""

import math

from .. import _C
from ._registry import function, module
from ._symbolic_nn import linear
from .errors import SymbolicValueError


def _neg_inf(g, dtype):
    return g.const(float("-inf"), dtype)


def _causal(g, scores):
    """A bool (L, S) mask, True on and below the diagonal, sized from `scores` at run time."""
    shape = g.op("Slice", g.shape_of(scores), g.ints([-2]), g.ints([2**62]), g.ints([0]))
    ones = g.op(
        "ConstantOfShape",
        shape,
        value=g.onnx.helper.make_tensor("value", g.onnx.TensorProto.BOOL, [1], [True]),
    )
    ones = g.cast(_typed(ones, _C.bool), _C.int64)  # Trilu does not take bool before opset 21
    return g.cast(_typed(g.op("Trilu", ones, upper=0), _C.int64), _C.bool)


def _typed(v, dtype):
    v.dtype = dtype
    return v


def attention(g, q, k, v, attn_mask, is_causal, scale, head_dim, dtype, rank):
    """softmax(q k^T * scale + mask) v over the last two dims of q, k, v (of `rank` dims); a
    bool mask is True where attending is allowed, a float one is added to the scores."""
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    s = 1.0 / math.sqrt(head_dim) if scale is None else scale
    scores = g.op("MatMul", g.op("Mul", q, g.const(s, dtype)), g.op("Transpose", k, perm=perm))
    if is_causal:
        scores = g.op("Where", _causal(g, scores), scores, _neg_inf(g, dtype))
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            scores = g.op("Where", attn_mask, scores, _neg_inf(g, dtype))
        else:
            scores = g.op("Add", scores, g.cast(attn_mask, dtype))
    weights = g.op("Softmax", scores, axis=-1)
    return g.op("MatMul", weights, v), weights


@function("scaled_dot_product_attention", method=False)
def _sdpa(
    g,
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    if enable_gqa:
        raise SymbolicValueError("scaled_dot_product_attention: enable_gqa is not supported")
    head_dim = query.shape[-1]
    if head_dim is None and scale is None:
        raise SymbolicValueError("scaled_dot_product_attention: expected a static head size")
    return attention(
        g, query, key, value, attn_mask, is_causal, scale, head_dim, query.dtype, query.rank
    )[0]


def _heads(g, x, heads, head_dim):
    """(N, L, E) -> (N, heads, L, head_dim)."""
    x = g.op("Reshape", x, g.ints([0, 0, heads, head_dim]))
    return g.op("Transpose", x, perm=[0, 2, 1, 3])


@module("MultiheadAttention")
def _mha(
    g,
    m,
    query,
    key,
    value,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    average_attn_weights=True,
    is_causal=False,
):
    extra = int(m.bias_k is not None) + int(bool(m.add_zero_attn))
    if extra and is_causal and attn_mask is None:
        raise SymbolicValueError(
            "MultiheadAttention: is_causal without attn_mask is not supported with add_bias_kv "
            "or add_zero_attn"
        )
    E, H = m.embed_dim, m.num_heads
    D = E // H
    batched = query.rank == 3
    q, k, v = query, key, value
    if not batched:
        q, k, v = (g.unsqueeze(t, [1]) for t in (q, k, v))
    if not (m.batch_first and batched):  # (L, N, E) -> (N, L, E)
        q, k, v = (g.op("Transpose", t, perm=[1, 0, 2]) for t in (q, k, v))
    bias = g.module_param(m, "in_proj_bias")
    if m._qkv_same_embed_dim:
        w = g.module_param(m, "in_proj_weight")
        wq, wk, wv = g.split(w, [E, E, E], 0)
    else:
        wq, wk, wv = (g.module_param(m, f"{c}_proj_weight") for c in "qkv")
    bq = bk = bv = None
    if bias is not None:
        bq, bk, bv = g.split(bias, [E, E, E], 0)
    q, k, v = (linear(g, t, w_, b_) for t, w_, b_ in ((q, wq, bq), (k, wk, bk), (v, wv, bv)))
    if m.bias_k is not None:  # one more key and value, learned, for every batch element
        rows = g.op(
            "Concat",
            g.op(
                "Slice", g.shape_of(_typed(k, query.dtype)), g.ints([0]), g.ints([1]), g.ints([0])
            ),
            g.ints([1, E]),
            axis=0,
        )
        k = g.op("Concat", k, g.op("Expand", g.module_param(m, "bias_k"), rows), axis=1)
        v = g.op("Concat", v, g.op("Expand", g.module_param(m, "bias_v"), rows), axis=1)
    q, k, v = (_heads(g, t, H, D) for t in (q, k, v))
    if m.add_zero_attn:  # and one more of zeros, after the heads are split
        lead = g.op(
            "Slice", g.shape_of(_typed(k, query.dtype)), g.ints([0]), g.ints([2]), g.ints([0])
        )
        zero = g.onnx.helper.make_tensor("value", g.onnx.TensorProto.FLOAT, [1], [0.0])
        zeros = g.op("ConstantOfShape", g.op("Concat", lead, g.ints([1, D]), axis=0), value=zero)
        zeros = g.cast(_typed(zeros, _C.float32), query.dtype)
        k, v = (g.op("Concat", t, zeros, axis=2) for t in (k, v))
    mask = None
    mask_rank = 0
    if attn_mask is not None:
        mask = attn_mask
        mask_rank = attn_mask.rank
        if mask.rank == 3:  # (N * H, L, S) -> (N, H, L, S)
            mask = g.op("Reshape", mask, g.ints([-1, H, 0, 0]))
            mask.dtype, mask.shape = attn_mask.dtype, (None,) * 4
            mask_rank = 4
        if mask.dtype == _C.bool:
            mask = g.op("Where", mask, _neg_inf(g, query.dtype), g.const(0.0, query.dtype))
    if key_padding_mask is not None:
        kpm = g.unsqueeze(key_padding_mask, [1, 2])  # (N, 1, 1, S)
        if key_padding_mask.dtype == _C.bool:
            kpm = g.op("Where", kpm, _neg_inf(g, query.dtype), g.const(0.0, query.dtype))
        else:
            kpm = g.cast(kpm, query.dtype)
        mask = kpm if mask is None else g.op("Add", mask, kpm)
        mask_rank = 4
    if mask is not None:
        mask.dtype = query.dtype
        if extra:  # the added keys are never masked
            pads = [0] * (2 * mask_rank)
            pads[2 * mask_rank - 1] = extra
            mask = _typed(g.op("Pad", mask, g.ints(pads)), query.dtype)
    causal = is_causal and attn_mask is None
    out, weights = attention(g, q, k, v, mask, causal, None, D, query.dtype, 4)
    out = g.op("Transpose", out, perm=[0, 2, 1, 3])
    out = g.op("Reshape", out, g.ints([0, 0, E]))
    out = linear(
        g,
        out,
        g.param(m.out_proj.weight, _name(g, "out_proj.weight")),
        g.param(m.out_proj.bias, _name(g, "out_proj.bias"))
        if m.out_proj.bias is not None
        else None,
    )
    if not (m.batch_first and batched):
        out = g.op("Transpose", out, perm=[1, 0, 2])
    if not batched:
        out = g.squeeze(out, [1])
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = g.reduce("ReduceMean", weights, [1], False)
    if not batched:
        weights = g.squeeze(weights, [0])
    return out, weights


def _name(g, name):
    return f"{g.prefix}.{name}" if g.prefix else name
