"""Mappings of the layers of ember.nn and their functional forms: Linear, Conv and ConvTranspose,
BatchNorm, LayerNorm, GroupNorm, InstanceNorm, Dropout, pooling, Embedding and padding."""

from .. import _C
from ._graph import np, numpy_dtype
from ._helpers import as_tuple, norm_dim
from ._registry import function, module
from .errors import SymbolicValueError

# -- linear ----------------------------------------------------------------------------------------


@function("linear", method=False)
def linear(g, input, weight, bias=None):
    if input.shape is not None and len(input.shape) == 2:
        return g.op("Gemm", input, weight, bias, transB=1)
    out = g.op("MatMul", input, g.op("Transpose", weight, perm=[1, 0]))
    return out if bias is None else g.op("Add", out, bias)


@module("Linear")
def _linear_module(g, m, input):
    return linear(g, input, g.module_param(m, "weight"), g.module_param(m, "bias"))


@function("addmm")
def _addmm(g, input, mat1, mat2, *, beta=1, alpha=1):
    return g.op("Gemm", mat1, mat2, input, alpha=float(alpha), beta=float(beta))


# -- convolution -----------------------------------------------------------------------------------


def _same_pads(kernel, dilation):
    total = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return [t // 2 for t in total] + [t - t // 2 for t in total]


def conv(
    g, input, weight, bias, stride, padding, dilation, groups, n, transposed=False, output_padding=0
):
    kernel = list(weight.shape[2:])
    stride, dilation = as_tuple(stride, n), as_tuple(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [0] * (2 * n)
        elif padding == "same":
            pads = _same_pads(kernel, dilation)
        else:
            raise SymbolicValueError(f"conv: expected padding 'same' or 'valid'; got {padding!r}")
    else:
        pads = as_tuple(padding, n) * 2
    batched = input.rank == n + 2
    x = input if batched else g.unsqueeze(input, [0])
    op_type = "ConvTranspose" if transposed else "Conv"
    extra = {"output_padding": as_tuple(output_padding, n)} if transposed else {}
    if transposed and not any(extra["output_padding"]):
        extra = {}
    out = g.op(
        op_type,
        x,
        weight,
        bias,
        kernel_shape=kernel,
        strides=stride,
        pads=pads,
        dilations=dilation,
        group=groups,
        **extra,
    )
    return out if batched else g.squeeze(out, [0])


def _conv_fn(n, transposed=False):
    if transposed:

        def sym(
            g, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
        ):
            return conv(
                g, input, weight, bias, stride, padding, dilation, groups, n, True, output_padding
            )
    else:

        def sym(g, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
            return conv(g, input, weight, bias, stride, padding, dilation, groups, n)

    return sym


for _n in (1, 2, 3):
    function(f"conv{_n}d", method=False)(_conv_fn(_n))
    function(f"conv_transpose{_n}d", method=False)(_conv_fn(_n, True))

_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _conv_module(n, transposed=False):
    def sym(g, m, input, output_size=None):
        if output_size is not None:
            raise SymbolicValueError(f"{type(m).__name__}: output_size is not supported")
        x, padding = input, m.padding
        if m.padding_mode != "zeros":
            mode = _PAD_MODES[m.padding_mode]
            if mode == "wrap" and g.opset < 19:
                raise SymbolicValueError("circular padding needs ONNX opset 19 or later")
            x = pad(g, x, _module_pads(m, n), mode)
            padding = 0
        return conv(
            g,
            x,
            g.module_param(m, "weight"),
            g.module_param(m, "bias"),
            m.stride,
            padding,
            m.dilation,
            m.groups,
            n,
            transposed,
            getattr(m, "output_padding", 0),
        )

    return sym


def _module_pads(m, n):
    """F.pad's list (last dim first, before/after) for a conv module's explicit padding."""
    if isinstance(m.padding, str):
        k = as_tuple(m.kernel_size, n)
        d = as_tuple(m.dilation, n)
        same = _same_pads(k, d) if m.padding == "same" else [0] * (2 * n)
        pairs = list(zip(same[:n], same[n:]))
    else:
        pairs = [(p, p) for p in as_tuple(m.padding, n)]
    return [v for pair in reversed(pairs) for v in pair]


for _n in (1, 2, 3):
    module(f"Conv{_n}d")(_conv_module(_n))
    module(f"ConvTranspose{_n}d")(_conv_module(_n, True))


# -- padding ---------------------------------------------------------------------------------------


def pad(g, input, pad_list, mode="constant", value=None):
    """F.pad's semantics: `pad_list` holds (before, after) pairs from the last dim backwards."""
    rank = input.rank
    pairs = [(pad_list[i], pad_list[i + 1]) for i in range(0, len(pad_list), 2)]
    begins, ends = [0] * rank, [0] * rank
    for i, (b, e) in enumerate(pairs):
        begins[rank - 1 - i], ends[rank - 1 - i] = b, e
    mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    fill = None if mode != "constant" or value is None else g.const(value, input.dtype)
    out = g.op("Pad", input, g.ints(begins + ends), fill, mode=mode)
    out.dtype, out.shape = input.dtype, (None,) * rank
    return out


@function("pad", method=False)
def _pad_fn(g, input, pad, mode="constant", value=None):
    return globals()["pad"](g, input, list(pad), mode, value)


def _pad_module(mode):
    def sym(g, m, input):
        return pad(g, input, list(m.padding), mode, getattr(m, "value", None))

    return sym


for _cls, _mode in (
    ("ZeroPad", "constant"),
    ("ConstantPad", "constant"),
    ("ReflectionPad", "reflect"),
    ("ReplicationPad", "edge"),
    ("CircularPad", "wrap"),
):
    for _n in (1, 2, 3):
        module(f"{_cls}{_n}d")(_pad_module(_mode))


# -- normalization ---------------------------------------------------------------------------------


def _ones(g, n, dtype, value=1.0):
    return g.const(np().full((n,), value, dtype=numpy_dtype(dtype)), dtype)


@function("batch_norm", method=False)
def batch_norm(
    g,
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
    cudnn_enabled=None,
):
    channels = input.shape[1]
    if running_mean is None or training:
        # Statistics of the batch itself (train mode or no running stats).
        axes = [0] + list(range(2, input.rank))
        mean = g.reduce("ReduceMean", input, axes, True)
        d = g.op("Sub", input, mean)
        var = g.reduce("ReduceMean", g.op("Mul", d, d), axes, True)
        y = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.const(eps, input.dtype))))
        bshape = [1, -1] + [1] * (input.rank - 2)
        if weight is not None:
            y = g.op("Mul", y, g.op("Reshape", weight, g.ints(bshape)))
        if bias is not None:
            y = g.op("Add", y, g.op("Reshape", bias, g.ints(bshape)))
        return y
    if channels is None:
        raise SymbolicValueError("batch_norm: expected a static number of channels")
    weight = weight if weight is not None else _ones(g, channels, input.dtype)
    bias = bias if bias is not None else _ones(g, channels, input.dtype, 0.0)
    return g.op(
        "BatchNormalization", input, weight, bias, running_mean, running_var, epsilon=float(eps)
    )


