"""A differential sweep of ember against torch over the dtype matrix (issue 19).

    .venv/bin/python tools/dtype_sweep.py unary binary scalar        # groups to run
    .venv/bin/python tools/dtype_sweep.py --list                     # the groups

A fixed (not random) case list: each op of a group over every dtype (bool, uint8, int8..int64,
float16, bfloat16, float32/64, complex64/128) and layout (plain, 0-d, empty, transposed,
expanded, sliced), Python scalars on either side, in-place and out= over every dtype pair. Each
case runs under torch and ember in a child process (a crash is recorded as CRASH and the next
worker resumes after it); outcomes differ when one raises and the other does not (torch_raises /
ember_raises), the exception classes differ (exc_class) or the result's kind, dtype, shape or
values differ (diff; values by allclose at 10x torch's dtype tolerances). The summary prints one
line per (outcome, op) with a count and the first case; --detail OP prints every case of an op.
Logs go to $TMPDIR/ember_dtype_sweep/.
"""

import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

LOG_DIR = os.path.join(tempfile.gettempdir(), "ember_dtype_sweep")


DTYPES = [
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
    "complex64",
    "complex128",
]
LAYOUTS = ["plain", "zerod", "empty", "transposed", "expanded", "sliced"]

UNARY = """abs neg exp log sin cos tan sqrt rsqrt sigmoid tanh relu floor ceil round trunc frac
sign sgn reciprocal square exp2 expm1 log1p log2 log10 erf erfc erfinv lgamma digamma asin acos
atan sinh cosh asinh acosh atanh bitwise_not logical_not isnan isinf isfinite isposinf isneginf
isreal signbit nan_to_num angle conj positive deg2rad rad2deg i0 sinc logit fix absolute negative
arcsin arccos arctan conj_physical resolve_conj nonzero argwhere clone ravel t numel
count_nonzero trace diag diagflat tril triu flatten fliplr flipud msort isneginf""".split()

BINARY = """add sub mul div true_divide floor_divide remainder fmod pow atan2 maximum minimum fmax
fmin eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor
bitwise_left_shift bitwise_right_shift hypot copysign nextafter xlogy heaviside ldexp logaddexp
logaddexp2 float_power gcd lcm isclose subtract multiply divide arctan2 not_equal greater less
greater_equal less_equal special.xlog1py special.zeta igamma igammac polar complex""".split()

REDUCE = """sum prod mean nansum nanmean amax amin max min argmax argmin all any std var logsumexp
norm median nanmedian mode cumsum cumprod cummax cummin count_nonzero var_mean std_mean aminmax
sort argsort logcumsumexp""".split()

SCALARS = [2, -3, 2.5, True, 0, 1j + 0.5, float("nan"), 0.0]


def make(T, np_arr, dtype, layout):
    import numpy as np

    d = getattr(T, dtype)
    if layout == "zerod":
        a = np_arr.reshape(-1)[0]
        t = T.tensor(np.asarray(a)).to(d)
    elif layout == "empty":
        t = T.tensor(np_arr[:0]).to(d)
    elif layout == "transposed":
        t = T.tensor(np_arr).to(d).t()
    elif layout == "expanded":
        t = T.tensor(np_arr[:1]).to(d).expand(*np_arr.shape)
    elif layout == "sliced":
        t = T.tensor(np_arr).to(d)[:, ::2]
    else:
        t = T.tensor(np_arr).to(d)
    return t


def base(seed, dtype, shape=(3, 4)):
    import numpy as np

    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex128)
    if dtype in ("uint8",):
        return rng.integers(0, 10, shape).astype(np.int64)
    if dtype.startswith("int"):
        return rng.integers(-5, 10, shape).astype(np.int64)
    return (rng.standard_normal(shape) * 2).astype(np.float64)


