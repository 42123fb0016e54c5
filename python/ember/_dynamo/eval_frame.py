"""The compiled callable: a cache of captured entries per function, each behind its guards.

A call checks the entries in order and replays the first whose guards hold; a miss captures a
new entry (Note [Capture]) from this very call, whose eager result is returned. An entry is
either a compiled graph or, where the capture broke (Note [Side effects], graph breaks), a
marker that runs the function eagerly. Past ``config.recompile_limit`` entries a miss runs
eagerly with one warning, as torch does."""

import functools
import itertools
import threading
import time
import types
import warnings
import weakref

from .. import _C
from ..nn.modules.module import Module
from ..utils._pytree import _is_named_sequence_class, _make_sequence
from . import config
from .backends import lookup_backend
from .capture import Capture, GraphBreak, SymInt, UnbackedScalar
from .decorators import marks_of
from .exc import BackendCompilerFailed, Unsupported
from .guards import Guards, InputSpec, plain_attr_chain
from .side_effects import Snapshot, Watcher, code_names
from .user_api import _default_backend, _stance
from .utils import counters

__all__ = ["OptimizedModule", "optimize", "is_compiling", "disable", "reset"]

_state = threading.local()
_all_caches = weakref.WeakSet()  # every live cache, for reset()
_frame_ids = itertools.count()
_CAPTURE = object()  # _stance_miss: go on and capture
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def is_compiling():
    """True while ember.compile is capturing a function on this thread."""
    return getattr(_state, "capture", None) is not None


class Entry:
    """One capture: its guard check and how to run a call that passes it."""

    __slots__ = (
        "check",
        "compiled",
        "getter",
        "out_spec",
        "graph_module",
        "breaks",
        "guards",
        "dynamic",
        "plan",
        "graph_modules",
        "checks",
    )

    def __init__(self, check, guards, breaks):
        self.check, self.guards, self.breaks = check, guards, breaks
        self.compiled = self.getter = self.out_spec = self.graph_module = None
        self.dynamic = False
        self.plan = None  # partial graphs around breaks (segments.Plan)
        self.graph_modules = []
        self.checks = ()  # (int/float, value) the graph's trailing outputs must give


def _rebuild(spec, outs):
    kind = spec[0]
    if kind == "t":
        return outs[spec[1]]
    if kind == "c":
        return spec[1]
    items = [_rebuild(s, outs) for s in spec[2]]
    if kind == "dict":
        return dict(zip(spec[1], items))
    return _make_sequence(spec[1], items)


def _realize(value):
    """The capture run's result as the caller sees it: symbolic numbers become their values."""
    if isinstance(value, SymInt):
        return value.value
    t = type(value)
    if t is tuple or t is list:
        if any(isinstance(v, (SymInt, tuple, list, dict)) for v in value):
            return t(_realize(v) for v in value)
    elif t is dict:
        return {k: _realize(v) for k, v in value.items()}
    elif _is_named_sequence_class(t):
        return _make_sequence(t, [_realize(v) for v in value])
    return value


def _flatten_output(value, cap, nodes):
    if isinstance(value, _C.Tensor):
        node = cap.node_of(value)
        if node is None:
            raise GraphBreak("the output is a tensor produced by a call the capture could not see")
        nodes.append(node)
        return ("t", len(nodes) - 1)
    if isinstance(value, UnbackedScalar):
        nodes.append(value.node)
        return ("t", len(nodes) - 1)
    if isinstance(value, SymInt):
        return ("c", int(value))
    if type(value) in (tuple, list) or _is_named_sequence_class(type(value)):
        return ("seq", type(value), [_flatten_output(v, cap, nodes) for v in value])
    if type(value) is dict:
        return ("dict", tuple(value), [_flatten_output(v, cap, nodes) for v in value.values()])
    if any(isinstance(x, _C.Tensor) for x in getattr(value, "__dict__", {}).values()):
        raise GraphBreak(f"unsupported output type {type(value).__name__} holding tensors")
    return ("c", value)


