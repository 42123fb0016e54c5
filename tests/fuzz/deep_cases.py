"""Fuzz families that go deeper than one call (session 13's widening, issue 19): nn.Module
forwards with random configurations (convolutions, pools, norms, recurrent layers, transformer
layers, attention), gradients of op_db's differentiable ops (first and second order), the out=
and in-place variants of ops (dtypes, shapes and layouts of `out`, aliasing, broadcasting into
self) and type promotion across every pair of dtypes torch has on CPU (bool, the integers,
float16, bfloat16, float32/64, complex64/128) with tensors, 0-d tensors and Python numbers.

Every case is a ``prog:<name>`` program in DEEP_PROGRAMS, run on both libraries by
harness.call. Module parameters are filled from a seeded numpy generator (sorted by name), so
both libraries run the same weights whatever their own random number generators do.
"""

from __future__ import annotations

import numpy as np
from harness import Case
from hypothesis import strategies as st
from op_db import OP_DB, T
from strategies import LAYOUTS, _samples, chance, laid_out

# ----------------------------------------------------------------------------- programs


def _fill(m, module, seed):
    rng = np.random.default_rng(seed)
    with m.no_grad():
        for _, p in sorted(module.named_parameters(), key=lambda kv: kv[0]):
            values = rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)
            p.copy_(m.tensor(values).to(p.dtype))


def module_forward(m, kind, cfg, inputs, seed, train, call_kw):
    """nn.<kind>(**cfg) with seeded weights, in train or eval mode, called on inputs."""
    module = getattr(m.nn, kind)(**cfg)
    _fill(m, module, seed)
    module.train(train)
    return module(*inputs, **call_kw)


def _weighted_sum(m, outs):
    total = None
    for o in outs:
        if o is None or not hasattr(o, "is_floating_point") or not o.is_floating_point():
            continue
        w = m.arange(o.numel(), dtype=o.dtype).reshape(o.shape).sin() + 1.5
        term = (o * w).sum()
        total = term if total is None else total + term
    return total


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _flat(o)]
    return [out]


def op_grads(m, name, args, kwargs, order):
    """Gradients of a weighted sum of op_db op `name`'s floating outputs with respect to every
    floating tensor argument (laid out as drawn); order 2 differentiates the gradients' sum."""
    from op_db import OPS_BY_NAME

    leaves = [a for a in _flat(list(args) + list(kwargs.values())) if _is_float_tensor(a)]
    for leaf in leaves:
        leaf.requires_grad_(True)
    loss = _weighted_sum(m, _flat(OPS_BY_NAME[name].op(m, *args, **kwargs)))
    grads = m.autograd.grad(loss, leaves, allow_unused=True, create_graph=order == 2)
    if order == 1:
        return grads
    # a gradient that is constant in x (no graph, or a graph x is unused in) has zero second
    # derivatives: torch keeps some of those without a graph, compared here as zeros
    used = [(g, x) for g, x in zip(grads, leaves) if g is not None and g.requires_grad]
    second = [m.zeros_like(x) for x in leaves]
    if used:
        got = m.autograd.grad(
            _weighted_sum(m, [g for g, _ in used]), [x for _, x in used], allow_unused=True
        )
        for (_, x), g in zip(used, got):
            if g is not None:
                second[next(i for i, leaf in enumerate(leaves) if leaf is x)] = g
    return tuple(g.detach() if g is not None else None for g in grads), tuple(second)


def _is_float_tensor(a):
    return hasattr(a, "is_floating_point") and a.is_floating_point()


def out_variant(m, fn, args, kwargs, out_how, out_dtype):
    """fn(*args, out=out) with `out` of the result's shape or another, of another dtype, a
    non-contiguous view, or aliasing the first input; returns (result is out, out)."""
    ref = getattr(m, fn)(*args, **kwargs)
    first = ref[0] if isinstance(ref, tuple) else ref
    dtype = getattr(m, out_dtype) if out_dtype else first.dtype
    shape = tuple(first.shape)
    if out_how == "alias" and tuple(args[0].shape) == tuple(first.shape):
        out = args[0]  # (an input resized as it is read is undefined in torch)
    elif out_how == "empty":
        out = m.empty(0, dtype=dtype)
    elif out_how == "wrong_shape":
        out = m.zeros(tuple(s + 1 for s in shape) or (3,), dtype=dtype)
    elif out_how == "transposed" and len(shape) >= 2:
        out = m.zeros(shape[:-2] + (shape[-1], shape[-2]), dtype=dtype).transpose(-1, -2)
    else:
        out = m.zeros(shape, dtype=dtype)
    if isinstance(ref, tuple):
        out = (out, m.zeros(tuple(ref[1].shape), dtype=ref[1].dtype))
    res = getattr(m, fn)(*args, **kwargs, out=out)
    same = all(r is o for r, o in zip(res, out)) if isinstance(out, tuple) else res is out
    return same, out