def fn_of(T, name):
    obj = T
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def cases(group):
    out = []
    if group == "unary":
        for op in UNARY:
            for dt in DTYPES:
                for lay in LAYOUTS:
                    out.append(("unary", op, dt, lay))
    elif group == "method":
        for op in UNARY:
            for dt in DTYPES:
                for lay in ("plain", "transposed"):
                    out.append(("method", op, dt, lay))
    elif group == "binary":
        for op in BINARY:
            for i, dt in enumerate(DTYPES):
                for dt2 in DTYPES:
                    out.append(("binary", op, dt, dt2))
    elif group == "bcast":
        for op in BINARY:
            for dt in DTYPES:
                for lay in LAYOUTS:
                    out.append(("bcast", op, dt, lay))
    elif group == "scalar":
        for op in BINARY:
            for dt in DTYPES:
                for k in range(len(SCALARS)):
                    out.append(("scalar", op, dt, k))
                    out.append(("rscalar", op, dt, k))
    elif group == "reduce":
        for op in REDUCE:
            for dt in DTYPES:
                for lay in LAYOUTS:
                    for form in ("all", "dim0", "dim-1k", "dimtuple", "dim5"):
                        out.append(("reduce", op, dt, lay, form))
    elif group == "inplace":
        for op in BINARY:
            for dt in DTYPES:
                for dt2 in DTYPES:
                    out.append(("inplace", op, dt, dt2))
    elif group == "out":
        for op in BINARY[:20] + UNARY[:30]:
            for dt in DTYPES:
                for odt in DTYPES:
                    out.append(("out", op, dt, odt))
    elif group == "dunder":
        for op in DUNDER:
            for dt in DTYPES:
                for k in range(len(SCALARS)):
                    out.append(("dunder", op, dt, k))
                for dt2 in ("bool", "int64", "float32", "complex64", "float16"):
                    out.append(("dunder_t", op, dt, dt2))
    elif group == "misc":
        for i, _ in enumerate(MISC):
            for dt in DTYPES:
                for lay in ("plain", "zerod", "empty", "transposed"):
                    out.append(("misc", str(i), dt, lay))
    elif group == "nnf":
        for i, _ in enumerate(NNF):
            for dt in DTYPES:
                for lay in ("plain", "transposed", "empty"):
                    out.append(("nnf", str(i), dt, lay))
    elif group == "create":
        for i, _ in enumerate(CREATE):
            for dt in DTYPES + [None]:
                out.append(("create", str(i), dt, ""))
    return out


CREATE = [
    lambda T, d: T.arange(5, dtype=d),
    lambda T, d: T.arange(0.5, 3, 0.5, dtype=d),
    lambda T, d: T.arange(-3, 3, dtype=d),
    lambda T, d: T.linspace(0, 1, 5, dtype=d),
    lambda T, d: T.logspace(0, 2, 3, dtype=d),
    lambda T, d: T.full((2,), 3, dtype=d),
    lambda T, d: T.full((2,), 2.5, dtype=d),
    lambda T, d: T.full((2,), True, dtype=d),
    lambda T, d: T.full((2,), -1, dtype=d),
    lambda T, d: T.full((2,), 1j, dtype=d),
    lambda T, d: T.zeros(2, 0, dtype=d),
    lambda T, d: T.ones((), dtype=d),
    lambda T, d: T.eye(3, 2, dtype=d),
    lambda T, d: T.empty(3, dtype=d).fill_(1),
    lambda T, d: T.tensor([1, 2.5], dtype=d),
    lambda T, d: T.tensor([True, 2], dtype=d),
    lambda T, d: T.tensor([1j, 2], dtype=d),
    lambda T, d: T.tensor([300, -1], dtype=d),
    lambda T, d: T.tensor(2**40, dtype=d),
    lambda T, d: T.tensor([[1, 2], [3, 4]], dtype=d).tril(),
    lambda T, d: T.as_tensor([1.5, 2], dtype=d),
    lambda T, d: T.scalar_tensor(3, dtype=d),
    lambda T, d: T.zeros_like(T.ones(2), dtype=d),
    lambda T, d: T.full_like(T.ones(2, dtype=T.int64), 2.7, dtype=d),
    lambda T, d: T.full_like(T.ones(2, dtype=T.int64), 2.7),
    lambda T, d: T.ones(2, dtype=T.int32).new_full((2,), 1.5, dtype=d),
    lambda T, d: T.ones(2, dtype=T.int32).new_tensor([1.5], dtype=d),
    lambda T, d: T.tri_indices(3, 3) if False else T.tril_indices(3, 3, dtype=d),
    lambda T, d: T.randint(0, 5, (3,), dtype=d).shape,
    lambda T, d: T.rand(2, dtype=d).shape,
    lambda T, d: T.randn(2, dtype=d).dtype,
    lambda T, d: T.randperm(4, dtype=d).sort().values,
    lambda T, d: T.empty_strided((2, 2), (1, 2), dtype=d).stride(),
    lambda T, d: T.complex(T.ones(2, dtype=d), T.ones(2, dtype=d)),
    lambda T, d: T.heaviside(T.tensor([-1, 0, 1], dtype=d), T.tensor([0.5], dtype=d)),
    lambda T, d: T.where(T.tensor([True, False]), T.tensor([1, 2], dtype=d), 0.5),
    lambda T, d: T.clamp(T.tensor([1, 5], dtype=d), T.tensor(2), 4),
    lambda T, d: T.tensor([1, 5], dtype=d).clamp(min=T.tensor([2, 2]), max=T.tensor([4, 4])),
]

