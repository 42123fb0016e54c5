"""Capture for ember.export: symbolic tracing with every module inlined, then lifting of
parameters, buffers and tensor constants to graph inputs, functionalization of in-place calls,
folding of rank/dtype queries, and a run on the example inputs that records node.meta["val"]."""

import builtins
import inspect
import operator
import sys

from .. import fx
from . import _aten_names, _cond, _factories, _ops, _rnn, _unbacked, _writes
from ._tracing import capturing
from .exported_program import tree_flatten
from .graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["capture", "placeholder_name"]

_FOLDED_ATTRS = {"dtype", "ndim", "device", "is_cuda", "layout"}


def _ember():
    return sys.modules["ember"]


def placeholder_name(prefix, qualname):
    return prefix + qualname.replace(".", "_")


_PUBLIC_NAMESPACES = {"ember", "ember.nn.functional", "ember.linalg", "ember.special", "ember.fft"}
_FOLD_METHODS = {
    "dim",
    "ndimension",
    "is_floating_point",
    "is_complex",
    "get_device",
    "element_size",
}
_STATIC_METHODS = {"size", "numel", "nelement"}


def _real(a):
    return fx.node.map_aggregate(
        a, lambda v: v.node.meta.get("val") if isinstance(v, fx.Proxy) else v
    )


class _ValueProxy(fx.Proxy):
    """A Proxy that also knows its example value: rank, dtype and device queries (and, for
    static dims, sizes) answer with Python values, as torch.export's tracing does."""

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        val = self.node.meta.get("val")
        if _is_tensor(val):
            if k in _FOLDED_ATTRS or k in _FOLD_METHODS:
                return getattr(val, k)
            if _unbacked.data_dependent(self.node):  # a length read from data: never folded
                if k == "shape":
                    shape = _unbacked.shape_of(self)
                    return shape if shape is not None else super().__getattr__(k)
                if k == "size":
                    return lambda dim=None: self._size_by_data(dim)
                return super().__getattr__(k)
            if self.tracer._all_static(self.node) and (k in _STATIC_METHODS or k == "shape"):
                return getattr(val, k)
            if k == "size" and self.node.op == "placeholder":
                return self._size_of_input(val)
            if k == "shape" and self.node.op == "placeholder":  # each dim as size(d) gives it
                size = self._size_of_input(val)
                return _ember().Size(size(d) for d in range(val.dim()))
            if k == "item":  # a number read from data (torch's unbacked symint): a graph value
                return lambda: self.tracer.create_proxy("call_method", "item", (self,), {})
        return super().__getattr__(k)

    def __round__(self, ndigits=None):
        # round(x.shape[0] / 2): a graph value, as torch's symbolic round (``round(truediv,
        # None)``)
        return self.tracer.create_proxy("call_function", builtins.round, (self, ndigits), {})

    def _size_by_data(self, dim):
        shape = _unbacked.shape_of(self)
        if shape is None:  # computed from a result sized by data: traced as read
            traced = super().__getattr__("size")
            return traced(dim) if dim is not None else traced()
        return shape if dim is None else shape[dim]

    def _size_of_input(self, val):
        # An input's dim that no Dim marks is the example's size (a layer's check of its feature
        # size, ``input.size(-1) != self.input_size``, stays Python), as torch.export's.
        dynamic = self.tracer._dynamic.get(self.node.target, {})
        traced = super().__getattr__("size")

        def size(dim=None):
            if isinstance(dim, int) and -val.dim() <= dim < val.dim():
                if dim % val.dim() not in dynamic:
                    return val.size(dim)
            return traced(dim) if dim is not None else traced()

        return size


