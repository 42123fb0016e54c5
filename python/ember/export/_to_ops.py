"""``Tensor.to`` in exported graphs, as torch 2.13's export records it.

- Every conversion is an ``aten.to`` overload: ``to.dtype`` (``x.to(dtype)``, ``x.float()``,
  ``x.half()``, ``x.type(dtype)``), ``to.device`` (``x.to(other)``: other's device and dtype),
  ``to.dtype_layout`` (``x.to("cpu")``: x's own dtype, strided, the device).
- Each one follows an ``aten._assert_tensor_metadata.default(x, dtype=, device=, layout=)`` node
  stating what the tracer saw of its input; it checks at run time (torch's wording on a
  mismatch) and returns nothing.
- A conversion that changes nothing returns its input itself, so torch's tracer reads that
  tensor through the ``to`` node from then on: later uses of the input read the node.

run_decompositions keeps the assert with torch's decomposed arguments
(``(x, None, None, dtype)``, device and layout as keywords); ember.export.save leaves it out, as
the C++ runtime checks each input's dtype on entry, which fixes the dtype of every value after
it."""

import sys

__all__ = [
    "ASSERT",
    "TO_SCHEMAS",
    "overloads",
    "runtime_args",
    "is_assert",
    "rewrite",
    "decomposed_assert",
]

ASSERT = "_assert_tensor_metadata.default"
_ASSERT_SCHEMA = (
    "_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, "
    "ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()"
)
TO_SCHEMAS = {
    "to.device": "to.device(Tensor(a) self, Device device, ScalarType dtype, "
    "bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "to.dtype_layout": "to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
    "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
}
# Tensor methods that are x.to(dtype) (torch records them as aten.to.dtype)
_CASTS = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bfloat16": "bfloat16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    "bool": "bool",
}


def _ember():
    return sys.modules["ember"]


def _check(a, size=None, stride=None, dtype=None, *, device=None, layout=None):
    def fail(what, want, got):
        raise RuntimeError(f"Tensor {what} mismatch! Expected: {want}, Got: {got}")

    if size is not None and list(a.shape) != list(size):
        fail("sizes", list(size), list(a.shape))
    if stride is not None and list(a.stride()) != list(stride):
        fail("strides", list(stride), list(a.stride()))
    if dtype is not None and a.dtype != dtype:
        from .._storage import _c10_name, _cpp_name

        fail("dtype", _c10_name(dtype), _cpp_name(a.dtype))
    if device is not None and a.device != _ember().device(device):
        fail("device", device, a.device)
    if layout is not None and a.layout != layout:
        fail("layout", layout, a.layout)


def overloads():
    """(name, schema, function) of the assert overload for ``ember.ops.aten`` (the ``to``
    overloads run through _aten_names's table)."""
    return [
        (ASSERT, _ASSERT_SCHEMA, _check),
    ]


def runtime_args(overload_name, full):
    """The runtime op ``to_dtype``'s arguments of a call of ``to.device``/``to.dtype_layout``
    (``full``: torch's arguments, defaults filled in)."""
    if overload_name == "to.device":
        return [full[0], full[2]]
    return [full[0], full[1]]


def is_assert(target):
    return getattr(target, "namespace", None) == "aten" and _name(target) == ASSERT


def _name(target):
    return f"{target.overloadpacket._name}.{target._overloadname}"


def _ov(name):
    packet, _, ov = name.partition(".")
    return getattr(getattr(_ember().ops.aten, packet), ov)


def _val(a):
    from .. import fx

    v = a.meta.get("val") if isinstance(a, fx.Node) else None
    return v if isinstance(v, _ember().Tensor) else None


def _as_overload(node):
    """(overload name, args, kwargs) torch records for a ``to``-like call the table did not
    map, or None."""
    from ._ops import method_name

    ember = _ember()
    name = method_name(node.target)
    if node.target is ember.Tensor.type:  # a guard wraps it under another __name__
        name = "type"
    if name is None or not node.args:
        return None
    x, rest, kwargs = node.args[0], list(node.args[1:]), dict(node.kwargs)
    src = _val(x)
    if src is None:
        return None
    if name in _CASTS and not rest and not kwargs:
        return "to.dtype", (x, getattr(ember, _CASTS[name])), {}
    if name == "type" and len(rest) == 1 and isinstance(rest[0], ember.dtype) and not kwargs:
        return "to.dtype", (x, rest[0]), {}
    if name != "to" or set(kwargs) - {"device", "dtype", "non_blocking", "copy"}:
        return None
    if kwargs.get("non_blocking") or kwargs.get("copy"):
        return None
    other = _val(rest[0]) if rest else None
    if other is not None and len(rest) == 1 and not set(kwargs) - {"non_blocking", "copy"}:
        return "to.device", (x, other.device, other.dtype), {}
    device = kwargs.get("device")
    if rest and isinstance(rest[0], (str, ember.device)):
        device = rest.pop(0)
    dtype = kwargs.get("dtype")
    if rest and isinstance(rest[0], ember.dtype):
        dtype = rest.pop(0)
    if rest or device is None:
        return None
    return (
        "to.dtype_layout",
        (x,),
        {
            "dtype": src.dtype if dtype is None else dtype,
            "layout": ember.strided,
            "device": ember.device(device),
        },
    )


def _is_to(node):
    target = node.target
    return (
        node.op == "call_function"
        and getattr(target, "namespace", None) == "aten"
        and target.overloadpacket._name == "to"
    )


def _copies(node):
    """Whether a ``to`` node makes a new tensor (else it returns its input, as torch's to)."""
    src, out = _val(node.args[0]), _val(node)
    if src is None or out is None:
        return True
    ov = node.target._overloadname
    copy = node.kwargs.get("copy", False)
    if ov == "dtype" and len(node.args) > 3:
        copy = node.args[3]
    if ov == "device" and len(node.args) > 4:
        copy = node.args[4]
    return bool(copy) or src.dtype != out.dtype or src.device != out.device


def rewrite(graph):
    """Gives ``graph``'s conversions torch's overloads, aliasing and assert nodes (in place)."""
    ember = _ember()
    for node in list(graph.nodes):
        if node.op != "call_function" or _is_to(node):
            continue
        new = _as_overload(node)
        if new is not None:
            node.target, node.args, node.kwargs = _ov(new[0]), new[1], new[2]
    order = {n: k for k, n in enumerate(graph.nodes)}
    assert_ov = _ov(ASSERT)
    for node in list(graph.nodes):
        if not _is_to(node):
            continue
        x = node.args[0] if node.args else node.kwargs.get("self")
        src = _val(x)
        if src is None:
            continue
        with graph.inserting_before(node):
            check = graph.call_function(
                assert_ov,
                (x,),
                {"dtype": src.dtype, "device": src.device, "layout": ember.strided},
            )
        check.meta.update({k: v for k, v in node.meta.items() if k != "val"})
        check.meta["val"] = None
        if not _copies(node):
            # torch's tracer reads the returned tensor (x itself) through this node from now on
            for user in list(x.users):
                if user is not node and user is not check and order.get(user, -1) > order[node]:
                    user.replace_input_with(x, node)


def decomposed_assert(node):
    """(args, kwargs) of an assert node as run_decompositions records it."""
    x = node.args[0]
    kw = dict(node.kwargs)
    args = [x, kw.pop("size", None), kw.pop("stride", None), kw.pop("dtype", None)]
    return tuple(args), kw
