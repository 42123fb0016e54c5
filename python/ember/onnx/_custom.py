"""custom_translation_table: user mappings of operators to ONNX, as torch.onnx.export takes them.

torch's table maps an op overload (``torch.ops.aten.gelu.default``) to a function written with
ONNX Script (``op.Gelu(x)`` with ``from onnxscript import opset18 as op``), or a list of such
functions. ember accepts the same table: the key may be an ember op overload
(``ember.ops.aten.gelu.default``; with ``import ember as torch`` the same object), its overload
packet (``ember.ops.aten.gelu``), or an ember function itself (``ember.nn.functional.gelu``). The
key names the operator: every call of it in the captured graph (the function, the Tensor method,
the Python operator such as ``a + b`` for ``aten.add``, and the activation modules such as
``nn.GELU``) goes to the user's function instead of ember's mapping.

The function receives the node's arguments (tensors as the graph's values, the rest as Python
values) and builds its result with ONNX operators, either through ONNX Script's opsets, whose
calls are recorded into ember's graph (an onnxscript evaluator), or, without onnxscript, through
``ember.onnx.ops`` (``ops.Gelu(x)``, ``ops.Add(a, b)``, ``ops.Split(x, axis=0, _outputs=2)``):
both check the inputs and attributes against the operator's ONNX schema. Python numbers given as
operator inputs become constants of the first tensor input's dtype."""

import contextlib
import operator
import sys
import threading

from .. import _C
from ._graph import Value
from .errors import SymbolicValueError

_state = threading.local()

# Python operators and the aten name they stand for.
_OPERATORS = {
    operator.add: "add",
    operator.iadd: "add",
    operator.sub: "sub",
    operator.isub: "sub",
    operator.mul: "mul",
    operator.imul: "mul",
    operator.truediv: "div",
    operator.itruediv: "div",
    operator.floordiv: "floor_divide",
    operator.matmul: "matmul",
    operator.neg: "neg",
    operator.pow: "pow",
    operator.mod: "remainder",
    operator.abs: "abs",
    operator.eq: "eq",
    operator.ne: "ne",
    operator.lt: "lt",
    operator.le: "le",
    operator.gt: "gt",
    operator.ge: "ge",
    operator.and_: "bitwise_and",
    operator.or_: "bitwise_or",
    operator.invert: "bitwise_not",
}


def _key_name(key):
    """(aten name, overload name or None, the function itself or None) of a table key."""
    if isinstance(key, str):
        name, _, overload = key.partition(".")
        return name.split("::")[-1], overload or None, None
    packet = getattr(key, "overloadpacket", None)
    if packet is not None:  # an OpOverload (ember's, or torch's by the same shape)
        return str(getattr(packet, "__name__", packet)).split(".")[-1], key._overloadname, None
    qual = getattr(key, "_qualified_op_name", None) or getattr(key, "__ember_qualname__", None)
    if qual is not None and hasattr(key, "overloads"):  # an OpOverloadPacket
        return str(qual).split("::")[-1].split(".")[-1], None, None
    if callable(key):
        return getattr(key, "__name__", None), None, key
    raise TypeError(
        "ember.onnx.export: expected custom_translation_table keys to be op overloads or "
        f"functions; got {key!r}"
    )


class Table:
    """The normalized table: entries by function identity and by aten name."""

    def __init__(self, table):
        if not isinstance(table, dict):
            raise TypeError(
                "ember.onnx.export: expected custom_translation_table to be a dict; got "
                f"{type(table).__name__}"
            )
        self.by_id, self.by_name = {}, {}
        for key, fn in table.items():
            fns = list(fn) if isinstance(fn, (list, tuple)) else [fn]
            if not fns or not all(callable(f) for f in fns):
                raise TypeError(
                    f"ember.onnx.export: expected custom_translation_table[{key!r}] to be a "
                    f"function or a list of functions; got {fn!r}"
                )
            name, overload, func = _key_name(key)
            if func is not None:
                self.by_id[id(func)] = (fns, f"{getattr(func, '__module__', '')}.{name}")
            if name:
                self.by_name.setdefault(name, []).append((overload, fns))

    def _by_name(self, name, args):
        entries = self.by_name.get(name)
        if not entries:
            return None
        if len(entries) > 1:  # add.Tensor vs add.Scalar: choose by the second argument
            scalar = len(args) > 1 and not isinstance(args[1], Value)
            for overload, fns in entries:
                if (overload == "Scalar") == scalar:
                    return fns, f"aten.{name}.{overload}"
        overload, fns = entries[0]
        return fns, f"aten.{name}" + (f".{overload}" if overload else "")

    def lookup(self, node, root):
        """(functions, name) for a captured node the table covers, else None."""
        from ._capture import resolve

        args = node.args
        if node.op == "call_function":
            hit = self.by_id.get(id(node.target))
            if hit is not None:
                return hit
            name = _OPERATORS.get(node.target) or getattr(node.target, "__name__", None)
        elif node.op == "call_method":
            name = node.target.rstrip("_") if node.target.endswith("_") else node.target
        elif node.op == "call_module":
            mod = resolve(root, node.target)
            name = type(mod).__name__.lower()
            if not type(mod).__module__.startswith("ember.nn") or mod.__dict__.get("inplace"):
                return None
            params = getattr(mod, "_parameters", {})
            if any(p is not None for p in params.values()):
                return None  # a layer with weights is not one aten call
        else:
            return None
        return self._by_name(name, args) if name else None

    def call(self, g, fns, name, args, kwargs):
        """Runs the user's function (the first of `fns` that accepts the arguments)."""
        error = None
        for fn in fns:
            with recording(g):
                try:
                    out = fn(*args, **kwargs)
                except TypeError as e:  # another overload's function may take these
                    error = e
                    continue
            return _check_out(out, name)
        raise SymbolicValueError(f"ember.onnx.export: custom translation of {name}: {error}")