class _InlineTracer(fx.Tracer):
    """A tracer that treats no module as a leaf (every module's forward is traced through, as
    torch.export inlines modules) and runs each op on the example values as it records it."""

    record_stack_traces = True  # torch's export nodes carry where they were traced

    def __init__(self, examples, dynamic, all_dynamic=False):
        super().__init__()
        self._examples = examples
        self._dynamic = dynamic  # {input name: {dim: Dim}}
        self._all_dynamic = all_dynamic  # tracing a composite inside a dynamic export
        self.size_guards = []  # _constraints.SizeGuard: relations of input sizes branched on

    def is_leaf_module(self, m, module_qualified_name):
        return False

    def call_module(self, m, forward, args, kwargs):
        recorded = _rnn.module_call(self, m, args, kwargs)  # nn.LSTM: aten.lstm.input, as torch
        return recorded if recorded is not None else super().call_module(m, forward, args, kwargs)

    def _autowrap_globals(self, globals_):
        # ember's own Python functions call the ops by module-level names bound to the extension
        # (`from .._C import bmm`), which the tracing mode does not see: record those calls too.
        fresh = globals_ is not None and id(globals_) not in self._patched_globals
        super()._autowrap_globals(globals_)
        if fresh and not getattr(self, "_library_patched", False):
            # The layers' helpers (ember.nn.functional's composites) run inlined too.
            self._library_patched = True
            for name, mod in list(sys.modules.items()):
                if name.startswith(("ember.nn.functional", "ember.nn.modules")) and mod:
                    self._autowrap_globals(vars(mod))
        module_name = str(globals_.get("__name__", "")) if globals_ is not None else ""
        if not fresh or not module_name.startswith("ember.") or module_name in _PUBLIC_NAMESPACES:
            return  # the public namespaces are the tracing mode's (its routing wrappers)
        ember = _ember()
        for name, value in list(globals_.items()):
            public = getattr(ember, name, None)
            while public is not value and hasattr(public, "__wrapped__"):
                public = public.__wrapped__  # the complex paths' and argument parser's guards
            if type(value).__name__ == "nb_func" and (
                public is value or getattr(ember.nn.functional, name, None) is value
            ):
                self._patch(globals_, name)

    def proxy(self, node):
        return _ValueProxy(node, self)

    def _records_constant_call(self, func, kwargs):
        return _factories.records(func, kwargs)  # torch.zeros(n, 4) in forward: a graph node

    def to_bool(self, obj):
        from ._constraints import compare_sizes, equal_sizes, refine, specialized_dims, violation

        outcome = _unbacked.implied(obj.node)  # decided by the checks before it
        if outcome is not None:
            return outcome
        error = _unbacked.guard_error(obj.node)
        if error is not None:
            raise error
        found = specialized_dims(obj.node, self._dynamic, self._examples)
        outcome = equal_sizes(obj.node, found, self._examples) if found else None
        if outcome is None and found:
            outcome = refine(obj.node, found, self._examples)
        if outcome is None and found:
            compared = compare_sizes(obj.node, found, self._examples)
            if compared is not None:
                outcome, guard = compared
                self.size_guards.append(guard)
        if outcome is not None:
            return outcome
        if found:
            try:
                super().to_bool(obj)
            except Exception as e:  # its text names the line of user code
                raise violation(found, str(e).partition("\n")[2]) from None
        return super().to_bool(obj)

    def record_check(self, cond, message):
        from ._constraints import equal_sizes, refine, specialized_dims

        found = specialized_dims(cond.node, self._dynamic, self._examples)
        if found and equal_sizes(cond.node, found, self._examples) is True:
            return  # _check(x.shape[0] == y.shape[0]) on Dim.AUTO sizes: one symbol, as torch's
        if found and refine(cond.node, found, self._examples, holds=True) is not None:
            return  # a range of a dynamic size (ember._check(x.shape[0] >= 3)), as torch's
        _unbacked.record(self, cond, message)  # ember._check on a traced condition

    def iter(self, obj):
        # Iterating a traced tuple or list (chunk's pieces, an op's results) of known length.
        val = obj.node.meta.get("val") if isinstance(obj, fx.Proxy) else None
        if isinstance(val, (tuple, list)):
            return iter([obj[k] for k in range(len(val))])
        return super().iter(obj)

    def trace(self, root, concrete_args=None):
        # The RNN layers reach their fused kernel through the extension (ember._C._nn), which
        # the tracing mode does not see: record it as one call while tracing.
        nn_ext = _ember()._C._nn
        orig = nn_ext.rnn_layer

        def rnn_layer(*args, **kwargs):
            if any(isinstance(a, fx.Proxy) for a in list(args) + list(kwargs.values())):
                return self.create_proxy("call_function", orig, args, kwargs)
            return orig(*args, **kwargs)

        nn_ext.rnn_layer = rnn_layer
        self._library_patched = False
        # buffers read as plain tensors run their in-place updates for real while tracing (a
        # training batch norm's num_batches_tracked): exporting must leave the model as it was
        saved = []
        if isinstance(root, _ember().nn.Module):
            with _ember().no_grad():
                saved = [(n, b, b.clone()) for n, b in root.named_buffers() if b is not None]
        try:
            return super().trace(root, concrete_args)
        finally:
            nn_ext.rnn_layer = orig
            with _ember().no_grad():
                self.changed_buffers = [n for n, b, value in saved if not b.equal(value)]
                for _, b, value in saved:
                    b.copy_(value)

    def _all_static(self, node):
        # Sizes of the inputs without dynamic dims, and of everything when none is dynamic.
        if self._all_dynamic:
            return False
        if not self._dynamic:
            return True
        return node.op in ("placeholder", "get_attr") and node.target not in self._dynamic

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):  # fmt: skip
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        node = getattr(proxy, "node", None)
        if node is None:
            return proxy
        try:
            with _ember().no_grad():
                val = self._value(kind, target, args, kwargs)
        except Exception:  # the value is only a help for folding; the capture goes on
            val = None
        if _is_tensor(val) and kind in ("placeholder", "get_attr"):
            val = val.detach().clone()  # ops run here must not touch the user's tensors
        if val is not None:
            node.meta["val"] = val
        return proxy

    def _value(self, kind, target, args, kwargs):
        if kind == "placeholder":
            return self._examples.get(target, args[0] if args else None)
        if kind == "get_attr":
            return _resolve_attr(self.root, target)
        if kind == "call_function":
            if _cond_call(target):  # its branches would record their calls here (modules
                return None  # included); _lift computes its value after tracing
            return target(*_real(args), **_real(kwargs))
        if kind == "call_method":
            real = _real(args)
            return getattr(real[0], target)(*real[1:], **_real(kwargs))
        return None


