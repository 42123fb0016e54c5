"""The file ember.jit.save writes for a scripted module that has never been called.

torch saves a scripted module without running it, and its saved graph takes inputs of any size.
The export format needs the sizes of a call, so such a module is written instead as its
symbolic graph (the one ``ember.jit.script`` captured, general in every size) beside the data
of the modules it calls: one ember checkpoint (data only, no pickle; see docs/FORMAT.md) whose
root is

- ``format``: ``"ember.jit.script"``; ``version``: 1; ``training``: the root's mode;
- ``nodes``: ``[op, name, target, args, kwargs]`` in graph order; a target is an attribute path
  (call_module, call_method, get_attr) or ``{"fn": name}`` for a function of ember's public
  namespaces, ``operator`` or ``getattr``; node references are ``{"ref": index}``;
- ``modules``: qualified name -> ``{class, training, attrs}`` for every submodule, ``class``
  an ``ember.nn`` module class by its qualified name and ``attrs`` its plain attributes;
- ``state``: parameters and buffers by qualified name; ``parameters``: which of them are
  Parameters (with their requires_grad).

Loading resolves only ember's names and ember.nn module classes, so nothing else is imported or
run. The C++ runtime does not read this file (it runs exported programs): a scripted module
called once first is saved in the export format."""

import builtins
import operator
import sys

__all__ = ["is_script_file", "load_script", "save_script"]

FORMAT = "ember.jit.script"
VERSION = 1
_PLAIN = (bool, int, float, str, type(None))


def _ember():
    return sys.modules["ember"]


def _plain(v):
    if isinstance(v, _PLAIN):
        return True
    if isinstance(v, (tuple, list)):
        return all(_plain(x) for x in v)
    return False


def _fn_name(fn):
    from ..fx._codegen import ember_qualified_name

    q = ember_qualified_name(fn)
    if q is not None:
        return q
    name = getattr(fn, "__name__", None)
    if isinstance(name, str):
        if getattr(operator, name, None) is fn:
            return f"operator.{name}"
        if name == "getattr" and fn is builtins.getattr:
            return "builtins.getattr"
    return None


def _resolve_fn(name):
    from ..fx._pickle import _EmberRef

    mod, _, attr = name.partition(".")
    if mod == "operator" and attr.isidentifier() and hasattr(operator, attr):
        return getattr(operator, attr)
    if name == "builtins.getattr":
        return builtins.getattr
    if mod == "ember":
        return _EmberRef(name).resolve()
    raise RuntimeError(f"ember.jit.load: the file names a function outside ember: {name!r}")


def _encode(a, index, where):
    ember = _ember()
    from ..fx import Node

    if isinstance(a, Node):
        return {"ref": index[a]}
    if isinstance(a, _PLAIN):
        return a
    if isinstance(a, tuple):
        return tuple(_encode(x, index, where) for x in a)
    if isinstance(a, list):
        return [_encode(x, index, where) for x in a]
    if isinstance(a, dict) and all(isinstance(k, str) for k in a):
        return {"dict": {k: _encode(v, index, where) for k, v in a.items()}}
    if isinstance(a, slice):
        return {"slice": [_encode(x, index, where) for x in (a.start, a.stop, a.step)]}
    if a is Ellipsis:
        return {"ellipsis": None}
    if isinstance(a, ember.dtype):
        return {"dtype": str(a).split(".")[-1]}
    if isinstance(a, ember.device):
        return {"device": str(a)}
    raise RuntimeError(
        f"ember.jit.save: {where} has an argument of type {type(a).__name__}, which the file "
        "format cannot hold; call the scripted module once before saving it"
    )


def _decode(a, made):
    ember = _ember()
    if isinstance(a, tuple):
        return tuple(_decode(x, made) for x in a)
    if isinstance(a, list):
        return [_decode(x, made) for x in a]
    if isinstance(a, dict):
        key, v = next(iter(a.items())) if len(a) == 1 else (None, None)
        if key == "ref" and isinstance(v, int) and 0 <= v < len(made):
            return made[v]
        if key == "dict" and isinstance(v, dict):
            return {k: _decode(x, made) for k, x in v.items()}
        if key == "slice" and isinstance(v, list) and len(v) == 3:
            return slice(*(_decode(x, made) for x in v))
        if key == "ellipsis":
            return Ellipsis
        if key == "dtype" and isinstance(getattr(ember, str(v), None), ember.dtype):
            return getattr(ember, v)
        if key == "device" and isinstance(v, str):
            return ember.device(v)
        raise RuntimeError(f"ember.jit.load: malformed argument {a!r}")
    if isinstance(a, _PLAIN):
        return a
    raise RuntimeError(f"ember.jit.load: malformed argument of type {type(a).__name__}")