NNF = [
    lambda T, x: T.nn.functional.relu(x),
    lambda T, x: T.nn.functional.silu(x),
    lambda T, x: T.nn.functional.gelu(x),
    lambda T, x: T.nn.functional.gelu(x, approximate="tanh"),
    lambda T, x: T.nn.functional.elu(x),
    lambda T, x: T.nn.functional.selu(x),
    lambda T, x: T.nn.functional.celu(x),
    lambda T, x: T.nn.functional.leaky_relu(x),
    lambda T, x: T.nn.functional.hardtanh(x),
    lambda T, x: T.nn.functional.hardsigmoid(x),
    lambda T, x: T.nn.functional.hardswish(x),
    lambda T, x: T.nn.functional.softplus(x),
    lambda T, x: T.nn.functional.softsign(x),
    lambda T, x: T.nn.functional.tanhshrink(x),
    lambda T, x: T.nn.functional.softshrink(x),
    lambda T, x: T.nn.functional.hardshrink(x),
    lambda T, x: T.nn.functional.threshold(x, 0.5, 2.0),
    lambda T, x: T.nn.functional.glu(x, -1),
    lambda T, x: T.nn.functional.logsigmoid(x),
    lambda T, x: T.nn.functional.mish(x),
    lambda T, x: T.nn.functional.sigmoid(x),
    lambda T, x: T.nn.functional.tanh(x),
    lambda T, x: T.nn.functional.softmax(x, -1),
    lambda T, x: T.nn.functional.log_softmax(x, 0),
    lambda T, x: T.nn.functional.softmin(x, 0),
    lambda T, x: T.nn.functional.gumbel_softmax(x, tau=1.0).shape,
    lambda T, x: T.nn.functional.normalize(x, dim=0),
    lambda T, x: T.nn.functional.layer_norm(x, x.shape[-1:]),
    lambda T, x: T.nn.functional.rms_norm(x, x.shape[-1:]),
    lambda T, x: T.nn.functional.group_norm(x.unsqueeze(0), 1),
    lambda T, x: T.nn.functional.batch_norm(x, None, None, training=True),
    lambda T, x: T.nn.functional.instance_norm(x.unsqueeze(0)),
    lambda T, x: T.nn.functional.local_response_norm(x.unsqueeze(0), 2),
    lambda T, x: T.nn.functional.linear(x, x),
    lambda T, x: T.nn.functional.bilinear(x, x, x.unsqueeze(0)[:, :, :] if x.dim() == 2 else x),
    lambda T, x: T.nn.functional.pad(x, (1, 2)),
    lambda T, x: T.nn.functional.pad(x, (1, 1), mode="reflect"),
    lambda T, x: T.nn.functional.pad(x, (1, 1), mode="replicate"),
    lambda T, x: T.nn.functional.pad(x, (1, 1), mode="circular"),
    lambda T, x: T.nn.functional.pad(x, (1, 1), value=2.5),
    lambda T, x: T.nn.functional.dropout(x, 0.0),
    lambda T, x: T.nn.functional.dropout(x, 1.0),
    lambda T, x: T.nn.functional.avg_pool1d(x.unsqueeze(0), 2),
    lambda T, x: T.nn.functional.max_pool1d(x.unsqueeze(0), 2),
    lambda T, x: T.nn.functional.max_pool2d(x.unsqueeze(0), 2),
    lambda T, x: T.nn.functional.avg_pool2d(x.unsqueeze(0), 2),
    lambda T, x: T.nn.functional.adaptive_avg_pool1d(x, 2),
    lambda T, x: T.nn.functional.adaptive_max_pool1d(x, 2),
    lambda T, x: T.nn.functional.lp_pool1d(x, 2, 2),
    lambda T, x: T.nn.functional.conv1d(x.unsqueeze(0), x.unsqueeze(1)[:, :, :2]),
    lambda T, x: T.nn.functional.conv2d(x[None, None], x[None, None, :2, :2]),
    lambda T, x: T.nn.functional.conv_transpose1d(x.unsqueeze(0), x.unsqueeze(0).mT[:, :, :2].mT),
    lambda T, x: T.nn.functional.interpolate(x.unsqueeze(0), scale_factor=2),
    lambda T, x: T.nn.functional.interpolate(x.unsqueeze(0), size=5, mode="linear"),
    lambda T, x: T.nn.functional.interpolate(x[None, None], size=(2, 5), mode="bilinear"),
    lambda T, x: T.nn.functional.interpolate(x[None, None], size=(2, 5), mode="bicubic"),
    lambda T, x: T.nn.functional.embedding(T.tensor([0, 1]), x),
    lambda T, x: T.nn.functional.one_hot(x.long().abs().reshape(-1), 20),
    lambda T, x: T.nn.functional.mse_loss(x, x.flip(0)),
    lambda T, x: T.nn.functional.l1_loss(x, x.flip(0)),
    lambda T, x: T.nn.functional.smooth_l1_loss(x, x.flip(0)),
    lambda T, x: T.nn.functional.huber_loss(x, x.flip(0)),
    lambda T, x: T.nn.functional.binary_cross_entropy(x.sigmoid(), x.sigmoid().flip(0)),
    lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid()),
    lambda T, x: T.nn.functional.cross_entropy(x, T.zeros(x.shape[0], dtype=T.long)),
    lambda T, x: T.nn.functional.cross_entropy(x, x.softmax(-1)),
    lambda T, x: T.nn.functional.nll_loss(x, T.zeros(x.shape[0], dtype=T.long)),
    lambda T, x: T.nn.functional.kl_div(x, x.flip(0), reduction="batchmean"),
    lambda T, x: T.nn.functional.poisson_nll_loss(x, x.flip(0)),
    lambda T, x: T.nn.functional.soft_margin_loss(x, x.sign()),
    lambda T, x: T.nn.functional.hinge_embedding_loss(x, x.sign()),
    lambda T, x: T.nn.functional.margin_ranking_loss(x, x.flip(0), x.sign()),
    lambda T, x: T.nn.functional.cosine_similarity(x, x.flip(0)),
    lambda T, x: T.nn.functional.pairwise_distance(x, x.flip(0)),
    lambda T, x: T.nn.functional.pdist(x),
    lambda T, x: T.nn.functional.triplet_margin_loss(x, x.flip(0), x),
    lambda T, x: T.nn.functional.multilabel_soft_margin_loss(x, x.sign().clamp(min=0)),
    lambda T, x: T.nn.functional.multi_margin_loss(x, T.zeros(x.shape[0], dtype=T.long)),
    lambda T, x: T.nn.functional.gaussian_nll_loss(x, x.flip(0), T.ones_like(x)),
    lambda T, x: T.nn.functional.unfold(x[None, None], 2),
    lambda T, x: T.nn.functional.pixel_shuffle(x[None, None].repeat(1, 4, 1, 1), 2),
    lambda T, x: T.nn.functional.channel_shuffle(x[None].repeat(1, 2, 1), 2),
    lambda T, x: T.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None]),
    lambda T, x: T.nn.functional.affine_grid(x[None, :2, :3], (1, 1, 2, 2), align_corners=False),
]