def _values_match(checks, outs):
    """int(t)/float(t) reads the capture took as constants: do this call's values agree?"""
    for (kind, value), out in zip(checks, outs):
        out = out.item() if isinstance(out, _C.Tensor) else out
        if kind(out) != value:
            return False
    return True


def _name_example_values(gm):
    # A backend reads a node's value as torch's dynamo graphs hold it, meta['example_value']
    # (the capture's meta['val'], a real value rather than torch's fake tensor).
    for node in gm.graph.nodes:
        if "val" in node.meta:
            node.meta.setdefault("example_value", node.meta["val"])


def _mutates(node):
    """A node that may change a tensor in place (its graph cannot simply be run twice)."""
    import operator

    t = node.target
    if node.op not in ("call_function", "call_method"):
        return False
    if t is operator.setitem:
        return True
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    return name.endswith("_") and not name.endswith("__")


class _Cache:
    """The entries of one compiled function (shared by every call of its wrapper)."""

    def __init__(self, fn, root, backend, fullgraph, dynamic):
        self.fn, self.root = fn, root
        self.backend = backend
        self.fullgraph, self.dynamic = fullgraph, dynamic
        self.entries = []
        self.seen = []  # the tensor metadata of each capture (for automatic dynamic shapes)
        self.seen_numbers = {}  # argument expr -> the int/float values captures saw there
        self.warned = False
        self.ran_eager = False  # set_stance("eager_then_compile"): the first call ran eagerly
        self.recompile_limit = None  # ember.compile(recompile_limit=n): this function's own
        _all_caches.add(self)
        self.frame_id = next(_frame_ids)  # torch's frame number in the recompile log (0/1)

    def __call__(self, *args, **kwargs):
        if is_compiling() or getattr(_state, "disabled", 0):
            return self.fn(*args, **kwargs)
        stance = _stance["stance"]
        if stance == "force_eager":
            return self.fn(*args, **kwargs)
        for entry in self.entries:
            if entry.check(args, kwargs):
                if entry.plan is not None:
                    return self._replay(entry, args, kwargs)
                if entry.compiled is None:
                    return self.fn(*args, **kwargs)
                outs = entry.compiled(*entry.getter(args, kwargs))
                if entry.checks:
                    outs = tuple(outs)
                    n = len(entry.checks)
                    if not _values_match(entry.checks, outs[-n:]):
                        return self.fn(*args, **kwargs)
                    outs = outs[:-n]
                return _rebuild(entry.out_spec, outs)
        limit = config.recompile_limit if self.recompile_limit is None else self.recompile_limit
        if len(self.entries) >= limit or stance == "_cached_only":
            if stance == "_cached_only":
                return self.fn(*args, **kwargs)
            if not self.warned:
                self.warned = True
                name = getattr(self.fn, "__qualname__", repr(self.fn))
                warnings.warn(
                    f"ember.compile: {name} hit recompile_limit "
                    f"({limit}); calls whose guards match no cached graph run "
                    "eagerly from now on",
                    stacklevel=2,
                )
            return self.fn(*args, **kwargs)
        if stance != "default":
            out = self._stance_miss(stance, args, kwargs)
            if out is not _CAPTURE:
                return out
        return self.capture(args, kwargs)

    def _stance_miss(self, stance, args, kwargs):
        """What a call whose guards match no entry does under a set_stance stance."""
        if stance == "fail_on_recompile":
            code = getattr(self._function_code(), "__code__", None)
            where = ""
            if code is not None:
                where = (
                    f" filename: {code.co_filename!r}, function name: {code.co_name!r}, "
                    f"line number: {code.co_firstlineno}"
                )
            raise RuntimeError(
                f"Detected recompile when torch.compile stance is 'fail_on_recompile'.{where}"
            )
        if stance == "eager_on_recompile" and self.entries:
            return self.fn(*args, **kwargs)
        if stance in ("eager_then_compile", "aot_eager_then_compile") and not self.ran_eager:
            self.ran_eager = True
            return self.fn(*args, **kwargs)
        return _CAPTURE

    def _replay(self, entry, args, kwargs):
        plan = entry.plan
        if config.partial_graphs == "always" or plan.use_replay:
            return self._run_segments(entry, args, kwargs)
        if plan.use_replay is False:
            return self.fn(*args, **kwargs)
        # Deciding (Note [Partial graphs], cost): three timed calls each way, then the faster.
        replay = len(plan.times[1]) < len(plan.times[0])
        start = time.perf_counter()
        out = self._run_segments(entry, args, kwargs) if replay else self.fn(*args, **kwargs)
        plan.times[int(replay)].append(time.perf_counter() - start)
        if len(plan.times[1]) >= 3:
            plan.use_replay = min(plan.times[1]) < min(plan.times[0])
        return out

    def _run_segments(self, entry, args, kwargs):
        from .segments import Replay

        mode = Replay(entry.plan, entry.getter(args, kwargs), may_record=True)
        # compiled functions called inside run their Python, whose calls the replay matches
        _state.disabled = getattr(_state, "disabled", 0) + 1
        try:
            with mode:
                result = self.fn(*args, **kwargs)
        finally:
            _state.disabled -= 1
            mode.stop_watching()
        if mode.recorder is not None:  # another path through the function: its graphs
            mode.finish(self._segment_backend)
            result = _realize(result)
        return result

    # ---- capture ----------------------------------------------------------------------------

    def _want_dynamic(self, spec):
        if self.dynamic is not None:
            return bool(self.dynamic)
        if not config.automatic_dynamic_shapes:
            return False
        ranks = [(m[0], len(m[2])) for m in spec.tensor_meta]
        shapes = [m[2] for m in spec.tensor_meta]
        return any(r == ranks and s != shapes for r, s in self.seen)

    def _changed_dims(self, spec):
        """{(input index, dim)} seen with another size by an earlier capture of the same ranks
        (torch's automatic dynamic makes those dims dynamic, the others stay static)."""
        ranks = [(m[0], len(m[2])) for m in spec.tensor_meta]
        shapes = [m[2] for m in spec.tensor_meta]
        return {
            (i, d)
            for r, seen in self.seen
            if r == ranks
            for i, (a, b) in enumerate(zip(seen, shapes))
            for d, (x, y) in enumerate(zip(a, b))
            if x != y
        }

    def _symbolic_numbers(self, spec):
        """The top-level int/float arguments to capture as graph inputs: all of them with
        ``dynamic=True``; by default (automatic dynamic) those a capture already saw with
        another value of the same type; none with ``dynamic=False``."""
        out = []
        for expr, v in spec.others:
            if type(v) not in (int, float) or expr.count("[") != 1:
                continue
            seen = self.seen_numbers.setdefault(expr, [])
            changed = any(type(p) is type(v) and p != v for p in seen)
            seen.append(v)
            if self.dynamic or (
                self.dynamic is None and config.automatic_dynamic_shapes and changed
            ):
                out.append((expr, v))
        return out

    def _function_code(self):
        fn = self.fn
        if self.root is not None and getattr(fn, "__self__", None) is self.root:
            fn = type(self.root).forward
        fn = getattr(fn, "__func__", fn)
        return fn if isinstance(fn, types.FunctionType) else None

    def capture(self, args, kwargs):
        spec = InputSpec(args, kwargs)
        dynamic = self._want_dynamic(spec)
        marks = [marks_of(t) for _, t in spec.tensors]
        # dims marked dynamic make the capture symbolic; then only they become dynamic
        only_marked = not dynamic and self.dynamic is not False and any(m[0] or m[1] for m in marks)
        self.seen.append(
            ([(m[0], len(m[2])) for m in spec.tensor_meta], [m[2] for m in spec.tensor_meta])
        )
        pyfn = self._function_code()
        modules = {}
        if self.root is not None:
            modules[""] = self.root
        cells = []
        if pyfn is not None and pyfn.__closure__:
            for name, cell in zip(pyfn.__code__.co_freevars, pyfn.__closure__):
                try:
                    cells.append((name, cell, cell.cell_contents))
                except ValueError:
                    pass
        for name, _, v in cells:
            if isinstance(v, Module):
                modules[f"C_{name}"] = v
        for expr, v in spec.others:
            if isinstance(v, Module):
                modules[f"A_{len(modules)}"] = v
        watcher = Watcher()
        named = {}
        finder = _Finder(named, modules, watcher, cells)
        finder.index()
        snapshot = Snapshot()
        if config.detect_side_effects:
            for label, mod in modules.items():
                snapshot.add_module(label or type(mod).__name__, mod)
            if pyfn is not None:
                snapshot.add_globals("globals", pyfn.__globals__, code_names(pyfn.__code__))
            for name, _, v in cells:
                snapshot.add_value(f"closure {name}", v)
            for expr, v in spec.others:
                snapshot.add_value(expr, v)
        cap = Capture(named, finder.find, dynamic or only_marked, self.fullgraph)
        cap.modules = finder.modules  # the modules it reaches, by label (graph_inputs.lift)
        watcher.capture = cap
        numbers = self._symbolic_numbers(spec)
        if config.partial_graphs and not (self.fullgraph or dynamic or only_marked or numbers):
            from .segments import SegmentLog

            cap.log = SegmentLog(cap)
        names = _arg_names(pyfn, spec)
        for name, (expr, t) in zip(names, spec.tensors):
            cap.add_input(name, t)
            cap.input_exprs.setdefault(id(t), expr)
        if numbers:
            args, kwargs = list(args), dict(kwargs)
            taken = set(names)
            for expr, v in numbers:
                name = _arg_names(pyfn, _Exprs([expr]))[0]
                while name in taken:
                    name += "_"
                taken.add(name)
                sym = cap.add_number_input(name, v, expr)
                key = eval(expr[expr.index("[") :])[0]  # noqa: S307 (our own "[i]" / "['k']")
                if expr.startswith("args["):
                    args[key] = sym
                else:
                    kwargs[key] = sym
            args = tuple(args)
        _state.capture = cap
        try:
            with watcher, cap:
                result = self.fn(*args, **kwargs)
        finally:
            _state.capture = None
            cap.finished = True
        effects = []
        if config.detect_side_effects:
            effects = watcher.effects + watcher.global_stores() + snapshot.changes()
            for reason in effects:
                cap.breaks.append((f"Python side effect: {reason}", []))
            if effects and self.fullgraph:
                raise Unsupported(f"Python side effect in a fullgraph capture: {effects[0]}")
            if watcher.strict_effects:
                raise Unsupported(
                    f"Python side effect inside error_on_graph_break(True): "
                    f"{watcher.strict_effects[0]}"
                )
        out_nodes = []
        out_spec = None
        if not cap.breaks:
            try:
                out_spec = _flatten_output(result, cap, out_nodes)
            except GraphBreak as e:
                cap.graph_break(str(e))
        breaks = list(cap.breaks)
        segments = None
        if breaks and not effects and cap.log is not None:
            from .segments import GiveUp

            try:
                segments = cap.log.split()
            except GiveUp:
                segments = None
        full = not breaks or segments is not None  # what the replay assumes: guard it all
        guards = Guards()
        dyn_dims = ranges = None
        if (dynamic or only_marked) and not cap.specialized and not breaks:
            dyn_dims, ranges = {}, {}
            auto = self.dynamic is None
            changed = self._changed_dims(spec)
            for i, (m, (strong, weak, static)) in enumerate(zip(spec.tensor_meta, marks)):
                dims = []
                for d, s in enumerate(m[2]):
                    if s < 2 or (i, d) in cap.static_dims or d in static:
                        continue
                    if only_marked and d not in strong and d not in weak:
                        continue
                    if auto and d not in strong and d not in weak and (i, d) not in changed:
                        continue  # automatic dynamic: only the dims seen with another size
                    dims.append(d)
                    if d in strong:
                        ranges[(i, d)] = strong[d]
                dyn_dims[i] = tuple(dims)
        if self.dynamic is not False:  # dynamic=False: the marks are ignored
            _check_marks(spec, marks, dyn_dims)
        symbolic = {e for e, _ in numbers if ("arg", e) not in cap.static_dims}
        names = [n[2:].rstrip("_") for n in _arg_names(pyfn, spec)]  # l_x_ -> x (torch's)
        guards.inputs(spec, dyn_dims, ranges, symbolic, names)
        for expr, outcome in cap.value_guards if not breaks else ():
            guards.outcome(expr, outcome)
        guards.grad_mode()
        for label, mod in list(modules.items()):
            guards.module(label or "self", mod, values=full)
        if full:
            _global_guards(guards, pyfn, watcher, cells)
        counters["frames"]["total"] += 1
        if not breaks:
            counters["frames"]["ok"] += 1
        for reason, _ in breaks:
            counters["graph_break"][reason] += 1
        _log_capture(self, breaks, bool(self.entries), (args, kwargs))
        entry = Entry(guards.build(), guards.described, breaks)
        entry.dynamic = dyn_dims is not None
        if not breaks:
            self._compile(entry, cap, spec, out_nodes, out_spec, numbers, dyn_dims)
        elif segments is not None:
            self._compile_segments(entry, cap, spec, segments)
        self.entries.append(entry)
        return _realize(result)

    def _backend(self, gm, example):
        """The backend's callable for ``gm``, or None (a failure under suppress_errors)."""
        _name_example_values(gm)
        try:
            return self.backend(gm, example)
        except Exception as e:
            if not config.suppress_errors:
                name = getattr(self.backend, "__name__", repr(self.backend))
                raise BackendCompilerFailed(name, e) from e
            warnings.warn(f"ember.compile: the backend failed ({e}); running eagerly", stacklevel=4)
            return None

    def _segment_backend(self, gm, example):
        """A segment's callable, or None where the backend fails on it: the function then keeps
        running eagerly, as it did before partial graphs (only a whole graph's failure raises)."""
        _name_example_values(gm)
        try:
            return self.backend(gm, example)
        except Exception:  # noqa: BLE001 (any backend error: no segments, eager as before)
            return None

    def _compile_segments(self, entry, cap, spec, segments):
        """Compiles each segment of a capture with breaks (Note [Partial graphs])."""
        for seg in segments:
            seg.compiled = self._segment_backend(seg.gm, [cap.log.values[s] for s in seg.in_slots])
            if seg.compiled is None:
                return
        entry.plan = cap.log.plan(segments, len(spec.tensors))
        entry.getter = spec.getter()
        entry.graph_modules = [seg.gm for seg in segments]

    def _compile(self, entry, cap, spec, out_nodes, out_spec, numbers=(), dyn_dims=None):
        from ..fx import GraphModule

        checks = cap.value_checks
        if checks and any(_mutates(n) for n in cap.graph.nodes):
            return  # a check failing after the graph changed its inputs could not rerun: eager
        cap.graph.output(tuple(out_nodes) + tuple(n for n, _, _ in checks))
        cap.drop_unused_sym_nodes()
        gm = GraphModule(dict(cap.attrs), cap.graph)
        example = [t for _, t in spec.tensors] + [v for _, v in numbers]
        lifted = None
        if not getattr(self.backend, "__module__", "").startswith("ember."):
            from .graph_inputs import call_in_order, lift, size_inputs

            lifted = lift(gm, example, cap.modules)  # torch's graph inputs (graph_inputs.py)
            base = lifted or (gm, example, list(range(len(example))))
            lifted = size_inputs(*base, dyn_dims or {}, cap) or lifted
        if lifted is not None:
            compiled = self._backend(lifted[0], lifted[1])
            if compiled is not None:
                compiled = call_in_order(compiled, lifted[2])
        else:
            compiled = self._backend(gm, example)
        if compiled is None:
            return
        counters["stats"]["unique_graphs"] += 1
        entry.compiled, entry.graph_module = compiled, gm
        entry.checks = tuple((kind, value) for _, kind, value in checks)
        entry.graph_modules = [gm]
        entry.getter, entry.out_spec = spec.getter([e for e, _ in numbers]), out_spec

    def reset(self):
        self.entries.clear()
        self.seen.clear()
        self.seen_numbers.clear()
        self.warned = False


