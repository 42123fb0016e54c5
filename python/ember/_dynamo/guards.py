"""Guards: what a captured graph assumed, checked before each replay (Note [Guards]).

Note [Guards]
A graph is valid for the inputs and the state it was captured with. Each cache entry keeps one
generated Python function ``check(args, kwargs) -> bool`` (generated once per entry, so a call
costs a few attribute reads and comparisons, no interpretation of a guard list) that tests:
- the argument structure (counts, tuple/list/dict shapes) and, for each tensor, its type, dtype,
  requires_grad, and either its exact shape and strides (static) or its rank, contiguity and the
  sizes that stayed static (dynamic: sizes 0 and 1 are always static, as in torch);
- which tensor arguments are the same object (aliasing changes what in-place ops do);
- Python scalars and other arguments (value and type; identity for other objects);
- grad mode, inference mode and the default dtype;
- every guarded module (the compiled one, modules read from globals/closures/arguments): the
  identity of each parameter, buffer and submodule, the number of each, and the value of each
  plain attribute (``training``, ``eps``, ...);
- the globals the user's code read and the closure cells of the function: simple values by
  value, tensors and other objects by identity, small lists/tuples of simple values by content.
"""

import re
import types

from .. import _C

_SIMPLE = (int, float, bool, str, complex, type(None), bytes)
_MISSING = object()


def _simple(v):
    if isinstance(v, _SIMPLE) or isinstance(v, (_C.dtype,)):
        return True
    if type(v) in (tuple, frozenset):
        return len(v) <= 64 and all(_simple(x) for x in v)
    return False


def plain_attr_chain(root, attrs):
    """[(attr, value), ...]: the steps of ``root.a.b...`` whose attribute is a plain value (in
    the instance or class dict, a __slots__ member or a module global), stopping before a
    descriptor (property, method) or a missing attribute, so no user code runs."""
    import inspect

    steps, v = [], root
    for a in attrs:
        try:
            raw = inspect.getattr_static(v, a)
        except AttributeError:
            break
        if isinstance(raw, types.MemberDescriptorType) and not isinstance(v, type):
            raw = getattr(v, a, _MISSING)  # a __slots__ attribute: a plain read
            if raw is _MISSING:
                break
        elif not isinstance(v, types.ModuleType) and hasattr(type(raw), "__get__"):
            break  # a method, property or other descriptor: not a plain value
        v = raw
        steps.append((a, v))
    return steps


class InputSpec:
    """The flattened arguments of one call: tensor leaves, other leaves, container shapes."""

    def __init__(self, args, kwargs):
        self.tensors = []  # (expr, tensor)
        self.others = []  # (expr, value)
        self.containers = []  # (expr, type, len or keys)
        self.nargs, self.kwkeys = len(args), tuple(kwargs)
        for i, a in enumerate(args):
            self._walk(a, f"args[{i}]", 0)
        for k, v in kwargs.items():
            self._walk(v, f"kwargs[{k!r}]", 0)
        self.tensor_meta = [
            (t.dtype, t.requires_grad, tuple(t.shape), tuple(t.stride()), t.is_contiguous())
            for _, t in self.tensors
        ]

    def _walk(self, v, expr, depth):
        if isinstance(v, _C.Tensor):
            self.tensors.append((expr, v))
        elif type(v) in (tuple, list) and depth < 4:
            self.containers.append((expr, type(v), len(v)))
            for i, x in enumerate(v):
                self._walk(x, f"{expr}[{i}]", depth + 1)
        elif type(v) is dict and depth < 4 and all(isinstance(k, (str, int)) for k in v):
            self.containers.append((expr, dict, tuple(v)))
            for k, x in v.items():
                self._walk(x, f"{expr}[{k!r}]", depth + 1)
        else:
            self.others.append((expr, v))

    def getter(self, extra=()):
        """A function (args, kwargs) -> the tensor leaves, then the ``extra`` expressions (number
        arguments captured as graph inputs), in placeholder order."""
        exprs = [e for e, _ in self.tensors] + list(extra)
        body = ", ".join(exprs)
        src = f"def get(args, kwargs):\n    return ({body}{',' if exprs else ''})\n"
        scope = {}
        exec(compile(src, "<ember guards>", "exec"), scope)  # noqa: S102 (generated here)
        return scope["get"]


