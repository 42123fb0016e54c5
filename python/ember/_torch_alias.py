"""The import hook behind ``python -m ember.run``: ``torch`` and every ``torch.<x>`` import
resolves to ``ember`` / ``ember.<x>``, in every module of the program.

This file imports nothing from ember at module level so that the opt-in startup hook
(``ember/_dropin/sitecustomize.py``) can load it by path, and ember itself is imported only when
the program first imports torch.
"""

import importlib
import importlib.abc
import importlib.util
import sys


class _Loader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch[.x]`` as the already-importable module ``ember[.x]``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target_name = "ember" + fullname[len("torch") :]
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name and (target_name == e.name or target_name.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"No module named '{fullname}': ember, which stands in for torch here "
                    f"(python -m ember.run / EMBER_AS_TORCH=1), has no '{target_name}'",
                    name=fullname,
                ) from None
            raise
        return importlib.util.spec_from_loader(fullname, _Loader(module), origin=target_name)


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