DUNDER = """__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__
__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __and__ __rand__ __or__ __xor__ __lshift__
__rlshift__ __rshift__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __iadd__ __isub__ __imul__
__itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__ __ixor__ __ilshift__
__irshift__""".split()

MISC = [
    lambda T, x: T.clamp(x, min=0),
    lambda T, x: T.clamp(x, min=-1.5, max=2),
    lambda T, x: T.clamp(x, max=True),
    lambda T, x: x.clamp_(min=0.5),
    lambda T, x: T.where(x > 0 if not x.is_complex() else x.real > 0, x, 2.5),
    lambda T, x: T.where(x > 0 if not x.is_complex() else x.real > 0, 1, x),
    lambda T, x: T.where(x > 0 if not x.is_complex() else x.real > 0, x, 1j),
    lambda T, x: T.sum(x, dtype=T.float64),
    lambda T, x: T.sum(x, 0, dtype=T.int32),
    lambda T, x: T.cumsum(x, 0, dtype=T.float32),
    lambda T, x: T.mean(x, dtype=T.float64),
    lambda T, x: T.mean(x, 0, dtype=T.int64),
    lambda T, x: T.prod(x, 0, dtype=T.float64),
    lambda T, x: T.round(x, decimals=1),
    lambda T, x: T.nan_to_num(x, nan=1.0, posinf=2.0),
    lambda T, x: T.lerp(x, T.ones_like(x), 0.5),
    lambda T, x: T.addcmul(x, x, x, value=2),
    lambda T, x: T.addcdiv(x, x, T.ones_like(x), value=0.5),
    lambda T, x: T.cat([x, x.to(T.float64)]),
    lambda T, x: T.cat([x, T.zeros(0)]),
    lambda T, x: T.stack([x, x.to(T.int32)]),
    lambda T, x: T.roll(x, 1, 0),
    lambda T, x: T.roll(x, (1, -1), (0, -1)),
    lambda T, x: T.flip(x, (0, -1)),
    lambda T, x: T.squeeze(x, (0,)),
    lambda T, x: T.unsqueeze(x, -1),
    lambda T, x: T.movedim(x, 0, -1),
    lambda T, x: T.narrow(x, 0, 1, 1),
    lambda T, x: T.select(x, -1, 0),
    lambda T, x: T.chunk(x, 2, -1),
    lambda T, x: T.split(x, 1, 0),
    lambda T, x: T.tensor_split(x, 3, 1),
    lambda T, x: T.tril(x, -1),
    lambda T, x: T.triu(x, 1),
    lambda T, x: T.diagonal(x, 1),
    lambda T, x: x.repeat(2, 1),
    lambda T, x: T.tile(x, (2,)),
    lambda T, x: x.expand(2, *x.shape),
    lambda T, x: T.broadcast_to(x, (2,) + tuple(x.shape)),
    lambda T, x: T.gather(x, 0, T.zeros_like(x, dtype=T.int64)),
    lambda T, x: T.take_along_dim(x, T.zeros_like(x, dtype=T.int64), 0),
    lambda T, x: x.fill_(2),
    lambda T, x: x.fill_(1.5),
    lambda T, x: x.fill_(1j),
    lambda T, x: x.zero_(),
    lambda T, x: x.masked_fill(T.ones_like(x, dtype=T.bool), 3),
    lambda T, x: x.masked_fill(T.ones_like(x, dtype=T.bool), 2.5),
    lambda T, x: x.index_fill(0, T.tensor([0]), -1),
    lambda T, x: x.to(T.uint8),
    lambda T, x: x.to(T.bool),
    lambda T, x: x.to(T.float16),
    lambda T, x: x.int(),
    lambda T, x: x.type(T.float64),
    lambda T, x: x.sum().item(),
    lambda T, x: x.tolist(),
    lambda T, x: float(x),
    lambda T, x: int(x),
    lambda T, x: bool(x),
    lambda T, x: x.abs().max(),
    lambda T, x: T.max(x, x),
    lambda T, x: T.min(x, 0, keepdim=True),
    lambda T, x: T.aminmax(x, dim=0),
    lambda T, x: T.topk(x, 1),
    lambda T, x: T.kthvalue(x, 1, 0),
    lambda T, x: T.unique(x),
    lambda T, x: T.unique(x, return_counts=True, return_inverse=True),
    lambda T, x: T.bincount(x.reshape(-1)),
    lambda T, x: T.histc(x),
    lambda T, x: T.searchsorted(T.tensor([0, 1, 2]).to(x.dtype), x),
    lambda T, x: T.bucketize(x, T.tensor([0, 1, 2]).to(x.dtype)),
    lambda T, x: T.cross(x, x, dim=0) if x.dim() else T.cross(x, x),
    lambda T, x: T.dot(x.reshape(-1), x.reshape(-1)),
    lambda T, x: T.matmul(x, x.mT if x.dim() >= 2 else x),
    lambda T, x: x @ x.mT if x.dim() >= 2 else x @ x,
    lambda T, x: T.mm(x, x.mT),
    lambda T, x: T.outer(x.reshape(-1), x.reshape(-1)),
    lambda T, x: T.einsum("ij,kj->ik", x, x),
    lambda T, x: T.tensordot(x, x, dims=([0], [0])),
    lambda T, x: T.kron(x, x),
    lambda T, x: T.trace(x),
    lambda T, x: T.cumulative_trapezoid(x),
    lambda T, x: T.trapezoid(x),
    lambda T, x: T.diff(x),
    lambda T, x: T.nonzero(x, as_tuple=True),
    lambda T, x: T.count_nonzero(x, dim=0),
    lambda T, x: T.clone(x, memory_format=T.contiguous_format),
    lambda T, x: x.contiguous().view(-1),
    lambda T, x: x.view(T.int8) if x.element_size() == 1 else x.view(T.uint8),
    lambda T, x: T.std(x, 0, correction=0),
    lambda T, x: T.var(x, unbiased=False),
    lambda T, x: T.quantile(x.to(T.float32), 0.5) if not x.is_complex() else T.quantile(x, 0.5),
    lambda T, x: T.quantile(x, 0.5),
    lambda T, x: T.nanquantile(x, 0.25, dim=0),
    lambda T, x: T.renorm(x, 2, 0, 1.0),
    lambda T, x: T.dist(x, x * 2),
    lambda T, x: T.cdist(x, x),
    lambda T, x: T.signbit(x),
    lambda T, x: T.frexp(x),
    lambda T, x: T.copysign(x, -1),
    lambda T, x: T.sgn(x),
    lambda T, x: T.exp2(x),
    lambda T, x: T.polygamma(1, x),
    lambda T, x: T.mvlgamma(x, 1),
    lambda T, x: T.special.entr(x),
    lambda T, x: T.special.ndtr(x),
    lambda T, x: T.special.ndtri(x),
    lambda T, x: T.special.log_ndtr(x),
    lambda T, x: T.special.i0e(x),
    lambda T, x: T.special.i1(x),
    lambda T, x: T.special.erfcx(x),
    lambda T, x: T.special.sinc(x),
    lambda T, x: T.special.expit(x),
    lambda T, x: T.special.log_softmax(x, 0),
    lambda T, x: T.softmax(x, 0),
    lambda T, x: T.log_softmax(x, -1),
    lambda T, x: T.softmax(x, 0, dtype=T.float64),
    lambda T, x: T.nn.functional.relu(x),
    lambda T, x: T.nn.functional.gelu(x),
    lambda T, x: T.nn.functional.silu(x),
    lambda T, x: T.nn.functional.leaky_relu(x, 0.2),
    lambda T, x: T.nn.functional.elu(x),
    lambda T, x: T.nn.functional.softplus(x),
    lambda T, x: T.nn.functional.hardtanh(x),
    lambda T, x: T.nn.functional.relu6(x),
    lambda T, x: T.nn.functional.hardswish(x),
    lambda T, x: T.nn.functional.mish(x),
    lambda T, x: T.nn.functional.normalize(x),
    lambda T, x: T.nn.functional.softmin(x, 0),
    lambda T, x: T.nn.functional.tanhshrink(x),
    lambda T, x: T.nn.functional.logsigmoid(x),
    lambda T, x: T.nn.functional.dropout(x, 0.0),
    lambda T, x: T.nn.functional.layer_norm(x, x.shape[-1:]),
    lambda T, x: T.nn.functional.one_hot(x),
    lambda T, x: T.nn.functional.pad(x, (1, 1)),
    lambda T, x: T.nn.functional.linear(x, x),
    lambda T, x: T.nn.functional.mse_loss(x, x * 0),
    lambda T, x: T.nn.functional.l1_loss(x, x * 0),
    lambda T, x: T.nn.functional.cosine_similarity(x, x + 1),
]