def _cond_call(target):
    from ._ops_flow import is_cond

    return is_cond(target)


def _trace_error(err):
    text = str(err)
    return RuntimeError(
        "ember.export: could not capture the program: data-dependent control flow (a Python "
        "branch or loop on a tensor's value) cannot be exported; rewrite it with tensor ops "
        f"(ember.where, masking). {text}"
    )


def _is_tensor(v):
    return isinstance(v, _ember().Tensor)


def _bind(model, args, kwargs):
    """(ordered {name: value} of the forward's arguments, forward's signature)."""
    fn = model.forward if isinstance(model, _ember().nn.Module) else model
    sig = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    return bound, sig


def capture(model, args, kwargs=None, dynamic_shapes=None):
    """capture(model, args, kwargs=None, dynamic_shapes=None) -> dict

    The parts of an ExportedProgram for ``model`` called on ``args``/``kwargs``."""
    from . import dynamic_shapes as _dyn

    ember = _ember()
    kwargs = dict(kwargs or {})
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    is_module = isinstance(model, ember.nn.Module)
    if not is_module and not callable(model):
        raise TypeError(f"export: expected an nn.Module or a callable; got {type(model)}")
    try:
        bound, sig = _bind(model, args, kwargs)
    except TypeError as e:
        raise TypeError(f"export: the example inputs do not fit forward's signature: {e}") from None
    user_tensors = {}  # placeholder name -> example tensor
    concrete = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if p.name in bound.arguments:
                raise NotImplementedError(
                    f"export: forward's *{p.name} / **{p.name} parameters are not supported; give"
                    " it named parameters"
                )
            continue
        if p.name in bound.arguments:
            v = bound.arguments[p.name]
            if _is_tensor(v):
                user_tensors[p.name] = v
            else:
                concrete[p.name] = v
        else:
            concrete[p.name] = p.default
    dims = _dyn.resolve(
        dynamic_shapes,
        list(bound.arguments),
        list(user_tensors),
        list(user_tensors.values()),
    )

    from .._dynamo.exc import UserError
    from ._constraints import ConstraintsViolated, TiedDims, op_specialized

    while True:
        tracer = _InlineTracer(user_tensors, dims)
        try:
            with capturing("trace"), capturing("export"):
                graph = tracer.trace(model, concrete_args=concrete or None)
            break
        except TiedDims as e:  # x.shape[0] == y.shape[0] on two Dim.AUTO: one symbol, as torch's
            name, d = e.merged
            dims[name][d] = e.kept
        except ConstraintsViolated as e:
            # Dims marked Dim.AUTO that the code specializes become static (torch's rule).
            if not all(getattr(dim, "auto", False) for _, _, dim, _ in e.dims):
                # torch raises UserError itself (the subclass only carries the dims here)
                raise UserError(str(e)) from None
            for name, d, _, _ in e.dims:
                dims.get(name, {}).pop(d, None)
            dims = {k: v for k, v in dims.items() if v}
        except Exception as e:  # fx's TraceError: bool()/iteration on a Proxy
            if type(e).__name__ == "TraceError":
                raise _trace_error(e) from e
            raise
    root = tracer.root
    parts = _lift(
        model if is_module else root,
        root,
        graph,
        user_tensors,
        concrete,
        dims,
        (tuple(args), kwargs),
    )
    error = op_specialized(parts, dims, user_tensors)
    if error is not None:
        raise error
    _check_buffer_updates_recorded(parts, getattr(tracer, "changed_buffers", []))
    parts["size_guards"] = tracer.size_guards
    return parts


