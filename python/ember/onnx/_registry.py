"""The tables from the nodes of a captured graph to their ONNX mappings.

A mapping (a "symbolic", as torch calls it) is a function ``sym(g, *args, **kwargs)`` taking the
`GraphContext` and the node's arguments, tensors as `Value`s, everything else as Python values;
it returns the Value(s) of the node's result. Functions are registered by name and found under
that name in ember's public namespaces (``ember.relu``, ``ember.nn.functional.relu``) and as
Tensor methods (``x.relu()``, with ``x`` first); module mappings take the module after ``g``.
The name tables are resolved to the callables themselves once, on the first export."""

FUNCTIONS = {}  # public function name -> symbolic
METHODS = {}  # Tensor method name -> symbolic
OPERATORS = {}  # operator.* / builtins callable -> symbolic
MODULES = {}  # ember.nn class name -> symbolic(g, module, *args, **kwargs)

_NAMESPACES = ("", "nn.functional", "special", "linalg")
_resolved = {}


def function(*names, method=True, func=True):
    """Registers a symbolic for the public functions `names` (and the Tensor methods of those
    names, with their in-place forms ``name_``, unless ``method=False``)."""

    def register(sym):
        for name in names:
            if func:
                FUNCTIONS[name] = sym
            if method:
                METHODS[name] = sym
                METHODS.setdefault(name + "_", sym)
        return sym

    return register


def method(*names):
    """Registers a symbolic for Tensor methods only."""
    return function(*names, func=False)


def operators(*ops):
    def register(sym):
        for op in ops:
            OPERATORS[op] = sym
        return sym

    return register


def module(*class_names):
    """Registers a symbolic for the ember.nn module classes `class_names`."""

    def register(sym):
        for name in class_names:
            MODULES[name] = sym
        return sym

    return register


def _namespace(ember, path):
    obj = ember
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part, None)
    return obj


def lookup_function(target):
    """(symbolic or None, the public name of `target`) for a call_function target."""
    if not _resolved:
        import ember

        for path in _NAMESPACES:
            ns = _namespace(ember, path)
            for name, sym in FUNCTIONS.items():
                obj = getattr(ns, name, None) if ns is not None else None
                if obj is not None and callable(obj):
                    prefix = "ember." + path + "." if path else "ember."
                    _resolved.setdefault(id(obj), (obj, sym, prefix + name))
        for op, sym in OPERATORS.items():
            _resolved[id(op)] = (op, sym, f"{op.__module__}.{op.__name__}")
    hit = _resolved.get(id(target))
    if hit is not None:
        return hit[1], hit[2]
    import ember

    for path in _NAMESPACES:  # the public name of an unmapped ember function
        ns = _namespace(ember, path)
        for name, obj in vars(ns).items() if ns is not None else ():
            if obj is target and not name.startswith("_"):
                return None, ("ember." + path + "." if path else "ember.") + name
    module = getattr(target, "__module__", None) or ""
    return None, f"{module}.{getattr(target, '__name__', repr(target))}".lstrip(".")


def lookup_module(mod):
    """(symbolic or None, the class's public name) for a call_module's module."""
    for cls in type(mod).__mro__:
        if (cls.__module__ or "").startswith("ember.nn") and cls.__name__ in MODULES:
            return MODULES[cls.__name__], f"ember.nn.{cls.__name__}"
    cls = type(mod)
    prefix = "ember.nn" if (cls.__module__ or "").startswith("ember.nn") else cls.__module__
    return None, f"{prefix}.{cls.__name__}"