@module("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
def _batch_norm_module(g, m, input):
    weight, bias = g.module_param(m, "weight"), g.module_param(m, "bias")
    if m.training or m.running_mean is None:  # normalizes with the batch's own statistics
        return batch_norm(g, input, None, None, weight, bias, True, m.momentum, m.eps)
    mean, var = g.module_param(m, "running_mean"), g.module_param(m, "running_var")
    return batch_norm(g, input, mean, var, weight, bias, False, m.momentum, m.eps)


@function("layer_norm", method=False)
def layer_norm(g, input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=None):
    k = len(normalized_shape)
    axis = input.rank - k
    if g.opset >= 17:
        if weight is None:
            weight = g.const(
                np().ones(tuple(normalized_shape), dtype=numpy_dtype(input.dtype)), input.dtype
            )
        return g.op("LayerNormalization", input, weight, bias, axis=axis, epsilon=float(eps))
    axes = list(range(axis, input.rank))
    mean = g.reduce("ReduceMean", input, axes, True)
    d = g.op("Sub", input, mean)
    var = g.reduce("ReduceMean", g.op("Mul", d, d), axes, True)
    y = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.const(eps, input.dtype))))
    if weight is not None:
        y = g.op("Mul", y, weight)
    return y if bias is None else g.op("Add", y, bias)


@module("LayerNorm")
def _layer_norm_module(g, m, input):
    return layer_norm(
        g, input, m.normalized_shape, g.module_param(m, "weight"), g.module_param(m, "bias"), m.eps
    )