def _keep_builtin_name(graph, node, name):
    """torch's export names a user input after its parameter even where the name is a builtin's
    (``input``), which fx's namespace would number (``input_1``): the generated forward only
    shadows the builtin."""
    from ..fx._namespace import _RESERVED, is_identifier

    names = graph._graph_namespace
    if node.name != name and is_identifier(name) and name not in _RESERVED and name not in names:
        names.remove(node.name, node)
        node.name = name
        names._used.add(name)
        names.associate_name_with_obj(name, node)


def _check_buffer_updates_recorded(parts, changed):
    """Refuses a program whose forward changed a buffer by a call the trace could not record
    (``self.n.add_(1)``: no graph value among its arguments, so it ran once while tracing):
    the program would silently skip the update."""
    graph = parts["graph_module"].graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    buffer_of = {
        node: spec.target
        for node, spec in zip(placeholders, parts["graph_signature"].input_specs)
        if spec.kind == InputKind.BUFFER
    }
    updated = set()
    for node in graph.nodes:
        if node.op == "call_function" and node.args and node.args[0] in buffer_of:
            packet = getattr(node.target, "overloadpacket", None)  # aten.add_.Tensor
            name = getattr(packet or node.target, "__name__", "")
            if name.endswith("_") or node.kwargs.get("inplace") is True:
                updated.add(buffer_of[node.args[0]])
        if node.op == "call_function" and _training_batch_norm(node.target, node.args, node.kwargs):
            a = _bn_call(node.target, node.args, node.kwargs)
            updated.update(buffer_of.get(a[k]) for k in ("running_mean", "running_var"))
    missed = [name for name in changed if name not in updated]
    if missed:
        raise RuntimeError(
            f"ember.export: forward updates the buffer '{missed[0]}' in place with a call that "
            "reads no graph value (such as self.n.add_(1)); ember's trace runs it once instead "
            "of recording it. Write the update from the inputs (self.n.add_(x.new_ones(())))"
        )


def _resolve_attr(root, target):
    obj = root
    for part in target.split("."):
        original = getattr(type(obj), "_fx_original_class", None)
        if original is None:
            obj = getattr(obj, part)
            continue
        # A module whose class the tracer swapped answers attribute reads with new get_attr
        # proxies: reading the value through it recursed (one get_attr node per level, until
        # RecursionError), a second or more per exported parameter.
        try:
            obj = object.__getattribute__(obj, part)
        except AttributeError:
            obj = original.__getattr__(obj, part)
    return obj


