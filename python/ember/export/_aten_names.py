"""The one two-way table between the export runtime's ops and torch's ATen overloads.

Exported graphs name ATen overloads as torch 2.13's export IR does (``aten.linear.default``,
``aten.add.Tensor``, ``aten.batch_norm.default`` with torch's argument order), while the runtime
op set (``_ops.py``, the C++ interpreter, the saved format) keeps its own fixed signatures. Each
entry here says, for one runtime op, which overload it is (by its arguments), torch's schema of
that overload, and how the arguments map each way:

- ``rename(graph)`` (capture) turns each captured call into its overload, arguments in torch's
  order with trailing defaults left out (as torch prints them);
- ``to_runtime(overload, args, kwargs)`` (``_ops.normalize``: run_decompositions, save, the C++
  runtime) maps an overload's call back to ``(runtime op, positional args)``;
- ``install()`` gives ``ember.ops.aten`` the overloads its registry lacks (their call runs the
  runtime op's executor), so a graph naming them runs, and a user comparing ``node.target`` with
  ``torch.ops.aten.linear.default`` finds the same object."""

import operator
import sys

from . import _factories, _rnn, _to_ops, _writes

__all__ = ["rename", "from_runtime", "to_runtime", "install", "overload_of", "eager_call"]


def _ember():
    return sys.modules["ember"]


def _is_tensor(v):
    from ._ops_math import _is_tensor as is_tensor

    return is_tensor(v)


def _n(v, n):
    """A size argument as a list of n items (``2`` or ``[2]`` -> ``[2, 2]`` for n = 2)."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 and n > 1 else v


class _Entry:
    """One runtime op: ``choose(args)`` the overload for its runtime args (None: keep the call as
    captured), ``fwd(overload, args)`` torch's full argument list, ``back(overload, full)`` the
    runtime args; schemas by overload name."""

    def __init__(self, op, schemas, choose=None, fwd=None, back=None, pick=None):
        self.op = op
        self.schemas = schemas
        first = next(iter(schemas))
        self.choose = choose or (lambda a: first if _is_tensor(a[0]) else None)
        self.fwd = fwd or (lambda ov, a: list(a))
        self.back = back or (lambda ov, full: list(full))
        # pick(target, args, kwargs): (overload, torch's full args) read from the call as the
        # user wrote it, where torch's overload depends on that (var(x, 0) against
        # var(x, correction=0)); None: choose by the runtime args
        self.pick = pick


_TABLE = {}  # runtime op -> _Entry
_BY_OVERLOAD = {}  # "linear.default" -> _Entry


def _add(op, schemas, choose=None, fwd=None, back=None, pick=None):
    entry = _Entry(op, schemas, choose, fwd, back, pick)
    _TABLE[op] = entry
    for ov in schemas:
        _BY_OVERLOAD[ov] = entry


def _ov(schema):
    """{overload: schema} for one overload, named by the schema's head."""
    head = schema.split("(", 1)[0]
    return {head if "." in head else f"{head}.default": schema}


def _keep(n):
    """back: the first n of torch's arguments are the runtime's."""
    return lambda ov, full: list(full[:n])


_UNARY_NAMES = (
    "relu sigmoid tanh silu mish hardswish hardsigmoid exp log sqrt rsqrt neg abs erf "
    "exp2 expm1 log2 log10 log1p sin cos tan asin acos atan sinh cosh asinh acosh atanh erfc "
    "erfinv reciprocal sinc sign floor ceil trunc frac square selu"
).split()
for _name in _UNARY_NAMES:
    _add(_name, _ov(f"{_name}(Tensor self) -> Tensor"))

_add("linear", _ov("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"))
for _d in (1, 2):
    _ints = f"SymInt[{_d}]"
    _one, _zero = [1] * _d, [0] * _d
    _add(
        f"conv{_d}d",
        {
            f"conv{_d}d.default": f"conv{_d}d(Tensor input, Tensor weight, Tensor? bias=None, "
            f"{_ints} stride={_one}, {_ints} padding={_zero}, {_ints} dilation={_one}, "
            "SymInt groups=1) -> Tensor",
            f"conv{_d}d.padding": f"conv{_d}d.padding(Tensor input, Tensor weight, Tensor? "
            f"bias=None, {_ints} stride={_one}, str padding=\"valid\", {_ints} dilation={_one}, "
            "SymInt groups=1) -> Tensor",
        },
        choose=lambda a, d=_d: f"conv{d}d.{'padding' if isinstance(a[4], str) else 'default'}",
        fwd=lambda ov, a, d=_d: [
            a[0],
            a[1],
            a[2],
            _n(a[3], d),
            a[4] if isinstance(a[4], str) else _n(a[4], d),
            _n(a[5], d),
            a[6],
        ],
    )
