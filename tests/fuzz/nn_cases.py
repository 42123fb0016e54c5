"""Fuzz cases over ember.nn.functional: convolutions, pools, pad, interpolate, embedding,
one_hot, softmax, losses, norms and activations, with shapes and hyper-parameters mostly valid
and sometimes out of range (negative kernels, padding past the kernel, wrong ranks, bad types)."""

from __future__ import annotations

import numpy as np
from harness import Case
from hypothesis import strategies as st
from op_db import ALL, Dt
from strategies import chance, dim_of, dtypes, edge_int, index_tensor, maybe_bad, shapes, tensors

FLOAT_FIRST = ("float32",) * 6 + ("float64", "float16", "bfloat16", "int64", "bool")


def float_dtypes():
    return st.sampled_from(FLOAT_FIRST)


def knob(draw, lo, hi, spatial=1):
    """An int hyper-parameter (or a per-dim tuple of them), sometimes out of range."""
    one = lambda: edge_int(draw, draw(st.integers(lo, hi)))
    if spatial > 1 and chance(draw, 30):
        return tuple(one() for _ in range(spatial + (chance(draw, 10))))
    return one()


@st.composite
def conv_cases(draw):
    sp = draw(st.sampled_from((1, 2)))
    transposed = chance(draw, 30)
    dtype = draw(float_dtypes())
    n, groups = draw(st.integers(0, 2)), draw(st.sampled_from((1, 1, 2)))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    size = tuple(draw(st.integers(1, 6)) for _ in range(sp))
    k = tuple(draw(st.integers(1, 3)) for _ in range(sp))
    x_shape = ((n,) if n or chance(draw, 50) else ()) + (cin,) + size
    if chance(draw, 10):
        x_shape = x_shape[1:] if len(x_shape) > 2 else x_shape + (2,)  # wrong rank
    w_shape = ((cin, cout // groups) if transposed else (cout, cin // groups)) + k
    if chance(draw, 10):
        w_shape = (w_shape[0] + 1,) + w_shape[1:]
    x = draw(tensors(shape=x_shape, dtype=dtype))
    w = draw(tensors(shape=w_shape, dtype=dtype if chance(draw, 92) else draw(dtypes())))
    bias = draw(st.none() | tensors(shape=(cout + chance(draw, 8),), dtype=dtype))
    kw = {
        "stride": knob(draw, 1, 3, sp),
        "padding": knob(draw, 0, 2, sp),
        "dilation": knob(draw, 1, 2, sp),
        "groups": edge_int(draw, groups),
    }
    if transposed:
        kw["output_padding"] = knob(draw, 0, 1, sp)
    elif chance(draw, 15):
        kw["padding"] = draw(st.sampled_from(("same", "valid", "full")))
        kw["stride"] = 1 if chance(draw, 80) else 2
    name = f"conv_transpose{sp}d" if transposed else f"conv{sp}d"
    return Case("F." + name, (maybe_bad(draw, x), w, bias), kw)


@st.composite
def pool_cases(draw):
    sp = draw(st.sampled_from((1, 2)))
    how = draw(st.sampled_from(("max", "avg", "adaptive_avg", "adaptive_max", "lp")))
    dtype = draw(float_dtypes())
    lead = draw(st.sampled_from(((), (2,), (1, 2), (0, 2))))
    x = draw(tensors(shape=lead + tuple(draw(st.integers(0, 6)) for _ in range(sp)), dtype=dtype))
    name = f"{how}_pool{sp}d"
    if how.startswith("adaptive"):
        out = knob(draw, 1, 4, sp)
        if sp == 2 and chance(draw, 15):
            out = (None, draw(st.integers(1, 3)))
        kw = {"return_indices": True} if how == "adaptive_max" and chance(draw, 40) else {}
        return Case("F." + name, (maybe_bad(draw, x), out), kw, compare="first")
    kw = {
        "kernel_size": knob(draw, 1, 3, sp),
        "stride": draw(st.none()) if chance(draw, 30) else knob(draw, 1, 3, sp),
        "padding": knob(draw, 0, 1, sp),
        "ceil_mode": draw(st.booleans()),
    }
    if how == "max":
        kw["dilation"] = knob(draw, 1, 2, sp)
        kw["return_indices"] = draw(st.booleans())
    elif how == "avg":
        kw["count_include_pad"] = draw(st.booleans())
    else:
        kw = {
            "norm_type": draw(st.sampled_from((1, 2, 3.0))),
            "kernel_size": kw["kernel_size"],
            "stride": kw["stride"],
            "ceil_mode": kw["ceil_mode"],
        }
    return Case("F." + name, (maybe_bad(draw, x),), kw, compare="first")


@st.composite
def pad_cases(draw):
    x = draw(tensors(shape=draw(shapes(1, 4)), dtype=draw(float_dtypes())))
    n = draw(st.sampled_from((2, 2, 4, 6, 3, 0)))
    pad = tuple(edge_int(draw, draw(st.integers(-2, 3))) for _ in range(n))
    mode = draw(
        st.sampled_from(("constant", "constant", "reflect", "replicate", "circular", "nope"))
    )
    kw = {"mode": mode}
    if mode == "constant" and chance(draw, 50):
        kw["value"] = draw(st.sampled_from((1.5, -2, 0)))
    return Case("F.pad", (x, maybe_bad(draw, pad)), kw)


@st.composite
def interpolate_cases(draw):
    sp = draw(st.sampled_from((1, 2)))
    x = draw(
        tensors(
            shape=(draw(st.integers(0, 2)), 2) + tuple(draw(st.integers(0, 4)) for _ in range(sp)),
            dtype=draw(float_dtypes()),
        )
    )
    mode = draw(
        st.sampled_from(
            ("nearest", "nearest", "linear", "bilinear", "bicubic", "area", "nearest-exact")
        )
    )
    kw = {"mode": mode}
    if chance(draw, 50):
        kw["size"] = knob(draw, 1, 6, sp)
    if "size" not in kw or chance(draw, 10):
        kw["scale_factor"] = draw(st.sampled_from((2, 0.5, 1.5, 3, -1.0, 0.0)))
    if mode in ("linear", "bilinear", "bicubic") and chance(draw, 50):
        kw["align_corners"] = draw(st.booleans())
    return Case("F.interpolate", (x,), kw)


@st.composite
def embedding_cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    num, dim = draw(st.integers(0, 5)), draw(st.integers(0, 3))
    oob = chance(draw, 10)
    idx = index_tensor(
        draw(shapes(0, 2)),
        num + oob,
        rng,
        dtype=draw(st.sampled_from(("int64",) * 5 + ALL)),
        low=-oob,
    )
    if draw(st.booleans()):
        w = draw(tensors(shape=(num, dim), dtype=draw(float_dtypes())))
        kw = (
            {"padding_idx": edge_int(draw, draw(st.integers(-num, max(num - 1, 0))))}
            if chance(draw, 30)
            else {}
        )
        return Case("F.embedding", (maybe_bad(draw, idx), w), kw)
    return Case(
        "F.one_hot",
        (idx,),
        {"num_classes": edge_int(draw, draw(st.sampled_from((-1, num, num + 2))))},
    )


@st.composite
def softmax_cases(draw):
    x = draw(tensors(dtype=draw(float_dtypes())))
    name = draw(st.sampled_from(("softmax", "log_softmax", "softmin", "glu", "normalize")))
    kw = {"dim": dim_of(draw, x.ndim)}
    if name in ("softmax", "log_softmax") and chance(draw, 20):
        kw["dtype"] = Dt(draw(st.sampled_from(ALL)))
    if name == "normalize" and chance(draw, 50):
        kw["p"] = draw(st.sampled_from((1, 2.0, 3, 0)))
    return Case("F." + name, (maybe_bad(draw, x),), kw)


_ACTIVATIONS = {
    "relu": {},
    "relu6": {},
    "gelu": {"approximate": ("none", "tanh", "bad")},
    "silu": {},
    "mish": {},
    "sigmoid": {},
    "tanh": {},
    "elu": {"alpha": (1.0, 0.5, -1.0)},
    "selu": {},
    "celu": {"alpha": (1.0, 0.0, 2.0)},
    "leaky_relu": {"negative_slope": (0.01, 0.2, -1.0)},
    "hardtanh": {"min_val": (-1.0, 1.0), "max_val": (1.0, -1.0)},
    "hardsigmoid": {},
    "hardswish": {},
    "softplus": {"beta": (1.0, 2.0, 0.0), "threshold": (20.0, 1.0)},
    "softsign": {},
    "threshold": {"threshold": (0.5,), "value": (-1.0,)},
    "logsigmoid": {},
    "tanhshrink": {},
    "softshrink": {"lambd": (0.5, -1.0)},
    "hardshrink": {"lambd": (0.5, -1.0)},
    "dropout": {"p": (0.0, 0.5, 1.0, -0.1, 1.5), "training": (False,)},
}


@st.composite
def activation_cases(draw):
    name = draw(st.sampled_from(sorted(_ACTIVATIONS)))
    x = draw(tensors(dtype=draw(float_dtypes()), low=-30, high=30))
    kw = {
        k: draw(st.sampled_from(v))
        for k, v in _ACTIVATIONS[name].items()
        if chance(draw, 60) or k == "threshold"
    }
    if name == "threshold":
        kw = {"threshold": 0.5, "value": -1.0}
    # dropout in training mode is random: its shape and dtype are what can be compared
    return Case(
        "F." + name, (maybe_bad(draw, x),), kw, compare="shape" if name == "dropout" else "values"
    )


_REDUCTIONS = ("mean", "mean", "sum", "none", "batchmean", "bogus")


@st.composite
def loss_cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    name = draw(
        st.sampled_from(
            (
                "cross_entropy",
                "cross_entropy",
                "nll_loss",
                "mse_loss",
                "l1_loss",
                "smooth_l1_loss",
                "huber_loss",
                "binary_cross_entropy",
                "binary_cross_entropy_with_logits",
                "kl_div",
                "soft_margin_loss",
            )
        )
    )
    dtype = draw(float_dtypes())
    kw = {"reduction": draw(st.sampled_from(_REDUCTIONS))} if chance(draw, 40) else {}
    if name in ("cross_entropy", "nll_loss"):
        n, c = draw(st.integers(0, 3)), draw(st.integers(1, 4))
        extra = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.sampled_from((0, 0, 1, 2)))))
        x_shape = (n, c) + extra if n or chance(draw, 50) else (c,)
        x = draw(tensors(shape=x_shape, dtype=dtype))
        t_shape = (x_shape[:1] + x_shape[2:]) if len(x_shape) > 1 else ()
        if chance(draw, 10):
            t_shape = t_shape + (2,)
        oob = chance(draw, 8)
        target = index_tensor(t_shape, c + oob, rng, low=-oob)
        if name == "cross_entropy" and chance(draw, 20):  # class probabilities
            target = draw(tensors(shape=x_shape, dtype=dtype, low=0, high=1))
        if chance(draw, 8):
            target = draw(tensors(shape=t_shape, dtype=draw(dtypes())))
        if chance(draw, 25):
            kw["weight"] = draw(
                tensors(shape=(c + (chance(draw, 10)),), dtype=dtype, low=0.1, high=2)
            )
        if chance(draw, 25):
            kw["ignore_index"] = draw(st.sampled_from((-100, 0, 1, c + 5)))
        if name == "cross_entropy" and chance(draw, 25):
            kw["label_smoothing"] = draw(st.sampled_from((0.1, 0.0, 1.0, -0.5, 1.5)))
        return Case("F." + name, (maybe_bad(draw, x), target), kw)
    shape = draw(shapes(0, 3))
    lo, hi = (0.05, 0.95) if name == "binary_cross_entropy" else (-3, 3)
    x = draw(tensors(shape=shape, dtype=dtype, low=lo, high=hi))
    t_shape = shape if chance(draw, 85) else draw(shapes(0, 3))
    t = draw(
        tensors(shape=t_shape, dtype=dtype if chance(draw, 90) else draw(dtypes()), low=0, high=1)
    )
    if name in ("smooth_l1_loss", "huber_loss") and chance(draw, 40):
        kw["beta" if name == "smooth_l1_loss" else "delta"] = draw(
            st.sampled_from((0.5, 0.0, -1.0))
        )
    return Case("F." + name, (maybe_bad(draw, x), maybe_bad(draw, t)), kw)