@function("group_norm", method=False)
def group_norm(g, input, num_groups, weight=None, bias=None, eps=1e-5):
    # Normalize over (C / G, *spatial) per group: reshape to (N, G, -1), then back.
    x = g.op("Reshape", input, g.ints([0, num_groups, -1]))
    mean = g.reduce("ReduceMean", x, [2], True)
    d = g.op("Sub", x, mean)
    var = g.reduce("ReduceMean", g.op("Mul", d, d), [2], True)
    y = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.const(eps, input.dtype))))
    y = g.op("Reshape", y, g.shape_of(input))
    bshape = [-1] + [1] * (input.rank - 2)
    if weight is not None:
        y = g.op("Mul", y, g.op("Reshape", weight, g.ints(bshape)))
    if bias is not None:
        y = g.op("Add", y, g.op("Reshape", bias, g.ints(bshape)))
    return y


@module("GroupNorm")
def _group_norm_module(g, m, input):
    return group_norm(
        g, input, m.num_groups, g.module_param(m, "weight"), g.module_param(m, "bias"), m.eps
    )


@module("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")
def _instance_norm_module(g, m, input):
    if m.track_running_stats and not m.training:
        return batch_norm(
            g,
            input,
            g.module_param(m, "running_mean"),
            g.module_param(m, "running_var"),
            g.module_param(m, "weight"),
            g.module_param(m, "bias"),
            False,
            m.momentum,
            m.eps,
        )
    c = input.shape[1]
    weight = g.module_param(m, "weight") or _ones(g, c, input.dtype)
    bias = g.module_param(m, "bias") or _ones(g, c, input.dtype, 0.0)
    return g.op("InstanceNormalization", input, weight, bias, epsilon=float(m.eps))


# -- dropout ---------------------------------------------------------------------------------------


@function("dropout", method=False)
def _dropout(g, input, p=0.5, training=True, inplace=False):
    if training and p > 0:
        return dropout_train(g, input, p, feature=False)
    return g.op("Identity", input)


def dropout_train(g, input, p, feature, name="dropout"):
    """Train-mode dropout: ONNX Dropout with training_mode set (random at run time, as torch's
    export); channel-wise (`feature`) by dropping a (N, C, 1, ...) tensor of ones."""
    if p >= 1:
        return g.op("Mul", input, g.const(0.0, input.dtype))
    ratio, on = g.const(float(p), input.dtype), g.const(True, _C.bool)
    if not feature:
        return g.op("Dropout", input, ratio, on)
    if input.rank < 2:
        raise SymbolicValueError(f"{name}: expected at least 2 dims in training mode")
    # The mask of one element per (n, c) plane, drawn from the input itself (a constant
    # input would be folded away, randomness and all, by ONNX Runtime's optimizer).
    k = input.rank - 2
    corner = g.op("Slice", input, g.ints([0] * k), g.ints([1] * k), g.ints(range(2, 2 + k)))
    _, keep = g.op("Dropout", corner, ratio, on, outputs=2)
    scale = g.op("Mul", g.cast(_as(keep, _C.bool), input.dtype), g.const(1 / (1 - p), input.dtype))
    return g.op("Mul", input, scale)


def _as(v, dtype):
    v.dtype = dtype
    return v


def _feature_dropout(name, batched_rank):
    def sym(g, input, p=0.5, training=True, inplace=False):
        if not (training and p > 0):
            return g.op("Identity", input)
        if input.rank == batched_rank - 1:  # unbatched: channels first
            return g.squeeze(dropout_train(g, g.unsqueeze(input, [0]), p, True, name), [0])
        return dropout_train(g, input, p, True, name)

    return sym


for _name, _rank in (("dropout1d", 3), ("dropout2d", 4), ("dropout3d", 5)):
    function(_name, method=False)(_feature_dropout(_name, _rank))


@function("alpha_dropout", "feature_alpha_dropout", method=False)
def _alpha_dropout(g, input, p=0.5, training=False, inplace=False):
    if training and p > 0:
        raise SymbolicValueError("alpha_dropout: exporting it in training mode is not supported")
    return g.op("Identity", input)


@module("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")
def _dropout_module(g, m, input):
    name = type(m).__name__
    if name in ("Dropout1d", "Dropout2d", "Dropout3d"):
        return _feature_dropout(name.lower(), {"1": 3, "2": 4, "3": 5}[name[-2]])(
            g, input, m.p, m.training
        )
    if name in ("AlphaDropout", "FeatureAlphaDropout"):
        return _alpha_dropout(g, input, m.p, m.training)
    return _dropout(g, input, m.p, m.training)


# -- pooling ---------------------------------------------------------------------------------------