def inplace_variant(m, method, x, other, x_dtype, other_dtype):
    """x.<method>_(other) with x and other converted to the given dtypes (other may be a
    Python number); returns x."""
    x = x.to(getattr(m, x_dtype))
    if hasattr(other, "to") and other_dtype:
        other = other.to(getattr(m, other_dtype))
    if other is None:
        return getattr(x, method + "_")()
    return getattr(x, method + "_")(other)


def promote(m, op, a, a_dtype, b, b_dtype):
    """op(a, b) with a and b converted to the given dtypes (b may be a Python number)."""
    a = a.to(getattr(m, a_dtype))
    if hasattr(b, "to"):
        b = b.to(getattr(m, b_dtype))
    if op == "where":
        return m.where(a.real > 0 if a.is_complex() else a.bool(), a, b)
    if op in ("matmul", "dot") and a.dim() > 0:
        return getattr(m, op)(a, b)
    r = getattr(a, op[7:])(b) if op.startswith("Tensor.") else getattr(m, op)(a, b)
    if str(r.dtype).endswith("complex32"):  # numpy has no complex32: compared as complex64
        return "complex32", r.to(m.complex64)
    return r


DEEP_PROGRAMS = {
    f.__name__: f for f in (module_forward, op_grads, out_variant, inplace_variant, promote)
}

# ----------------------------------------------------------------------------- modules


def _f32(draw, shape, low=-1.0, high=1.0):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.uniform(low, high, size=shape).astype(np.float32)
    return T(values, "float32", draw(st.sampled_from(LAYOUTS)) if len(shape) else "contiguous")


def _small(draw, lo=1, hi=4):
    return draw(st.integers(lo, hi))


