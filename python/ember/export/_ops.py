"""The runtime op set of exported programs, and how captured calls map onto it.

Each runtime op has a fixed positional signature (every argument present, defaults filled in)
shared with the C++ interpreter (csrc/ember/export/program.cpp); ``ops.<name>`` is its Python
executor, the target of call_function nodes after ``run_decompositions()``. ``normalize(target,
args, kwargs)`` maps a call the tracer recorded (a public ember callable, a Tensor method or a
Python operator) to ``(op name, positional args)``, or returns None when there is no mapping."""

import builtins
import operator
import sys
import types

__all__ = ["ops", "normalize", "FOLDED", "INPLACE_METHODS"]


def _ember():
    return sys.modules["ember"]


def _F():
    return _ember().nn.functional


# ---- executors: op name -> Python function over ember's public API ----

_EXEC = {}


def _executor(name):
    def register(fn):
        fn.__name__ = name
        fn.__qualname__ = name
        fn._export_op = name
        _EXEC[name] = fn
        return fn

    return register


def _scalar(v):
    return v


_SIMPLE = {
    "relu": lambda x: _ember().relu(x),
    "sigmoid": lambda x: _ember().sigmoid(x),
    "tanh": lambda x: _ember().tanh(x),
    "silu": lambda x: _F().silu(x),
    "mish": lambda x: _F().mish(x),
    "hardswish": lambda x: _F().hardswish(x),
    "hardsigmoid": lambda x: _F().hardsigmoid(x),
    "exp": lambda x: _ember().exp(x),
    "log": lambda x: _ember().log(x),
    "sqrt": lambda x: _ember().sqrt(x),
    "rsqrt": lambda x: _ember().rsqrt(x),
    "neg": lambda x: _ember().neg(x),
    "abs": lambda x: _ember().abs(x),
    "erf": lambda x: _ember().erf(x),
    "t": lambda x: x.t(),
    "contiguous": lambda x: x.contiguous(),
    "clone": lambda x: x.clone(),
    "sizes": lambda x: list(x.shape),
    "linear": lambda x, w, b: _F().linear(x, w, b),
    "conv1d": lambda x, w, b, s, p, d, g: _F().conv1d(x, w, b, s, p, d, g),
    "conv2d": lambda x, w, b, s, p, d, g: _F().conv2d(x, w, b, s, p, d, g),
    "batch_norm": lambda x, rm, rv, w, b, tr, mo, eps: _F().batch_norm(
        x, rm, rv, w, b, tr, mo, eps
    ),
    "layer_norm": lambda x, shape, w, b, eps: _F().layer_norm(x, shape, w, b, eps),
    "group_norm": lambda x, g, w, b, eps: _F().group_norm(x, g, w, b, eps),
    "gelu": lambda x, approximate: _F().gelu(x, approximate=approximate),
    "leaky_relu": lambda x, slope: _F().leaky_relu(x, slope),
    "hardtanh": lambda x, lo, hi: _F().hardtanh(x, lo, hi),
    "elu": lambda x, alpha: _F().elu(x, alpha),
    "softplus": lambda x, beta, threshold: _F().softplus(x, beta, threshold),
    "softmax": lambda x, dim: _ember().softmax(x, dim),
    "log_softmax": lambda x, dim: _ember().log_softmax(x, dim),
    "max_pool1d": lambda x, k, s, p, d, c: _F().max_pool1d(x, k, s or None, p, d, c),
    "max_pool2d": lambda x, k, s, p, d, c: _F().max_pool2d(x, k, s or None, p, d, c),
    "avg_pool1d": lambda x, k, s, p, c, cip: _F().avg_pool1d(x, k, s or None, p, c, cip),
    "avg_pool2d": lambda x, k, s, p, c, cip, div: _F().avg_pool2d(x, k, s or None, p, c, cip, div),
    "adaptive_avg_pool1d": lambda x, size: _F().adaptive_avg_pool1d(x, size),
    "adaptive_avg_pool2d": lambda x, size: _F().adaptive_avg_pool2d(x, size),
    "flatten": lambda x, start, end: _ember().flatten(x, start, end),
    "view": lambda x, shape: x.view(shape),
    "reshape": lambda x, shape: x.reshape(shape),
    "permute": lambda x, dims: x.permute(dims),
    "transpose": lambda x, a, b: x.transpose(a, b),
    "unsqueeze": lambda x, dim: x.unsqueeze(dim),
    "squeeze": lambda x, dim: x.squeeze() if dim is None else x.squeeze(dim),
    "expand": lambda x, sizes: x.expand(sizes),
    "cat": lambda xs, dim: _ember().cat(xs, dim),
    "stack": lambda xs, dim: _ember().stack(xs, dim),
    "chunk": lambda x, n, dim: list(_ember().chunk(x, n, dim)),
    "split": lambda x, size, dim: list(_ember().split(x, size, dim)),
    "split_with_sizes": lambda x, sizes, dim: list(_ember().split(x, list(sizes), dim)),
    "unbind": lambda x, dim: list(_ember().unbind(x, dim)),
    "getitem": lambda x, idx: x[tuple(idx) if isinstance(idx, list) else idx],
    "add": lambda a, b, alpha: a + b * alpha if alpha != 1 else a + b,
    "sub": lambda a, b, alpha: a - b * alpha if alpha != 1 else a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b, mode: a / b if mode is None else _div_mode(a, b, mode),
    "floordiv": lambda a, b: a // b,
    "pow": lambda a, b: a**b,
    "matmul": lambda a, b: _ember().matmul(a, b),
    "bmm": lambda a, b: _ember().bmm(a, b),
    "mm": lambda a, b: _ember().mm(a, b),
    "embedding": lambda idx, w: _F().embedding(idx, w),
    "dropout": lambda x, p, training: _F().dropout(x, p, training),
    "scaled_dot_product_attention": lambda q, k, v, mask, p, causal, scale: (
        _F().scaled_dot_product_attention(q, k, v, mask, p, causal, scale)
    ),
    "mean": lambda x, dims, keepdim: (
        _ember().mean(x, dims, keepdim) if dims else _all(x, "mean", keepdim)
    ),
    "sum": lambda x, dims, keepdim: (
        _ember().sum(x, dims, keepdim) if dims else _all(x, "sum", keepdim)
    ),
    "amax": lambda x, dims, keepdim: _ember().amax(x, dims, keepdim),
    "masked_fill": lambda x, mask, value: x.masked_fill(mask, value),
    "to_dtype": lambda x, dtype: x.to(dtype),
    "size": lambda x, dim: x.size(dim),
    "rnn_layer": lambda x, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse: tuple(
        _ember()._C._nn.rnn_layer(x, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse)
    ),
}


def _div_mode(a, b, mode):
    if isinstance(a, int) and isinstance(b, int):
        return a // b if mode == "floor" else int(a / b)
    return _ember().div(a, b, rounding_mode=mode)


def _all(x, how, keepdim):
    out = getattr(_ember(), how)(x)
    if keepdim:
        out = out.reshape([1] * x.dim())
    return out


for _name, _fn in _SIMPLE.items():
    _executor(_name)(_fn)

from . import _aten_names, _ops_flow, _ops_math  # noqa: E402  (control flow; math, *_like, clamp, max.dim)

for _name, _fn in list(_ops_flow.EXECUTORS.items()) + list(_ops_math.EXECUTORS.items()):
    _executor(_name)(lambda *a, _f=_fn: _f(*a))

#: ``ops.linear`` ... : the Python executor of each runtime op (torch.ops.aten's role).
ops = types.SimpleNamespace(**_EXEC)


# ---- normalizers: a captured call -> (op name, full positional args) ----


def _list(v):
    """An int (or a size value) or a sequence of them as a list."""
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def _shape_args(shape):
    """`x.view(2, 3)`, `x.view((2, 3))` and `x.view([2, 3])` alike."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        return list(shape[0])
    return list(shape)


class Unsupported(Exception):
    """A call the runtime has an op for, used with an argument it cannot run."""


def _linear(input, weight, bias=None):
    return "linear", [input, weight, bias]


def _conv(name):
    def norm(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        pad = padding if isinstance(padding, str) else _list(padding)
        return name, [input, weight, bias, _list(stride), pad, _list(dilation), groups]

    return norm


def _batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    return "batch_norm", [
        input,
        running_mean,
        running_var,
        weight,
        bias,
        bool(training),
        0.0 if momentum is None else float(momentum),
        float(eps),
    ]


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return "layer_norm", [input, _list(normalized_shape), weight, bias, float(eps)]


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return "group_norm", [input, num_groups, weight, bias, float(eps)]


def _unary(name):
    def norm(input, inplace=False):
        return name, [input]

    return norm


def _gelu(input, approximate="none"):
    return "gelu", [input, approximate]


def _leaky_relu(input, negative_slope=0.01, inplace=False):
    return "leaky_relu", [input, float(negative_slope)]


def _hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return "hardtanh", [input, float(min_val), float(max_val)]


def _relu6(input, inplace=False):
    return "hardtanh", [input, 0.0, 6.0]


def _elu(input, alpha=1.0, inplace=False):
    return "elu", [input, float(alpha)]


def _softplus(input, beta=1.0, threshold=20.0):
    return "softplus", [input, float(beta), float(threshold)]


def _softmax(name):
    def norm(input, dim=None, _stacklevel=3, dtype=None):
        if dim is None or dtype is not None:
            raise Unsupported(f"{name} without dim or with dtype")
        return name, [input, dim]

    return norm


def _max_pool(name):
    def norm(
        input,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode=False,
        return_indices=False,
    ):
        if return_indices:
            raise Unsupported(f"{name} with return_indices=True")
        stride = [] if stride is None else _list(stride)
        return name, [input, _list(kernel_size), stride, _list(padding), _list(dilation), ceil_mode]

    return norm


def _avg_pool1d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
):
    stride = [] if stride is None else _list(stride)
    return "avg_pool1d", [
        input,
        _list(kernel_size),
        stride,
        _list(padding),
        ceil_mode,
        count_include_pad,
    ]


def _avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    stride = [] if stride is None else _list(stride)
    return "avg_pool2d", [
        input,
        _list(kernel_size),
        stride,
        _list(padding),
        ceil_mode,
        count_include_pad,
        divisor_override,
    ]


def _adaptive(name, n):
    def norm(input, output_size):
        size = _list(output_size)
        if len(size) == 1 and n == 2:
            size = size * 2
        if any(s is None for s in size):
            raise Unsupported(f"{name} with a None output size")
        return name, [input, size]

    return norm


def _flatten(input, start_dim=0, end_dim=-1):
    return "flatten", [input, start_dim, end_dim]


def _view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (list, tuple, int)) and _is_dtype(shape[0]):
        raise Unsupported("view(dtype)")
    return "view", [self, _shape_args(shape)]


def _reshape_method(self, *shape):
    return "reshape", [self, _shape_args(shape)]


def _reshape(input, shape):
    return "reshape", [input, _list(shape)]


def _permute_method(self, *dims):
    return "permute", [self, _shape_args(dims)]


def _permute(input, dims):
    return "permute", [input, _list(dims)]


def _transpose(input, dim0, dim1):
    return "transpose", [input, dim0, dim1]


def _t(input):
    return "t", [input]


def _contiguous(self, memory_format=None):
    return "contiguous", [self]


def _clone(input, memory_format=None):
    return "clone", [input]


def _unsqueeze(input, dim):
    return "unsqueeze", [input, dim]


def _squeeze(input, dim=None):
    if isinstance(dim, (list, tuple)):
        if len(dim) != 1:
            raise Unsupported("squeeze over several dims")
        dim = dim[0]
    return "squeeze", [input, dim]


def _expand(self, *sizes):
    return "expand", [self, _shape_args(sizes)]


def _cat(tensors, dim=0):
    return "cat", [list(tensors), dim]


def _stack(tensors, dim=0):
    return "stack", [list(tensors), dim]


def _chunk(input, chunks, dim=0):
    return "chunk", [input, chunks, dim]


def _split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, (list, tuple)):
        return "split_with_sizes", [tensor, list(split_size_or_sections), dim]
    return "split", [tensor, split_size_or_sections, dim]


def _split_method(self, split_size, dim=0):
    return _split(self, split_size, dim)


def _unbind(input, dim=0):
    return "unbind", [input, dim]


def _getitem(a, b):
    return "getitem", [a, b]


def _is_dtype(v):
    return isinstance(v, _ember().dtype)


def _binary(name):
    def norm(input, other, *, alpha=1):
        return name, [input, other, alpha]

    return norm


def _mul(input, other):
    return "mul", [input, other]


def _div(input, other, *, rounding_mode=None):
    return "div", [input, other, rounding_mode]


def _truediv(a, b):
    return "div", [a, b, None]


def _floordiv(a, b):
    return "floordiv", [a, b]


def _pow(input, exponent):
    return "pow", [input, exponent]


def _rsub(a, b):
    return "sub", [b, a, 1]


def _matmul(name):
    def norm(input, other):
        return name, [input, other]

    return norm


def _embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    if max_norm is not None:
        raise Unsupported("embedding with max_norm (it renormalizes the weight in place)")
    return "embedding", [input, weight]


def _dropout(input, p=0.5, training=True, inplace=False):
    return "dropout", [input, float(p), bool(training)]


def _sdpa(
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
        raise Unsupported("scaled_dot_product_attention with enable_gqa=True")
    return "scaled_dot_product_attention", [
        query,
        key,
        value,
        attn_mask,
        float(dropout_p),
        bool(is_causal),
        scale,
    ]


def _reduce(name):
    def norm(input, dim=None, keepdim=False, *, dtype=None):
        if dtype is not None:
            raise Unsupported(f"{name} with dtype")
        dims = [] if dim is None else _list(dim)
        return name, [input, dims, keepdim]

    return norm


def _amax(input, dim=(), keepdim=False):
    return "amax", [input, _list(dim) if dim != () else [], keepdim]


def _masked_fill(input, mask, value):
    return "masked_fill", [input, mask, value]


def _size(self, dim=None):
    if dim is None:
        return "sizes", [self]
    return "size", [self, dim]


def _getattr(obj, name, *default):
    if name == "shape":
        return "sizes", [obj]
    raise Unsupported(f"attribute {name!r}")


def _to(self, *args, **kwargs):
    dtypes = [a for a in list(args) + list(kwargs.values()) if _is_dtype(a)]
    if len(dtypes) != 1:
        raise Unsupported("to() without exactly one dtype")
    return "to_dtype", [self, dtypes[0]]


def _cast(dtype_name):
    def norm(self, memory_format=None):
        return "to_dtype", [self, getattr(_ember(), dtype_name)]

    return norm


def _neg(a):
    return "neg", [a]


def _rnn_layer(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse):
    return "rnn_layer", [input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, bool(reverse)]


_FUNCTIONS = None
_METHODS = {
    "view": _view,
    "reshape": _reshape_method,
    "permute": _permute_method,
    "transpose": _transpose,
    "t": _t,
    "contiguous": _contiguous,
    "clone": _clone,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "expand": _expand,
    "flatten": _flatten,
    "size": _size,
    "chunk": _chunk,
    "split": _split_method,
    "unbind": _unbind,
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "mean": _reduce("mean"),
    "sum": _reduce("sum"),
    "amax": _amax,
    "add": _binary("add"),
    "sub": _binary("sub"),
    "mul": _mul,
    "div": _div,
    "pow": _pow,
    "matmul": _matmul("matmul"),
    "bmm": _matmul("bmm"),
    "mm": _matmul("mm"),
    "masked_fill": _masked_fill,
    "to": _to,
    "float": _cast("float32"),
    "double": _cast("float64"),
    "long": _cast("int64"),
    "neg": _neg,
    "__getitem__": _getitem,
}
for _n in ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "erf"):
    _METHODS[_n] = _unary(_n)
_METHODS.update(_ops_flow.METHODS)
_METHODS.update(_ops_math.METHODS)

#: In-place Tensor methods the exporter turns into their functional forms (see _capture.py).
INPLACE_METHODS = {
    "relu_": "relu",
    "sigmoid_": "sigmoid",
    "tanh_": "tanh",
    "add_": "add",
    "sub_": "sub",
    "mul_": "mul",
    "div_": "div",
    "masked_fill_": "masked_fill",
    "unsqueeze_": "unsqueeze",
    "squeeze_": "squeeze",
    "t_": "t",
    "transpose_": "transpose",
}

#: Tensor methods/attributes whose result is fixed by the example (rank, dtype): folded into
#: constants when exporting.
FOLDED = {"dim", "ndimension", "ndim", "dtype", "device", "is_floating_point", "is_cuda"}


def _functions():
    global _FUNCTIONS
    if _FUNCTIONS is not None:
        return _FUNCTIONS
    e, F = _ember(), _F()
    table = {
        F.linear: _linear,
        F.conv1d: _conv("conv1d"),
        F.conv2d: _conv("conv2d"),
        F.batch_norm: _batch_norm,
        F.layer_norm: _layer_norm,
        F.group_norm: _group_norm,
        F.gelu: _gelu,
        F.leaky_relu: _leaky_relu,
        F.hardtanh: _hardtanh,
        F.relu6: _relu6,
        F.elu: _elu,
        F.softplus: _softplus,
        F.softmax: _softmax("softmax"),
        F.log_softmax: _softmax("log_softmax"),
        e.softmax: _softmax("softmax"),
        e.log_softmax: _softmax("log_softmax"),
        F.max_pool1d: _max_pool("max_pool1d"),
        F.max_pool2d: _max_pool("max_pool2d"),
        F.avg_pool1d: _avg_pool1d,
        F.avg_pool2d: _avg_pool2d,
        F.adaptive_avg_pool1d: _adaptive("adaptive_avg_pool1d", 1),
        F.adaptive_avg_pool2d: _adaptive("adaptive_avg_pool2d", 2),
        e.flatten: _flatten,
        e.reshape: _reshape,
        e.permute: _permute,
        e.transpose: _transpose,
        e.t: _t,
        e.unsqueeze: _unsqueeze,
        e.squeeze: _squeeze,
        e.cat: _cat,
        e.concat: _cat,
        e.stack: _stack,
        e.chunk: _chunk,
        e.split: _split,
        e.unbind: _unbind,
        e.add: _binary("add"),
        e.sub: _binary("sub"),
        e.mul: _mul,
        e.div: _div,
        e.pow: _pow,
        e.matmul: _matmul("matmul"),
        e.bmm: _matmul("bmm"),
        e.mm: _matmul("mm"),
        F.embedding: _embedding,
        F.dropout: _dropout,
        F.scaled_dot_product_attention: _sdpa,
        e.mean: _reduce("mean"),
        e.sum: _reduce("sum"),
        e.amax: _amax,
        e.masked_fill: _masked_fill,
        e.clone: _clone,
        e.neg: _neg,
        operator.getitem: _getitem,
        operator.add: lambda a, b: ("add", [a, b, 1]),
        operator.sub: lambda a, b: ("sub", [a, b, 1]),
        operator.mul: _mul,
        operator.truediv: _truediv,
        operator.floordiv: _floordiv,
        operator.pow: _pow,
        operator.matmul: _matmul("matmul"),
        operator.neg: _neg,
        builtins.getattr: _getattr,
        e._C._nn.rnn_layer: _rnn_layer,
    }
    table.update(_ops_flow.functions())
    table.update(_ops_math.functions())
    for name in ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "erf"):
        table[getattr(e, name)] = _unary(name)
    for name in ("relu", "sigmoid", "tanh", "silu", "mish", "hardswish", "hardsigmoid"):
        fn = getattr(F, name, None)
        if fn is not None:
            table[fn] = _unary(name)
    relu_ = getattr(F, "relu_", None)
    if relu_ is not None:
        table[relu_] = _unary("relu")
    # ember/_ops/complex.py puts complex paths in front of some public functions; library code
    # that imported the extension's function itself reaches the same entry.
    # ember/_argparse.py's guards may sit in front of those: every function down the chain counts.
    for fn, entry in list(table.items()):
        inner = getattr(fn, "__wrapped__", None)
        while inner is not None:
            table.setdefault(inner, entry)
            inner = getattr(inner, "__wrapped__", None)
    _FUNCTIONS = table
    return table


def method_name(target):
    """The Tensor method name a call_function target stands for, or None."""
    name = getattr(target, "__name__", None)
    if isinstance(name, str) and getattr(_ember().Tensor, name, None) is target:
        return name
    return None


def normalize(target, args, kwargs):
    """normalize(target, args, kwargs) -> (str, list) or None

    The runtime op and full positional arguments of a captured call; None when the target has
    no runtime op. Raises Unsupported for a known target used in a way the runtime cannot run."""
    if isinstance(target, str):
        fn = _METHODS.get(target)
    elif isinstance(target, _ember()._op_overloads.OpOverload):
        return _aten_names.to_runtime(target, args, kwargs)
    else:
        fn = None
        try:
            fn = _functions().get(target)
        except TypeError:  # unhashable target
            fn = None
        if fn is None:
            name = method_name(target)
            if name is not None:
                fn = _METHODS.get(name)
    if fn is None:
        return None
    try:
        return fn(*args, **kwargs)
    except TypeError as e:
        raise Unsupported(f"arguments it does not take ({e})") from None


def target_name(target):
    """A readable name of a call target for messages ('ember.nn.functional.linear')."""
    if isinstance(target, str):
        return f"Tensor.{target}"
    if getattr(target, "_export_op", None):
        return f"ember.export.ops.{target._export_op}"
    if method_name(target):
        return f"ember.Tensor.{target.__name__}"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    if mod in ("_operator", "operator"):
        mod = "operator"
    if mod.startswith("ember.nn.functional"):
        mod = "ember.nn.functional"
    elif mod.startswith("ember._C") or mod.startswith("ember._ops"):
        mod = "ember"
    return f"{mod}.{name}" if mod else name
