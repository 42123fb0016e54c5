"""Pickling ember's public callables by name. The C guards in front of ember's functions
(ember._C._ArgGuard, _SparseGuard, ...) are not Python functions, which pickle stores as
globals by itself: `torch.save(model)` of a module holding `self.act = F.gelu` needs this, as
torch's builtins pickle by reference."""

import importlib
import pickle


def reduce_function(fn):
    """The __reduce__ of a guard: a call of load_function with its public qualified name."""
    from .fx._codegen import ember_qualified_name

    name = ember_qualified_name(fn)
    if name is None:
        raise TypeError(
            f"cannot pickle '{type(fn).__name__}' object: {fn!r} has no public ember name"
        )
    return (load_function, (name,))


def load_function(name):
    """The callable `name` (``ember.nn.functional.gelu``) names; only attributes of ember."""
    parts = name.split(".") if isinstance(name, str) else []
    if not parts or parts[0] != "ember" or not all(p.isidentifier() for p in parts):
        raise pickle.UnpicklingError(f"not an ember name: {name!r}")
    obj = importlib.import_module("ember")
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj
