"""Module.set_submodule: module surgery by dotted path (kept apart from module.py, which is at its
size limit)."""

__all__ = ["set_submodule"]


def set_submodule(self, target, module, strict=False):
    """set_submodule(target, module, strict=False) -> None

    Sets the submodule at the dotted path `target` (`"block.2"`) to `module`. The modules along
    the path must exist; with strict=True the last one must exist too. Whatever is replaced must
    be a module."""
    from .module import Module

    if target == "":
        raise ValueError("Cannot set the submodule without a target name!")
    if not isinstance(module, Module):
        raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
    *path, name = target.split(".")
    parent = self.get_submodule(".".join(path))
    if strict and not hasattr(parent, name):
        raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
    if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
        raise AttributeError("`" + name + "` is not an nn.Module")
    setattr(parent, name, module)