def run_case(T, c):

    kind, op = c[0], c[1]
    if kind in ("unary", "method"):
        dt, lay = c[2], c[3]
        x = make(T, base(1, dt), dt, lay)
        if kind == "method":
            return getattr(x, op)()
        return fn_of(T, op)(x)
    if kind == "binary":
        x = make(T, base(1, c[2]), c[2], "plain")
        y = make(T, base(2, c[3]), c[3], "plain")
        return fn_of(T, op)(x, y)
    if kind == "bcast":
        dt, lay = c[2], c[3]
        x = make(T, base(1, dt), dt, lay)
        y = make(T, base(2, dt, (4,)), dt, "plain")
        if lay == "transposed":
            y = make(T, base(2, dt, (3,)), dt, "plain")
        elif lay == "sliced":
            y = make(T, base(2, dt, (2,)), dt, "plain")
        elif lay == "zerod":
            pass
        return fn_of(T, op)(y, x)
    if kind in ("scalar", "rscalar"):
        dt, k = c[2], c[3]
        x = make(T, base(1, dt), dt, "plain")
        s = SCALARS[k]
        if kind == "scalar":
            return fn_of(T, op)(x, s)
        return fn_of(T, op)(s, x)
    if kind == "reduce":
        dt, lay, form = c[2], c[3], c[4]
        x = make(T, base(1, dt), dt, lay)
        f = fn_of(T, op)
        if form == "all":
            return f(x)
        if form == "dim0":
            return f(x, 0)
        if form == "dim-1k":
            return f(x, -1, keepdim=True)
        if form == "dimtuple":
            return f(x, (0, 1))
        return f(x, 5)
    if kind == "inplace":
        x = make(T, base(1, c[2]), c[2], "plain")
        y = make(T, base(2, c[3]), c[3], "plain")
        r = getattr(x, op + "_")(y)
        assert r is x
        return x
    if kind == "out":
        dt, odt = c[2], c[3]
        x = make(T, base(1, dt), dt, "plain")
        o = T.empty(0, dtype=getattr(T, odt))
        f = fn_of(T, op)
        if op in BINARY:
            y = make(T, base(2, dt), dt, "plain")
            r = f(x, y, out=o)
        else:
            r = f(x, out=o)
        assert r is o
        return o
    if kind in ("dunder", "dunder_t"):
        x = make(T, base(1, c[2]), c[2], "plain")
        y = SCALARS[c[3]] if kind == "dunder" else make(T, base(2, c[3]), c[3], "plain")
        r = getattr(x, op)(y)
        if r is NotImplemented:
            raise TypeError("NotImplemented")
        return r
    if kind == "nnf":
        x = make(T, base(1, c[2]), c[2], c[3])
        return NNF[int(op)](T, x)
    if kind == "create":
        return CREATE[int(op)](T, getattr(T, c[2]) if c[2] else None)
    if kind == "misc":
        x = make(T, base(1, c[2]), c[2], c[3])
        return MISC[int(op)](T, x)
    raise ValueError(kind)