def _lift(model, root, graph, user_tensors, concrete, dims, example_inputs):
    ember = _ember()
    out = fx.Graph()
    vals = {}  # new node -> example value

    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    non_persistent = set()
    for mod_name, mod in model.named_modules(remove_duplicate=False):
        for b in getattr(mod, "_non_persistent_buffers_set", ()):
            non_persistent.add(f"{mod_name}.{b}" if mod_name else b)

    input_specs = []
    state = {}
    constants = {}

    buffer_of = {}  # buffer placeholder -> its qualified name

    def add_input(name, kind, target, value, persistent=None):
        node = out.placeholder(name)
        node.meta["val"] = value
        vals[node] = value
        input_specs.append(InputSpec(kind, TensorArgument(node.name), target, persistent))
        if kind == InputKind.BUFFER:
            buffer_of[node] = target
        return node

    lifted = {}  # qualified name -> placeholder
    for qn, p in params.items():
        lifted[qn] = add_input(placeholder_name("p_", qn), InputKind.PARAMETER, qn, p)
        state[qn] = p
    for qn, b in buffers.items():
        if b is None:
            continue
        persistent = qn not in non_persistent
        lifted[qn] = add_input(placeholder_name("b_", qn), InputKind.BUFFER, qn, b, persistent)
        (state if persistent else constants)[qn] = b
    by_identity = {}
    for qn, t in list(params.items()) + list(buffers.items()):
        by_identity.setdefault(id(t), qn)
    for qn, t in list(model.named_parameters(remove_duplicate=False)) + list(
        model.named_buffers(remove_duplicate=False)
    ):
        if qn not in lifted and t is not None and id(t) in by_identity:
            lifted[qn] = lifted[by_identity[id(t)]]  # a shared (tied) parameter

    # get_attr of other tensors (constants) become inputs too, placed before the user inputs.
    const_targets = []
    for node in graph.nodes:
        if node.op == "get_attr" and node.target not in lifted:
            value = _resolve_attr(root, node.target)
            if _is_tensor(value) and id(value) in by_identity:
                lifted[node.target] = lifted[by_identity[id(value)]]
            elif _is_tensor(value) and node.target not in const_targets:
                const_targets.append(node.target)
    for target in const_targets:
        value = _resolve_attr(root, target)
        lifted[target] = add_input(
            placeholder_name("c_", target), InputKind.CONSTANT_TENSOR, target, value
        )
        constants[target] = value

    user_nodes = {}
    for name, t in user_tensors.items():
        node = out.placeholder(name)
        _keep_builtin_name(out, node, name)
        node.meta["val"] = t
        vals[node] = t
        user_nodes[name] = node
        input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name), None))

    def value_of(a):
        return fx.map_arg(a, lambda n: vals[n])

    Tensor = ember.Tensor

    def process(g, bind_placeholder, env):
        """Copies the call nodes of ``g`` into ``out``; returns its output argument (mapped)."""

        def new_arg(a):
            return fx.map_arg(a, lambda n: env[n])

        for node in g.nodes:
            if node.op == "placeholder":
                env[node] = bind_placeholder(node)
            elif node.op == "get_attr":
                if node.target in lifted:
                    env[node] = lifted[node.target]
                else:
                    env[node] = _resolve_attr(root, node.target)  # a non-tensor attribute
            elif node.op == "call_module":
                raise RuntimeError(
                    f"ember.export: module '{node.target}' was kept as a leaf; export inlines "
                    "every module (is its forward traceable?)"
                )
            elif node.op == "output":
                return new_arg(node.args[0])
            else:
                emit(node, env, new_arg)
        return None

    def inline(target, args, kwargs):
        """The result of a composite ember.nn.functional function traced into ``out``, or
        _NOT_INLINED when it cannot be."""
        try:
            bound = inspect.signature(target).bind(*args, **kwargs)
        except (TypeError, ValueError):
            return _NOT_INLINED
        bound.apply_defaults()
        examples, concrete, nodes = {}, {}, {}
        for name, v in bound.arguments.items():
            if isinstance(v, fx.Node):
                examples[name], nodes[name] = vals[v], v
            elif fx.node.map_aggregate(v, lambda e: isinstance(e, fx.Node)) not in (False, None):
                found = []
                fx.map_arg(v, found.append)
                if found:
                    return _NOT_INLINED
                concrete[name] = v
            else:
                concrete[name] = v
        tracer = _InlineTracer(examples, dims, all_dynamic=bool(dims))
        try:
            with capturing("trace"):
                sub = tracer.trace(target, concrete_args=concrete)
        except Exception:
            return _NOT_INLINED

        def bind(node):
            name = node.target.lstrip("*")
            return nodes[name] if name in nodes else concrete.get(name)

        return process(sub, bind, {})

    def emit(node, env, new_arg):
        args, kwargs = tuple(new_arg(node.args)), dict(new_arg(dict(node.kwargs)))
        target = node.target
        mutated = None
        if node.op == "call_method":
            name = target
            if name in _ops.INPLACE_METHODS:
                mutated = node.args[0]
                name = _ops.INPLACE_METHODS[name]
            if name in _ops.FOLDED:
                env[node] = getattr(vals_or_const(args[0], vals), name)(
                    *value_of(args[1:]), **value_of(kwargs)
                )
                return
            target = getattr(Tensor, name, None)
            if target is None:
                raise RuntimeError(f"ember.export: Tensor has no method '{node.target}'")
        elif target is builtins.getattr and len(args) >= 2 and args[1] in _FOLDED_ATTRS:
            env[node] = getattr(vals_or_const(args[0], vals), args[1])
            return
        elif (
            target is operator.getitem
            and isinstance(args[0], (tuple, list))
            and isinstance(args[1], (int, slice))
        ):
            env[node] = args[0][args[1]]  # indexing a Python tuple of graph values
            return
        elif kwargs.get("inplace") is True:
            mutated = node.args[0]
            kwargs["inplace"] = False
        buffer = None
        if mutated is not None and isinstance(mutated, fx.Node):
            base = env[mutated]
            buffer = buffer_of.get(base) if isinstance(base, fx.Node) else None
            if buffer is None and base in user_nodes.values():
                buffer = base.name  # x.mul_(2) on a user input: updated in place, as torch's
        if buffer is not None:
            # torch's training IR keeps a buffer's (or user input's) update in place (add_ on
            # b_seen); run_decompositions makes it a BUFFER_MUTATION (USER_INPUT_MUTATION)
            # output (_functionalize.py)
            in_place = getattr(Tensor, node.target) if node.op == "call_method" else target
            env[node] = call_in_place(in_place, args, dict(new_arg(dict(node.kwargs))))
            read_update(mutated, env[node], env)  # later reads read add_, as torch's graphs
            return
        if _training_batch_norm(target, args, kwargs):
            env[node] = _in_place_batch_norm(args, kwargs, call_in_place, buffer_of)
            return
        write = _writes.capture(node, args)
        if write is not None and (args[0].op != "placeholder" or args[0] in user_nodes.values()):
            emit_write(node, args[0], *write, env)
            return
        if _composite(target, args, kwargs):
            result = inline(target, args, kwargs)
            if result is not _NOT_INLINED:
                env[node] = result
                return
        new = out.call_function(target, tuple(args), kwargs)
        with ember.no_grad():
            new.meta["val"] = target(*value_of(args), **value_of(kwargs))
        new.meta["source_target"] = _ops.target_name(node.target)
        _copy_trace(node, new)
        vals[new] = new.meta["val"]
        env[node] = new
        if mutated is not None and isinstance(mutated, fx.Node):
            read_update(mutated, new, env)
            new.meta["in_place_of_intermediate"] = True  # shown as torch's add_ (_aten_names)

    aliases = {}  # result of an in-place call -> the node whose tensor it updated

    def emit_write(node, base, steps, target, rest, lift, env):
        """y[idx] = v, y.fill_(v), y[0] = v: torch's in-place overload on y (later reads
        reading its result) or on y's view (select/slice steps; later reads read y)."""
        if lift:  # before the view, as torch's indexing makes the value first
            rest = rest[:-1] + (lift_number(rest[-1], vals[base].dtype),)
        cur = base
        for ov, step_args in steps:
            step = _aten_names.overload_of(ov)
            cur = out.call_function(step, (cur, *step_args), {})
            cur.meta["val"] = vals[cur] = step(vals[cur.args[0]], *step_args)
            _copy_trace(node, cur)
        new = out.call_function(target, (cur, *rest), {})
        with ember.no_grad():
            new.meta["val"] = vals[new] = target(vals[cur].clone(), *value_of(rest))
        _copy_trace(node, new)
        if not steps:
            read_update(node.args[0], new, env)
        env[node] = new  # y.fill_(v) returns y

    def lift_number(value, dtype):
        """``lift_fresh_copy`` of a new constant input holding ``value`` (``y[idx] = 0.0``), as
        torch's export lifts the tensor its indexing makes of a number."""
        k = 0
        while f"lifted_tensor_{k}" in constants:
            k += 1
        target = f"lifted_tensor_{k}"
        constants[target] = tensor = ember.tensor(value, dtype=dtype)
        first = next(
            i
            for i, s in enumerate(input_specs + [None])
            if s is None or s.kind == InputKind.USER_INPUT
        )
        anchor = next(n for n in out.nodes if n.op != "placeholder" or n.name in user_nodes)
        with out.inserting_before(anchor):
            ph = out.placeholder("c_" + target)
        ph.meta["val"] = vals[ph] = tensor
        input_specs.insert(
            first, InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(ph.name), target)
        )
        copy = out.call_function(_aten_names.overload_of("lift_fresh_copy.default"), (ph,), {})
        copy.meta["val"] = vals[copy] = tensor.clone()
        return copy

    def read_update(mutated, new, env):
        """Later reads of the tensor ``mutated`` read ``new``, through every name it has
        (F.relu(y, inplace=True) returns y itself, so a later y.sigmoid_() updates both)."""
        root = aliases.get(env[mutated], env[mutated])
        aliases[new] = root
        for k, v in list(env.items()):
            if isinstance(v, fx.Node) and aliases.get(v, v) is root:
                env[k] = new
        env[mutated] = new

    def call_in_place(target, args, kwargs):
        """A call_function node updating buffers in place; its example value is computed on
        copies (the model's own buffers stay as they are)."""
        new = out.call_function(target, tuple(args), kwargs)
        new.meta["export_in_place"] = True

        def copy(n):
            mutable = n in buffer_of or n in user_nodes.values()
            return vals[n].clone() if mutable else vals[n]

        with ember.no_grad():
            new.meta["val"] = target(*fx.map_arg(args, copy), **fx.map_arg(kwargs, copy))
        vals[new] = new.meta["val"]
        return new

    def bind_root(node):
        name = node.target.lstrip("*")
        return user_nodes[name] if name in user_nodes else concrete.get(name)

    result = _split_multi_outputs(process(graph, bind_root, {}), out, vals)
    items, output_structure = tree_flatten(result)
    for item in items:
        if not isinstance(item, fx.Node):
            raise RuntimeError(
                "ember.export: outputs must be tensors computed by the program; got "
                f"{type(item).__name__} (constant outputs are not supported)"
            )
    out.output(tuple(items))  # flat, as torch's; module() nests them by output_structure
    _plain_tuples(out)
    out.eliminate_dead_code()
    _read_every_item(out)
    branches = ember.nn.Module()  # cond's branches: graph modules, as torch's true_graph_0
    _cond.branch_graphs(out, branches, input_specs, state, constants, bool(dims))
    _aten_names.rename(out)  # torch's ATen overloads and node names
    # x.item() and its checks, as torch lays them out
    unbacked_ranges = _unbacked.finish(out, [n for n, spec in dims.items() if spec])
    output_specs = [  # the output's nodes after renaming (an index became slice nodes)
        OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(item.name), None)
        for item in next(n for n in out.nodes if n.op == "output").args[0]
    ]
    out.lint()
    gm = fx.GraphModule(branches, out)
    range_constraints = {}
    input_shapes = {}
    for name, t in user_tensors.items():
        spec = dims.get(name, {})
        input_shapes[name] = [spec[d].__name__ if d in spec else t.size(d) for d in range(t.dim())]
        for dim in spec.values():
            root = getattr(dim, "root", None)  # a derived dim's root, as torch lists both
            if root is not None:
                range_constraints.setdefault(root.__name__, (root.min, root.max))
            range_constraints[dim.__name__] = (dim.min, dim.max)
    range_constraints.update(unbacked_ranges)
    return dict(
        graph_module=gm,
        graph_signature=ExportGraphSignature(input_specs, output_specs),
        state_dict=state,
        constants=constants,
        range_constraints=range_constraints,
        input_shapes=input_shapes,
        output_structure=output_structure,
        example_inputs=example_inputs,
    )