def _module_record(name, m, internal):
    cls = type(m)
    if not cls.__module__.startswith("ember.nn."):
        raise RuntimeError(
            f"ember.jit.save: submodule '{name}' is a {cls.__name__}, not an ember.nn module; "
            "call the scripted module once before saving it"
        )
    attrs = {}
    for k, v in vars(m).items():
        if k in internal or k == "training":
            continue
        if not _plain(v):
            raise RuntimeError(
                f"ember.jit.save: attribute '{k}' of submodule '{name}' ({cls.__name__}) is a "
                f"{type(v).__name__}, which the file format cannot hold; call the scripted "
                "module once before saving it"
            )
        attrs[k] = v
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "training": m.training, "attrs": attrs}


def save_script(gm, path_or_buffer, save_fn):
    """Writes the scripted GraphModule ``gm`` with ``save_fn(root, f)``."""
    ember = _ember()
    internal = set(vars(ember.nn.Module()))
    index, nodes = {}, []
    for i, n in enumerate(gm.graph.nodes):
        index[n] = i
        where = f"node '{n.name}'"
        if isinstance(n.target, str):
            target = n.target
        else:
            fn = _fn_name(n.target)
            if fn is None:
                raise RuntimeError(
                    f"ember.jit.save: {where} calls {n.target!r}, which is not a function of "
                    "ember's namespaces; call the scripted module once before saving it"
                )
            target = {"fn": fn}
        nodes.append(
            [n.op, n.name, target, _encode(n.args, index, where), _encode(n.kwargs, index, where)]
        )
    modules = {name: _module_record(name, m, internal) for name, m in gm.named_modules() if name}
    params = {name: p.requires_grad for name, p in gm.named_parameters()}
    state = dict(gm.named_parameters())
    state.update(gm.named_buffers())
    root = {
        "format": FORMAT,
        "version": VERSION,
        "training": gm.training,
        "nodes": nodes,
        "modules": modules,
        "state": {k: v.detach() for k, v in state.items()},
        "parameters": params,
    }
    save_fn(root, path_or_buffer)


def is_script_file(root):
    return isinstance(root, dict) and root.get("format") == FORMAT


def _module_class(name):
    ember = _ember()
    mod_name, _, cls_name = name.rpartition(".")
    mod = sys.modules.get(mod_name) if mod_name.startswith("ember.nn.") else None
    cls = getattr(mod, cls_name, None) if mod is not None else None
    if not (isinstance(cls, type) and issubclass(cls, ember.nn.Module)):
        raise RuntimeError(f"ember.jit.load: the file names a class outside ember.nn: {name!r}")
    return cls


def _set_path(root, qualname, value, setter):
    *parents, last = qualname.split(".")
    owner = root
    for p in parents:
        owner = owner._modules[p]
    setter(owner, last, value)


def _is_path(target):
    """An attribute path (``seq.0.weight``): identifiers and, for Sequential items, digits."""
    return isinstance(target, str) and all(
        p.isidentifier() or p.isdigit() for p in target.split(".")
    )


def load_script(root):
    """The scripted module the file's ``root`` dict describes (a GraphModule)."""
    ember = _ember()
    from .. import fx

    if root.get("version") != VERSION:
        raise RuntimeError(f"ember.jit.load: unsupported version {root.get('version')!r}")
    base = ember.nn.Module()
    for name, rec in sorted(root["modules"].items(), key=lambda kv: kv[0].count(".")):
        cls = _module_class(rec["class"])
        m = cls.__new__(cls)
        ember.nn.Module.__init__(m)
        for k, v in rec["attrs"].items():
            object.__setattr__(m, k, v)
        m.training = bool(rec["training"])
        _set_path(base, name, m, lambda o, k, v: o.add_module(k, v))
    params = root["parameters"]
    for name, t in root["state"].items():
        if name in params:
            value = ember.nn.Parameter(t, requires_grad=bool(params[name]))
            _set_path(base, name, value, lambda o, k, v: o.register_parameter(k, v))
        else:
            _set_path(base, name, t, lambda o, k, v: o.register_buffer(k, v))
    graph = fx.Graph()
    made = []
    for op, name, target, args, kwargs in root["nodes"]:
        if isinstance(target, dict):
            target = _resolve_fn(target.get("fn", ""))
        elif not _is_path(target):
            raise RuntimeError(f"ember.jit.load: malformed target {target!r}")
        node = graph.create_node(op, target, _decode(args, made), _decode(kwargs, made), name)
        made.append(node)
    gm = fx.GraphModule(base, graph)
    gm.train(bool(root["training"]))
    for name, rec in root["modules"].items():
        gm.get_submodule(name).training = bool(rec["training"])
    return gm