def to_py(T, r):

    if isinstance(r, (tuple, list)):
        return ["seq", [to_py(T, v) for v in r]]
    if isinstance(r, T.Tensor):
        dt = str(r.dtype).split(".")[-1]
        v = r.detach()
        if v.is_complex():
            arr = v.resolve_conj().to(T.complex128).numpy()
        elif v.dtype == T.bool:
            arr = v.numpy()
        else:
            arr = v.to(T.float64).numpy() if v.dtype.is_floating_point else v.to(T.int64).numpy()
        return ["tensor", dt, list(r.shape), arr]
    if isinstance(r, (int, float, complex, bool)):
        return ["num", type(r).__name__, r]
    return ["other", type(r).__name__, str(r)[:50]]


TOL = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1.3e-6, 1e-5),
    "complex64": (1.3e-6, 1e-5),
}


def compare(a, b):
    import numpy as np

    if a[0] != b[0]:
        return f"kind {a[0]} vs {b[0]}"
    if a[0] == "seq":
        if len(a[1]) != len(b[1]):
            return "seq len"
        for x, y in zip(a[1], b[1]):
            m = compare(x, y)
            if m:
                return m
        return None
    if a[0] == "tensor":
        if a[1] != b[1]:
            return f"dtype {a[1]} vs {b[1]}"
        if a[2] != b[2]:
            return f"shape {a[2]} vs {b[2]}"
        rtol, atol = TOL.get(a[1], (1e-7, 1e-7))
        x, y = a[3], b[3]
        if x.size and not np.allclose(x, y, rtol=rtol * 10, atol=atol * 10, equal_nan=True):
            with np.errstate(all="ignore"):
                bad = ~np.isclose(x, y, rtol=rtol * 10, atol=atol * 10, equal_nan=True)
            return f"values {x[bad].ravel()[:3]} vs {y[bad].ravel()[:3]}"
        return None
    if a[0] == "num":
        if a[1] != b[1]:
            return f"numtype {a[1]} vs {b[1]}"
        try:
            if not np.allclose(a[2], b[2], equal_nan=True):
                return f"num {a[2]} vs {b[2]}"
        except TypeError:
            pass
        return None
    return None if a == b else f"other {a} vs {b}"


