"""The ONNX graph under construction: values, nodes, constants and parameters.

Every mapping in the ``_symbolic_*`` modules builds its part of the graph through a `GraphContext`
(called ``g`` there, as in torch's symbolic functions): ``g.op("Relu", x)`` adds a node and returns
its output `Value`; ``g.const(2.0, x.dtype)`` adds a constant; the shape helpers read a size from
the example when it is static and emit ``Shape``/``Gather`` when the model was exported with that
dimension dynamic, so no dynamic size is ever baked into the graph."""

from .. import _C
from .errors import SymbolicValueError

INT64_MAX = 2**63 - 1


def _onnx():
    """The `onnx` module, or an ImportError that says how to get it."""
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - onnx is a test dependency of ember
        raise ImportError(
            "ember.onnx.export: expected the 'onnx' package to be installed; got none "
            "(pip install onnx)"
        ) from e
    return onnx


# ember dtype -> (onnx TensorProto element type name, numpy dtype name); numpy is imported by
# the first export, not by `import ember`
_DTYPES = {
    _C.float32: ("FLOAT", "float32"),
    _C.float64: ("DOUBLE", "float64"),
    _C.float16: ("FLOAT16", "float16"),
    _C.int64: ("INT64", "int64"),
    _C.int32: ("INT32", "int32"),
    _C.int16: ("INT16", "int16"),
    _C.int8: ("INT8", "int8"),
    _C.uint8: ("UINT8", "uint8"),
    _C.bool: ("BOOL", "bool_"),
}


def onnx_type(dtype):
    """The ONNX element type (an int of onnx.TensorProto) of an ember dtype."""
    if dtype not in _DTYPES:
        raise SymbolicValueError(f"ember.onnx.export: expected a dtype ONNX has; got {dtype}")
    return getattr(_onnx().TensorProto, _DTYPES[dtype][0])


def numpy_dtype(dtype):
    """The numpy dtype of an ember dtype."""
    if dtype not in _DTYPES:
        raise SymbolicValueError(f"ember.onnx.export: expected a dtype ONNX has; got {dtype}")
    return getattr(np(), _DTYPES[dtype][1])


def np():
    """numpy, imported on first use."""
    import numpy

    return numpy


def is_floating(dtype):
    return dtype in (_C.float32, _C.float64, _C.float16, _C.bfloat16)


