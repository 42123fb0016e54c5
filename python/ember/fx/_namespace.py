"""The names of a graph's values: unique Python identifiers derived from what a node calls, as
torch.fx derives them (``relu``, ``relu_1``, ``layer1_conv``, ``getattr_1``)."""

import builtins
import keyword
import re

_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]+")
_SUFFIX = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
# Names the generated code itself uses.
_RESERVED = frozenset({"self", "ember", "torch", "operator", "inf", "nan"})


def snake_case(s):
    """CamelCase -> camel_case, as torch.fx names call_module and call_method nodes."""
    return _CAMEL.sub(r"_\1", s).lower() if any(c.isupper() for c in s) else s


def target_to_str(target):
    """The name a node calling ``target`` starts from."""
    if isinstance(target, str):
        op = target
    else:
        op = getattr(target, "__name__", None) or type(target).__name__
    if op.startswith("__") and op.endswith("__") and len(op) > 4:
        op = op[2:-2]
    return snake_case(op)


def is_identifier(name):
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


class Namespace:
    """Hands out unique identifiers, remembering the one given to each object."""

    def __init__(self):
        self._obj_to_name = {}
        self._used = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)][0]
        candidate = _ILLEGAL.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        m = _SUFFIX.match(candidate)
        if m is None:
            base, num = candidate, None
        else:
            base, num = m.group(1), int(m.group(2))
            candidate = f"{base}_{num}"
        if num is None:
            num = self._base_count.get(base, 0)
        while candidate in self._used or self._illegal(candidate):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = (candidate, obj)  # keep obj alive with its id
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[id(obj)] = (name, obj)

    def remove(self, name, obj=None):
        self._used.discard(name)
        if obj is not None:
            self._obj_to_name.pop(id(obj), None)

    def __contains__(self, name):
        return name in self._used

    @staticmethod
    def _illegal(name):
        return keyword.iskeyword(name) or name in _RESERVED or name in builtins.__dict__