class _Exprs:
    """Argument expressions in the shape _arg_names reads (``.tensors``)."""

    def __init__(self, exprs):
        self.tensors = [(e, None) for e in exprs]


def _check_marks(spec, marks, dyn_dims):
    """Warns where a dimension marked with ``mark_dynamic`` had to stay static (the capture
    needed its concrete value, or its size is 0 or 1)."""
    for i, ((expr, _), (strong, _, _)) in enumerate(zip(spec.tensors, marks)):
        lost = sorted(d for d in strong if dyn_dims is None or d not in dyn_dims.get(i, ()))
        if lost:
            warnings.warn(
                f"ember.compile: {expr} dims {lost} were marked dynamic but the capture "
                "specialized them (their size is 0/1 or the code needed the concrete value); "
                "they are guarded as static",
                stacklevel=4,
            )


def _arg_names(pyfn, spec):
    """Placeholder names: the parameter's name, then the index path inside containers."""
    import re

    params = list(pyfn.__code__.co_varnames[: pyfn.__code__.co_argcount]) if pyfn else []
    if params and params[0] == "self":
        params = params[1:]
    names, used = [], set()
    for expr, _ in spec.tensors:
        parts = re.findall(r"\[([^\]]*)\]", expr)
        head = parts[0].strip("'\"")
        if expr.startswith("args["):
            i = int(head)
            head = params[i] if i < len(params) else f"args_{i}"
        name = "_".join([head] + [re.sub(r"\W", "_", p.strip("'\"")) for p in parts[1:]])
        name = f"l_{name}_"
        while name in used:
            name += "_"
        used.add(name)
        names.append(name)
    return names


