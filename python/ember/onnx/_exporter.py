"""The driver of ember.onnx.export: capture, map node by node, name inputs and outputs, write."""

import enum
import numbers
import operator

from .. import _C
from .._atomic import atomic_write
from . import _capture
from ._graph import GraphContext, Value, onnx_type
from ._registry import METHODS, lookup_function, lookup_module
from .errors import CheckerError, OnnxExporterError, SymbolicValueError, UnsupportedOperatorError

DEFAULT_OPSET = 17
MIN_OPSET, MAX_OPSET = 13, 21

_exporting = [False]


class TrainingMode(enum.IntEnum):
    """TrainingMode(value)

    The mode a model is exported in: EVAL (the default), PRESERVE (as it is) or TRAINING."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """OperatorExportTypes(value)

    How operators are exported; ember writes standard ONNX operators only (ONNX)."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export():
    """is_in_onnx_export() -> bool

    True while ``ember.onnx.export`` is capturing a model."""
    return _exporting[0]


def _leaves(x, out):
    """The tensors (or Values) of a nested example or result, in order."""
    if isinstance(x, (tuple, list)):
        for v in x:
            _leaves(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _leaves(v, out)
    else:
        out.append(x)
    return out


def _has_value(x):
    return any(isinstance(v, Value) for v in _leaves(x, []))


def _same(a, b):
    """Equal non-tensor results of the two runs (what can be folded to a Python constant)."""
    if _capture.is_tensor(a) or _capture.is_tensor(b):
        return False
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _shape(r1, r2):
    if r2 is None or not _capture.is_tensor(r2) or r2.dim() != r1.dim():
        return tuple(None for _ in range(r1.dim())) if r2 is not r1 else tuple(r1.shape)
    return tuple(a if a == b else None for a, b in zip(r1.shape, r2.shape))


def _attach(out, r1, r2, what, loose=None):
    """Sets the dtypes and shapes of the Values a mapping returned from the example results."""
    if isinstance(out, Value):
        if _capture.is_tensor(r1):
            out.dtype, out.shape = r1.dtype, _shape(r1, r2)
            dims = loose.get(out.name) if loose else None
            if dims:  # sizes that depend on the data (x[mask]): never baked in
                out.shape = tuple(None if d in dims else s for d, s in enumerate(out.shape))
        elif isinstance(r1, bool):
            out.dtype, out.shape = _C.bool, ()
        elif isinstance(r1, numbers.Integral):
            out.dtype, out.shape = _C.int64, ()
        elif isinstance(r1, numbers.Real):
            out.dtype, out.shape = _C.float32, ()
        else:
            raise OnnxExporterError(
                f"ember.onnx.export: {what} gave a tensor where the model gives {type(r1).__name__}"
            )
        return out
    if isinstance(out, (tuple, list)) and isinstance(r1, (tuple, list)) and len(out) == len(r1):
        r2s = r2 if isinstance(r2, (tuple, list)) and len(r2) == len(r1) else [None] * len(r1)
        return type(out)(_attach(o, a, b, what, loose) for o, a, b in zip(out, r1, r2s))
    return out


def _constant(g, value):
    if _capture.is_tensor(value):
        v = g.tensor(value)
        return v
    if isinstance(value, (tuple, list)):
        return type(value)(_constant(g, x) for x in value)
    return value


def _target_name(node, root):
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return lookup_module(_capture.resolve(root, node.target))[1]
    return lookup_function(node.target)[1]


def _map_node(g, node, captured, env, r1, r2, dynamic):
    """Adds the ONNX nodes of one fx node; returns its value for `env`."""
    args = _capture.map_arg(node.args, env.__getitem__)
    kwargs = _capture.map_arg(node.kwargs, env.__getitem__)
    if node.op != "call_module":
        if not _has_value((args, kwargs)):
            return _constant(g, r1)  # computed from constants only: fold it
        if dynamic is not None and _same(r1, r2):
            return r1  # a size or flag that is the same for every input
    g.example = r1
    custom = g.custom.lookup(node, captured.root) if g.custom is not None else None
    if custom is not None:
        sym, name = custom
        out = g.custom.call(g, sym, name, args, kwargs)
        if g.data_dependent:
            _follow_data_dependent(g, (args, kwargs), out, r1)
        return _attach(out, r1, r2, name, g.data_dependent)
    if node.op == "call_module":
        mod = _capture.resolve(captured.root, node.target)
        sym, name = lookup_module(mod)
        g.prefix = node.target
        call = (lambda: sym(g, mod, *args, **kwargs)) if sym else None
    elif node.op == "call_method":
        sym, name = METHODS.get(node.target), f"Tensor.{node.target}"
        call = (lambda: sym(g, *args, **kwargs)) if sym else None
    else:
        sym, name = lookup_function(node.target)
        call = (lambda: sym(g, *args, **kwargs)) if sym else None
    if call is None:
        raise UnsupportedOperatorError(name, g.opset)
    try:
        out = call()
    except (SymbolicValueError, UnsupportedOperatorError):
        raise
    except TypeError as e:
        raise SymbolicValueError(f"ember.onnx.export: {name}: {e}") from e
    if node.op == "call_function" and node.target is operator.setitem:
        # x[index] = v: later uses of x (the same Value) read the assigned tensor.
        target = args[0]
        target.name, target.dtype, target.shape = out.name, out.dtype, out.shape
        return None
    if g.data_dependent:
        _follow_data_dependent(g, (args, kwargs), out, r1)
    return _attach(out, r1, r2, name, g.data_dependent)


def _follow_data_dependent(g, inputs, out, r1):
    """A result computed from a data-dependent value (y = x[mask] * 2) keeps those sizes free:
    its dims of the sizes the example gave them are marked too."""
    if not isinstance(out, Value) or not _capture.is_tensor(r1):
        return
    if not any(isinstance(v, Value) and v.name in g.data_dependent for v in _leaves(inputs, [])):
        return
    dims = {d for d, s in enumerate(r1.shape) if s in g.data_sizes}
    if dims:
        g.data_dependent[out.name] = dims


def build(
    captured,
    examples,
    opset,
    *,
    input_names,
    output_names,
    dynamic_axes,
    export_params,
    custom=None,
):
    """The ONNX ModelProto of a captured graph (`custom`: a custom translation table)."""
    g = GraphContext(opset, export_params)
    g.custom = custom
    onnx = g.onnx
    g.module_param = lambda m, name: _module_param(g, m, name)
    dynamic_axes = _normalize_axes(dynamic_axes or {})
    for name in list(output_names or []):
        g._names.add(name)

    # Inputs: the tensors of the placeholders' examples, flattened in order.
    placeholders = [n for n in captured.graph.nodes if n.op == "placeholder"]
    input_names = list(input_names or [])
    leaves = []  # (placeholder, path, tensor)
    for ph in placeholders:
        ex = examples.get(ph.target, ph.args[0] if ph.args else None)
        tensors = [t for t in _leaves(ex, []) if _capture.is_tensor(t)]
        for i, t in enumerate(tensors):
            leaves.append((ph, i, len(tensors), t))
    names = []
    for k, (ph, i, n, t) in enumerate(leaves):
        base_name = str(ph.target).lstrip("*")
        default = base_name if n == 1 else f"{base_name}_{i}"
        names.append(g.fresh(input_names[k] if k < len(input_names) else default))
    for key in dynamic_axes:
        if key not in names and key not in (output_names or []):
            import warnings

            warnings.warn(
                f"ember.onnx.export: the dynamic_axes key '{key}' is not an input or "
                "output name; it is ignored",
                stacklevel=3,
            )

    # The example runs: as given, and (with dynamic axes) with each dynamic dim one longer.
    base = {
        ph.target: examples.get(ph.target, ph.args[0] if ph.args else None) for ph in placeholders
    }
    run1 = _capture.run(captured, base)
    run2 = run1
    dynamic = None
    if any(dynamic_axes.get(nm) for nm in names):
        dynamic = True
        grown = iter(
            [
                _capture.grow(t, sorted(dynamic_axes.get(nm, {})))
                for nm, (_, _, _, t) in zip(names, leaves)
            ]
        )
        try:
            run2 = _capture.run(captured, {k: _replace(v, grown) for k, v in base.items()})
        except Exception:  # the model cannot take other sizes: treat every size as dynamic
            run2 = {}

    env = {}
    name_iter = iter(names)
    for node in captured.graph.nodes:
        r1, r2 = run1.get(node), run2.get(node) if run2 is not run1 else run1.get(node)
        if node.op == "placeholder":
            env[node] = _inputs(g, base[node.target], name_iter, dynamic_axes)
        elif node.op == "get_attr":
            obj = _capture.resolve(captured.root, node.target)
            env[node] = g.param(obj, node.target) if _capture.is_tensor(obj) else obj
            if isinstance(env[node], Value):
                env[node].dtype, env[node].shape = obj.dtype, tuple(obj.shape)
        elif node.op == "output":
            outputs = _capture.map_arg(node.args[0], env.__getitem__)
            out_ex = run1[node]
            out_ex2 = run2.get(node) if run2 is not run1 else out_ex
        else:
            env[node] = _map_node(g, node, captured, env, r1, r2, dynamic)

    graph_outputs = _outputs(g, outputs, out_ex, out_ex2, output_names, dynamic_axes)
    graph = onnx.helper.make_graph(
        g.nodes, "main_graph", g.inputs + g.param_inputs, graph_outputs, g.initializers
    )
    opsets = [onnx.helper.make_opsetid("", opset)]
    model = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="ember")
    model.ir_version = onnx.helper.find_min_ir_version_for(opsets)
    return model


