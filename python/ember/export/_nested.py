"""Nested inputs of ember.export: arguments that are tuples, lists, dicts or registered dataclasses
of tensors (torch.export's pytree inputs), and ``register_dataclass``.

The program is captured with one graph input per tensor leaf, named after its path (``inp_a``,
``inp_b_0``, as torch names them): a forward taking the leaves rebuilds each argument and calls
the model's own. ``dynamic_shapes`` for such an argument has the argument's structure, with a
per-tensor spec at each tensor. ``ep.module()`` takes the original structure again and checks it;
``ember.export.save`` stores the flat program and the arguments' structure, so a loaded program's
``module()`` takes the same nested arguments (the C++ runtime takes the leaves in order)."""

import dataclasses
import inspect

from ..utils import _pytree

_DATACLASSES = {}


def register_dataclass(cls, *, serialized_type_name=None):
    """register_dataclass(cls, *, serialized_type_name=None) -> None

    Lets instances of the dataclass `cls` be inputs (and outputs) of exported programs: its
    fields are the children of a pytree node."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass: expected a dataclass; got {cls!r}")
    names = [f.name for f in dataclasses.fields(cls)]
    _DATACLASSES[cls] = serialized_type_name or f"{cls.__module__}.{cls.__qualname__}"
    if cls not in _pytree._NODES:
        _pytree.register_pytree_node(
            cls,
            lambda obj: ([getattr(obj, n) for n in names], names),
            lambda children, keys: cls(**dict(zip(keys, children))),
            serialized_type_name=_DATACLASSES[cls],
        )


def _is_tensor(x):
    import ember

    return isinstance(x, ember.Tensor)


def _children(value):
    """[(key, child)] of a container input, or None for a leaf."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, (list, tuple)):
        return list(enumerate(value))
    if type(value) in _DATACLASSES:
        return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    return None


def has_tensor(value):
    if _is_tensor(value):
        return True
    kids = _children(value)
    return bool(kids) and any(has_tensor(v) for _, v in kids)


def _sub_spec(spec, key, index):
    if spec is None:
        return None
    if isinstance(spec, dict):
        return spec.get(key)
    if isinstance(spec, (list, tuple)):
        return spec[index] if index < len(spec) else None
    if dataclasses.is_dataclass(spec):
        return getattr(spec, key, None)
    return None


def leaves(value, spec, path, out):
    """Appends (name, tensor, its dim spec) for each tensor leaf of `value`."""
    if _is_tensor(value):
        out.append(("_".join(str(p) for p in path), value, spec))
        return out
    for i, (key, child) in enumerate(_children(value) or ()):
        leaves(child, _sub_spec(spec, key, i), path + [key], out)
    return out


def rebuild(template, it):
    """`template` with its tensor leaves taken from the iterator `it`, in order."""
    if _is_tensor(template):
        return next(it)
    if isinstance(template, dict):
        return type(template)((k, rebuild(v, it)) for k, v in template.items())
    if isinstance(template, (list, tuple)) and not hasattr(template, "_fields"):
        return type(template)(rebuild(v, it) for v in template)
    if isinstance(template, tuple):  # a namedtuple
        return type(template)(*(rebuild(v, it) for v in template))
    if type(template) in _DATACLASSES:
        kw = {f.name: rebuild(getattr(template, f.name), it) for f in dataclasses.fields(template)}
        return type(template)(**kw)
    return template


def _structure(value):
    """A comparable description of a nested input's structure (tensors as 'T')."""
    if _is_tensor(value):
        return "T"
    kids = _children(value)
    if kids is None:
        return repr(value)
    return (type(value).__name__, tuple((k, _structure(v)) for k, v in kids))