_NOT_INLINED = object()


def _copy_trace(node, new):
    if "stack_trace" in node.meta:
        new.meta["stack_trace"] = node.meta["stack_trace"]


def _split_multi_outputs(result, graph, vals):
    """The output with each op returning several tensors (``x.max(1)``) read element by element
    by ``getitem`` nodes, as torch's graphs return them."""
    if isinstance(result, (tuple, list)):
        items = [_split_multi_outputs(r, graph, vals) for r in result]
        return items if isinstance(result, list) else tuple(items)
    val = vals.get(result) if isinstance(result, fx.Node) else None
    if not isinstance(val, (tuple, list)):
        return result
    items = []
    for k, v in enumerate(val):
        node = graph.call_function(operator.getitem, (result, k))
        node.meta["val"] = vals[node] = v
        _same_trace(node, result)
        items.append(node)
    return tuple(items)


def _same_trace(item, node):
    """A getitem node added for a call's result shows the call's stack trace, as torch's."""
    if "stack_trace" in node.meta:
        item.meta["stack_trace"] = node.meta["stack_trace"]


def _plain_tuples(graph):
    """An op returning a named tuple (``x.max(1)``) as torch's graphs hold it: a plain tuple,
    its fields (``.values``) read by ``getitem``."""
    for node in list(graph.nodes):
        val = node.meta.get("val")
        fields = getattr(type(val), "__match_args__", None)  # namedtuples and structseqs
        if node.op != "call_function" or not isinstance(val, tuple) or fields is None:
            continue
        node.meta["val"] = tuple(val)
        for user in list(node.users):
            if user.target is builtins.getattr and user.args[0] is node and user.args[1] in fields:
                k = fields.index(user.args[1])
                with graph.inserting_before(user):
                    item = graph.call_function(operator.getitem, (node, k))
                item.meta.update(user.meta)
                user.replace_all_uses_with(item)
                graph.erase_node(user)