def _check_out(out, name):
    if isinstance(out, Value):
        return out
    if isinstance(out, (tuple, list)) and all(isinstance(o, Value) or o is None for o in out):
        return type(out)(out)
    raise SymbolicValueError(
        f"ember.onnx.export: custom translation of {name}: expected the function to return "
        f"graph values; got {type(out).__name__}"
    )


@contextlib.contextmanager
def recording(g):
    """Records ONNX operator calls (ember.onnx.ops, and onnxscript's when installed) into `g`."""
    previous = getattr(_state, "g", None)
    _state.g = g
    try:
        if "onnxscript" not in sys.modules:  # the user's functions cannot be onnxscript's
            yield  # (importing it costs ~0.6 s, measured with -X importtime)
            return
        import onnxscript.evaluator as evaluator

        with evaluator.default_as(_Evaluator()):
            yield
    finally:
        _state.g = previous


def _current():
    g = getattr(_state, "g", None)
    if g is None:
        raise RuntimeError(
            "ember.onnx.ops: expected to be called inside a custom translation function "
            "during ember.onnx.export; got a call outside of an export"
        )
    return g


def emit(op_type, args, kwargs, domain="", outputs=None):
    """Adds one ONNX node to the graph being built; returns its Value (or tuple of Values)."""
    g = _current()
    onnx = g.onnx
    try:
        schema = onnx.defs.get_schema(op_type, g.opset, domain)
    except Exception as e:
        raise SymbolicValueError(
            f"ember.onnx.ops: expected an ONNX operator of opset {g.opset}; got '{op_type}'"
        ) from e
    inputs = list(args)
    attrs = {}
    names = [p.name for p in schema.inputs]
    for k, v in kwargs.items():
        if k in schema.attributes:
            attrs[k] = v
        elif k in names:
            pos = names.index(k)
            inputs += [None] * (pos + 1 - len(inputs))
            inputs[pos] = v
        else:
            raise SymbolicValueError(
                f"ember.onnx.ops.{op_type}: expected an input or attribute of the operator; "
                f"got '{k}'"
            )
    like = next((v for v in inputs if isinstance(v, Value)), None)
    values = []
    for v in inputs:
        if v is None or isinstance(v, Value):
            values.append(v)
        elif isinstance(v, (int, float, bool, list, tuple)):
            if like is not None and like.dtype is not None:
                dtype = like.dtype
            else:
                dtype = _C.float32 if isinstance(v, float) else _C.int64
            values.append(g.const(v, dtype))
        else:
            values.append(_from_array(g, v))
    if outputs is None:
        outputs = _num_outputs(schema, values, attrs)
    for k, v in list(attrs.items()):
        if hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, Value):
            attrs[k] = onnx.numpy_helper.from_array(__import__("numpy").asarray(v), k)
    out = g.op(op_type, *values, outputs=outputs, **attrs)
    if domain:
        g.nodes[-1].domain = domain
    return out


def _from_array(g, v):
    import numpy as np

    if isinstance(v, _C.Tensor):
        return g.tensor(v)
    arr = np.asarray(getattr(v, "numpy", lambda: v)())
    from ._graph import _DTYPES

    for dtype, (_, npname) in _DTYPES.items():
        if np.dtype(getattr(np, npname)) == arr.dtype:
            return g.const(arr, dtype)
    raise SymbolicValueError(f"ember.onnx.ops: expected a tensor or number input; got {v!r}")


def _num_outputs(schema, inputs, attrs):
    if schema.name == "Split":
        if "num_outputs" in attrs:
            return int(attrs["num_outputs"])
        raise SymbolicValueError("ember.onnx.ops.Split: give the number of outputs (_outputs=n)")
    if schema.name == "BatchNormalization" and not attrs.get("training_mode", 0):
        return 1
    optional = schema.outputs[-1].option if schema.outputs else None
    required = [o for o in schema.outputs if o.option != type(optional).Optional]
    return max(1, len(required))


class _Ops:
    """``ember.onnx.ops``: ONNX operators by name, for custom translation functions.

    ``ops.Relu(x)`` adds a Relu node to the graph being exported and returns its output; inputs
    are positional (or by the schema's input names), attributes are keywords; ``_outputs=n``
    asks for n outputs of an operator whose optional outputs are wanted (default: the required
    ones); ``_domain`` names another operator domain."""

    def __getattr__(self, op_type):
        if op_type.startswith("__"):
            raise AttributeError(op_type)

        def op(*args, _outputs=None, _domain="", **kwargs):
            return emit(op_type, args, kwargs, _domain, _outputs)

        op.__name__ = op_type
        return op

    def __repr__(self):
        return "<ember.onnx.ops: ONNX operators for custom translation functions>"


ops = _Ops()


class _Evaluator:
    """An onnxscript evaluator that writes each op call into the graph being exported."""

    def eval_op(self, op, args, kwargs):
        from onnxscript._internal.evaluator import compute_num_outputs

        schema = op.op_schema
        attrs = {k: v for k, v in kwargs.items() if schema is not None and k in schema.attributes}
        n = None
        if schema is not None:
            try:
                n = compute_num_outputs(schema, args, attrs)
            except Exception:
                n = None
        return emit(op.name, args, kwargs, op.opset.domain, n)

    def eval_function(self, function, args, kwargs):
        # An @onnxscript.script function: run its Python body, its op calls recorded here.
        return function.function(*args, **kwargs)

    def eval(self, schema, inputs, attributes):  # the interface before onnxscript 0.6
        return emit(schema.name, inputs, attributes, schema.domain)
