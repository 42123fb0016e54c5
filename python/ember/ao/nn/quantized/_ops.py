"""The quantized kernels in torch.ops.quantized's shape: prepacked weights and the ops that the
modules of ember.ao.nn.quantized call (linear, linear_dynamic, conv1d/conv2d, add, mul, cat,
batch_norm2d, embedding_bag). They run the int8 kernels of ember._C._quantized
(csrc/ember/cpu/quantized.cpp); activations are quint8 and weights qint8, as on torch's x86
engine."""

from ...._autocast_policy import inner_excluded
from ...._C import _quantized as _Q
from ...._ops import quantized as _qt

__all__ = [
    "PackedLinearWeight",
    "PackedConvWeight",
    "linear_prepack",
    "linear_unpack",
    "linear",
    "linear_relu",
    "linear_dynamic",
    "linear_relu_dynamic",
    "conv_prepack",
    "conv_unpack",
    "conv1d",
    "conv2d",
    "add",
    "add_relu",
    "add_scalar",
    "add_scalar_relu",
    "mul",
    "mul_relu",
    "mul_scalar",
    "cat",
    "relu",
    "batch_norm",
    "embedding_bag_rowwise",
]


def _torch():
    import ember  # on use: this module is imported by the package root's children

    return ember


def _weight_qparams(qweight, n):
    """Per-output-channel float32 scales and int32 zero points of a qint8 weight."""
    e = _torch()
    if qweight.qscheme().name.startswith("per_tensor"):
        scales = e.full((n,), qweight.q_scale(), dtype=e.float32)
        zps = e.full((n,), qweight.q_zero_point(), dtype=e.int32)
    else:
        if qweight.q_per_channel_axis() != 0:
            raise RuntimeError("quantized weights must be per-channel along dim 0")
        scales = qweight.q_per_channel_scales().to(e.float32)
        zps = qweight.q_per_channel_zero_points().to(e.int32)
    return scales.contiguous(), zps.contiguous()


class PackedLinearWeight:
    """A qint8 weight [out, in] packed for the int8 GEMM, with its float bias (torch's
    LinearPackedParamsBase)."""

    def __init__(self, qweight, bias):
        e = _torch()
        if qweight.dtype != e.qint8:
            raise RuntimeError(
                f"quantized::linear_prepack: expected a qint8 weight; got {qweight.dtype}"
            )
        if qweight.dim() != 2:
            raise RuntimeError(
                "quantized::linear_prepack (fbgemm): Weight tensor rank should be == 2"
            )
        self.qweight = qweight
        # unpack() gives back the caller's bias object (a float module's Parameter stays one in
        # the state dict, as torch's packed params keep it); the kernels read a float32 copy.
        self._bias = None if bias is None else bias.contiguous()
        self.bias = None if bias is None else bias.detach().to(e.float32).contiguous()
        self.out_features, self.in_features = qweight.shape
        self.packed, self.col_sums = _Q.qpack(_Q.repr_view(qweight), 1)
        self.w_scales, self.w_zps = _weight_qparams(qweight, self.out_features)

    def unpack(self):
        return self.qweight, self._bias


