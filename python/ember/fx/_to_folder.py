"""GraphModule.to_folder: a GraphModule written out as an importable Python package."""

import os

from .. import _C
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ._codegen import shown_root

__all__ = ["write_folder"]


def _module_source(name, mod):
    """``ember.nn.<repr>`` where evaluating that rebuilds a module of the same type, else None."""
    import ember

    cls = type(mod)
    if (
        not cls.__module__.startswith("ember.nn.modules")
        or getattr(ember.nn, cls.__name__, None) is not cls
    ):
        return None
    if any(True for _ in mod.children()):
        return None
    src = f"ember.nn.{mod!r}"
    try:
        rebuilt = eval(src, {"ember": ember})  # noqa: S307 (the repr of an ember layer)
    except Exception:  # noqa: BLE001 (a repr that is not Python: pickled instead)
        return None
    return src if type(rebuilt) is cls else None


def write_folder(gm, folder, module_name):
    """Writes ``__init__.py``, ``module.py`` (class ``module_name``) and the weights
    (``state_dict.pt``, pickled ``<name>.pt`` for submodules without a rebuildable repr and for
    plain tensor attributes) into ``folder``, created if needed."""
    import ember

    os.makedirs(folder, exist_ok=True)
    ember.save(gm.state_dict(), os.path.join(folder, "state_dict.pt"))
    lines = [
        "import math",
        "import operator",
        "",
        "import ember",
        # forward's code names torch's functions where the program runs ember as torch
        *(["import torch"] if shown_root() == "torch" else []),
        "from ember.nn import *  # noqa: F401,F403",
        "",
        "",
        f"class {module_name}(ember.nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
    ]
    for name, child in gm.named_children():
        src = _module_source(name, child)
        if src is None:
            ember.save(child, os.path.join(folder, f"{name}.pt"))
            src = f"ember.load(r'{os.path.join(folder, name + '.pt')}', weights_only=False)"
        lines.append(f"        self.{name} = {src}")
    for name, p in gm.named_parameters(recurse=False):
        lines.append(
            f"        self.{name} = ember.nn.Parameter(ember.empty({list(p.shape)}, "
            f"dtype=ember.{str(p.dtype).split('.')[-1]}), requires_grad={p.requires_grad})"
        )
    for name, b in gm.named_buffers(recurse=False):
        lines.append(
            f"        self.register_buffer({name!r}, ember.empty({list(b.shape)}, "
            f"dtype=ember.{str(b.dtype).split('.')[-1]}))"
        )
    for name, value in vars(gm).items():
        if isinstance(value, _C.Tensor) and not isinstance(value, Parameter):
            ember.save(value, os.path.join(folder, f"{name}.pt"))
            lines.append(
                f"        self.{name} = ember.load(r'{os.path.join(folder, name + '.pt')}')"
            )
        elif isinstance(value, Module):
            continue
    lines.append(
        f"        self.load_state_dict(ember.load(r'{os.path.join(folder, 'state_dict.pt')}'))"
    )
    lines.append("")
    code = gm.code.strip("\n")
    lines += ["    " + ln if ln.strip() else "" for ln in code.splitlines()]
    with open(os.path.join(folder, "module.py"), "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    with open(os.path.join(folder, "__init__.py"), "w") as f:
        f.write("from .module import *  # noqa: F401,F403\n")