def _replace(example, grown):
    if _capture.is_tensor(example):
        return next(grown)
    if isinstance(example, (tuple, list)):
        return type(example)(_replace(v, grown) for v in example)
    return example


def _normalize_axes(dynamic_axes):
    out = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, dict):
            out[name] = {int(d): str(s) for d, s in axes.items()}
        else:
            out[name] = {int(d): f"{name}_dynamic_axes_{i + 1}" for i, d in enumerate(axes)}
    return out


def _module_param(g, m, name):
    t = getattr(m, name, None)
    if t is None:
        return None
    v = g.param(t, f"{g.prefix}.{name}" if g.prefix else name)
    v.dtype, v.shape = t.dtype, tuple(t.shape)
    return v


def _inputs(g, example, name_iter, dynamic_axes):
    """The Values of one placeholder (nested like its example); adds the graph inputs."""
    if _capture.is_tensor(example):
        name = next(name_iter)
        axes = dynamic_axes.get(name, {})
        dims = [axes.get(d, s) for d, s in enumerate(example.shape)]
        g.inputs.append(g.onnx.helper.make_tensor_value_info(name, onnx_type(example.dtype), dims))
        shape = tuple(None if d in axes else s for d, s in enumerate(example.shape))
        return Value(name, example.dtype, shape)
    if isinstance(example, (tuple, list)):
        return type(example)(_inputs(g, v, name_iter, dynamic_axes) for v in example)
    return example