class PackedConvWeight:
    """A qint8 convolution weight [out, in/groups, *kernel] packed per group, with its bias and
    geometry (torch's ConvPackedParamsBase)."""

    def __init__(self, qweight, bias, stride, padding, dilation, groups):
        e = _torch()
        if qweight.dtype != e.qint8:
            raise RuntimeError(
                f"quantized::conv_prepack: expected a qint8 weight; got {qweight.dtype}"
            )
        self.qweight = qweight
        self._bias = None if bias is None else bias.contiguous()
        self.bias = None if bias is None else bias.detach().to(e.float32).contiguous()
        self.stride, self.padding = list(stride), list(padding)
        self.dilation, self.groups = list(dilation), int(groups)
        self.out_channels = qweight.shape[0]
        self.kernel = list(qweight.shape[2:])
        # the kernel's im2col orders a row by (kernel tap, channel): weights [out, kh, kw, in]
        ints = _Q.repr_view(qweight)
        perm = [0] + list(range(2, ints.dim())) + [1]
        flat = ints.permute(perm).contiguous().reshape(self.out_channels, -1)
        self.packed, self.col_sums = _Q.qpack(flat, self.groups)
        self.w_scales, self.w_zps = _weight_qparams(qweight, self.out_channels)
        # oneDNN's int8 convolution (Note [oneDNN int8]): symmetric weights only; the weight is
        # reordered once per input shape and quantization parameters, kept here.
        self._plain = ints.reshape(
            [self.out_channels, ints.shape[1]] + [1] * (4 - ints.dim()) + self.kernel
        ).contiguous()
        self._onednn_ok = not bool((self.w_zps != 0).any())
        self._onednn = {}

    def unpack(self):
        return self.qweight, self._bias


def linear_prepack(weight, bias=None):
    """linear_prepack(weight, bias=None) -> PackedLinearWeight

    Packs a qint8 weight [out_features, in_features] and a float bias."""
    return PackedLinearWeight(weight, bias)


def fp16_weight(weight):
    """A float weight as torch's fp16 packing keeps it: saturated to float16's range, rounded
    to float16, held as float32 (the GEMM runs in float32)."""
    e = _torch()
    limit = 65504.0
    return weight.detach().float().clamp(-limit, limit).to(e.float16).float().contiguous()


def linear_unpack(packed):
    """linear_unpack(packed) -> (Tensor, Optional[Tensor])

    The qint8 weight and float bias of a packed weight."""
    return packed.unpack()


def _check_quint8(x, op):
    e = _torch()
    if not x.is_quantized or x.dtype != e.quint8:
        raise RuntimeError(f"{op}: expected a quint8 quantized input; got {x.dtype}")
    if not x.qscheme().name.startswith("per_tensor"):
        raise RuntimeError(f"{op}: expected a per-tensor quantized input")


def _linear(x, packed, scale, zero_point, relu, op):
    _check_quint8(x, op)
    out = _Q.linear(
        _Q.repr_view(x),
        x.q_scale(),
        x.q_zero_point(),
        packed.packed,
        packed.col_sums,
        packed.out_features,
        packed.w_scales,
        packed.w_zps,
        packed.bias,
        float(scale),
        int(zero_point),
        relu,
    )
    return _Q.from_repr_per_tensor(out, x.dtype, float(scale), int(zero_point))


def linear(x, packed, scale, zero_point):
    """linear(x, packed, scale, zero_point) -> Tensor

    quint8 x times the packed qint8 weight plus bias, accumulated in int32 and requantized to
    quint8 with the output scale and zero point."""
    return _linear(x, packed, scale, zero_point, False, "quantized::linear")


def linear_relu(x, packed, scale, zero_point):
    """linear_relu(x, packed, scale, zero_point) -> Tensor

    linear() with ReLU fused into the requantization."""
    return _linear(x, packed, scale, zero_point, True, "quantized::linear_relu")


def linear_fp16(x, weight, bias=None):
    """The fp16 dynamic linear: float x times the float16-rounded weight in float32 (torch's
    linear_dynamic_fp16 converts the weight, not the activations)."""
    e = _torch()
    return e.nn.functional.linear(x.float(), weight, bias).to(x.dtype)


def linear_dynamic(x, packed, reduce_range=True):
    """linear_dynamic(x, packed, reduce_range=True) -> Tensor

    float x quantized to quint8 over its own range (0..127 with reduce_range), times the packed
    weight in int8, float output."""
    return _Q.linear_dynamic(
        x.contiguous(),
        packed.packed,
        packed.col_sums,
        packed.out_features,
        packed.w_scales,
        packed.w_zps,
        packed.bias,
        bool(reduce_range),
        False,
    )