@st.composite
def module_cases(draw):
    """A layer with a random (occasionally invalid) configuration on a matching input."""
    kind = draw(
        st.sampled_from(
            (
                "Linear Conv1d Conv2d ConvTranspose1d ConvTranspose2d MaxPool1d MaxPool2d "
                "AvgPool1d AvgPool2d LPPool2d AdaptiveAvgPool2d AdaptiveMaxPool2d BatchNorm1d "
                "BatchNorm2d LayerNorm GroupNorm InstanceNorm1d InstanceNorm2d RNN LSTM GRU "
                "TransformerEncoderLayer TransformerDecoderLayer MultiheadAttention Embedding "
                "PixelShuffle Bilinear"
            ).split()
        )
    )
    n = _small(draw, 1, 3)
    train = draw(st.booleans())
    cfg, call_kw = {}, {}
    bad = chance(draw, 8)  # an input that does not fit the layer
    if kind == "Linear":
        i, o = _small(draw), _small(draw)
        cfg = {"in_features": i, "out_features": o, "bias": draw(st.booleans())}
        inputs = (_f32(draw, (n, i + bad)),)
    elif kind == "Bilinear":
        i1, i2, o = _small(draw), _small(draw), _small(draw)
        cfg = {"in1_features": i1, "in2_features": i2, "out_features": o}
        inputs = (_f32(draw, (n, i1)), _f32(draw, (n, i2 + bad)))
    elif kind.startswith("Conv"):
        d = 1 if kind.endswith("1d") else 2
        groups = draw(st.sampled_from((1, 1, 2)))
        cin, cout = groups * _small(draw, 1, 2), groups * _small(draw, 1, 2)
        k = _small(draw, 1, 3)
        cfg = {
            "in_channels": cin,
            "out_channels": cout,
            "kernel_size": k,
            "stride": _small(draw, 1, 2),
            "dilation": _small(draw, 1, 2),
            "groups": groups,
            "bias": draw(st.booleans()),
        }
        transposed = "Transpose" in kind
        if transposed:
            cfg["padding"] = draw(st.integers(0, 1))
            if chance(draw, 30):
                cfg["output_padding"] = draw(st.integers(0, 1))
        else:
            cfg["padding"] = draw(st.sampled_from((0, 1, 2, "same", "valid")))
            if cfg["padding"] == "same":
                cfg["stride"] = 1
            cfg["padding_mode"] = draw(
                st.sampled_from(("zeros", "zeros", "reflect", "replicate", "circular"))
            )
        spatial = tuple(_small(draw, 3, 6) for _ in range(d))
        inputs = (_f32(draw, (n, cin + bad) + spatial),)
    elif kind in ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "LPPool2d"):
        d = 1 if kind.endswith("1d") else 2
        k = _small(draw, 1, 3)
        cfg = {
            "kernel_size": k,
            "stride": draw(st.sampled_from((None, 1, 2))),
            "ceil_mode": draw(st.booleans()),
        }
        if kind != "LPPool2d":
            cfg["padding"] = draw(st.integers(0, k // 2 + bad))
        else:
            cfg["norm_type"] = draw(st.sampled_from((1, 2, 3.0)))
        if kind.startswith("MaxPool"):
            cfg["dilation"] = _small(draw, 1, 2)
            cfg["return_indices"] = draw(st.booleans())
        if kind.startswith("AvgPool"):
            cfg["count_include_pad"] = draw(st.booleans())
        spatial = tuple(_small(draw, 2, 6) for _ in range(d))
        inputs = (_f32(draw, (n, _small(draw, 1, 3)) + spatial),)
    elif kind.startswith("Adaptive"):
        cfg = {"output_size": (_small(draw, 1, 3), draw(st.sampled_from((None, 1, 2, 4))))}
        inputs = (_f32(draw, (n, 2, _small(draw, 1, 6), _small(draw, 1, 6))),)
    elif kind.startswith("BatchNorm") or kind.startswith("InstanceNorm"):
        c = _small(draw, 1, 3)
        cfg = {
            "num_features": c,
            "eps": draw(st.sampled_from((1e-5, 1e-3))),
            "momentum": draw(st.sampled_from((0.1, 0.5, None))),
            "affine": draw(st.booleans()),
            "track_running_stats": draw(st.booleans()),
        }
        spatial = (_small(draw, 1, 4),) * (2 if kind.endswith("2d") else draw(st.integers(0, 1)))
        if kind.startswith("InstanceNorm") and not spatial:
            spatial = (3,)
        inputs = (
            _f32(
                draw,
                (n + (1 if kind.startswith("Batch") and not spatial else 0), c + bad) + spatial,
            ),
        )
    elif kind == "LayerNorm":
        shape = (n, _small(draw, 1, 3), _small(draw, 1, 4))
        k = draw(st.integers(1, 2))
        cfg = {
            "normalized_shape": shape[-k:],
            "elementwise_affine": draw(st.booleans()),
            "bias": draw(st.booleans()),
            "eps": 1e-5,
        }
        inputs = (_f32(draw, shape[:-1] + (shape[-1] + bad,)),)
    elif kind == "GroupNorm":
        g = _small(draw, 1, 3)
        c = g * _small(draw, 1, 2)
        cfg = {"num_groups": g, "num_channels": c, "affine": draw(st.booleans())}
        inputs = (_f32(draw, (n, c + bad, _small(draw, 1, 4))),)
    elif kind in ("RNN", "LSTM", "GRU"):
        i, h = _small(draw, 1, 3), _small(draw, 1, 3)
        cfg = {
            "input_size": i,
            "hidden_size": h,
            "num_layers": _small(draw, 1, 2),
            "bias": draw(st.booleans()),
            "batch_first": draw(st.booleans()),
            "bidirectional": draw(st.booleans()),
        }
        if kind == "RNN":
            cfg["nonlinearity"] = draw(st.sampled_from(("tanh", "relu")))
        if kind == "LSTM" and chance(draw, 25) and h > 1:
            cfg["proj_size"] = h - 1
        seq = _small(draw, 1, 4)
        shape = (n, seq, i + bad) if cfg["batch_first"] else (seq, n, i + bad)
        inputs = (_f32(draw, shape if chance(draw, 85) else shape[1:]),)
    elif kind in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        heads = _small(draw, 1, 2)
        d = heads * _small(draw, 1, 3)
        cfg = {
            "d_model": d,
            "nhead": heads,
            "dim_feedforward": _small(draw, 1, 6),
            "dropout": 0.0,
            "activation": draw(st.sampled_from(("relu", "gelu"))),
            "batch_first": draw(st.booleans()),
            "norm_first": draw(st.booleans()),
        }
        shape = (n, _small(draw, 1, 4), d + bad)
        inputs = (_f32(draw, shape),)
        if kind == "TransformerDecoderLayer":
            inputs += (_f32(draw, (n, _small(draw, 1, 4), d)),)
    elif kind == "MultiheadAttention":
        heads = _small(draw, 1, 2)
        e = heads * _small(draw, 1, 3)
        cfg = {
            "embed_dim": e,
            "num_heads": heads,
            "bias": draw(st.booleans()),
            "batch_first": draw(st.booleans()),
            "dropout": 0.0,
        }
        lq, lk = _small(draw, 1, 4), _small(draw, 1, 4)
        q = _f32(draw, (n, lq, e + bad))
        kv = _f32(draw, (n, lk, e))
        inputs = (q, kv, kv)
        call_kw = {
            "need_weights": draw(st.booleans()),
            "average_attn_weights": draw(st.booleans()),
        }
    elif kind == "Embedding":
        num, dim = _small(draw, 2, 6), _small(draw, 1, 4)
        cfg = {"num_embeddings": num, "embedding_dim": dim}
        if chance(draw, 40):
            cfg["padding_idx"] = draw(st.integers(-num, num - 1))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        idx = rng.integers(0, num + bad, size=(n, _small(draw, 1, 4)))
        inputs = (T(idx.astype(np.int64), "int64"),)
    else:  # PixelShuffle
        r = _small(draw, 1, 3)
        cfg = {"upscale_factor": r}
        inputs = (_f32(draw, (n, r * r * _small(draw, 1, 2) + bad, _small(draw, 1, 3), 2)),)
    seed = draw(st.integers(0, 2**16))
    return Case("prog:module_forward", (kind, cfg, inputs, seed, train, call_kw))


# ----------------------------------------------------------------------------- gradients

GRAD_OPS = [op for op in OP_DB if op.differentiable and "float64" in op.dtypes]


@st.composite
def grad_cases(draw):
    """First (and sometimes second) derivatives of op_db's differentiable ops in float64, on
    the samples op_db marks fit for gradient checks, every tensor in a random layout."""
    op = draw(st.sampled_from(GRAD_OPS))
    samples = [s for s in _samples(op.name, "float64") if s.grad_ok] or _samples(op.name, "float64")
    sample = samples[draw(st.integers(0, len(samples) - 1))]
    layouts = iter(draw(st.lists(st.sampled_from(LAYOUTS), min_size=16, max_size=16)) * 4)

    def lay(obj):
        if isinstance(obj, T):
            return laid_out(obj.values, obj.dtype, next(layouts))
        if isinstance(obj, (list, tuple)):
            return type(obj)(lay(o) for o in obj)
        return obj

    args, kwargs = lay(tuple(sample.args)), {k: lay(v) for k, v in sample.kwargs.items()}
    order = 2 if chance(draw, 20) else 1
    return Case("prog:op_grads", (op.name, args, kwargs, order))


# ----------------------------------------------------------------------------- out= / in-place

OUT_BINARY = (
    "add sub mul div pow atan2 maximum minimum fmod remainder floor_divide eq lt ge ne "
    "logical_and hypot copysign bitwise_and"
).split()
OUT_UNARY = "exp log sin tanh sigmoid sqrt abs neg floor ceil round trunc sign".split()
OUT_OTHER = ("sum", "cumsum", "matmul", "mm", "cat", "stack", "max", "sort", "clamp")
NUM_DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
)
COMPLEX = ("complex64", "complex128")


def _vals(draw, shape, dtype="float64", low=-3, high=3, frac=True):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    v = rng.integers(low, high + 1, size=shape).astype(np.float64)
    if frac and chance(draw, 50):
        v = v + rng.choice((0.0, 0.25, 0.5), size=shape)
    return laid_out(v, dtype, draw(st.sampled_from(LAYOUTS)) if shape else "contiguous")


def _shape(draw, max_dims=3):
    return tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, max_dims))))