def _global_guards(guards, pyfn, watcher, cells):
    codes = dict(watcher.codes)
    if pyfn is not None:
        codes.setdefault(pyfn.__code__, pyfn.__globals__)
    done = set()
    for code, g in codes.items():
        for name in code.co_names:
            key = (id(g), name)
            if key in done or name not in g:
                continue
            done.add(key)
            v = g[name]
            if isinstance(v, types.ModuleType):
                continue
            guards.global_value(g, name, v, "global")
            if isinstance(v, Module):
                guards.module(f"global {name}", v)
    # attributes the code reads from globals and closure cells (``cfg.scale``): their values
    cellmap = {name: (cell, v) for name, cell, v in cells}
    for code, g in codes.items():
        own = pyfn is not None and code is pyfn.__code__
        for kind, name, attrs in sorted(_attr_paths(code)):
            if kind == "global" and name in g:
                guards.attr_path(
                    f"{guards.const(g)}.get({name!r}, _MISSING)", g[name], attrs, f"global {name}"
                )
            elif kind == "deref" and own and name in cellmap:
                cell, v = cellmap[name]
                guards.attr_path(f"{guards.const(cell)}.cell_contents", v, attrs, f"closure {name}")
    for name, cell, v in cells:
        guards.cell(cell, v, name)