def linear_relu_dynamic(x, packed, reduce_range=True):
    """linear_relu_dynamic(x, packed, reduce_range=True) -> Tensor

    linear_dynamic() followed by ReLU."""
    return _Q.linear_dynamic(
        x.contiguous(),
        packed.packed,
        packed.col_sums,
        packed.out_features,
        packed.w_scales,
        packed.w_zps,
        packed.bias,
        bool(reduce_range),
        True,
    )


def conv_prepack(weight, bias, stride, padding, dilation, groups):
    """conv_prepack(weight, bias, stride, padding, dilation, groups) -> PackedConvWeight

    Packs a qint8 convolution weight [out, in/groups, kh, kw] (or [out, in/groups, k])."""
    return PackedConvWeight(weight, bias, stride, padding, dilation, groups)


def conv_unpack(packed):
    """conv_unpack(packed) -> (Tensor, Optional[Tensor])

    The qint8 weight and float bias of a packed convolution weight."""
    return packed.unpack()


def _conv2d_onednn(r, xs, xz, p, scale, zero_point, relu, stride, padding, dilation):
    """The convolution on oneDNN, or None where it does not run (Note [oneDNN int8])."""
    key = (tuple(r.shape), xs, xz, scale, zero_point, relu)
    w = p._onednn.get(key)
    if w is None:
        if len(p._onednn) >= 8:
            p._onednn.clear()
        w = _Q.conv2d_onednn_pack(
            p._plain,
            list(r.shape),
            stride,
            padding,
            dilation,
            p.groups,
            p.w_scales,
            xs,
            xz,
            scale,
            zero_point,
            relu,
        )
        p._onednn[key] = w
    if w.numel() == 0:
        return None
    return _Q.conv2d_onednn(
        r,
        xs,
        xz,
        w,
        p._plain,
        stride,
        padding,
        dilation,
        p.groups,
        p.w_scales,
        p.bias,
        scale,
        zero_point,
        relu,
    )


def _conv2d(x, p, scale, zero_point, relu, op, kernel, stride, padding, dilation):
    _check_quint8(x, op)
    scale, zero_point = float(scale), int(zero_point)
    r = _Q.repr_view(x)
    if p._onednn_ok and r.shape[1] == p._plain.shape[1] * p.groups:
        out = _conv2d_onednn(
            r, x.q_scale(), x.q_zero_point(), p, scale, zero_point, relu, stride, padding, dilation
        )
        if out is not None:
            return _Q.from_repr_per_tensor(out, x.dtype, scale, zero_point)
    out = _Q.conv2d(
        r,
        x.q_scale(),
        x.q_zero_point(),
        p.packed,
        p.col_sums,
        [p.out_channels] + kernel,
        stride,
        padding,
        dilation,
        p.groups,
        p.w_scales,
        p.w_zps,
        p.bias,
        float(scale),
        int(zero_point),
        relu,
    )
    return _Q.from_repr_per_tensor(out, x.dtype, float(scale), int(zero_point))


def conv2d(x, packed, scale, zero_point, relu=False):
    """conv2d(x, packed, scale, zero_point, relu=False) -> Tensor

    quint8 NCHW convolution with a packed qint8 weight (im2col + the int8 GEMM), requantized to
    quint8; relu fuses ReLU into the requantization."""
    if x.dim() != 4:
        raise RuntimeError(f"quantized::conv2d: expected a 4-d input; got {x.dim()} dims")
    return _conv2d(
        x,
        packed,
        scale,
        zero_point,
        relu,
        "quantized::conv2d",
        packed.kernel,
        packed.stride,
        packed.padding,
        packed.dilation,
    )


