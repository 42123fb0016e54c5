"""Python source for a Graph: the ``forward`` a GraphModule runs and shows as ``.code``.

Functions of ember's public namespaces are written by their qualified names (``ember.relu``,
``ember.nn.functional.gelu``), Python operators as operators (``x + y``, ``x[0]``, ``x.shape``),
and anything else is passed in as a global of the generated function. A program run as torch
(``python -m ember.run``, where ``torch`` is ember) reads them as torch's code shows them:
``torch.relu``, bound to the same module."""

import builtins
import math
import operator
import re
import sys

from ._namespace import Namespace, is_identifier
from .node import Node

_NAMESPACES = ("ember", "ember.nn.functional", "ember.linalg", "ember.special", "ember.fft")

BINARY_OPS = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
UNARY_OPS = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}

_DTYPE_PREFIX = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "bool": "b8",
    "complex64": "c64",
    "complex128": "c128",
}


def _ember():
    return sys.modules["ember"]


def shown_root():
    """``torch`` where the program imports ember as torch (its code then names torch's
    functions), else ``ember``."""
    return "torch" if sys.modules.get("torch") is sys.modules.get("ember") else "ember"


def shown_name(qualified):
    """`qualified` (``ember.relu``) as the program's code writes it (see shown_root)."""
    root = shown_root()
    return qualified if root == "ember" else root + qualified[len("ember") :]


def ember_qualified_name(obj):
    """``ember.relu`` for a public ember callable reachable by that name, else None."""
    qualname = getattr(obj, "__ember_qualname__", None)  # ember.ops.<ns>.<op>.<overload>
    if isinstance(qualname, str):
        return qualname
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    root = sys.modules.get("ember")
    if root is None:
        return None
    namespaces = _NAMESPACES
    if (getattr(obj, "__module__", None) or "").startswith("ember.nn.functional"):
        # also ember.<name> (max_pool2d): torch's ember-level op is another, F's prints as F's
        namespaces = ("ember.nn.functional", *_NAMESPACES)
    for ns in namespaces:
        mod = root
        for part in ns.split(".")[1:]:
            mod = getattr(mod, part, None)
        if mod is not None and _names(getattr(mod, name, None), obj):
            return f"{ns}.{name}"
    if _names(getattr(getattr(root, "Tensor", None), name, None), obj):
        return f"ember.Tensor.{name}"
    return None


def _names(attr, obj):
    """Whether the attribute `attr` is `obj`, or the wrapper that routes it while a
    __torch_function__ mode or subclass is in use (ember/overrides.py): a module holding
    `F.relu` from before then still pickles and deep-copies by name."""
    return attr is obj or (attr is not None and getattr(attr, "__ember_routed__", None) is obj)


def _ember_constant_name(obj):
    """``ember.float32`` / ``ember.contiguous_format`` for ember's named constants."""
    text = str(obj)
    if text.startswith("torch."):
        name = text[len("torch.") :]
        if getattr(_ember(), name, None) is obj:
            return "ember." + name
    return None


def format_target(base, target):
    """``self.layer1.conv`` for the dotted ``target``; non-identifier parts use getattr."""
    out = base
    for part in target.split("."):
        quoted = f'"{part}"' if '"' not in part and "\\" not in part else repr(part)
        out = f"{out}.{part}" if is_identifier(part) else f"getattr({out}, {quoted})"
    return out


def dtype_abbr(dtype):
    name = str(dtype).rpartition(".")[2]
    return _DTYPE_PREFIX.get(name, name)


def _annotation(node):
    if "sym_expr" in node.meta:  # a number read from data, or a condition on one: torch's SymInt
        return f': "Sym({node.meta["sym_expr"]})"'
    val = node.meta.get("val")
    tm = node.meta.get("tensor_meta")
    shape = dtype = None
    if val is not None and hasattr(val, "shape") and hasattr(val, "dtype"):
        shape, dtype = val.shape, val.dtype
    elif tm is not None and hasattr(tm, "shape"):
        shape, dtype = tm.shape, tm.dtype
    if shape is None:
        return ""
    # symbolic sizes where export derived them (``export/_sym_shapes.py``), else the example's
    dims = node.meta.get("sym_shape") or [int(s) for s in shape]
    return f': "{dtype_abbr(dtype)}[{", ".join(str(s) for s in dims)}]"'