def _attr_paths(code, depth=0):
    """The attribute chains ``code`` reads from globals and closure variables: a set of
    (kind, name, (attr, ...)) with kind "global" or "deref" (nested code objects included)."""
    import dis

    out = set()
    root, attrs = None, []
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op == "LOAD_ATTR" and root is not None and isinstance(ins.argval, str):
            attrs.append(ins.argval)
            continue
        if root is not None and attrs:
            out.add((*root, tuple(attrs)))
        root, attrs = None, []
        if op == "LOAD_GLOBAL":
            root = ("global", ins.argval)
        elif op == "LOAD_DEREF":
            root = ("deref", ins.argval)
    if root is not None and attrs:
        out.add((*root, tuple(attrs)))
    if depth < 3:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                out |= _attr_paths(c, depth + 1)
    return out


class _Finder:
    """Names for the tensors a graph may read as attributes: parameters, buffers and tensor
    attributes of guarded modules, tensors of globals and closures (found lazily for globals of
    helpers the run reaches)."""

    def __init__(self, named, modules, watcher, cells):
        self.named, self.modules, self.watcher, self.cells = named, modules, watcher, cells
        self.codes_indexed = 0

    def _add_module(self, prefix, mod):
        for qual, sub in mod.named_modules(remove_duplicate=False):
            base = f"{prefix}.{qual}" if prefix and qual else (prefix or qual)
            for k, v in sub.__dict__.items():
                if isinstance(v, _C.Tensor):
                    self.named.setdefault(id(v), f"{base}.{k}" if base else k)
            for d in (sub._parameters, sub._buffers):
                for k, v in d.items():
                    if v is not None:
                        self.named.setdefault(id(v), f"{base}.{k}" if base else k)

    def index(self):
        for label, mod in self.modules.items():
            self._add_module(label, mod)
        for name, _, v in self.cells:
            if isinstance(v, _C.Tensor):
                self.named.setdefault(id(v), f"C_{name}")

    def find(self, t):
        codes = self.watcher.codes
        if len(codes) == self.codes_indexed:
            return None
        self.codes_indexed = len(codes)
        for code, g in list(codes.items()):
            for name in code.co_names:
                v = g.get(name)
                if isinstance(v, _C.Tensor):
                    self.named.setdefault(id(v), f"G_{name}")
                elif isinstance(v, Module) and f"G_{name}" not in self.modules:
                    self.modules[f"G_{name}"] = v
                    self._add_module(f"G_{name}", v)
            # tensors held by attributes of globals / closure objects (``cfg.weight``), which
            # the guards check by identity
            cellmap = {name: v for name, _, v in self.cells}
            for kind, name, attrs in _attr_paths(code):
                if kind == "global" and name in g:
                    root, label = g[name], f"G_{name}"
                elif kind == "deref" and name in cellmap:
                    root, label = cellmap[name], f"C_{name}"
                else:
                    continue
                for a, v in plain_attr_chain(root, attrs):
                    label = f"{label}_{a}"
                    if isinstance(v, _C.Tensor):
                        self.named.setdefault(id(v), label)
        return self.named.get(id(t))