def outcome(T, c):
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = run_case(T, c)
        return ("ok", to_py(T, r))
    except Exception as e:  # noqa: BLE001
        return ("exc", type(e).__name__, str(e).split("\n")[0][:160])


def worker(group, start, logp):
    import torch

    import ember

    cs = cases(group)
    with open(logp, "a") as log:
        for i in range(start, len(cs)):
            log.write(json.dumps({"i": i, "start": True}) + "\n")
            log.flush()
            c = cs[i]
            te = outcome(torch, c)
            if te[0] == "exc" and te[1] == "AttributeError" and "has no attribute" in te[2]:
                res = None
            else:
                ee = outcome(ember, c)
                res = None
                if te[0] == "exc" and ee[0] == "exc":
                    if te[1] != ee[1]:
                        res = ("exc_class", f"{ee[1]}: {ee[2]} | torch {te[1]}: {te[2]}")
                elif te[0] == "exc":
                    res = ("torch_raises", f"torch {te[1]}: {te[2]}")
                elif ee[0] == "exc":
                    res = ("ember_raises", f"{ee[1]}: {ee[2]}")
                else:
                    m = compare(ee[1], te[1])
                    if m:
                        res = ("diff", m)
            log.write(json.dumps({"i": i, "case": c, "res": res}) + "\n")
            log.flush()