class PythonCode:
    """PythonCode(src, globals, _lineno_map=None)

    The source of ``forward`` and the globals it needs.
    """

    def __init__(self, src, globals, _lineno_map=None):  # noqa: A002 (torch's field name)
        self.src = src
        self.globals = globals
        self._lineno_map = {} if _lineno_map is None else _lineno_map


class _Emitter:
    def __init__(self, graph):
        self.globals = {shown_root(): _ember(), "inf": math.inf, "nan": math.nan}
        self.names = Namespace()
        for n in graph.nodes:
            self.names.create_name(n.name, None)
        for g in self.globals:
            self.names.create_name(g, None)

    def add_global(self, hint, obj):
        for name, value in self.globals.items():
            if value is obj:
                return name
        name = self.names.create_name(hint, None)
        self.globals[name] = obj
        return name

    def callable_name(self, fn):
        q = ember_qualified_name(fn)
        if q is not None:
            return shown_name(q)
        if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
            return fn.__name__
        if getattr(fn, "__module__", None) in ("_operator", "operator"):
            return self.add_global("operator", operator) + "." + fn.__name__
        return self.add_global(getattr(fn, "__name__", "fn"), fn)

    def repr(self, a):
        if isinstance(a, Node):
            return a.name
        if a is None or isinstance(a, (bool, int, str, bytes)):
            return repr(a)
        if isinstance(a, float):
            if math.isnan(a):
                return "nan"
            if math.isinf(a):
                return "inf" if a > 0 else "-inf"
            return repr(a)
        if isinstance(a, complex) or a is Ellipsis:
            return repr(a)
        ember = _ember()
        if isinstance(a, ember.Size):
            return shown_name(f"ember.Size([{', '.join(self.repr(x) for x in a)}])")
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            items = ", ".join(self.repr(x) for x in a)
            return f"({items},)" if len(a) == 1 else f"({items})"
        if isinstance(a, list):
            return "[" + ", ".join(self.repr(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{self.repr(k)}: {self.repr(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.repr(a.start)}, {self.repr(a.stop)}, {self.repr(a.step)})"
        if isinstance(a, ember.device):
            return shown_name(f"ember.device({str(a)!r})")
        const = _ember_constant_name(a)
        if const is not None:
            return shown_name(const)
        if isinstance(a, type) and getattr(builtins, a.__name__, None) is a:
            return a.__name__
        if callable(a) and not isinstance(a, type):
            return self.callable_name(a)
        return self.add_global("_" + type(a).__name__.lower(), a)

    def args(self, args, kwargs):
        parts = [self.repr(a) for a in args]
        parts += [f"{k} = {self.repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def operand(self, a):
        text = self.repr(a)
        return f"({text})" if text.startswith("-") else text

    def expression(self, node, root):
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "call_method":
            return f"{self.operand(args[0])}.{target}({self.args(args[1:], kwargs)})"
        if op == "call_module":
            return f"{format_target(root, target)}({self.args(args, kwargs)})"
        if op == "get_attr":
            return format_target(root, target)
        # call_function
        if not kwargs and len(args) == 2 and target in BINARY_OPS:
            return f"{self.operand(args[0])} {BINARY_OPS[target]} {self.operand(args[1])}"
        if not kwargs and len(args) == 1 and target in UNARY_OPS:
            return f"{UNARY_OPS[target]}{self.operand(args[0])}"
        if target is operator.getitem and not kwargs and len(args) == 2:
            return f"{self.operand(args[0])}[{self.repr(args[1])}]"
        if target is builtins.getattr and not kwargs and len(args) == 2:
            if is_identifier(args[1]):
                return f"{self.operand(args[0])}.{args[1]}"
        return f"{self.callable_name(target)}({self.args(args, kwargs)})"


_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$')


def _trace_summary(trace):
    """``File: model.py:12 in forward, code: y = x.relu()`` for the innermost frame of a
    traceback-form stack trace, as torch's readable code prints it."""
    lines = (trace or "").strip().splitlines()
    for k in range(len(lines) - 1, -1, -1):
        m = _FRAME.match(lines[k])
        if m:
            code = lines[k + 1].strip() if k + 1 < len(lines) else ""
            return f"File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: {code}"
    return lines[-1].strip() if lines else "No stacktrace found for following nodes"


class PyTreeInfo:
    """PyTreeInfo(orig_args, in_spec, out_spec)

    A graph whose placeholders are the leaves of nested arguments and whose output is the
    leaves of a nested result (``ep.module()``'s graph): its forward takes the arguments named
    ``orig_args`` (flattened along ``self._in_spec``, an ``(args, kwargs)`` spec) and returns the
    result rebuilt along ``self._out_spec``, as torch's ``_PyTreeCodeGen`` writes it."""

    def __init__(self, orig_args, in_spec, out_spec):
        self.orig_args = list(orig_args)
        self.in_spec = in_spec
        self.out_spec = out_spec


def _pytree_form(info, params, body, em):
    """(params, body, lines added) with ``info.orig_args`` flattened first and the output
    rebuilt."""
    from ..utils import _pytree
    from . import _pytree as fx_pytree

    em.globals["fx_pytree"], em.globals["pytree"] = fx_pytree, _pytree
    n_args = info.in_spec.children_specs[0].num_children
    positional, named = info.orig_args[:n_args], info.orig_args[n_args:]
    keys = info.in_spec.children_specs[1].context or []
    kwargs = ", ".join(f"{k!r}:{v}" for k, v in zip(keys, named))
    names = [p.split(":")[0] for p in params]
    head = []
    annotated = [p for p in params if ":" in p]
    if annotated:  # `a: T, b: T = f()` is not Python: annotations go on a line of their own
        head += ["".join(p + "; " for p in annotated), ""]
    head.append(
        f"{', '.join(names)}, = fx_pytree.tree_flatten_spec(([{', '.join(positional)}], "
        f"{{{kwargs}}}), self._in_spec)"
    )
    for k in range(len(body) - 1, -1, -1):
        if body[k].startswith("return "):
            body[k] = f"return pytree.tree_unflatten({body[k][7:]}, self._out_spec)"
            break
    return list(info.orig_args), head + body, len(head)


def python_code(graph, root_module="self", verbose=False):
    """python_code(graph, root_module='self', verbose=False) -> PythonCode

    The source of ``def forward(self, ...)`` computing ``graph``; ``verbose`` annotates each
    value with its dtype and shape where the node's meta knows them.
    """
    em = _Emitter(graph)
    nodes = list(graph.nodes)
    # After its last use a value is set to None, so memory is freed as early as in eager code.
    last_use = {}
    seen = set()
    for n in reversed(nodes):
        for inp in n.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                last_use.setdefault(n, []).append(inp)
    params, body, lineno_map = [], [], {}
    last_trace = ""  # no comment before the first node yet
    for i, n in enumerate(nodes):
        if n.op == "placeholder":
            t = n.target
            if t.startswith("*"):
                params.append(t)
                if t.lstrip("*") != n.name:
                    body.append(f"{n.name} = {t.lstrip('*')}")
                continue
            ann = _annotation(n) if verbose else ""
            params.append(f"{t}{ann}" if not n.args else f"{t}{ann} = {em.repr(n.args[0])}")
            if t != n.name:
                body.append(f"{n.name} = {t}")
            continue
        if verbose and n.op != "output":  # a comment where the stack trace changes, as torch's
            trace = n.meta.get("stack_trace")
            if trace != last_trace:
                if body:
                    body.append("")
                body.append("# " + _trace_summary(trace))
                last_trace = trace
        if n.op == "output":
            lineno_map[len(body)] = i
            body.append(f"return {em.repr(n.args[0])}")
            continue
        ann = _annotation(n) if verbose else ""
        line = f"{n.name}{ann} = {em.expression(n, root_module)}"
        dead = [d.name for d in last_use.get(n, ()) if d.op != "output"]
        if not n.users:
            dead.append(n.name)
        if dead:
            line += ";  " + " = ".join(dead) + " = None"
        lineno_map[len(body)] = i
        body.append(line)
    if not any(n.op == "output" for n in nodes):
        body.append("pass")
    info = getattr(graph, "_pytree_info", None)
    if info is not None:
        params, body, shift = _pytree_form(info, params, body, em)
        lineno_map = {k + shift: v for k, v in lineno_map.items()}
    transformer = getattr(graph, "_body_transformer", None)
    if transformer is not None:
        lines = transformer([b + "\n" for b in body])
        body = "".join(lines).rstrip("\n").split("\n") if lines else ["pass"]
        lineno_map = {}  # the transformer may have moved lines
    sig = ", ".join([root_module] + params)
    lines = "".join(f"    {b}\n" if b else "\n" for b in body)  # torch's blank lines: empty
    src = f"\n\n\ndef forward({sig}):\n" + lines + "    "
    # Line numbers of the body start after the three blank lines and the def line.
    lineno_map = {k + 4: v for k, v in lineno_map.items()}
    return PythonCode(src, em.globals, lineno_map)