@st.composite
def norm_cases(draw):
    dtype = draw(float_dtypes())
    name = draw(
        st.sampled_from(("batch_norm", "layer_norm", "group_norm", "instance_norm", "linear"))
    )
    n, c = draw(st.integers(0, 3)), draw(st.integers(1, 4))
    rest = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    x = draw(tensors(shape=(n, c) + rest, dtype=dtype))
    vec = lambda size, lo=-2, hi=2: tensors(shape=(size,), dtype=dtype, low=lo, high=hi)
    bad_c = c + chance(draw, 10)
    if name == "batch_norm":
        training = draw(st.booleans())
        mean, var = draw(vec(bad_c)), draw(vec(c, 0.5, 2))
        kw = {"training": training, "eps": draw(st.sampled_from((1e-5, 0.1)))}
        if chance(draw, 50):
            kw["weight"], kw["bias"] = draw(vec(c)), draw(vec(c))
        # training mode updates running stats in place: compare the output only
        return Case(
            "F.batch_norm", (x, mean if not training or chance(draw, 70) else None, var), kw
        )
    if name == "layer_norm":
        k = draw(st.integers(0, x.ndim))
        norm_shape = x.shape[x.ndim - k :] if chance(draw, 85) else (edge_int(draw, 3),)
        w_shape = x.shape[x.ndim - k :]
        kw = {"weight": draw(tensors(shape=w_shape, dtype=dtype))} if chance(draw, 40) else {}
        return Case("F.layer_norm", (x, list(norm_shape)), kw)
    if name == "group_norm":
        groups = draw(st.sampled_from((1, c, 2, 0, -1)))
        kw = {"weight": draw(vec(bad_c)), "bias": draw(vec(c))} if chance(draw, 40) else {}
        return Case("F.group_norm", (x, groups), kw)
    if name == "instance_norm":
        kw = {"use_input_stats": True}
        if chance(draw, 40):
            kw["weight"], kw["bias"] = draw(vec(bad_c)), draw(vec(c))
        return Case("F.instance_norm", (x,), kw)
    out = draw(st.integers(0, 3))
    w = draw(tensors(shape=(out, x.shape[-1] + (chance(draw, 10))), dtype=dtype))
    b = draw(st.none() | vec(out))
    return Case("F.linear", (x, maybe_bad(draw, w), b))