def conv1d(x, packed, scale, zero_point, relu=False):
    """conv1d(x, packed, scale, zero_point, relu=False) -> Tensor

    quint8 NCL convolution: conv2d() over a height of 1."""
    if x.dim() != 3:
        raise RuntimeError(f"quantized::conv1d: expected a 3-d input; got {x.dim()} dims")
    out = _conv2d(
        x.unsqueeze(2),
        packed,
        scale,
        zero_point,
        relu,
        "quantized::conv1d",
        [1] + packed.kernel,
        [1] + packed.stride,
        [0] + packed.padding,
        [1] + packed.dilation,
    )
    return out.squeeze(2)


def conv3d(x, packed, scale, zero_point, relu=False):
    """conv3d(x, packed, scale, zero_point, relu=False) -> Tensor

    quint8 NCDHW convolution with a packed qint8 weight, requantized to quint8. ember has no
    int8 3-d kernel: the int32 sums are computed exactly as a float convolution of the
    zero-point-corrected integers, then requantized with the int8 GEMM's epilogue in float32
    (Note [Int8 GEMM]): (acc + bias / (sa * sw)) * (sa * sw / so), rounded half to even, plus
    so's zero point. The convolution runs in float32 when no partial sum can reach 2^24 (the
    largest |input| times the largest sum of one output channel's |weights| stays below it):
    the float32 kernels are direct (products and sums of integers, no transforms), so every
    partial sum is then an exact integer, 4-10x faster than float64; else in float64 (every
    partial sum an integer below 2^53)."""
    op = "quantized::conv3d"
    if x.dim() != 5:
        raise RuntimeError(f"{op}: expected a 5-d input; got {x.dim()} dims")
    _check_quint8(x, op)
    e = _torch()
    scale, zero_point = float(scale), int(zero_point)
    xi = _Q.repr_view(x).to(e.float32) - float(x.q_zero_point())
    w_zps = packed.w_zps.to(e.float32).reshape(-1, 1, 1, 1, 1)
    wi = _Q.repr_view(packed.qweight).to(e.float32) - w_zps
    if xi.numel() and wi.numel():
        bound = float(xi.abs().amax()) * float(wi.abs().sum((1, 2, 3, 4)).amax())
        if bound >= 2.0**24:
            xi, wi = xi.to(e.float64), wi.to(e.float64)
    # inside an autocast region too: a bfloat16 cast would lose the integers
    acc = inner_excluded(e.nn.functional.conv3d)(
        xi, wi, None, packed.stride, packed.padding, packed.dilation, packed.groups
    ).to(e.float32)
    per_channel = [1, -1, 1, 1, 1]
    sw = (e.tensor(x.q_scale(), dtype=e.float32) * packed.w_scales).reshape(per_channel)
    if packed.bias is not None:
        acc = acc + packed.bias.reshape(per_channel) / sw
    y = (acc * (sw / e.tensor(scale, dtype=e.float32))).round() + zero_point
    lo, hi = _QRANGE["quint8"]
    out = y.clamp(zero_point if relu else lo, hi).to(e.uint8).contiguous()
    return _Q.from_repr_per_tensor(out, x.dtype, scale, zero_point)


_QRANGE = {"qint8": (-128, 127), "quint8": (0, 255), "qint32": (-(2**31), 2**31 - 1)}


def _binary(a, b, scale, zero_point, op):
    e = _torch()
    if a.shape != b.shape:
        shape = e.broadcast_shapes(a.shape, b.shape)
        a = a.expand(shape) if a.shape != shape else a
        b = b.expand(shape) if b.shape != shape else b
    if a.dtype != b.dtype:
        raise RuntimeError(f"quantized binary op: expected one dtype; got {a.dtype} and {b.dtype}")
    qmin, qmax = _QRANGE[repr(a.dtype)[6:]]
    out = _Q.binary(
        _Q.repr_view(a),
        a.q_scale(),
        a.q_zero_point(),
        _Q.repr_view(b),
        b.q_scale(),
        b.q_zero_point(),
        op,
        float(scale),
        int(zero_point),
        qmin,
        qmax,
    )
    return _Q.from_repr_per_tensor(out, a.dtype, float(scale), int(zero_point))