@st.composite
def out_cases(draw):
    """out= forms of elementwise ops, reductions, matmul, cat/stack and values/indices ops."""
    fn = draw(st.sampled_from(OUT_BINARY + OUT_UNARY + list(OUT_OTHER)))
    shape = _shape(draw)
    a = _vals(draw, shape, low=1 if fn in ("log", "sqrt") else -3)
    kwargs = {}
    if fn in OUT_BINARY:
        b = _vals(draw, shape[draw(st.integers(0, len(shape))) :], low=1, high=3)
        args = (a, b)
    elif fn in ("matmul", "mm"):
        a = _vals(draw, (2, 3))
        args = (a, _vals(draw, (3, draw(st.integers(1, 3)))))
    elif fn in ("cat", "stack"):
        args = ([a, _vals(draw, shape)],)
    elif fn == "clamp":
        args, kwargs = (a,), {"min": -1, "max": 2}
    elif fn in ("sum", "cumsum", "max", "sort"):
        args = (a, draw(st.integers(-1, 0)) if shape or fn != "cumsum" else 0)
        if fn == "sum" and not shape:
            args = (a,)
    else:
        args = (a,)
    how = draw(st.sampled_from(("same", "same", "empty", "wrong_shape", "transposed", "alias")))
    out_dtype = draw(
        st.sampled_from((None, None, "float32", "float64", "int64", "bool", "float16"))
    )
    return Case("prog:out_variant", (fn, args, kwargs, how, out_dtype))