def _pool(g, op_type, input, n, kernel_size, stride, padding, dilation=1, ceil_mode=False, **extra):
    kernel = as_tuple(kernel_size, n)
    stride = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else as_tuple(stride, n)
    )
    dil = as_tuple(dilation, n)
    batched = input.rank == n + 2
    x = input if batched else g.unsqueeze(input, [0])
    attrs = dict(
        kernel_shape=kernel,
        strides=stride,
        pads=as_tuple(padding, n) * 2,
        ceil_mode=int(bool(ceil_mode)),
        **extra,
    )
    if any(d != 1 for d in dil):
        attrs["dilations"] = dil
    out = g.op(op_type, x, **attrs)
    return out if batched else g.squeeze(out, [0])


def _max_pool_fn(n):
    def sym(
        g,
        input,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode=False,
        return_indices=False,
    ):
        if return_indices:
            from ._symbolic_pool import max_pool_with_indices

            return max_pool_with_indices(
                g, input, n, kernel_size, stride, padding, dilation, ceil_mode
            )
        return _pool(g, "MaxPool", input, n, kernel_size, stride, padding, dilation, ceil_mode)

    return sym


def _avg_pool_fn(n):
    def sym(
        g,
        input,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        if divisor_override is not None:
            raise SymbolicValueError(f"avg_pool{n}d: divisor_override is not supported")
        return _pool(
            g,
            "AveragePool",
            input,
            n,
            kernel_size,
            stride,
            padding,
            1,
            ceil_mode,
            count_include_pad=int(bool(count_include_pad)),
        )

    return sym


def _adaptive_fn(n, op_type, global_op):
    def sym(g, input, output_size, return_indices=False):
        if return_indices:
            raise SymbolicValueError("adaptive pooling: return_indices=True is not supported")
        out = as_tuple(output_size, n)
        spatial = list(input.shape[-n:])
        out = [s if o is None else o for o, s in zip(out, spatial)]
        batched = input.rank == n + 2
        x = input if batched else g.unsqueeze(input, [0])
        if all(o == 1 for o in out):
            y = g.op(global_op, x)
        elif all(isinstance(s, int) and s % o == 0 for s, o in zip(spatial, out)):
            k = [s // o for s, o in zip(spatial, out)]
            y = g.op(op_type, x, kernel_shape=k, strides=k)
        else:
            raise SymbolicValueError(
                f"adaptive pooling: expected output sizes of 1 or dividing the static input "
                f"sizes; got output {out} for input {spatial}"
            )
        return y if batched else g.squeeze(y, [0])

    return sym


for _n in (1, 2, 3):
    function(f"max_pool{_n}d", method=False)(_max_pool_fn(_n))
    function(f"avg_pool{_n}d", method=False)(_avg_pool_fn(_n))
    function(f"adaptive_avg_pool{_n}d", method=False)(
        _adaptive_fn(_n, "AveragePool", "GlobalAveragePool")
    )
    function(f"adaptive_max_pool{_n}d", method=False)(_adaptive_fn(_n, "MaxPool", "GlobalMaxPool"))
    module(f"MaxPool{_n}d")(
        lambda g, m, x, _n=_n: _max_pool_fn(_n)(
            g, x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, m.return_indices
        )
    )
    module(f"AvgPool{_n}d")(
        lambda g, m, x, _n=_n: _avg_pool_fn(_n)(
            g,
            x,
            m.kernel_size,
            m.stride,
            m.padding,
            m.ceil_mode,
            m.count_include_pad,
            getattr(m, "divisor_override", None),
        )
    )
    module(f"AdaptiveAvgPool{_n}d")(
        lambda g, m, x, _n=_n: _adaptive_fn(_n, "AveragePool", "GlobalAveragePool")(
            g, x, m.output_size
        )
    )
    module(f"AdaptiveMaxPool{_n}d")(
        lambda g, m, x, _n=_n: _adaptive_fn(_n, "MaxPool", "GlobalMaxPool")(
            g, x, m.output_size, m.return_indices
        )
    )


# -- embedding -------------------------------------------------------------------------------------


@function("embedding", method=False)
def embedding(
    g,
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    if max_norm is not None:
        raise SymbolicValueError(
            "embedding: max_norm is not supported (it renormalizes the weight)"
        )
    return g.op("Gather", weight, g.cast(input, _C.int64), axis=0)


@module("Embedding")
def _embedding_module(g, m, input):
    return embedding(g, input, g.module_param(m, "weight"), m.padding_idx, m.max_norm)


@function("normalize", method=False)
def _normalize(g, input, p=2.0, dim=1, eps=1e-12, out=None):
    if p != 2:
        raise SymbolicValueError(f"normalize: expected p=2; got {p!r}")
    d = norm_dim(dim, input.rank)
    n = g.reduce("ReduceL2", input, [d], True)
    return g.op("Div", input, g.op("Max", n, g.const(eps, input.dtype)))