def add(qa, qb, scale, zero_point):
    """add(qa, qb, scale, zero_point) -> Tensor

    Elementwise sum of two quantized tensors, requantized with the output scale and zero point."""
    return _binary(qa, qb, scale, zero_point, 0)


def add_relu(qa, qb, scale, zero_point):
    """add_relu(qa, qb, scale, zero_point) -> Tensor

    add() followed by ReLU, fused."""
    return _binary(qa, qb, scale, zero_point, 2)


def mul(qa, qb, scale, zero_point):
    """mul(qa, qb, scale, zero_point) -> Tensor

    Elementwise product of two quantized tensors, requantized."""
    return _binary(qa, qb, scale, zero_point, 1)


def mul_relu(qa, qb, scale, zero_point):
    """mul_relu(qa, qb, scale, zero_point) -> Tensor

    mul() followed by ReLU, fused."""
    return _binary(qa, qb, scale, zero_point, 3)


def _requantize(q, scale, zero_point, dtype=None):
    e = _torch()
    return e.quantize_per_tensor(q.dequantize(), scale, zero_point, dtype or q.dtype)


def _add_scalar(qa, b, relu):
    """torch's quantized::add_scalar: b in qa's steps, c = round(b / scale), is folded into the
    zero point (z - c) where that stays in the dtype's range, and the integers are kept; past it
    the zero point pins to the range's end and the scale widens to cover the shifted values,
    which are requantized."""
    e = _torch()
    if not qa.is_quantized or not qa.qscheme().name.startswith("per_tensor"):
        raise RuntimeError("Only per tensor quantization is supported in Add.")
    qmin, qmax = _QRANGE[repr(qa.dtype)[6:]]
    s, z = qa.q_scale(), qa.q_zero_point()
    c = round(float(b) / s)  # nearbyint: half to even, as Python's round
    shifted = z - c
    if qmin <= shifted <= qmax:
        out = _Q.from_repr_per_tensor(_Q.repr_view(qa).clone(), qa.dtype, s, shifted)
        return _qt._relu(out) if relu else out
    zp = qmin if shifted < qmin else qmax
    scale = (qmax - shifted if shifted < qmin else shifted - qmin) / (qmax - qmin) * s
    # the kernel dequantizes with the shifted zero point and requantizes in float32
    values = (_Q.repr_view(qa).to(e.float32) - float(shifted)) * s
    out = e.quantize_per_tensor(values, scale, zp, qa.dtype)
    return _qt._relu(out) if relu else out


def add_scalar(qa, b):
    """add_scalar(qa, b) -> Tensor

    qa + b for a Python number b (torch's quantized::add_scalar): the zero point shifts by b's
    steps; the scale grows only when the shifted zero point leaves the dtype's range."""
    return _add_scalar(qa, b, False)


def add_scalar_relu(qa, b):
    """add_scalar_relu(qa, b) -> Tensor

    add_scalar() followed by ReLU."""
    return _add_scalar(qa, b, True)


def mul_scalar(qa, b):
    """mul_scalar(qa, b) -> Tensor

    qa * b for a Python number b: the integers are kept and the scale multiplied (negative b
    also mirrors the zero point), as torch's quantized::mul_scalar does."""
    e = _torch()
    b = float(b)
    if b == 0.0:
        return e.quantize_per_tensor(qa.dequantize() * 0.0, 1.0, 0, qa.dtype)
    if b > 0:
        return _Q.from_repr_per_tensor(
            _Q.repr_view(qa).clone(), qa.dtype, qa.q_scale() * b, qa.q_zero_point()
        )
    qmin, qmax = _QRANGE[repr(qa.dtype)[6:]]
    flipped = (qmax + qmin) - _Q.repr_view(qa).to(e.int64)
    return _Q.from_repr_per_tensor(
        flipped.to(_Q.repr_view(qa).dtype),
        qa.dtype,
        qa.q_scale() * -b,
        qmax + qmin - qa.q_zero_point(),
    )