class Nested:
    """How an exported program's flat inputs map to the model's nested arguments."""

    def __init__(self, signature, bound, leaf_names):
        self.signature = signature
        self.templates = dict(bound.arguments)
        self.structures = {k: _structure(v) for k, v in self.templates.items()}
        self.leaf_names = leaf_names

    def flatten_call(self, args, kwargs):
        """The tensor leaves of a call with the original structure, checked against it."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"forward() of the exported program: {e}") from None
        bound.apply_defaults()
        out = []
        for name, value in bound.arguments.items():
            if name not in self.templates:
                continue
            if _structure(value) != self.structures[name] and has_tensor(value):
                if _children(value) is not None or not _is_tensor(value):
                    raise ValueError(
                        f"forward() of the exported program: the inputs do not match the "
                        f"exported input tree spec: '{name}' is {_structure(value)}, exported "
                        f"as {self.structures[name]}"
                    )
            out += [t for _, t, _ in leaves(value, None, [name], [])]
        return out


def flatten_model(model, args, kwargs, dynamic_shapes):
    """(model taking the flat leaves, flat args, flat dynamic_shapes, Nested) when some argument
    is a container of tensors, else None."""
    import ember

    is_module = isinstance(model, ember.nn.Module)
    fn = type(model).forward if is_module else model
    try:
        sig = inspect.signature(model.forward if is_module else model)
        bound = sig.bind(*args, **(kwargs or {}))
    except (TypeError, ValueError):  # the capture reports a call that does not fit
        return None
    if not any(not _is_tensor(v) and has_tensor(v) for v in bound.arguments.values()):
        return None
    specs = dynamic_shapes
    if isinstance(specs, (list, tuple)):
        specs = dict(zip(bound.arguments, specs))
    flat = []  # (name, tensor, spec)
    for name, value in bound.arguments.items():
        leaves(value, (specs or {}).get(name), [name], flat)
    names = [n for n, _, _ in flat]
    if len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
        names = [f"arg{i}" for i in range(len(flat))]

    def call(self_or_none, leaf_values):
        it = iter(leaf_values)
        rebuilt = {k: rebuild(v, it) for k, v in bound.arguments.items()}
        call_args = inspect.BoundArguments(sig, rebuilt)
        if self_or_none is None:
            return fn(*call_args.args, **call_args.kwargs)
        return fn(self_or_none, *call_args.args, **call_args.kwargs)

    params = ", ".join(names)
    scope = {"_call": call}
    if is_module:
        exec(f"def forward(self, {params}):\n    return _call(self, [{params}])\n", scope)
        import copy

        wrapper = copy.copy(model)  # shares the parameter, buffer and module dicts
        wrapper.__class__ = type(
            type(model).__name__, (type(model),), {"forward": scope["forward"]}
        )
    else:
        exec(f"def forward({params}):\n    return _call(None, [{params}])\n", scope)
        wrapper = scope["forward"]
    flat_specs = None
    if dynamic_shapes is not None:
        flat_specs = {n: s for n, (_, _, s) in zip(names, flat) if s is not None}
    return wrapper, tuple(t for _, t, _ in flat), flat_specs, Nested(sig, bound, names)


def _encode(value):
    """A data-only description of one argument's structure ("T" for a tensor leaf)."""
    if _is_tensor(value):
        return "T"
    if type(value) in _DATACLASSES:
        fields = [[f.name, _encode(getattr(value, f.name))] for f in dataclasses.fields(value)]
        return {"dataclass": [_DATACLASSES[type(value)], fields]}
    if isinstance(value, dict):
        return {"dict": [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return {type(value).__name__: [_encode(v) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"const": value}
    raise RuntimeError(
        f"ember.export.save: expected inputs of tensors, tuples, lists, dicts, registered "
        f"dataclasses and constants; got {type(value).__name__}"
    )


def encode_structure(nested):
    """[[argument name, its structure]] of a Nested, in the signature's order."""
    return [[name, _encode(v)] for name, v in nested.templates.items()]


def _describe(spec):
    if spec == "T":
        return "T"
    ((kind, body),) = spec.items()
    if kind == "const":
        return repr(body)
    if kind == "dataclass":
        return (body[0], tuple((k, _describe(v)) for k, v in body[1]))
    if kind == "dict":
        return ("dict", tuple((k, _describe(v)) for k, v in body))
    return (kind, tuple(_describe(v) for v in body))


def _flat_by(spec, value, name, out):
    """Appends `value`'s tensor leaves, checking it has the structure `spec` describes."""
    ok = True
    if spec == "T":
        ok = _is_tensor(value)
        if ok:
            out.append(value)
    else:
        ((kind, body),) = spec.items()
        if kind == "const":
            ok = not has_tensor(value)
        elif kind == "dataclass":
            ok = _DATACLASSES.get(type(value)) == body[0]
            for key, sub in body[1] if ok else ():
                _flat_by(sub, getattr(value, key), name, out)
        elif kind == "dict":
            ok = isinstance(value, dict) and list(value) == [k for k, _ in body]
            for key, sub in body if ok else ():
                _flat_by(sub, value[key], name, out)
        else:
            ok = type(value).__name__ == kind and len(value) == len(body)
            for sub, v in zip(body, value) if ok else ():
                _flat_by(sub, v, name, out)
    if not ok:
        raise ValueError(
            "forward() of the exported program: the inputs do not match the exported input tree "
            f"spec: '{name}' is {_structure(value)}, exported as {_describe(spec)}"
        )


class StoredNested:
    """The nested arguments of a loaded program (from the structure save stored): flattens a
    call with the original structure into the program's tensor leaves."""

    def __init__(self, structure, leaf_names):
        self.names = [name for name, _ in structure]
        self.specs = dict((name, spec) for name, spec in structure)
        self.leaf_names = leaf_names

    def flatten_call(self, args, kwargs):
        if len(args) > len(self.names):
            raise TypeError(
                f"forward() of the exported program: takes {len(self.names)} arguments but "
                f"{len(args)} were given"
            )
        values = dict(zip(self.names, args))
        for k, v in kwargs.items():
            if k not in self.specs or k in values:
                raise TypeError(f"forward() of the exported program: unexpected argument '{k}'")
            values[k] = v
        out = []
        for name in self.names:
            if name not in values:
                raise TypeError(f"forward() of the exported program: missing argument '{name}'")
            _flat_by(self.specs[name], values[name], name, out)
        return out