def _outputs(g, outputs, ex, ex2, output_names, dynamic_axes):
    onnx = g.onnx
    values = [v for v in _leaves(outputs, []) if v is not None]
    examples = [e for e in _leaves(ex, []) if e is not None]
    examples2 = [e for e in _leaves(ex2, []) if e is not None] if ex2 is not None else examples
    output_names = list(output_names or [])
    produced = {o for n in g.nodes for o in n.output}
    used = set()
    infos = []
    for i, (v, e) in enumerate(zip(values, examples)):
        if not isinstance(v, Value):
            v = g.const(v, _C.int64 if isinstance(v, int) else _C.float32)
        if i < len(output_names):
            name = output_names[i]
        else:
            name = g.fresh("output" if len(values) == 1 else f"output_{i}")
        if v.name in produced and v.name not in used and v.name != name:
            _rename(g, v.name, name)
        elif v.name != name:
            g.nodes.append(onnx.helper.make_node("Identity", [v.name], [name]))
        used.add(name)
        e2 = examples2[i] if i < len(examples2) else None
        shape = _shape(e, e2) if _capture.is_tensor(e) else ()
        if v.shape is not None and len(v.shape) == len(shape):  # data-dependent sizes stay free
            shape = tuple(None if a is None else b for a, b in zip(v.shape, shape))
        axes = dynamic_axes.get(name, {})
        dims = [axes.get(d, s if s is not None else f"{name}_dim_{d}") for d, s in enumerate(shape)]
        dtype = e.dtype if _capture.is_tensor(e) else v.dtype
        infos.append(onnx.helper.make_tensor_value_info(name, onnx_type(dtype), dims))
    return infos


def _rename(g, old, new):
    for node in g.nodes:
        for seq in (node.input, node.output):
            for k, name in enumerate(seq):
                if name == old:
                    seq[k] = new


def check(model):
    onnx = __import__("onnx")
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise CheckerError(f"ember.onnx.export: the exported model failed onnx.checker: {e}") from e


def write_text(path, text):
    """Writes text to path atomically."""
    write(text.encode(), path)


def write(model, f):
    """Writes `model` (a ModelProto, or bytes) to a path (atomically) or a binary file object."""
    data = model if isinstance(model, bytes) else model.SerializeToString()
    if hasattr(f, "write"):
        f.write(data)
        return
    atomic_write(f, lambda out: out.write(data))