GROUPS = (
    "unary",
    "method",
    "binary",
    "bcast",
    "scalar",
    "reduce",
    "inplace",
    "out",
    "dunder",
    "misc",
    "nnf",
    "create",
)


def run_resuming(worker_args, logp, n, crash_record):
    """Runs workers (`python *worker_args(start)`) until all n cases are in logp. A worker that
    dies inside a case leaves that case's start mark: crash_record(i) is logged for it and the
    next worker resumes after it. Shared with tools/edge_sweep.py."""
    open(logp, "w").close()
    start = 0
    while start < n:
        subprocess.run([sys.executable, *worker_args(start)], check=False)
        last = None
        with open(logp) as f:
            for line in f:
                last = json.loads(line)
        if last is None:
            break
        if last.get("start"):  # the worker died inside this case
            with open(logp, "a") as f:
                f.write(json.dumps(crash_record(last["i"])) + "\n")
        start = last["i"] + 1
    return logp


def run_group(group):
    os.makedirs(LOG_DIR, exist_ok=True)
    logp = os.path.join(LOG_DIR, f"log_{group}.jsonl")
    return run_resuming(
        lambda start: [__file__, "--worker", group, str(start), logp],
        logp,
        len(cases(group)),
        lambda i: {"i": i, "case": cases(group)[i], "res": ("CRASH", "")},
    )


def summary(group, logp, detail=None):
    rows = [json.loads(line) for line in open(logp)]
    rows = [r for r in rows if r.get("res")]
    by = defaultdict(list)
    for r in rows:
        by[(r["res"][0], r["case"][1])].append((r["case"][2:], r["res"][1]))
    print(f"{group}: {len(rows)} of {len(cases(group))} cases differ")
    for (kind, op), found in sorted(by.items()):
        if detail is None:
            print(f"  {kind:13} {op:20} {len(found):4}  {found[0][0]}  {found[0][1][:160]}")
        elif op == detail:
            for case, text in found:
                print(f"  {kind:13} {op:20} {case}  {text[:200]}")


def main(argv):
    if argv and argv[0] == "--list":
        print(" ".join(GROUPS))
        return
    detail = None
    if "--detail" in argv:
        k = argv.index("--detail")
        detail = argv[k + 1]
        argv = argv[:k] + argv[k + 2 :]
    for group in argv or GROUPS:
        summary(group, run_group(group), detail)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main(sys.argv[1:])
