"""How calls that bypass ember.overrides' patching still reach vmap's batching rules.

Note [References taken before vmap]: vmap sees an operation through ember.overrides, which
swaps the public functions and Tensor's attributes for routing wrappers while a mode is active.
A reference taken before that (`from ember import relu`, `Tensor.sum`, a function bound in a
closure or a default argument, a module captured at import) holds the original callable, which
is not swapped: called with a BatchedTensor it never reached the rules. Those originals are
of three kinds, and each now hands BatchedTensor calls to the rules:

- the argument-parser guards (ember._C._ArgGuard: ember.sum, ember.add, ember.linalg.* ...):
  the binding rejects the BatchedTensor with a TypeError, whose slow path is Python
  (ember/_argparse.py); it calls `call` below, which routes the call to the active modes;
- ember's Python functions (F.relu, F.softmax, ...): they run their own body, which calls the
  extension's functions (`_C.relu`, `_C._nn.softmax`) by attribute; while a vmap runs, those
  attributes are routing wrappers too (`patched_C`), each with the rule of the public function
  of its name;
- the original callables themselves: every object a rule's public function wraps (its
  `__wrapped__` chain: guards, the extension's function) gets the same rule, so a call that
  reaches vmap through any of them finds it.

Not covered yet: the sparse and complex guards (ember._C._SparseGuard / _ComplexGuard, in front
of ember.relu and most Tensor methods) and the functions that are bare extension functions
(F.linear) are C++ callables without a Python failure path: a reference to one of them taken
before vmap still raises TypeError on a BatchedTensor, unless it is the function passed to vmap
(vmap(ember.relu) routes it). Closing that needs the guards' C++ check to know BatchedTensor.
"""

from .. import _C, _argparse, overrides

_c_names = []  # (namespace, name, original) of ember._C's functions that have a rule


# ember._C._nn kernels that ember.nn.functional calls with the leading arguments of the public
# function of that name (the tensor, then dim / scalars), so that function's rule fits them;
# others (the losses' kernels take a reduction enum in another place) get no rule.
_SAME_CALL = {
    name: name
    for name in (
        "softmax log_softmax softmin gelu silu mish elu selu celu leaky_relu hardtanh relu6 "
        "softplus hardswish hardsigmoid softsign tanhshrink softshrink hardshrink threshold "
        "glu normalize"
    ).split()
}
_SAME_CALL["log_sigmoid"] = "logsigmoid"
# the in-place activations (F.elu_ calls _C._nn.elu_ with its own arguments)
_SAME_CALL.update(
    (n, n)
    for n in "elu_ celu_ selu_ leaky_relu_ hardtanh_ relu_ relu6_ silu_ mish_ threshold_ "
    "hardswish_ hardsigmoid_ rrelu_".split()
)

# ember._C's private kernels that public Python functions call with the public function's own
# arguments (ember.where -> _C._where): they take that function's rule.
_PRIVATE_SAME_CALL = {"_where": ("ember", "where"), "einsum": ("ember", "einsum")}
# private kernels whose first argument is the tensor a creation-like result copies the shape of
_PRIVATE_LIKE = ("_empty_like_format",)

# ember's modules whose Python functions call bindings they imported by name (`from .._C import
# log` in ember.special): while the outermost vmap runs, those names are routing wrappers too.
_MODULE_PREFIXES = ("ember._ops.", "ember.special", "ember.nn.functional", "ember.linalg")


def _batched_in(args, kwargs):
    from ._vmap import BatchedTensor

    for a in (*args, *kwargs.values()):
        if type(a) is BatchedTensor:
            return True
        if type(a) in (list, tuple) and any(type(b) is BatchedTensor for b in a):
            return True
    return False


def call(fn, args, kwargs):
    """A guarded function's call that its binding rejected: the modes' when it carries a
    BatchedTensor under an active vmap, else NotImplemented (the binding's error stands)."""
    if not overrides._stack() or not _batched_in(args, kwargs):
        return NotImplemented
    return overrides._route(fn, args, kwargs)


def install(rules):
    """Aliases every object along each rule's `__wrapped__` chain to the rule, lists ember._C's
    functions with a rule, and installs the argument parser's hook (once, with the rules)."""
    for obj in list(rules._KEEP):
        key = id(obj)
        if key not in rules.RULES:
            continue
        inner = getattr(obj, "__wrapped__", None)
        seen = 0
        while inner is not None and seen < 8:
            if id(inner) not in rules.RULES:
                rules.RULES[id(inner)] = rules.RULES[key]
                rules._NAMES[id(inner)] = rules._NAMES.get(key)
                rules._KEEP.append(inner)
            inner = getattr(inner, "__wrapped__", None)
            seen += 1
    import ember

    from ..nn import functional as F

    for ns, public in ((_C, ember), (_C._nn, F)):
        for name, value in list(vars(ns).items()):
            if name.startswith("_") or isinstance(value, type) or not callable(value):
                continue
            if type(value).__name__ == "_ForeignGuard":  # DTensor's guard (its kernel's rule)
                value = value.__wrapped__
            if id(value) not in rules.RULES:
                if ns is _C or name not in _SAME_CALL:
                    continue
                # the kernel behind the public function of that name (F.softmax calls
                # _C._nn.softmax): its rule, which calls the kernel the same way
                front = overrides.original(getattr(public, _SAME_CALL.get(name, name), None))
                rule = rules.RULES.get(id(front)) if front is not None else None
                if rule is None:
                    continue
                rules.RULES[id(value)] = rule
                rules._NAMES[id(value)] = rules._NAMES.get(id(front))
                rules._KEEP.append(value)
            _c_names.append((ns, name, value))
    for name, (owner, public_name) in _PRIVATE_SAME_CALL.items():
        value = getattr(_C, name, None)
        front = overrides.original(getattr(ember, public_name, None))
        rule = rules.RULES.get(id(front))
        if value is not None and rule is not None:
            rules.RULES[id(value)] = rule
            rules._NAMES[id(value)] = f"ember.{public_name}"
            rules._KEEP.append(value)
            _c_names.append((_C, name, value))
    for name in _PRIVATE_LIKE:
        value = getattr(_C, name, None)
        if value is not None:
            rules.RULES[id(value)] = rules._like
            rules._NAMES[id(value)] = f"ember._C.{name}"
            rules._KEEP.append(value)
            _c_names.append((_C, name, value))
    _collect_module_names()
    _argparse.set_foreign(call)


def _collect_module_names():
    """(module, name, binding) for the bindings with a rule that ember's op modules hold by name."""
    import sys

    ids = {id(value) for _, _, value in _c_names}
    for modname, mod in list(sys.modules.items()):
        if mod is None or not modname.startswith(_MODULE_PREFIXES):
            continue
        for name, value in list(vars(mod).items()):
            if id(value) in ids and type(value).__name__ == "nb_func":
                _c_names.append((mod, name, value))


class patched_C:
    """ember._C's functions that have a rule, as routing wrappers while the outermost vmap runs
    (ember's Python functions call them by attribute)."""

    def __enter__(self):
        self.saved = [(ns, name, vars(ns).get(name)) for ns, name, _ in _c_names]
        for ns, name, value in _c_names:
            setattr(ns, name, overrides._cached(value, overrides._function_wrapper))

    def __exit__(self, *exc):
        for ns, name, value in self.saved:  # forward_ad may have its own wrappers there
            setattr(ns, name, value)