def cat(qxs, dim=0, scale=None, zero_point=None):
    """cat(qxs, dim=0, scale=None, zero_point=None) -> Tensor

    Concatenates quantized tensors along dim, requantized to the given scale and zero point
    (the first tensor's when omitted). Tensors that already carry those parameters are copied
    as integers."""
    e = _torch()
    first = qxs[0]
    scale = first.q_scale() if scale is None else float(scale)
    zero_point = first.q_zero_point() if zero_point is None else int(zero_point)
    parts = []
    for q in qxs:
        if q.dtype != first.dtype:
            raise RuntimeError("quantized::cat: expected tensors of one dtype")
        if q.q_scale() == scale and q.q_zero_point() == zero_point:
            parts.append(_Q.repr_view(q))
        else:
            parts.append(_Q.repr_view(_requantize(q, scale, zero_point)))
    return _Q.from_repr_per_tensor(e.cat(parts, dim), first.dtype, scale, zero_point)


def relu(q, inplace=False):
    """relu(q, inplace=False) -> Tensor

    max(q, zero_point) on the integers: ReLU of a quantized tensor with its parameters kept."""
    return _qt._relu(q, inplace)


def batch_norm(qx, weight, bias, mean, var, eps, output_scale, output_zero_point, relu=False):
    """batch_norm(qx, weight, bias, mean, var, eps, output_scale, output_zero_point,
        relu=False) -> Tensor

    Inference batch norm on the integers: one multiply-add per element with per-channel
    factors folded from the statistics and both scales, rounded half to even."""
    e = _torch()
    c = qx.shape[1]
    w = weight if weight is not None else e.ones(c)
    b = bias if bias is not None else e.zeros(c)
    inv_std = 1.0 / e.sqrt(var.double() + eps)
    alpha = w.double() * inv_std
    beta = b.double() - mean.double() * alpha
    s_in, s_out = qx.q_scale(), float(output_scale)
    mul_ = (alpha * (s_in / s_out)).float().contiguous()
    add_ = (beta / s_out).float().contiguous()
    qmin, qmax = _QRANGE[repr(qx.dtype)[6:]]
    if relu:
        qmin = max(qmin, int(output_zero_point))
    out = _Q.channel_affine(
        _Q.repr_view(qx), qx.q_zero_point(), mul_, add_, int(output_zero_point), qmin, qmax
    )
    return _Q.from_repr_per_tensor(out, qx.dtype, s_out, int(output_zero_point))


def embedding_bag_rowwise(
    qweight, indices, offsets, mode=0, per_sample_weights=None, include_last_offset=False
):
    """embedding_bag_rowwise(qweight, indices, offsets, mode=0, per_sample_weights=None,
        include_last_offset=False) -> Tensor

    Sums (mode 0), means (1) or maxima (2) of the dequantized rows of a quint8 or quint4x2
    weight quantized per row (per_channel_affine_float_qparams), per bag."""
    e = _torch()
    bits = 4 if qweight.dtype == e.quint4x2 else 8
    rows, dim = qweight.shape
    r = _Q.repr_view(qweight)
    if bits == 4:
        r = r.to(e.int32)
        if dim % 2:
            r = e.cat([r, e.zeros(rows, 1, dtype=e.int32)], 1)
        r = (r[:, 0::2] + r[:, 1::2] * 16).to(e.uint8)
    scales = qweight.q_per_channel_scales().float().contiguous()
    zps = qweight.q_per_channel_zero_points().float().contiguous()
    return _Q.embedding_bag(
        r.contiguous(),
        scales,
        zps,
        bits,
        dim,
        indices.to(e.int64),
        offsets.to(e.int64),
        mode,
        per_sample_weights,
        include_last_offset,
    )
