"""ember.ops: operators by qualified name, as torch.ops names them.

``ember.ops.<ns>.<name>`` is an OpOverloadPacket, ``ember.ops.<ns>.<name>.<overload>`` an
OpOverload with the dispatcher's schema (``._schema``), ``name()`` (``"mylib::foo"``) and a
``__call__`` that reaches the dispatcher. Both are built from the dispatcher's registry
(``_C._op_schemas()``), not from a list kept here: ember's own operators appear under ``aten``
with torch's ATen names (``ember.ops.aten.add.Tensor``, ``ember.ops.aten.mm.default``), operators
declared in C++ with a namespace (``"myns::foo(Tensor self) -> Tensor"``) under that namespace, and
Python custom ops (``ember.library``) under theirs.

An ATen overload is called through ember's public function of that name (``ember.add``,
``ember.nn.functional.relu``, ``Tensor.add_``), which is what reaches the op's typed C++ entry;
a custom op is called through its boxed entry (Note [Python custom ops] in python/src/library.cpp).
"""

import importlib
import sys
import types

from . import _C, _dispatch_bridge, _dispatch_hook, overrides

__all__ = ["OpOverload", "OpOverloadPacket"]

# --------------------------------------------------------------------------------------------
# Schemas


def _split_top(text):
    """Splits at commas outside (), [] and quotes."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


class _AliasInfo:
    __slots__ = ("is_write", "before_set")

    def __init__(self, is_write, before_set):
        self.is_write = is_write
        self.before_set = before_set


def _parse_default(text):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text[:1] in "\"'":
        return text[1:-1]
    if text.startswith("["):
        return [_parse_default(p) for p in _split_top(text[1:-1])]
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class Argument:
    """One argument (or return) of a FunctionSchema: name, type, default_value, kwarg_only and
    alias_info (``alias_info.is_write`` for a mutated tensor)."""

    __slots__ = ("name", "type", "default_value", "has_default", "kwarg_only", "alias_info")

    def __init__(self, text, kwarg_only=False):
        text = text.strip()
        default = None
        if "=" in text:
            text, default = text.split("=", 1)
            default = default.strip()
        pieces = text.strip().rsplit(" ", 1) if " " in text.strip() else [text.strip(), ""]
        typ, self.name = pieces[0].strip(), pieces[1].strip()
        self.alias_info = None
        if "(" in typ:
            head, rest = typ.split("(", 1)
            alias, tail = rest.split(")", 1)
            self.alias_info = _AliasInfo(alias.endswith("!"), alias.rstrip("!"))
            typ = head + tail
        self.type = typ
        self.has_default = default is not None
        self.default_value = _parse_default(default) if default is not None else None
        self.kwarg_only = kwarg_only

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_tensor(self):
        return self.type.startswith("Tensor")

    def __repr__(self):
        return f"Argument(name={self.name!r}, type={self.type!r})"


def format_double(v):
    """A double as c10 prints it in a schema: integral values as `2.`, others with 17 significant
    digits (`0.10000000000000001`, `1e+20`)."""
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.17g}"
    return text if any(c in text for c in ".e") else text + "."


def _canonical_defaults(text, open_, close):
    """The schema text with its float defaults (of float arguments, and of Scalar ones written
    as floats) printed as c10 prints them."""
    items = []
    for item in _split_top(text[open_ + 1 : close]):
        head, eq, default = item.partition("=")
        kind = head.split()[0].rstrip("?") if eq else ""
        literal = default.strip()
        if kind == "float" or (kind == "Scalar" and any(c in literal for c in ".eE")):
            try:
                default = format_double(float(literal))
            except ValueError:
                pass
        items.append(head + eq + default)
    return text[: open_ + 1] + ", ".join(items) + text[close:]


class FunctionSchema:
    """A parsed operator schema in torch's grammar: ``name`` (``"mylib::foo"``),
    ``overload_name``, ``arguments`` and ``returns`` (Argument lists); ``str()`` gives the text
    as torch prints it (float defaults in c10's form)."""

    def __init__(self, text):
        open_ = text.index("(")
        close = text.rindex(")", 0, text.rindex("->"))
        self._text = _canonical_defaults(text, open_, close)
        open_ = text.index("(")
        arrow = text.rindex("->")
        close = text.rindex(")", 0, arrow)
        full = text[:open_].strip()
        self.name, _, self.overload_name = full.partition(".")
        self.arguments = []
        kwarg_only = False
        for item in _split_top(text[open_ + 1 : close]):
            if item == "*":
                kwarg_only = True
                continue
            self.arguments.append(Argument(item, kwarg_only))
        ret = text[arrow + 2 :].strip()
        if ret.startswith("(") and ret.endswith(")"):
            items = _split_top(ret[1:-1])
        else:
            items = [ret] if ret else []
        self.returns = [Argument(r) for r in items]

    def __str__(self):
        return self._text

    def __repr__(self):
        return self._text

    def bind(self, args, kwargs, op_name):
        """The value of every argument in schema order (defaults filled); raises TypeError."""
        out = []
        kwargs = dict(kwargs)
        positional = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            raise TypeError(
                f"{op_name}() expected at most {len(positional)} argument(s) but received "
                f"{len(args)} argument(s). Declaration: {self}"
            )
        for i, a in enumerate(self.arguments):
            if i < len(args) and not a.kwarg_only:
                if a.name in kwargs:
                    raise TypeError(f"{op_name}() got multiple values for argument '{a.name}'")
                out.append(args[i])
            elif a.name in kwargs:
                out.append(kwargs.pop(a.name))
            elif a.has_default:
                out.append(a.default_value)
            else:
                raise TypeError(
                    f"{op_name}() is missing value for argument '{a.name}'. Declaration: {self}"
                )
        if kwargs:
            raise TypeError(
                f"{op_name}() got an unexpected keyword argument '{next(iter(kwargs))}'. "
                f"Declaration: {self}"
            )
        return out


# --------------------------------------------------------------------------------------------
# Overloads


class OpOverload:
    """One overload of an operator (``ember.ops.aten.add.Tensor``): ``._schema``, ``.name()``,
    ``.overloadpacket`` and a call that goes through the dispatcher."""

    def __init__(self, packet, overload_name, schema, call):
        self._overloadname = overload_name
        self._schema = FunctionSchema(schema)
        self.overloadpacket = packet
        self.namespace = packet._namespace
        self._call = call
        self.__name__ = f"{packet._name}.{overload_name}"
        self.__qualname__ = self.__name__
        self.__module__ = f"ember.ops.{packet._namespace}"
        self.__ember_qualname__ = f"ember.ops.{packet._namespace}.{packet._name}.{overload_name}"
        self.__doc__ = f"{self._schema}\n\nThe operator {self.name()}, through the dispatcher."
        self._tags = None  # a custom op's ember.Tag list (ember.library sets it)
        self._redispatch = None  # a custom op's call of one key's kernel (ember.library)
        self._torch_dispatch_rules = None  # mode class -> rule (library.register_torch_dispatch)

    @property
    def tags(self):
        """The operator's tags (ember.Tag): a custom op's, given to custom_op / Library.define;
        an aten overload's, torch's (ember/_aten_tags.py); none for ember's own overloads."""
        if self._tags is not None:
            return list(self._tags)
        if self.namespace != "aten":
            return []
        from . import _aten_tags
        from ._runtime_names import Tag

        key = self.__name__
        if key not in _aten_tags.TAGGED:
            return []
        tags = {Tag.pt2_compliant_tag}
        if self.overloadpacket._name.endswith("_") and not key.startswith("__"):
            tags.add(Tag.inplace)
        if any(a.kwarg_only and a.is_write for a in self._schema.arguments):
            tags.add(Tag.out)
        tags.update(Tag[t] for t, names in _aten_tags.TAGS.items() if key in names)
        return sorted(tags, key=lambda t: t.value)

    def name(self):
        """``"ns::name"`` or ``"ns::name.overload"``, as the dispatcher names the overload."""
        base = f"{self.namespace}::{self.overloadpacket._name}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        if overrides._stack():
            return overrides._route(self, args, kwargs)
        if _dispatch_bridge.modes():  # TorchDispatchModes (Note [Dispatch modes])
            return _dispatch_bridge.call_overload(self, args, kwargs)
        return _dispatch_hook.kernel(self, args, kwargs)

    def redispatch(self, keyset, *args, **kwargs):
        """Calls the kernel of keyset's highest key (a DispatchKeySet, as a kernel registered
        ``with_keyset=True`` receives it), skipping the keys above it."""
        if self._redispatch is None:
            raise NotImplementedError(
                f"ember.ops: redispatch is available for custom operators; '{self.name()}' is "
                "one of ember's own"
            )
        return self._redispatch(keyset, *args, **kwargs)

    def __repr__(self):
        return f"{self.namespace}.{self.overloadpacket._name}.{self._overloadname}"

    def __reduce__(self):
        return (_resolve, (self.namespace, self.overloadpacket._name, self._overloadname))

    def __hash__(self):
        return id(self)


def _resolve(ns, name, overload):
    return getattr(getattr(getattr(ops, ns), name), overload)


class OpOverloadPacket:
    """All overloads of one operator name (``ember.ops.aten.add``); calling it picks the first
    overload whose schema accepts the arguments (the default one for a custom op)."""

    def __init__(self, namespace, name):
        self._namespace = namespace
        self._name = name
        self._qualified_op_name = f"{namespace}::{name}"
        self._overloads = {}
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = f"ember.ops.{namespace}"

    def _add(self, overload_name, schema, call):
        self._overloads[overload_name] = OpOverload(self, overload_name, schema, call)
        return self._overloads[overload_name]

    def overloads(self):
        """The overload names (``'default'`` for the unnamed one)."""
        return list(self._overloads)

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            return self._overloads[key]
        except KeyError:
            raise AttributeError(
                f"The underlying op of '{self._namespace}.{self._name}' has no overload name "
                f"'{key}'"
            ) from None

    @property
    def _schemas(self):
        return {k: v._schema for k, v in self._overloads.items()}

    def __call__(self, *args, **kwargs):
        if "default" in self._overloads:
            return self._overloads["default"](*args, **kwargs)
        errors = []
        for ov in self._overloads.values():
            try:
                ov._schema.bind(args, kwargs, self._name)
            except TypeError as e:
                errors.append(str(e))
                continue
            return ov(*args, **kwargs)
        raise TypeError(f"{self._qualified_op_name}: no overload accepts these arguments")

    def __repr__(self):
        return f"{self._namespace}.{self._name}"


class _OpNamespace(types.ModuleType):
    """``ember.ops.<ns>``: the operators of one namespace, as attributes."""

    def __init__(self, name):
        super().__init__(f"ember.ops.{name}")
        self.name = name
        self._packets = {}

    def __getattr__(self, key):
        if key.startswith("__"):
            if key in self._packets:  # an operator's own overloads (aten.__and__.Tensor)
                return self._packets[key]
            raise AttributeError(key)
        packet = self._packets.get(key)
        if packet is None:
            _sync()
            packet = self._packets.get(key)
        if packet is not None:
            return packet
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{key}'")

    def __dir__(self):
        _sync()
        return sorted(self._packets)


class _Ops(types.ModuleType):
    """``ember.ops``: operator namespaces by name (``ember.ops.aten``, ``ember.ops.mylib``)."""

    __file__ = "_ops.py"

    def __init__(self):
        super().__init__("ember.ops")
        self._namespaces = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "quantized":  # torch's quantized kernels, kept in Python (ember.ao)
            from .ao.nn.quantized._ops_namespace import namespace

            return namespace
        if name == "higher_order":  # operators taking functions (cond), kept in Python
            from ._higher_order_ops import namespace

            return namespace
        if name == "quantized_decomposed" and name not in self._namespaces:
            # defined in Python (ember.ao) on first use, as torch defines them on import
            importlib.import_module("ember.ao.quantization.fx._decomposed")
        return self._namespace(name)

    def _namespace(self, name):
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
        return ns

    def __dir__(self):
        _sync()
        return sorted(self._namespaces)


ops = _Ops()

# --------------------------------------------------------------------------------------------
# The registry


_seen = set()  # dispatcher entry names already given an overload
_custom_calls = {}  # entry name -> call of a Python custom op (ember.library registers these)


def add_aten_overloads(entries):
    """Adds each (``name.overload``, schema, function) of ``entries`` that ``ember.ops.aten``
    lacks; an overload already there is kept."""
    aten = ops._namespace("aten")
    for ov, schema, fn in entries:
        name, _, overload = ov.partition(".")
        packet = aten._packets.get(name)
        if packet is None:
            packet = aten._packets[name] = OpOverloadPacket("aten", name)
        if overload not in packet._overloads:
            packet._add(overload, "aten::" + schema, fn)


def _split_entry(entry_name):
    """'add.Tensor' -> ('aten', 'add', 'Tensor'); 'ns::f' -> ('ns', 'f', 'default')."""
    ns, sep, rest = entry_name.partition("::")
    if not sep:
        ns, rest = "aten", entry_name
    name, _, overload = rest.partition(".")
    return ns, name, overload or "default"


def _aten_callable(name):
    """ember's public Python function for an ATen name, or None."""
    import ember
    import ember.nn.functional as F

    from ._aten_extra import ENTRY_POINTS  # ATen ops that Python reaches otherwise (x[idx])

    if name in ENTRY_POINTS:
        return ENTRY_POINTS[name]
    fn = getattr(ember, name, None)
    if callable(fn) and not isinstance(fn, type):
        return overrides.original(fn)
    fn = getattr(F, name, None)
    if callable(fn) and not isinstance(fn, type):
        return overrides.original(fn)
    fn = getattr(_C.Tensor, name, None)
    if callable(fn):
        return overrides.original(fn)
    return None


def _aten_call(entry_name, name):
    target = []

    def call(*args, **kwargs):
        if not target:
            fn = _aten_callable(name)
            if fn is None:
                raise NotImplementedError(
                    f"ember.ops: '{entry_name}' is an internal operator of ember with no Python "
                    "entry point"
                )
            target.append(fn)
        return target[0](*args, **kwargs)

    return call


def _sync():
    """Adds the dispatcher entries registered since the last look (cheap when none were)."""
    from . import _aten_extra  # torch's overloads the registry lacks (mean.dim, t.default, ...)
    from .export import _aten_names  # the overloads exported graphs name (linear.default, ...)

    entries = _C._op_schemas()
    if len(entries) == len(_seen):
        _aten_extra.install()  # after the registry's own (a no-op once installed)
        _aten_names.install()
        return
    for e in entries:
        entry_name = e["name"]
        if entry_name in _seen:
            continue
        _seen.add(entry_name)
        ns, name, overload = _split_entry(entry_name)
        if ns == "quantized":  # kept private for now
            continue
        schema = e["schema"]
        if "::" not in schema.split("(", 1)[0]:
            schema = f"{ns}::{schema}"
        namespace = ops._namespace(ns)
        packet = namespace._packets.get(name)
        if packet is None:
            packet = namespace._packets[name] = OpOverloadPacket(ns, name)
        call = _custom_calls.get(entry_name)
        if call is None:
            call = _aten_call(entry_name, name) if ns == "aten" else _cpp_call(entry_name)
        packet._add(overload, schema, call)
    _aten_extra.install()
    _aten_names.install()


def _cpp_call(entry_name):
    def call(*args, **kwargs):
        raise NotImplementedError(
            f"ember.ops: '{entry_name}' was declared in C++ and has no Python binding; call it "
            "from C++ or bind it"
        )

    return call


def _register_custom(entry_name, call):
    """Makes ``ember.ops`` call ``call`` for a Python custom op's entry; returns its OpOverload."""
    _custom_calls[entry_name] = call
    _sync()
    ns, name, overload = _split_entry(entry_name)
    return getattr(ops._namespace(ns)._packets[name], overload)


sys.modules.setdefault("ember.ops", ops)
