"""Lowering an FX graph to a plan: generated kernels and eager calls in program order.

Note [Inductor scheduling]
Nodes are visited in graph order. A node with a lowering (lowering.py) becomes a `Val`: an
expression over its shape that is not computed yet, so its consumers inline it; that is how
pointwise chains fuse into one loop and pointwise producers fuse into the reduction, softmax or
layer_norm that reads them. A Val is realized (computed into a buffer by a kernel) when an eager
call or the graph's output needs it, when a second consumer would recompute an expensive
expression, or before an in-place op (a mutation must not change what an earlier node read).
Views of realized tensors stay views: kernels read them through strides, eager calls and the
outputs get them from the eager view op, so aliasing is as in eager. Anything without a
lowering runs eagerly ("extern") between the kernels, so no op is ever unsupported.
"""

from __future__ import annotations

import operator

from ..fx.graph import _get_attr
from . import codegen, ir, lowering, metrics
from .ir import Buffer, Load, Val

# Recompute an inlined expression in each consumer only while it is this cheap.
RECOMPUTE_COST = 3
# Ops in one fused expression at most (compile time and register pressure): store it beyond.
MAX_FUSED_COST = 200


def is_node(x):
    return type(x).__name__ == "Node" and hasattr(x, "op") and hasattr(x, "users")


def map_nodes(obj, fn):
    if is_node(obj):
        return fn(obj)
    if isinstance(obj, tuple):
        return tuple(map_nodes(o, fn) for o in obj)
    if isinstance(obj, list):
        return [map_nodes(o, fn) for o in obj]
    if isinstance(obj, dict):
        return {k: map_nodes(v, fn) for k, v in obj.items()}
    if isinstance(obj, slice):
        return slice(map_nodes(obj.start, fn), map_nodes(obj.stop, fn), map_nodes(obj.step, fn))
    return obj


def node_inputs(obj):
    found = []
    map_nodes(obj, lambda n: found.append(n))
    return found


def dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def is_tensor(x):
    return type(x).__name__ == "Tensor" and hasattr(x, "data_ptr")


_INPLACE_OPERATORS = {
    operator.iadd,
    operator.isub,
    operator.imul,
    operator.itruediv,
    operator.setitem,
}


def mutates(node):
    """Whether the node may write into a tensor it did not create (a barrier for fusion)."""
    t = node.target
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    if node.op in ("call_function", "call_method"):
        if name.endswith("_") and not name.endswith("__"):
            return True
        if t in _INPLACE_OPERATORS or "out" in node.kwargs or node.kwargs.get("inplace") is True:
            return True
        if name in ("batch_norm", "instance_norm") and node.op == "call_function":
            training = node.args[5] if len(node.args) > 5 else node.kwargs.get("training", False)
            return training is not False  # running statistics are updated in training mode
    return node.op == "call_module"


# Ops whose output shape depends on tensor data (torch's "dynamic output shape" ops) and the
# numbers read from data. Kernels are specialized to the example's shapes, so these and
# everything computed from them run eagerly: a kernel over a mask's example length would read
# past a shorter result and drop the rest of a longer one.
_DATA_DEPENDENT = frozenset(
    "nonzero argwhere masked_select unique unique_consecutive _unique2 repeat_interleave "
    "bincount item tolist".split()
)
_INDEXING = frozenset({"getitem", "__getitem__", "index", "index_put", "take_along_dim"})


def _target_name(node):
    t = node.target
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    return name.partition(".")[0]  # an OpOverload's "nonzero.default"


def data_dependent_nodes(graph, meta):
    """The nodes whose shapes or values may differ from the example's with the same input
    shapes: the data-dependent ops above, indexing by a boolean mask, and their users."""
    out = set()
    for node in graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        name = _target_name(node)
        inputs = node_inputs((node.args, node.kwargs))
        if (
            name in _DATA_DEPENDENT
            or (name == "where" and len(node.args) == 1 and not node.kwargs)
            or (name in _INDEXING and any(_is_mask(meta.get(a)) for a in inputs[1:]))
            or any(a in out for a in inputs)
        ):
            out.add(node)
    return out


def _is_mask(value):
    return is_tensor(value) and dtype_name(value.dtype) == "bool"


class KernelStep:
    def __init__(self, kind, spec, out):
        self.kind, self.spec, self.out = kind, spec, out
        self.code = None

    def code_inputs(self):
        """The buffers the kernel reads (before code generation)."""
        exprs = (
            [self.spec["expr"]]
            if self.kind == "pointwise"
            else [e for e, _ in self.spec["operands"]]
        )
        if "epilogue" in self.spec:
            exprs.append(self.spec["epilogue"][0])
        return [ld.buf for e in exprs for ld in ir.loads(e)]

    def generate(self, name):
        s = self.spec
        if self.kind == "pointwise":
            self.code = codegen.pointwise(name, s["shape"], s["expr"], self.out)
        else:
            self.code = codegen.row(
                name,
                self.kind,
                s["in_shape"],
                s["rdims"],
                s["operands"],
                s["params"],
                self.out,
                s.get("epilogue"),
            )
        return self.code