@st.composite
def misc_nn_cases(draw):
    dtype = draw(float_dtypes())
    name = draw(
        st.sampled_from(
            ("unfold", "fold", "pixel_shuffle", "cosine_similarity", "pairwise_distance", "prelu")
        )
    )
    if name == "unfold":
        x = draw(
            tensors(
                shape=(
                    draw(st.integers(0, 2)),
                    2,
                    draw(st.integers(1, 5)),
                    draw(st.integers(1, 5)),
                ),
                dtype=dtype,
            )
        )
        return Case(
            "F.unfold",
            (x, knob(draw, 1, 3, 2)),
            {"padding": knob(draw, 0, 1, 2), "stride": knob(draw, 1, 2, 2)},
        )
    if name == "fold":
        k = draw(st.integers(1, 2))
        out = draw(st.integers(k, 4))
        blocks = (out - k + 1) ** 2 + chance(draw, 10)
        x = draw(tensors(shape=(draw(st.integers(1, 2)), 2 * k * k, blocks), dtype=dtype))
        return Case("F.fold", (x, edge_int(draw, out), k))
    if name == "pixel_shuffle":
        r = draw(st.integers(1, 2))
        x = draw(
            tensors(
                shape=(1, r * r * draw(st.integers(1, 2)) + chance(draw, 10), 2, 2), dtype=dtype
            )
        )
        return Case("F.pixel_shuffle", (x, edge_int(draw, r)))
    if name == "prelu":
        x = draw(tensors(shape=(2, 3, 2), dtype=dtype))
        return Case(
            "F.prelu", (x, draw(tensors(shape=(draw(st.sampled_from((1, 3, 2))),), dtype=dtype)))
        )
    shape = draw(shapes(1, 3))
    a, b = (
        draw(tensors(shape=shape, dtype=dtype)),
        draw(tensors(shape=shape if chance(draw, 85) else draw(shapes(1, 3)), dtype=dtype)),
    )
    kw = (
        {"dim": dim_of(draw, len(shape))}
        if name == "cosine_similarity"
        else {"p": draw(st.sampled_from((2.0, 1.0, 0.0, -1.0)))}
    )
    return Case("F." + name, (a, maybe_bad(draw, b)), kw)


NN_STRATEGIES = (
    conv_cases(),
    pool_cases(),
    pad_cases(),
    interpolate_cases(),
    embedding_cases(),
    softmax_cases(),
    activation_cases(),
    loss_cases(),
    norm_cases(),
    misc_nn_cases(),
)