def _read_every_item(graph):
    """Each op returning a list of tensors (split, unbind, chunk) read by one getitem per item,
    right after it and in order, unused items included, as torch's export graphs show them."""
    Tensor = _ember().Tensor
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if (
            node.op != "call_function"
            or type(val) not in (list, tuple)
            or not val
            or not all(isinstance(v, Tensor) for v in val)
            or node.target is operator.getitem
        ):
            continue
        readers = {}
        for user in node.users:
            k = user.args[1] if user.target is operator.getitem and len(user.args) == 2 else None
            if isinstance(k, int) and user.args[0] is node and -len(val) <= k < len(val):
                readers.setdefault(k % len(val), user)
        at = node
        for k, v in enumerate(val):
            item = readers.get(k)
            if item is None:
                with graph.inserting_after(at):
                    item = graph.call_function(operator.getitem, (node, k))
                item.meta["val"] = v
                _same_trace(item, node)
            else:
                at.append(item)
            at = item


def _composite(target, args, kwargs):
    """Whether ``target`` is a Python-level ember.nn.functional function without a runtime op
    (multi_head_attention_forward ...): export traces through it instead of keeping the call."""
    if not inspect.isfunction(target):
        return False
    if not (getattr(target, "__module__", "") or "").startswith("ember.nn.functional"):
        return False
    try:
        return _ops.normalize(target, args, kwargs) is None
    except _ops.Unsupported:
        return True