class ExternStep:
    def __init__(self, node, fn, args, kwargs, out):
        self.node, self.fn, self.args, self.kwargs, self.out = node, fn, args, kwargs, out


class GraphLowering:
    def __init__(self, gm, example_values):
        self.gm = gm
        self.meta = example_values  # node -> example value
        self.env = {}
        self.realized = {}
        self.steps = []
        self.inputs = []  # placeholder buffers, in order
        self.params = []  # (qualified name, buffer)
        self.output = None
        self.current = None
        self.data_dependent = data_dependent_nodes(gm.graph, example_values)

    # ------------------------------------------------------------------ values
    def buffer_val(self, buf):
        return Val(buf.shape, buf.dtype, Load(buf, 0, buf.strides), "buffer")

    def tensor_meta(self, node):
        v = self.meta.get(node)
        return v if is_tensor(v) else None

    def realize(self, node):
        """The buffer holding the node's value, emitting what computes it if needed."""
        if node in self.realized:
            return self.realized[node]
        val = self.env[node]
        if not isinstance(val, Val):
            raise AssertionError(f"{node} has no tensor value")
        if val.kind == "view":
            for a in node_inputs((node.args, node.kwargs)):
                if isinstance(self.env.get(a), Val):
                    self.realize(a)
            m = self.tensor_meta(node)
            buf = Buffer(val.shape, val.dtype, "view", node, m.stride() if m is not None else None)
            self.emit_extern(node, buf)
            self.realized[node] = buf
            return buf
        buf = self.kernel_pointwise(val)
        buf.node = node
        self.realized[node] = buf
        self.env[node] = self.buffer_val(buf)
        return buf

    def realize_val(self, val):
        """A buffer for a Val that belongs to no node (a computed operand of an eager call)."""
        if val.kind == "buffer":
            return val.expr.buf
        return self.kernel_pointwise(val)

    def kernel_pointwise(self, val):
        buf = Buffer(val.shape, val.dtype, "kernel")
        self.steps.append(KernelStep("pointwise", {"shape": val.shape, "expr": val.expr}, buf))
        return buf

    def kernel_row(self, kind, in_val, rdims, operands, params, out_shape, out_dtype):
        buf = Buffer(out_shape, out_dtype, "kernel")
        ops = [(in_val.expr, in_val.shape)] + [
            (o.expr, o.shape) if o is not None else None for o in operands
        ]
        spec = {
            "in_shape": in_val.shape,
            "rdims": tuple(rdims),
            "operands": [o for o in ops if o is not None],
            "params": params,
        }
        self.steps.append(KernelStep(kind, spec, buf))
        return buf

    def arg_value(self, node, consumer_fuses):
        """What a consumer sees of an argument node: its Val (realizing an expensive shared
        expression first) or its Python value."""
        v = self.env[node]
        if isinstance(v, Val) and v.kind == "compute" and consumer_fuses:
            c = ir.cost(v.expr)
            if (len(node.users) > 1 and c > RECOMPUTE_COST) or c > MAX_FUSED_COST:
                self.realize(node)
                v = self.env[node]
        return v

    # ------------------------------------------------------------------ eager calls
    def emit_extern(self, node, out, fn=None, args=None, kwargs=None):
        """Runs `fn` (the node's own target by default) eagerly on realized arguments."""
        args = node.args if args is None else args
        kwargs = node.kwargs if kwargs is None else kwargs

        def conv(obj):
            if isinstance(obj, Val):
                return self.realize_val(obj)
            if is_node(obj):
                v = self.env[obj]
                return self.realize(obj) if isinstance(v, Val) else v
            if isinstance(obj, (tuple, list)):
                return type(obj)(conv(o) for o in obj)
            if isinstance(obj, dict):
                return {k: conv(o) for k, o in obj.items()}
            if isinstance(obj, slice):
                return slice(conv(obj.start), conv(obj.stop), conv(obj.step))
            return obj

        args, kwargs = conv(args), conv(kwargs)
        if fn is None:
            if node.op == "call_method":
                fn = _method_caller(node.target)
            elif node.op == "call_module":
                fn = _get_attr(self.gm, node.target)
            else:
                fn = node.target
        self.steps.append(ExternStep(node, fn, args, kwargs, out))
        metrics.add("extern_calls")
        return out

    def extern_node(self, node):
        m = self.meta.get(node)
        if is_tensor(m):
            out = Buffer(tuple(m.shape), dtype_name(m.dtype), "extern", node)
        else:
            out = Buffer((), None, "extern", node)
            out.shape = None
        self.emit_extern(node, out)
        self.realized[node] = out
        self.env[node] = self.buffer_val(out) if out.shape is not None else out
        return out

    def flush(self, upto):
        """Computes every pending expression still needed after node `upto` (before a mutation)."""
        for n, v in list(self.env.items()):
            if isinstance(v, Val) and v.kind == "compute" and n not in self.realized:
                if any(u not in self.env for u in n.users) and n is not upto:
                    self.realize(n)

    # ------------------------------------------------------------------ the walk
    def run(self):
        for node in self.gm.graph.nodes:
            self.current = node
            if node.op == "placeholder":
                m = self.meta.get(node)
                if is_tensor(m):
                    buf = Buffer(tuple(m.shape), dtype_name(m.dtype), "input", node, m.stride())
                    self.env[node] = self.buffer_val(buf)
                else:
                    buf = Buffer((), None, "input", node)
                    buf.shape = None
                    self.env[node] = buf
                self.realized[node] = buf
                self.inputs.append(buf)
            elif node.op == "get_attr":
                m = self.meta.get(node)
                if is_tensor(m):
                    buf = Buffer(tuple(m.shape), dtype_name(m.dtype), "param", node, m.stride())
                    self.env[node] = self.buffer_val(buf)
                else:
                    buf = Buffer((), None, "param", node)
                    buf.shape = None
                    self.env[node] = buf
                self.realized[node] = buf
                self.params.append((node.target, buf))
            elif node.op == "output":
                self.output = map_nodes(node.args[0], self._output_value)
            else:
                if mutates(node) or node in self.data_dependent:
                    self.flush(node)
                    self.extern_node(node)
                    continue
                val = None
                fn = lowering.lookup(node)
                if fn is not None and self._lowerable(node):
                    try:
                        val = fn(self, node)
                    except lowering.NotLowered:
                        val = None
                    except Exception:  # a lowering's bug must not break the graph: run it eagerly
                        val = None
                if val is None:
                    self.extern_node(node)
                else:
                    if val.kind == "compute":
                        metrics.add("fused_nodes")
                    self.env[node] = val
                    if val.kind == "buffer" and node not in self.realized:
                        self.realized[node] = val.expr.buf
        return self

    def _lowerable(self, node):
        m = self.meta.get(node)
        if not is_tensor(m) or dtype_name(m.dtype) not in codegen.CTYPE:
            return False
        for a in node_inputs((node.args, node.kwargs)):
            v = self.env.get(a)
            if not isinstance(v, Val) or v.dtype not in codegen.CTYPE:
                return False
        return True

    def _output_value(self, node):
        v = self.env[node]
        if isinstance(v, Val):
            return self.realize(node)
        return v