def _kind_mismatch(name, t, typ, dtype, rg):
    from .._storage import _c10_name

    if type(t) is not typ:
        return f"tensor '{name}' type mismatch. expected {typ.__name__}, actual {type(t).__name__}"
    if t.dtype != dtype:
        return (
            f"tensor '{name}' dtype mismatch. expected {_c10_name(dtype)}, actual "
            f"{_c10_name(t.dtype)}"
        )
    return f"tensor '{name}' requires_grad mismatch. expected requires_grad={int(rg)}"


def _sizes_mismatch(name, what, got, want):
    """torch's text for a tensor guard on sizes or strides that a call fails."""
    if len(got) != len(want):
        return f"tensor '{name}' rank mismatch. expected {len(want)}, actual {len(got)}"
    d = next(d for d, (a, b) in enumerate(zip(got, want)) if a != b)
    return f"tensor '{name}' {what} mismatch at index {d}. expected {want[d]}, actual {got[d]}"


class Guards:
    """Builds one entry's check function from the facts of its capture."""

    def __init__(self):
        self.lines = []
        self.env = {"_is_grad": _C.is_grad_enabled, "_MISSING": _MISSING}
        self.described = []
        self.failures = []  # per failing line: its reason (a str, or a function of the call)

    def _const(self, obj):
        name = f"_k{len(self.env)}"
        self.env[name] = obj
        return name

    def _fail_if(self, cond, what, why=None, describe=True):
        """A guard line: the call fails when ``cond`` holds; ``why(args, kwargs)`` (else
        ``what``) says so in the recompile log."""
        self.lines.append(f"    if {cond}: return __FAIL_{len(self.failures)}__")
        self.failures.append(why or what)
        if describe:
            self.described.append(what)

    # ---- arguments --------------------------------------------------------------------------

    def inputs(self, spec, dynamic_dims=None, ranges=None, symbolic=(), names=None):
        """Guards on the call's arguments; ``dynamic_dims[i]``: the symbolic dims of tensor i;
        ``ranges[(i, d)]``: the (min, max) of a dim marked dynamic (None: unbounded);
        ``symbolic``: the number arguments that are graph inputs (guarded by type only);
        ``names[i]``: tensor i's name in the recompile log (its parameter's, as torch's)."""
        self.ranges = ranges or {}
        self.names = names or [e for e, _ in spec.tensors]
        self._fail_if(
            f"len(args) != {spec.nargs} or tuple(kwargs) != {spec.kwkeys!r}", "argument count"
        )
        for expr, typ, shape in spec.containers:
            if typ is dict:
                self._fail_if(
                    f"type({expr}) is not dict or tuple({expr}) != {shape!r}", f"{expr} keys"
                )
            else:
                self._fail_if(
                    f"type({expr}) is not {typ.__name__} or len({expr}) != {shape}",
                    f"{expr} length",
                )
        for i, ((expr, t), meta) in enumerate(zip(spec.tensors, spec.tensor_meta)):
            self._tensor(i, expr, t, meta, (dynamic_dims or {}).get(i))
        ids = {}
        for expr, t in spec.tensors:
            ids.setdefault(id(t), []).append(expr)
        for exprs in ids.values():
            for other in exprs[1:]:
                self._fail_if(f"{exprs[0]} is not {other}", f"{exprs[0]} is {other}")
        if len(spec.tensors) > 1:
            firsts = ", ".join(f"id({e[0]})" for e in ids.values())
            self._fail_if(f"len({{{firsts}}}) != {len(ids)}", "distinct tensor arguments")
        for expr, v in spec.others:
            if expr in symbolic:
                self._fail_if(
                    f"type({expr}) is not {type(v).__name__}", f"{expr}: {type(v).__name__}"
                )
            else:
                self.value(expr, v)

    def outcome(self, expr, result):
        """Guards that the comparison ``expr`` (over number arguments) keeps its outcome."""
        self._fail_if(f"bool({expr}) is not {bool(result)}", f"{expr} is {bool(result)}")

    def _tensor(self, i, expr, t, meta, dyn):
        dtype, rg, shape, stride, contiguous = meta
        v = f"_t{i}"
        name = self.names[i]
        get = eval(f"lambda args, kwargs: {expr}")  # noqa: S307 (InputSpec's own expression)
        self.lines.append(f"    {v} = {expr}")
        self._fail_if(
            f"type({v}) is not {self._const(type(t))} or {v}.dtype != {self._const(dtype)} "
            f"or {v}.requires_grad is not {rg}",
            f"{expr}: {type(t).__name__}, {dtype}, requires_grad={rg}",
            lambda a, k: _kind_mismatch(name, get(a, k), type(t), dtype, rg),
        )
        if dyn is None:
            self._fail_if(
                f"{v}.shape != {shape!r}",
                f"{expr}.shape == {shape}",
                lambda a, k: _sizes_mismatch(name, "size", get(a, k).shape, shape),
            )
            self._fail_if(
                f"{v}.stride() != {stride!r}",
                f"{expr}.stride() == {stride}",
                lambda a, k: _sizes_mismatch(name, "stride", get(a, k).stride(), stride),
            )
            return
        self._fail_if(
            f"{v}.dim() != {len(shape)}",
            "",
            lambda a, k: _sizes_mismatch(name, "size", get(a, k).shape, shape),
            describe=False,
        )
        self._fail_if(
            f"{v}.is_contiguous() is not {contiguous}",
            "",
            f"tensor '{name}' contiguity mismatch. expected is_contiguous={contiguous}",
            describe=False,
        )
        self.lines.append(f"    _s = {v}.shape")
        ranges = getattr(self, "ranges", {})
        for d, s in enumerate(shape):
            if d not in dyn:
                self._fail_if(
                    f"_s[{d}] != {s}",
                    "",
                    f"tensor '{name}' size mismatch at index {d}. expected {s}",
                    describe=False,
                )
                continue
            lo, hi = ranges.get((i, d), (None, None))
            low = max(2, lo or 0)
            self._fail_if(f"_s[{d}] < {low}", "", f"{low} <= {name}.size()[{d}]", describe=False)
            if hi is not None:
                self._fail_if(
                    f"_s[{d}] > {int(hi)}", "", f"{name}.size()[{d}] <= {int(hi)}", describe=False
                )

        def _sym(d):
            lo, hi = ranges.get((i, d), (None, None))
            if lo is None and hi is None:
                return f"s{d}"
            return f"s{d} in [{max(2, lo or 0)}, {hi if hi is not None else 'inf'}]"

        desc = ", ".join(_sym(d) if d in dyn else str(s) for d, s in enumerate(shape))
        self.described.append(f"{expr}: rank {len(shape)}, sizes ({desc}), contiguous={contiguous}")

    def value(self, expr, v):
        """Guards ``expr`` (an expression over args/kwargs/env) to keep the value ``v``."""
        if isinstance(v, bool) or v is None:
            self._fail_if(f"{expr} is not {v!r}", f"{expr} is {v!r}")
        elif isinstance(v, float) and v != v:
            self._fail_if(f"type({expr}) is not float or {expr} == {expr}", f"{expr} is nan")
        elif _simple(v):
            k = self._const(v)
            self._fail_if(
                f"type({expr}) is not {self._const(type(v))} or {expr} != {k}", f"{expr} == {v!r}"
            )
        else:
            self._fail_if(f"{expr} is not {self._const(v)}", f"{expr} is <{type(v).__name__}>")

    # ---- global state -----------------------------------------------------------------------

    def grad_mode(self):
        g = _C.is_grad_enabled()
        self._fail_if(f"_is_grad() is not {g}", f"grad mode is {g}")
        self.env["_infer"] = _C.is_inference_mode_enabled
        i = _C.is_inference_mode_enabled()
        self._fail_if(f"_infer() is not {i}", f"inference mode is {i}")
        self.env["_ddt"] = _C.get_default_dtype
        d = _C.get_default_dtype()
        self._fail_if(f"_ddt() != {self._const(d)}", f"default dtype is {d}")

    def module(self, label, mod, values=True):
        """Structure (and, with ``values``, plain attributes) of ``mod`` and its submodules."""
        ident, simple, lengths = [], [], []
        for _, sub in mod.named_modules(remove_duplicate=False):
            d = sub.__dict__
            for key in ("_parameters", "_buffers", "_modules"):
                members = d[key]
                lengths.append((members, len(members)))
                ident.extend((members, k, v) for k, v in members.items())
            for k, v in d.items():
                if k == "training" or (values and _simple(v)):
                    simple.append((d, k, v))
                elif k.endswith("hooks") and isinstance(v, dict):
                    lengths.append((v, len(v)))
                elif values and isinstance(v, (_C.Tensor, types.FunctionType)):
                    ident.append((d, k, v))
        i, s, n = self._const(tuple(ident)), self._const(tuple(simple)), self._const(tuple(lengths))
        k = len(self.failures)
        self.failures.append(f"module {label}: its parameters, buffers, submodules or attributes")
        self.lines.append(f"    for _d, _n in {n}:")
        self.lines.append(f"        if len(_d) != _n: return __FAIL_{k}__")
        self.lines.append(f"    for _d, _k, _v in {i}:")
        self.lines.append(f"        if _d.get(_k, _MISSING) is not _v: return __FAIL_{k}__")
        self.lines.append(f"    for _d, _k, _v in {s}:")
        self.lines.append("        _x = _d.get(_k, _MISSING)")
        self.lines.append("        if _x is not _v and (type(_x) is not type(_v) or _x != _v):")
        self.lines.append(f"            return __FAIL_{k}__")
        self.described.append(
            f"module {label}: {len(ident)} parameters/buffers/submodules by identity, "
            f"{len(simple)} attributes (training flags, hyperparameters) by value"
        )

    def const(self, obj):
        """The name of ``obj`` in the check function's scope."""
        return self._const(obj)

    def attr_path(self, root_expr, root, attrs, label):
        """Guards the value of ``root.a.b...`` (``attrs``), read afresh on each check from
        ``root_expr``: simple values by value, tensors and other objects by identity. The chain
        stops before a descriptor (property, method) or a missing attribute: the check never
        runs user code. Attributes reached from a Python module are guarded only for simple
        values and tensors."""
        v, expr, done = root, root_expr, []
        is_mod = isinstance(root, types.ModuleType)
        for a, v in plain_attr_chain(root, attrs):
            expr = f"getattr({expr}, {a!r}, _MISSING)"
            done.append(a)
        if not done or isinstance(v, types.ModuleType):
            return
        what = f"{label}.{'.'.join(done)}"
        if type(v) is list and len(v) <= 64 and all(_simple(x) for x in v):
            self._fail_if(f"{self._const(list(v))} != {expr}", f"{what} content")
        elif _simple(v):
            self.value(expr, v)
            self.described[-1] = f"{what} == {v!r}"
        elif not is_mod or isinstance(v, _C.Tensor):
            self._fail_if(f"{expr} is not {self._const(v)}", f"{what} identity")

    def global_value(self, g, name, v, label):
        d = self._const(g)
        expr = f"{d}.get({name!r}, _MISSING)"
        if type(v) is list and len(v) <= 64 and all(_simple(x) for x in v):
            self._fail_if(
                f"{expr} is not {self._const(v)} or {self._const(list(v))} != {expr}",
                f"{label} {name} content",
            )
        elif _simple(v) and not isinstance(v, _C.dtype):
            self.value(expr, v)
        else:
            self._fail_if(f"{expr} is not {self._const(v)}", f"{label} {name} identity")

    def cell(self, cell, v, label):
        expr = f"{self._const(cell)}.cell_contents"
        if _simple(v) and not isinstance(v, _C.dtype):
            self.value(expr, v)
        else:
            self._fail_if(f"{expr} is not {self._const(v)}", f"closure {label} identity")

    def build(self):
        body = "\n".join(self.lines)
        src = "def check(args, kwargs):\n" + re.sub(r"__FAIL_\d+__", "False", body)
        src += "\n    return True\n"
        # the same lines answering which guard failed first (the recompile log)
        failed = "def failed(args, kwargs):\n" + re.sub(r"__FAIL_(\d+)__", r"\1", body)
        scope = dict(self.env)
        exec(compile(src + failed + "\n", "<ember guards>", "exec"), scope)  # noqa: S102
        check = scope["check"]
        check.source = src
        failures, first = self.failures, scope["failed"]

        def failure(args, kwargs):
            """The first guard ``(args, kwargs)`` fails, in torch's words where it has them."""
            try:
                k = first(args, kwargs)
            except Exception:  # noqa: BLE001 (an argument the guards cannot even read)
                return "the call's arguments"
            why = failures[k] if k is not None else "no guard"
            return why(args, kwargs) if callable(why) else why

        check.failure = failure
        return check