INPLACE = (
    "add sub mul div pow atan2 fmod remainder floor_divide hypot copysign bitwise_and "
    "logical_and lerp clamp_min clamp_max exp sqrt neg abs floor sigmoid tanh"
).split()
UNARY_INPLACE = ("exp", "sqrt", "neg", "abs", "floor", "sigmoid", "tanh")


@st.composite
def inplace_cases(draw):
    """x.op_(other) across dtypes of x and other, other a tensor that broadcasts (or would
    grow x), a 0-d tensor or a Python number."""
    method = draw(st.sampled_from(INPLACE))
    shape = _shape(draw)
    x = _vals(draw, shape, low=0 if method == "sqrt" else -3)
    xd = draw(st.sampled_from(NUM_DTYPES + COMPLEX))
    od = draw(st.sampled_from(NUM_DTYPES))
    if method in UNARY_INPLACE:
        return Case("prog:inplace_variant", (method, x, None, xd, None))
    form = draw(st.sampled_from(("tensor", "tensor", "0d", "number", "bigger")))
    if form == "number":
        other = draw(st.sampled_from((2, -1, 0.5, True, 1e10, 300, 2j)))
        od = None
    elif form == "0d":
        other = _vals(draw, (), low=1)
    elif form == "bigger":
        other = _vals(draw, (2,) + shape, low=1)
    else:
        other = _vals(draw, shape[draw(st.integers(0, len(shape))) :], low=1)
    if method == "lerp":
        od = "float32" if od is not None else None
        other = other if od else 0.5
    return Case("prog:inplace_variant", (method, x, other, xd, od))


# ----------------------------------------------------------------------------- promotion

PROMOTE_OPS = (
    "add sub mul div true_divide floor_divide remainder fmod pow eq lt ge maximum minimum "
    "atan2 bitwise_and bitwise_or logical_and logical_xor where Tensor.__radd__ Tensor.__rsub__ "
    "Tensor.__rtruediv__ Tensor.__mul__ Tensor.__floordiv__ Tensor.__mod__ Tensor.__pow__ "
    "Tensor.__rpow__ Tensor.__and__ Tensor.__lt__ matmul dot"
).split()
PY_NUMBERS = (0, 1, -2, 3, 2.5, -0.5, True, False, 1j, 2 + 1j, 300, 1e10, 2**40)


@st.composite
def promotion_cases(draw):
    """Binary ops over every pair of dtypes: tensor-tensor (broadcast), tensor-0d tensor and
    tensor-Python number, values small enough to be exact in every dtype."""
    op = draw(st.sampled_from(PROMOTE_OPS))
    ad = draw(st.sampled_from(NUM_DTYPES + COMPLEX))
    bd = draw(st.sampled_from(NUM_DTYPES + COMPLEX))
    shape = (3,) if op == "dot" else (2, 3) if op == "matmul" else _shape(draw, 2)
    low = 0 if "uint8" in (ad, bd) else -3
    a = _vals(draw, shape, low=low, frac=False)
    form = draw(st.sampled_from(("tensor", "tensor", "0d", "number")))
    if op in ("matmul", "dot"):
        form = "tensor"
    if form == "number":
        return Case("prog:promote", (op, a, ad, draw(st.sampled_from(PY_NUMBERS)), None))
    bshape = (
        (3,)
        if op in ("dot", "matmul")
        else ()
        if form == "0d"
        else shape[draw(st.integers(0, len(shape))) :]
    )
    b = _vals(
        draw,
        bshape,
        low=max(low, 1) if op in ("floor_divide", "remainder", "fmod", "div") else low,
        frac=False,
    )
    return Case("prog:promote", (op, a, ad, b, bd))


DEEP_STRATEGIES = (
    module_cases(),
    module_cases(),
    grad_cases(),
    grad_cases(),
    out_cases(),
    inplace_cases(),
    promotion_cases(),
    promotion_cases(),
)