def _method_caller(name):
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)

    call.__name__ = name
    return call


def fuse_epilogues(G):
    """Folds a pointwise kernel into the softmax/log_softmax/layer_norm kernel before it when it
    is the only reader of that kernel's result, reads it element for element, and needs nothing
    computed in between (Note [Inductor scheduling])."""
    from .memory import _buffers_in

    steps = G.steps
    made = {s.out.id: i for i, s in enumerate(steps)}
    readers = {}
    for i, s in enumerate(steps):
        used = s.code_inputs() if isinstance(s, KernelStep) else _buffers_in((s.args, s.kwargs), [])
        for b in used:
            readers.setdefault(b.id, []).append(i)
    for b in _buffers_in(G.output, []):
        readers.setdefault(b.id, []).append(len(steps))
    drop = set()
    for i, r in enumerate(steps):
        if not (isinstance(r, KernelStep) and r.kind in ("softmax", "log_softmax", "layer_norm")):
            continue
        users = readers.get(r.out.id, [])
        if len(users) != 1 or users[0] >= len(steps):
            continue
        j = users[0]
        k = steps[j]
        if not isinstance(k, KernelStep) or k.kind != "pointwise" or "epilogue" in r.spec:
            continue
        if tuple(k.spec["shape"]) != tuple(r.spec["in_shape"]):
            continue
        ident = ir.contiguous_strides(r.out.shape)
        lds = ir.loads(k.spec["expr"])
        if not all(ld.offset == 0 and tuple(ld.strides) == ident for ld in lds if ld.buf is r.out):
            continue
        if any(isinstance(steps[m], ExternStep) for m in range(i + 1, j)):
            continue  # an eager call in between may write what the epilogue reads
        if any(made.get(ld.buf.id, -1) > i for ld in lds if ld.buf is not r.out):
            continue
        r.spec["epilogue"] = (k.spec["expr"], r.out)
        r.out = k.out
        made[k.out.id] = i
        drop.add(j)
        metrics.add("epilogues_fused")
    G.steps = [s for m, s in enumerate(steps) if m not in drop]