class Value:
    """A tensor of the ONNX graph: its name, and the dtype and shape of the example.

    ``shape`` holds an int for each dimension that is the same for every input the exported model
    accepts and None for a dynamic one; it is None altogether when not even the rank is known."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype=None, shape=None):
        self.name, self.dtype, self.shape = name, dtype, shape

    @property
    def rank(self):
        if self.shape is None:
            raise SymbolicValueError(f"ember.onnx.export: the rank of '{self.name}' is unknown")
        return len(self.shape)

    def __repr__(self):
        return f"Value({self.name!r}, {self.dtype}, {self.shape})"


class GraphContext:
    """Collects nodes, initializers, inputs and outputs; ``opset`` is the target opset version."""

    def __init__(self, opset, export_params=True):
        self.onnx = _onnx()
        self.opset = opset
        self.export_params = export_params
        self.nodes = []
        self.initializers = []
        self.inputs = []  # onnx ValueInfoProto
        self.param_inputs = []  # parameters as inputs when export_params=False
        self._names = set()
        self._params = {}  # id(tensor) -> Value
        self._consts = {}
        self._shapes = {}  # value name -> its Shape output
        self.data_dependent = {}  # value name -> dims whose size depends on the data
        self.data_sizes = set()  # the example sizes of those dims
        self.custom = None  # the custom translation table (ember.onnx._custom.Table) or None

    # -- names and nodes ---------------------------------------------------------------------

    def fresh(self, hint):
        """A name not used yet in the graph, built from `hint`."""
        hint = str(hint).replace(" ", "_") or "v"
        name, i = hint, 1
        while name in self._names:
            name, i = f"{hint}_{i}", i + 1
        self._names.add(name)
        return name

    def op(self, op_type, *inputs, outputs=1, name_hint=None, **attrs):
        """Adds an ONNX node; returns its output Value (or a tuple of `outputs` Values).

        ``inputs`` are Values, or None for an optional input left out; attributes with a None
        value are left out."""
        names = []
        for v in inputs:
            if v is None:
                names.append("")
            elif isinstance(v, Value):
                names.append(v.name)
            else:
                raise SymbolicValueError(
                    f"ember.onnx.export: {op_type}: expected Values as inputs; got {v!r}"
                )
        while names and names[-1] == "":
            names.pop()
        hint = name_hint or op_type.lower()
        outs = [
            Value(self.fresh(f"{hint}_out" if outputs == 1 else f"{hint}_out{i}"))
            for i in range(outputs)
        ]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = self.onnx.helper.make_node(
            op_type, names, [o.name for o in outs], name=self.fresh(f"{op_type}_n"), **attrs
        )
        self.nodes.append(node)
        return outs[0] if outputs == 1 else tuple(outs)

    # -- constants and parameters --------------------------------------------------------------

    def _initializer(self, array, hint):
        name = self.fresh(hint)
        self.initializers.append(
            self.onnx.numpy_helper.from_array(np().array(array, order="C"), name)
        )
        return name

    def const(self, value, dtype, hint="const"):
        """A constant tensor of `value` (a number, nested list or numpy array) as ember `dtype`."""
        array = np().asarray(value, dtype=numpy_dtype(dtype))
        key = (array.dtype.str, array.shape, array.tobytes())
        if array.size <= 64 and key in self._consts:
            return self._consts[key]
        v = Value(self._initializer(array, hint), dtype, tuple(array.shape))
        if array.size <= 64:
            self._consts[key] = v
        return v

    def ints(self, values, hint="const"):
        """A 1-D int64 constant."""
        return self.const(list(values), _C.int64, hint)

    def scalar_like(self, value, like):
        """A 0-d constant `value` with the dtype of Value `like`."""
        return self.const(value, like.dtype)

    def tensor(self, t, hint="const"):
        """A constant from an ember tensor (not a parameter: it is always stored)."""
        return self._from_tensor(t, hint, parameter=False)

    def param(self, t, name):
        """The parameter or buffer `t` of the model, under its qualified `name`; one initializer per
        tensor however many times it is used (an input when exporting without parameters)."""
        key = id(t)
        if key not in self._params:
            self._params[key] = self._from_tensor(t, name, parameter=True)
        return self._params[key]

    def _from_tensor(self, t, hint, parameter):
        t = t.detach()
        dtype = t.dtype
        if dtype == _C.bfloat16:
            t, dtype = t.float(), _C.float32
        array = t.contiguous().numpy()
        if parameter and not self.export_params:
            name = self.fresh(hint)
            self.param_inputs.append(
                self.onnx.helper.make_tensor_value_info(name, onnx_type(dtype), list(array.shape))
            )
            return Value(name, dtype, tuple(array.shape))
        return Value(self._initializer(array, hint), dtype, tuple(array.shape))

    # -- shapes --------------------------------------------------------------------------------

    def shape_of(self, v):
        """The 1-D int64 shape of Value `v` (one Shape node per value)."""
        if v.name not in self._shapes:
            self._shapes[v.name] = self.op("Shape", v)
            self._shapes[v.name].dtype = _C.int64
            self._shapes[v.name].shape = (None if v.shape is None else len(v.shape),)
        return self._shapes[v.name]

    def size(self, v, dim):
        """Dimension `dim` of `v`: an int when static, else a 0-d int64 Value."""
        dim = dim + v.rank if dim < 0 else dim
        if v.shape[dim] is not None:
            return v.shape[dim]
        out = self.op("Gather", self.shape_of(v), self.const(dim, _C.int64), axis=0)
        out.dtype, out.shape = _C.int64, ()
        return out

    def shape_tensor(self, parts):
        """A 1-D int64 Value from `parts`: ints and int64 Values of 0 or 1 dimensions."""
        parts = list(parts)
        if all(isinstance(p, int) for p in parts):
            return self.ints(parts)
        pieces, run = [], []
        for p in parts:
            if isinstance(p, Value):
                if run:
                    pieces.append(self.ints(run))
                    run = []
                if p.dtype is not None and p.dtype != _C.int64:
                    p = self.cast(p, _C.int64)
                pieces.append(self.unsqueeze(p, [0]) if p.shape == () else p)
            else:
                run.append(int(p))
        if run:
            pieces.append(self.ints(run))
        out = pieces[0] if len(pieces) == 1 else self.op("Concat", *pieces, axis=0)
        out.dtype, out.shape = _C.int64, (len(parts),)
        return out

    # -- helpers that differ between opsets ------------------------------------------------------

    def cast(self, v, dtype):
        if v.dtype == dtype:
            return v
        out = self.op("Cast", v, to=onnx_type(dtype))
        out.dtype, out.shape = dtype, v.shape
        return out

    def unsqueeze(self, v, axes):
        out = self.op("Unsqueeze", v, self.ints(axes))
        out.dtype = v.dtype
        if v.shape is not None:
            shape = list(v.shape)
            rank = len(shape) + len(axes)
            for a in sorted(a + rank if a < 0 else a for a in axes):
                shape.insert(a, 1)
            out.shape = tuple(shape)
        return out

    def squeeze(self, v, axes=None):
        out = self.op("Squeeze", v, None if axes is None else self.ints(axes))
        out.dtype = v.dtype
        if v.shape is not None and axes is not None:
            drop = {a + len(v.shape) if a < 0 else a for a in axes}
            out.shape = tuple(d for i, d in enumerate(v.shape) if i not in drop)
        return out

    def reduce(self, op_type, v, axes, keepdims):
        """ReduceX over `axes` (None: all); the axes are an input from opset 18 (13 for Sum)."""
        as_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        if axes is None:
            return self.op(op_type, v, keepdims=int(keepdims))
        if as_input:
            return self.op(op_type, v, self.ints(axes), keepdims=int(keepdims))
        return self.op(op_type, v, axes=list(axes), keepdims=int(keepdims))

    def split(self, v, sizes, axis):
        """Splits `v` along `axis` into pieces of static `sizes`."""
        if self.opset >= 13:
            return self.op("Split", v, self.ints(sizes), axis=axis, outputs=len(sizes))
        return self.op("Split", v, axis=axis, split=list(sizes), outputs=len(sizes))