# ---- public wrappers -----------------------------------------------------------------------


class OptimizedModule(Module):
    """The module ember.compile returns for a Module: calls go through the compiled cache of
    ``_orig_mod``; attributes, ``training`` and the state dict (keys prefixed ``_orig_mod.``)
    are the original module's."""

    def __init__(self, mod, cache):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_ember_cache"] = cache
        self.__dict__.pop("training", None)

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if "_modules" in self.__dict__ and "_orig_mod" in self._modules:
            self._orig_mod.training = value

    def forward(self, *args, **kwargs):
        return self.__dict__["_ember_cache"](*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def _check_mode(mode, options):
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")


def _check_options(backend, options, dynamic):
    """torch's checks of compile's arguments when a model is given: ``dynamic`` a bool (or
    None), and, for the inductor backend, every ``options`` key one of its option names
    (``guard_filter_fn`` goes to the capture)."""
    if dynamic is not None and not isinstance(dynamic, bool):
        raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
    if options is None or backend != "inductor":
        return
    from .._inductor import config as inductor_config

    known = None
    for key, _ in options.items():
        if key == "guard_filter_fn":
            continue
        known = known if known is not None else inductor_config.known_options()
        if key not in known:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are {known}")


def optimize(
    model=None,
    *,
    backend="inductor",
    fullgraph=False,
    dynamic=None,
    mode=None,
    options=None,
    disable=False,
    recompile_limit=None,
):
    """optimize(model=None, *, backend='inductor', fullgraph=False, dynamic=None, mode=None,
        options=None, disable=False, recompile_limit=None)

    ember.compile's implementation (see ``ember.compile``)."""
    _check_mode(mode, options)
    if disable:
        return model if model is not None else (lambda m: m)
    name = backend if backend is not None else _default_backend[0]
    backend_fn = lookup_backend(name)
    if model is not None:
        _check_options(name, options, dynamic)
    if model is None:
        return lambda m: optimize(
            m,
            backend=backend,
            fullgraph=fullgraph,
            dynamic=dynamic,
            mode=mode,
            options=options,
            recompile_limit=recompile_limit,
        )
    if isinstance(model, Module):
        cache = _Cache(model.__call__, model, backend_fn, fullgraph, dynamic)
        cache.recompile_limit = recompile_limit
        return OptimizedModule(model, cache)
    if not callable(model):
        raise RuntimeError(f"ember.compile: expected a callable or an nn.Module; got {type(model)}")
    root = getattr(model, "__self__", None)
    cache = _Cache(
        model, root if isinstance(root, Module) else None, backend_fn, fullgraph, dynamic
    )
    cache.recompile_limit = recompile_limit

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return cache(*args, **kwargs)

    compiled._torchdynamo_orig_callable = model
    compiled._ember_cache = cache
    return compiled


def disable(fn=None, recursive=True, *, reason=None):
    """disable(fn=None, recursive=True, *, reason=None)

    ``fn`` runs eagerly: a compiled function returns its original; a plain function is never
    captured (a compiled caller that reaches it runs eagerly, as after a graph break). Without
    ``fn``, a decorator."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    orig = getattr(fn, "_torchdynamo_orig_callable", None)
    if orig is not None:
        return orig
    if isinstance(fn, OptimizedModule):
        return fn._orig_mod

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        cap = getattr(_state, "capture", None)
        log = getattr(cap, "log", None)
        if cap is not None:
            cap.graph_break(f"call to {getattr(fn, '__qualname__', fn)} marked disable")
            if log is not None:
                log.cur_eager = False  # the break is the calls inside, not the current one
                log.eager_depth += 1
        _state.disabled = getattr(_state, "disabled", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _state.disabled -= 1
            if log is not None:
                log.eager_depth -= 1

    eager._torchdynamo_disable = True
    return eager


def _log_capture(cache, breaks, recompile, call):
    """The ``ember._logging.set_logs(graph_breaks=..., recompiles=...)`` records of a capture."""
    from .. import _logging

    if not (_logging.enabled("graph_breaks") or _logging.enabled("recompiles")):
        return
    code = getattr(cache._function_code(), "__code__", None)
    name = code.co_name if code is not None else repr(cache.fn)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "?"
    if recompile:  # as torch's: each cached graph's first failing guard, newest first
        failed = [
            f"    - {cache.frame_id}/{k}: {entry.check.failure(*call)}"
            for k, entry in reversed(list(enumerate(cache.entries)))
        ]
        _logging.emit(
            "recompiles",
            f"Recompiling function {name} in {where}\n    triggered by the following guard "
            "failure(s):\n" + "\n".join(failed),
        )
    for reason, stack in breaks:
        frame = f" at {stack[-1].filename}:{stack[-1].lineno}" if stack else ""
        _logging.emit("graph_breaks", f"Graph break in user code{frame}\n    Reason: {reason}")


def reset():
    """Clears every compiled function's cache: the next call captures again."""
    for cache in _all_caches:
        cache.reset()
