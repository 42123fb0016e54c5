"""The import hook behind ``python -m ember.run``: ``torch`` and every ``torch.<x>`` import
resolves to ``ember`` / ``ember.<x>``, in every module of the program. ``functorch`` (torch's
companion package, which imports torch's internals) resolves to ``ember._functorch_alias``: the
submodules torch's docs use (``functorch.experimental.control_flow``, ``functorch.compile``)
exist there and any other ``functorch.<x>`` is a ModuleNotFoundError naming it.

This file imports nothing from ember at module level so that the opt-in startup hook
(``ember/_dropin/sitecustomize.py``) can load it by path, and ember itself is imported only when
the program first imports torch.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types


class _Loader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _AttributeModule(types.ModuleType):
    """A module standing for an attribute of an ember module that torch has as a submodule
    (``torch.backends.cudnn``, ``torch.cuda.amp``): reads and writes go to the attribute, so
    ``import torch.backends.cudnn as cudnn; cudnn.benchmark = True`` sets ember's flag."""

    def __init__(self, name, target):
        super().__init__(name)
        object.__setattr__(self, "_ember_target", target)

    def __getattr__(self, key):
        return getattr(object.__getattribute__(self, "_ember_target"), key)

    def __setattr__(self, key, value):
        if key.startswith("__") and key.endswith("__"):
            super().__setattr__(key, value)
        else:
            setattr(object.__getattribute__(self, "_ember_target"), key, value)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_ember_target"))


def _attribute_module(fullname, target_name):
    """The _AttributeModule for `target_name` when it is an attribute (not a module) of its
    parent ember module, else None."""
    parent_name, _, child = target_name.rpartition(".")
    try:
        parent = importlib.import_module(parent_name)
    except ImportError:
        return None
    target = getattr(parent, child, None)
    if (
        target is None
        or isinstance(target, types.ModuleType)
        or callable(target)
        and not (isinstance(target, type))
    ):
        return None
    return _AttributeModule(fullname, target)


# the top-level names the finder aliases -> the ember package standing for each
_ALIASED = {"torch": "ember", "functorch": "ember._functorch_alias"}


def _target(fullname):
    """The ember module name `fullname` aliases, or None when it is not an aliased name."""
    top, dot, rest = fullname.partition(".")
    base = _ALIASED.get(top)
    return None if base is None else base + dot + rest


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch[.x]`` as the already-importable module ``ember[.x]`` (and ``functorch[.x]``
    as ``ember._functorch_alias[.x]``)."""

    def find_spec(self, fullname, path=None, target=None):
        target_name = _target(fullname)
        if target_name is None:
            return None
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name and (target_name == e.name or target_name.startswith(e.name + ".")):
                module = _attribute_module(fullname, target_name) if e.name == target_name else None
                if module is not None:
                    return importlib.util.spec_from_loader(
                        fullname, _Loader(module), origin=target_name, is_package=True
                    )
                has = (
                    "provides functorch, functorch.compile, functorch.experimental and "
                    "functorch.experimental.control_flow only"
                    if fullname.startswith("functorch.")
                    else f"has no '{target_name}'"
                )
                raise ModuleNotFoundError(
                    f"No module named '{fullname}': ember, which stands in for torch here "
                    f"(python -m ember.run / EMBER_AS_TORCH=1), {has}",
                    name=fullname,
                ) from None
            raise
        # is_package: ember modules that torch has as packages (torch.cuda, with torch.cuda.amp
        # below it) get an empty __path__ where they have none, so that their submodules import.
        return importlib.util.spec_from_loader(
            fullname, _Loader(module), origin=target_name, is_package=True
        )


def installed():
    """Whether the alias finder is on sys.meta_path."""
    return any(isinstance(f, TorchAliasFinder) for f in sys.meta_path)


def install():
    """Puts the alias finder first on sys.meta_path (once). Raises RuntimeError if the real torch
    was already imported: modules holding it would not see ember."""
    if installed():
        return
    real = sorted(
        name
        for name, mod in sys.modules.items()
        if (name == "torch" or name.startswith("torch."))
        and not getattr(mod, "__name__", "").startswith("ember")
    )
    if real:
        raise RuntimeError(
            f"ember.run: torch is already imported ({real[0]}); the alias must be installed "
            "before the program's first import of torch"
        )
    sys.meta_path.insert(0, TorchAliasFinder())