_add(
    "batch_norm",
    _ov(
        "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
        "running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    ),
    fwd=lambda ov, a: [a[0], a[3], a[4], a[1], a[2], a[5], a[6], a[7], False],
    back=lambda ov, f: [f[0], f[3], f[4], f[1], f[2], bool(f[5]), float(f[6]), float(f[7])],
)
_add(
    "layer_norm",
    _ov(
        "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? "
        "bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    ),
    fwd=lambda ov, a: list(a) + [False],  # export records cudnn off, as torch's does
    back=_keep(5),
)
_add(
    "group_norm",
    _ov(
        "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
        "float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
    ),
    fwd=lambda ov, a: list(a) + [False],
    back=_keep(5),
)
_add("item", _ov("item(Tensor self) -> Scalar"))  # x.item(): torch's unbacked u0 (_unbacked)
# the checks on such numbers (_unbacked) and the lengths they read: captured as these overloads
# (choose: None), run by the runtime's _assert_scalar and size
_add(
    "_assert_scalar",
    _ov("_assert_scalar(Scalar self, str assert_msg) -> ()"),
    choose=lambda a: None,
)
_add("size", _ov("sym_size.int(Tensor self, int dim) -> SymInt"), choose=lambda a: None)
_add("gelu", _ov("gelu(Tensor self, *, str approximate='none') -> Tensor"))
_add(
    "leaky_relu",
    _ov("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor"),
)
_add(
    "hardtanh",
    _ov("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"),
)
_add(
    "elu",
    _ov("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"),
    fwd=lambda ov, a: list(a) + [1, 1],
    back=_keep(2),
)
_add(
    "softplus",
    _ov("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor"),
)
for _name in ("softmax", "log_softmax"):
    _add(
        _name,
        _ov(f"{_name}.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"),
        fwd=lambda ov, a: list(a) + [None],
        back=_keep(2),
    )
for _d in (1, 2):
    _k = f"int[{_d}]"
    _pad, _dil = ("[0]", "[1]") if _d == 1 else ("0", "1")
    _add(
        f"max_pool{_d}d",
        _ov(
            f"max_pool{_d}d(Tensor self, {_k} kernel_size, {_k} stride=[], {_k} padding={_pad}, "
            f"{_k} dilation={_dil}, bool ceil_mode=False) -> Tensor",
        ),
        fwd=lambda ov, a, d=_d: [
            a[0],
            _n(a[1], d),
            _n(a[2], d) if a[2] else [],
            _n(a[3], d),
            _n(a[4], d),
            a[5],
        ],
    )
    _add(
        f"avg_pool{_d}d",
        _ov(
            f"avg_pool{_d}d(Tensor self, {_k} kernel_size, {_k} stride=[], {_k} padding={_pad}, "
            "bool ceil_mode=False, bool count_include_pad=True"
            + (", int? divisor_override=None" if _d == 2 else "")
            + ") -> Tensor",
        ),
        fwd=lambda ov, a, d=_d: (
            [a[0], _n(a[1], d), _n(a[2], d) if a[2] else [], _n(a[3], d)] + list(a[4:])
        ),
    )
    _add(
        f"adaptive_avg_pool{_d}d",
        _ov(
            f"adaptive_avg_pool{_d}d(Tensor self, SymInt[{_d}] output_size) -> Tensor",
        ),
    )
_add(
    "flatten",
    _ov("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"),
)
_add("view", _ov("view(Tensor(a) self, SymInt[] size) -> Tensor(a)"))
_add("reshape", _ov("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"))
_add("permute", _ov("permute(Tensor(a) self, int[] dims) -> Tensor(a)"))
_add("transpose", _ov("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"))
_add("unsqueeze", _ov("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"))
_add(
    "squeeze",
    {
        "squeeze.default": "squeeze(Tensor(a) self) -> Tensor(a)",
        "squeeze.dim": "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    },
    choose=lambda a: "squeeze.default" if a[1] is None else "squeeze.dim",
    fwd=lambda ov, a: [a[0]] if a[1] is None else list(a),
    back=lambda ov, f: [f[0], None] if ov == "squeeze.default" else list(f),
)
_add(
    "expand",
    _ov("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"),
    fwd=lambda ov, a: list(a) + [False],
    back=_keep(2),
)
_add("t", _ov("t(Tensor(a) self) -> Tensor(a)"))
_add(
    "contiguous",
    _ov("contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)"),
    fwd=lambda ov, a: list(a) + [0],
    back=_keep(1),
)
_add(
    "clone",
    _ov("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"),
    fwd=lambda ov, a: list(a) + [None],
    back=_keep(1),
)
_add(
    "cat",
    _ov("cat(Tensor[] tensors, int dim=0) -> Tensor"),
    choose=lambda a: "cat.default",
)
_add(
    "stack",
    _ov("stack(Tensor[] tensors, int dim=0) -> Tensor"),
    choose=lambda a: "stack.default",
)
_add("chunk", _ov("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]"))
_add(
    "split",
    _ov("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"),
)
_add(
    "split_with_sizes",
    _ov("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]"),
)
_add("unbind", _ov("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"))
for _name in ("add", "sub"):
    _add(
        _name,
        _ov(f"{_name}.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
    )
_add("mul", _ov("mul.Tensor(Tensor self, Tensor other) -> Tensor"))
_add(
    "div",
    {
        "div.Tensor": "div.Tensor(Tensor self, Tensor other) -> Tensor",
        "div.Tensor_mode": "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) "
        "-> Tensor",
    },
    choose=lambda a: (
        None if not _is_tensor(a[0]) else "div.Tensor" if a[2] is None else "div.Tensor_mode"
    ),
    fwd=lambda ov, a: list(a) if ov == "div.Tensor_mode" else list(a[:2]),
    back=lambda ov, f: list(f) if ov == "div.Tensor_mode" else list(f) + [None],
)
_add("floordiv", _ov("floor_divide(Tensor self, Tensor other) -> Tensor"))
_add(
    "pow",
    {
        "pow.Tensor_Tensor": "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
        "pow.Tensor_Scalar": "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
        "pow.Scalar": "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    },
    choose=lambda a: (
        ("pow.Tensor_Tensor" if _is_tensor(a[1]) else "pow.Tensor_Scalar")
        if _is_tensor(a[0])
        else ("pow.Scalar" if _is_tensor(a[1]) else None)
    ),
)
for _name, _other in (("matmul", "other"), ("bmm", "mat2"), ("mm", "mat2")):
    _add(_name, _ov(f"{_name}(Tensor self, Tensor {_other}) -> Tensor"))
_add(
    "embedding",
    _ov(
        "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
        "scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    ),
    fwd=lambda ov, a: [a[1], a[0], -1, False, False],
    back=lambda ov, f: [f[1], f[0]],
)
_add("dropout", _ov("dropout(Tensor input, float p, bool train) -> Tensor"))
_add(
    "scaled_dot_product_attention",
    _ov(
        "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
        "attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool "
        "enable_gqa=False) -> Tensor",
    ),
    fwd=lambda ov, a: list(a) + [False],
    back=_keep(7),
)
for _name, _dim_ov in (("mean", "mean.dim"), ("sum", "sum.dim_IntList")):
    _add(
        _name,
        {
            _dim_ov: f"{_dim_ov}(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
            "dtype=None) -> Tensor",
            f"{_name}.default": f"{_name}(Tensor self, *, ScalarType? dtype=None) -> Tensor",
        },
        choose=lambda a, d=_dim_ov, n=_name: d if a[1] or a[2] else f"{n}.default",
        fwd=lambda ov, a: [a[0], None] if ov.endswith(".default") else [a[0], a[1], a[2], None],
        back=lambda ov, f: (
            [f[0], [], False] if ov.endswith("default") else [f[0], f[1] or [], f[2]]
        ),
    )
_add(
    "amax",
    _ov("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"),
)
_add(
    "masked_fill",
    {
        "masked_fill.Scalar": "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) "
        "-> Tensor",
        "masked_fill.Tensor": "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) "
        "-> Tensor",
    },
    choose=lambda a: "masked_fill.Tensor" if _is_tensor(a[2]) else "masked_fill.Scalar",
)
_add(
    "to_dtype",
    _ov(
        "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)",
    ),
    fwd=lambda ov, a: list(a) + [False, False, None],
    back=_keep(2),
)
# x.to(other), x.to("cpu") (see _to_ops.py): overloads of the same runtime op, chosen there
_TO_OTHERS = _Entry("to_dtype", _to_ops.TO_SCHEMAS, back=_to_ops.runtime_args)
for _ov_name in _to_ops.TO_SCHEMAS:
    _BY_OVERLOAD[_ov_name] = _TO_OTHERS


# the math of _ops_math.py beyond the unary table
_add("clamp", _ov("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"))
_add(
    "clamp_tensor",
    _ov("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"),
)
for _name in ("minimum", "maximum", "atan2"):
    _add(_name, _ov(f"{_name}(Tensor self, Tensor other) -> Tensor"))
for _name in ("max", "min"):
    _add(f"{_name}_all", _ov(f"{_name}(Tensor self) -> Tensor"))
for _name in ("argmax", "argmin"):
    _add(_name, _ov(f"{_name}(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"))
_add("amin", _ov("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"))
_add(
    "cumsum",
    _ov("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"),
    fwd=lambda ov, a: list(a) + [None],
    back=_keep(2),
)
for _name in ("tril", "triu"):
    _add(_name, _ov(f"{_name}(Tensor self, int diagonal=0) -> Tensor"))
_add(
    "round",
    {
        "round.default": "round(Tensor self) -> Tensor",
        "round.decimals": "round.decimals(Tensor self, *, int decimals) -> Tensor",
    },
    choose=lambda a: "round.decimals" if a[1] else "round.default",
    fwd=lambda ov, a: list(a) if a[1] else [a[0]],
    back=lambda ov, f: list(f) if ov == "round.decimals" else [f[0], 0],
)


# comparisons and logical/bitwise ops: a number operand is torch's .Scalar overload
def _tensor_or_scalar(name, scalar=True):
    return lambda a: (
        None
        if not _is_tensor(a[0])
        else f"{name}.Tensor"
        if _is_tensor(a[1])
        else (f"{name}.Scalar" if scalar else None)
    )


def _pair_schemas(name):
    return {
        f"{name}.Tensor": f"{name}.Tensor(Tensor self, Tensor other) -> Tensor",
        f"{name}.Scalar": f"{name}.Scalar(Tensor self, Scalar other) -> Tensor",
    }


def _operator_pick(dunder):
    """``a & b`` is torch's ``__and__`` overload, ``torch.bitwise_and(a, b)`` its own."""

    def pick(target, args, kwargs):
        if target is not getattr(operator, dunder) or kwargs or len(args) != 2:
            return None
        ov = _tensor_or_scalar(dunder)(args)
        return (ov, list(args)) if ov else None

    return pick


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _add(_name, _pair_schemas(_name), choose=_tensor_or_scalar(_name))
for _name in ("and", "or", "xor"):
    _add(
        f"bitwise_{_name}",
        {**_pair_schemas(f"bitwise_{_name}"), **_pair_schemas(f"__{_name}__")},
        choose=_tensor_or_scalar(f"bitwise_{_name}"),
        pick=_operator_pick(f"__{_name}__"),
    )
_add(
    "where",
    _ov("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"),
    choose=lambda a: "where.self" if all(_is_tensor(v) for v in a) else None,
)
for _name in ("logical_and", "logical_or", "logical_xor"):
    _add(
        _name,
        _ov(f"{_name}(Tensor self, Tensor other) -> Tensor"),
        choose=lambda a, n=_name: f"{n}.default" if _is_tensor(a[0]) and _is_tensor(a[1]) else None,
    )
for _name in ("logical_not", "bitwise_not"):
    _add(_name, _ov(f"{_name}(Tensor self) -> Tensor"))


# max/min over a dim return (values, indices), read by getitem as torch's graphs do
for _name in ("max", "min"):
    _add(
        f"{_name}_dim",
        _ov(
            f"{_name}.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
            "indices)"
        ),
    )


def _var_pick(target, args, kwargs):
    """torch's overload of var/std as called: ``correction=`` gives ``.correction``, a dim
    ``.dim`` (unbiased as given), ``unbiased`` alone ``.default``, nothing ``.correction``."""
    import inspect

    def bind(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return locals()

    try:
        a = bind(*args, **kwargs)
    except TypeError:
        return None
    if isinstance(a["dim"], bool):  # var(x, unbiased)
        a["dim"], a["unbiased"] = None, a["dim"]
    name = getattr(inspect.unwrap(target), "__name__", "")
    name = "std" if name.startswith("std") else "var"
    dims = a["dim"] if a["dim"] is None else _n(a["dim"], 1)
    if "correction" in kwargs:
        return f"{name}.correction", [a["input"], dims, a["correction"], a["keepdim"]]
    if dims is not None:
        unbiased = True if a["unbiased"] is None else a["unbiased"]
        return f"{name}.dim", [a["input"], dims, unbiased, a["keepdim"]]
    if a["unbiased"] is not None and not a["keepdim"]:
        return f"{name}.default", [a["input"], a["unbiased"]]
    return f"{name}.correction", [a["input"], None, None, a["keepdim"]]


def _var_back(ov, f):
    if ov.endswith(".default"):
        return [f[0], [], 1.0 if f[1] else 0.0, False]
    if ov.endswith(".dim"):
        return [f[0], list(f[1] or []), 1.0 if f[2] else 0.0, bool(f[3])]
    return [f[0], list(f[1] or []), 1.0 if f[2] is None else float(f[2]), bool(f[3])]


for _name in ("var", "std"):
    _add(
        _name,
        {
            f"{_name}.correction": f"{_name}.correction(Tensor self, int[1]? dim=None, *, "
            "Scalar? correction=None, bool keepdim=False) -> Tensor",
            f"{_name}.dim": f"{_name}.dim(Tensor self, int[1]? dim, bool unbiased=True, bool "
            "keepdim=False) -> Tensor",
            f"{_name}.default": f"{_name}(Tensor self, bool unbiased=True) -> Tensor",
        },
        choose=lambda a, n=_name: f"{n}.correction",
        fwd=lambda ov, a: [a[0], a[1] or None, a[2], a[3]],
        back=_var_back,
        pick=_var_pick,
    )

# the *_like factories: torch's export records pin_memory=False
_LIKE_KW = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
_LIKE_KW += "pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"


def _like_pick(target, args, kwargs):
    """empty_like runs as zeros_like (any value is an empty tensor's): its call keeps its name."""
    import inspect

    if getattr(inspect.unwrap(target), "__name__", "") != "empty_like":
        return None
    return "empty_like.default", [args[0], kwargs.get("dtype"), None, None, False, None]


for _name, _also in (("zeros_like", ("empty_like",)), ("ones_like", ())):
    _add(
        _name,
        {f"{n}.default": f"{n}(Tensor self, {_LIKE_KW}" for n in (_name, *_also)},
        choose=lambda a, n=_name: f"{n}.default",
        fwd=lambda ov, a: [a[0], a[1], None, None, False, None],
        back=_keep(2),
        pick=_like_pick if _also else None,
    )
_add(
    "full_like",
    _ov(f"full_like(Tensor self, Scalar fill_value, {_LIKE_KW}"),
    fwd=lambda ov, a: [a[0], a[1], a[2], None, None, False, None],
    back=_keep(3),
)


# Indexing: one getitem node becomes torch's chain of slice/select/unsqueeze nodes, then one
# index.Tensor for the tensor components (_index_chain); back, each is the runtime's getitem
# with that one component.
_END = (1 << 63) - 1  # torch's end of an open slice


def _index_back(ov, f):
    x = f[0]
    if ov == "index.Tensor":  # a None entry leaves its dim whole
        return [x, [slice(None) if i is None else i for i in f[1]]]
    dim = f[1]
    if ov == "select.int":
        component = f[2]
    else:
        end = None if f[3] is None or (type(f[3]) is int and f[3] >= _END) else f[3]
        component = slice(f[2], end, None if f[4] == 1 else f[4])
    return [x, [slice(None)] * dim + [component]]


_INDEX = _Entry(
    "getitem",
    {
        "select.int": "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
        "slice.Tensor": "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
        "end=None, SymInt step=1) -> Tensor(a)",
        "index.Tensor": "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    },
    choose=lambda a: None,
    back=_index_back,
)
for _ov_name in _INDEX.schemas:
    _BY_OVERLOAD[_ov_name] = _INDEX


# ---- the three uses ----


def _schema(overload_name):
    from .._op_overloads import FunctionSchema

    cache = _schema.__dict__.setdefault("cache", {})
    if overload_name not in cache:
        cache[overload_name] = FunctionSchema(
            "aten::" + _BY_OVERLOAD[overload_name].schemas[overload_name]
        )
    return cache[overload_name]


def _same(value, default):
    if isinstance(default, list) and len(default) == 1 and isinstance(value, (list, tuple)):
        return all(v == default[0] for v in value)
    if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, list):
        return all(v == default for v in value)
    if isinstance(value, (list, tuple)) and isinstance(default, list):
        return list(value) == default
    return type(value) is type(default) and value == default or (value is None and default is None)


def _trim(schema, full):
    """(args, kwargs) as torch's graphs record a call: positional arguments up to the last one
    that differs from its default, keyword-only ones only when not the default."""
    args, kwargs = [], {}
    positional = [a for a in schema.arguments if not a.kwarg_only]
    last = -1
    for i, a in enumerate(positional):
        if not a.has_default or not _same(full[i], a.default_value):
            last = i
    args = list(full[: last + 1])
    for a, v in zip(schema.arguments[len(positional) :], full[len(positional) :]):
        if not a.has_default or not _same(v, a.default_value):
            kwargs[a.name] = v
    return args, kwargs


def overload_of(name):
    """The OpOverload ``ember.ops.aten.<name>`` (``"linear.default"``)."""
    packet, _, ov = name.partition(".")
    return getattr(getattr(_ember().ops.aten, packet), ov)


def _index_arg(n):
    val = n.meta.get("val")
    return val if type(val) is int else _index_value(n)


def _index_value(i):
    """The example tensor of an index component that is a graph value, else None."""
    from .. import fx

    val = i.meta.get("val") if isinstance(i, fx.Node) else None
    return val if isinstance(val, _ember().Tensor) else None


def _number_node(b):
    """Whether a slice bound is a number the graph reads from data (``y[:x.item()]``)."""
    from .. import fx
    from ._unbacked import reads_item

    return isinstance(b, fx.Node) and type(b.meta.get("val")) is int and reads_item(b)


def _index_steps(index, ndim):
    """[(overload, args)] that torch records for ``x[index]``: the basic components in order
    (select, slice, unsqueeze), then one ``index.Tensor`` whose list holds each tensor at the
    dim it indexes (None for the dims between), as torch's indexing splits a subscript; None
    when it cannot say (Python lists, 0-d or multi-dim masks before other components)."""
    items = list(index) if isinstance(index, tuple) else [index]
    tensors = [_index_value(i) for i in items]
    for i, t in zip(items, tensors):
        if t is not None:
            if t.dim() == 0:  # torch reads a 0-d index's value: data-dependent
                return None
        elif not (i is None or i is Ellipsis or isinstance(i, (int, slice))):
            return None
    if any(isinstance(i, bool) for i in items) or items.count(Ellipsis) > 1:
        return None
    bounds = [b for i in items if isinstance(i, slice) for b in (i.start, i.stop, i.step)]
    if any(b is not None and type(b) is not int and not _number_node(b) for b in bounds):
        return None  # sizes read at run time
    # a k-d boolean mask indexes k dims; the other components after it would shift by k - 1
    masks = [k for k, t in enumerate(tensors) if t is not None and t.dim() > 1]
    if masks and any(tensors[k] is None for k in range(masks[0] + 1, len(items))):
        return None
    if Ellipsis in items:
        used = sum(
            t.dim() if t is not None and t.dtype == _ember().bool else 1
            for i, t in zip(items, tensors)
            if i is not None and i is not Ellipsis
        )
        k = items.index(Ellipsis)
        items[k : k + 1] = [slice(None)] * (ndim - used)
        tensors[k : k + 1] = [None] * (ndim - used)
    steps, dim, indices = [], 0, []
    for i, t in zip(items, tensors):
        if t is not None:
            indices += [None] * (dim - len(indices)) + [i]
            dim += 1
        elif i is None:
            steps.append(("unsqueeze.default", [dim]))
            dim += 1
        elif isinstance(i, int):
            steps.append(("select.int", [dim, i]))
        else:
            if i != slice(None):
                # torch's bounds: 0 and the end marker, or None (left out) next to a bound
                # read from data
                start, end = i.start, i.stop
                if not any(_number_node(b) for b in (i.start, i.stop, i.step)):
                    start = 0 if start is None else start
                    end = _END if end is None else end
                step = [] if i.step in (None, 1) else [i.step]
                bounds = [start, end] + step
                while bounds and bounds[-1] is None:  # torch leaves trailing defaults out
                    bounds.pop()
                steps.append(("slice.Tensor", [dim, *bounds]))
            dim += 1
    if indices:
        steps.append(("index.Tensor", [indices]))
    return steps


def _index_chain(graph, node):
    """Replaces ``x[index]`` by torch's slice/select/unsqueeze nodes; False when it cannot."""
    from .. import fx

    x, index = node.args
    val = x.meta.get("val") if isinstance(x, fx.Node) else None
    if not isinstance(val, _ember().Tensor) or node.kwargs:
        return False
    steps = _index_steps(index, val.dim())
    if not steps:
        return False
    cur, added = x, []
    with graph.inserting_before(node):
        for ov, args in steps:
            target = overload_of(ov)
            new = graph.call_function(target, (cur, *args))
            added.append(new)
            with _ember().no_grad():
                new.meta["val"] = target(cur.meta["val"], *fx.map_arg(args, _index_arg))
            new.meta.update({k: v for k, v in node.meta.items() if k not in ("val",)})
            cur = new
    want = node.meta.get("val")
    if isinstance(want, _ember().Tensor) and cur.meta["val"].shape != want.shape:
        for new in reversed(added):  # a subscript read otherwise than torch's: kept whole
            graph.erase_node(new)
        return False
    node.replace_all_uses_with(cur)
    graph.erase_node(node)
    return True


def rename(graph):
    """Renames the captured calls of ``graph`` (in place) to the ATen overloads torch's export
    names, with torch's arguments (a Tensor method updating a buffer in place, marked
    ``meta["export_in_place"]``, becomes the in-place overload); calls without an entry stay as
    captured."""
    from . import _ops

    Tensor = _ember().Tensor
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if node.op != "call_function" or not (
            isinstance(val, Tensor)
            or (isinstance(val, (list, tuple)) and val and all(isinstance(v, Tensor) for v in val))
        ):
            continue
        if node.target is operator.getitem and _index_chain(graph, node):
            continue
        factory = _factories.overload_call(node.target, node.args, node.kwargs)
        if factory is not None:
            node.target, node.args, node.kwargs = factory[0], tuple(factory[1]), factory[2]
            continue
        target, in_place = node.target, None
        method = _ops.method_name(target) if node.meta.get("export_in_place") else None
        if method is not None:  # Tensor.add_ on a buffer: aten.add_.Tensor, as torch's IR
            in_place = _ops.INPLACE_METHODS.get(method)
            if in_place is None:
                continue
            target = getattr(Tensor, in_place)
        try:
            mapped = _ops.normalize(target, node.args, dict(node.kwargs))
        except _ops.Unsupported:
            continue
        if mapped is None or mapped[0] not in _TABLE:
            continue
        op, args = mapped
        entry = _TABLE[op]
        picked = entry.pick(target, node.args, dict(node.kwargs)) if entry.pick else None
        ov = picked[0] if picked else entry.choose(args)
        if ov is None:
            continue
        new_target = overload_of(ov)
        if in_place is not None:
            new_target = _in_place_of(new_target)
            if new_target is None:
                continue
        elif node.meta.get("in_place_of_intermediate"):
            # torch's training IR keeps x.add_(1) on an intermediate as aten.add_.Tensor; later
            # reads already read this node, so the runtime computes it out of place
            new_target = _in_place_of(new_target) or new_target
        node.target = new_target
        aargs, akwargs = _trim(_schema(ov), picked[1] if picked else entry.fwd(ov, args))
        node.args, node.kwargs = tuple(aargs), akwargs
    _to_ops.rewrite(graph)
    _rename_nodes(graph)


def from_runtime(graph):
    """Names each call of a runtime op in ``graph`` (a decomposed or loaded program) by its ATen
    overload with torch's arguments, in place, as torch prints such programs; the runtime op
    is still what runs it (the overload's call maps back through ``to_runtime``) and what save
    writes. Calls whose overload depends on what the table cannot tell stay as they are."""
    for node in graph.nodes:
        op = getattr(node.target, "_export_op", None) if node.op == "call_function" else None
        entry = _TABLE.get(op)
        if entry is None or node.kwargs:
            continue
        args = list(node.args)
        try:
            ov = entry.choose(args)
            if ov is None:
                continue
            aargs, akwargs = _trim(_schema(ov), entry.fwd(ov, args))
            back = to_runtime(overload_of(ov), aargs, akwargs)
        except Exception:  # noqa: BLE001 (an argument form the table does not map: keep it)
            continue
        if back is None or back[0] != op or list(back[1]) != args:
            continue  # only a rename that maps back to the very same runtime call
        node.target, node.args, node.kwargs = overload_of(ov), tuple(aargs), akwargs


def _in_place_of(overload):
    """The in-place overload of ``overload`` (``add.Tensor`` -> ``add_.Tensor``), or None."""
    packet = _ember().ops.aten._packets.get(overload.overloadpacket._name + "_")
    return getattr(packet, "_overloads", {}).get(overload._overloadname)


def _base(node):
    from ..fx._namespace import _SUFFIX

    if node.op == "call_function" and _to_ops.is_assert(node.target):
        return "_assert_tensor_metadata_default"  # torch's pass names it after the overload
    if node.op == "call_function" and getattr(node.target, "namespace", None) == "aten":
        name = node.target.overloadpacket._name
        if name == "sym_size":
            return "sym_size_int"  # torch's name for it keeps the overload
        return name[2:-2] if name.startswith("__") and name.endswith("__") else name  # and_1
    m = _SUFFIX.match(node.name)
    return m.group(1) if m else node.name


def _rename_nodes(graph):
    """Names the nodes after their overloads as torch does (``x / 2`` is ``div``, not
    ``truediv``), numbering each name's uses in graph order (getitem_0, getitem_1, ...)."""
    from ..fx._namespace import Namespace

    nodes = list(graph.nodes)
    names = graph._graph_namespace = Namespace()
    for node in nodes:
        if node.op in ("placeholder", "get_attr", "output"):  # kept as they are ("input")
            names._used.add(node.name)
            names.associate_name_with_obj(node.name, node)
    for node in nodes:
        if node.op not in ("placeholder", "get_attr", "output"):
            node.name = names.create_name(_base(node), node)


def _table_key(overload):
    """The table's name of an ATen overload (``"add.Tensor"``), None without an entry; an
    in-place overload (``add_.Tensor`` on an intermediate, see rename) computes as its
    out-of-place one, since later reads read the node's result."""
    name, overload_name = overload.overloadpacket._name, overload._overloadname
    ov = f"{name}.{overload_name}"
    if ov not in _BY_OVERLOAD and name.endswith("_"):
        ov = f"{name[:-1]}.{overload_name}"
    return ov if ov in _BY_OVERLOAD else None


def to_runtime(overload, args, kwargs):
    """``(runtime op, positional args)`` of a call of an ATen overload; None without an entry."""
    if getattr(overload, "namespace", None) != "aten":
        return None
    ov = _table_key(overload)
    if ov is None:
        return None
    entry = _BY_OVERLOAD[ov]
    full = _schema(ov).bind(args, kwargs, ov)
    return entry.op, entry.back(ov, full)


_installed = []


def install():
    """Adds the table's overloads that ``ember.ops.aten`` lacks (once)."""
    if _installed:
        return
    _installed.append(True)
    from .._op_overloads import add_aten_overloads

    add_aten_overloads(_factories.overloads())
    add_aten_overloads(_writes.overloads())
    add_aten_overloads(_rnn.overloads())
    add_aten_overloads(_to_ops.overloads())
    add_aten_overloads((ov, e.schemas[ov], _runner(ov)) for ov, e in _BY_OVERLOAD.items())


def _runner(ov):
    def call(*args, **kwargs):
        from . import _ops

        op, rargs = to_runtime(overload_of(ov), args, kwargs)
        return getattr(_ops.ops, op)(*rargs)

    call.__name__ = call.__qualname__ = "aten_" + ov.replace(".", "_")
    return call


def eager_call(target):
    """A plain function computing an ATen overload of the table through ember's public functions
    (``ember.nn.functional.linear`` ...), for graph consumers keyed by those functions (the ONNX
    exporter traces through it); ``target`` itself when the table has no entry for it."""
    if getattr(target, "namespace", None) != "aten":
        return target
    ov = _table_key(target)
    if ov is None:
        return target
    cache = eager_call.__dict__.setdefault("cache", {})
    if ov not in cache:
        cache[ov] = _runner(ov)
    return cache[ov]