def vals_or_const(a, vals):
    return vals[a] if isinstance(a, fx.Node) else a


_BN_PARAMS = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum")


def _bn_args(args, kwargs):
    bound = dict(zip(_BN_PARAMS + ("eps",), args))
    bound.update(kwargs)
    defaults = {"weight": None, "bias": None, "training": False, "momentum": 0.1, "eps": 1e-5}
    return {**defaults, **bound}


def _bn_call(target, args, kwargs):
    """The arguments of a batch_norm call by F.batch_norm's names (of F.batch_norm itself or of
    ``aten.batch_norm.default``, whose order differs), or None for another target."""
    if target is _ember().nn.functional.batch_norm:
        return _bn_args(args, kwargs)
    mapped = _aten_names.to_runtime(target, args, kwargs)
    if mapped is not None and mapped[0] == "batch_norm":
        return _bn_args(mapped[1], {})
    return None


def _training_batch_norm(target, args, kwargs):
    a = _bn_call(target, args, kwargs)
    return a is not None and bool(a["training"]) and a["running_mean"] is not None


def _in_place_batch_norm(args, kwargs, call_in_place, buffer_of):
    """batch_norm in training mode as torch's training IR shows it: the module's counter
    (``num_batches_tracked.add_(1)``, which ran outside the graph while tracing) and the call
    updating the running statistics in place."""
    a = _bn_args(args, kwargs)
    for stat in ("running_mean", "running_var"):
        if a[stat] not in buffer_of:
            raise RuntimeError(
                f"ember.export: batch_norm in training mode updates {stat}, which is not a buffer "
                "of the model; call model.eval() before exporting"
            )
    qn = buffer_of[a["running_mean"]]
    tracked = qn.rpartition(".")[0] + ("." if "." in qn else "") + "num_batches_tracked"
    counter = next((p for p, name in buffer_of.items() if name == tracked), None)
    if counter is not None:
        call_in_place(_ember().Tensor.add_, (counter, 1), {})
    return call_in_place(_ember().nn.functional.batch_norm, tuple(args), dict(kwargs))
