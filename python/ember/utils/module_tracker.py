"""torch.utils.module_tracker: which nn.Modules are running, forward or backward."""

import weakref

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """ModuleTracker()

    A context manager: inside it, ``parents`` is the set of the names of the modules whose
    forward (or backward) is running, always with ``"Global"``. A module is named by its class
    (``"Sequential"``) and its children by their path below it (``"Sequential.0"``), as torch's.
    A module enters the backward when the gradient of one of its outputs is computed and leaves
    it once its inputs' gradients are; ``is_bw`` says whether a backward runs on this thread."""

    def __init__(self):
        self._fw = set()
        self._bw = set()
        self._known = weakref.WeakKeyDictionary()
        self._seen = weakref.WeakSet()
        self._handles = []

    @property
    def parents(self):
        if self._bw and not self.is_bw:
            self._bw.clear()  # torch resets them when the backward ends
        return {"Global"} | self._fw | self._bw

    @property
    def is_bw(self):
        from ..autograd import _engine

        return bool(getattr(_engine._calls, "stack", None))

    def _name(self, mod):
        name = self._known.get(mod)
        if name is None:
            name = self._known[mod] = type(mod).__name__
        if mod not in self._seen:
            self._seen.add(mod)
            for child_name, child in mod.named_children():
                self._known[child] = f"{name}.{child_name}"
                self._name(child)
        return name

    def _grad_hooks(self, value, on_all):
        """``on_all`` once every tensor of ``value`` that requires grad has its gradient."""
        from . import _pytree

        tensors = [t for t in _pytree.tree_leaves(value) if getattr(t, "requires_grad", False)]
        pending = [len(tensors)]

        def hook(grad):
            pending[0] -= 1
            if pending[0] == 0:
                on_all()

        for t in tensors:
            if t.grad_fn is not None or t.is_leaf:
                self._handles.append(t.register_hook(hook))

    def _pre(self, mod, args):
        name = self._name(mod)
        self._fw.add(name)
        self._grad_hooks(args, lambda: self._bw.discard(name))

    def _post(self, mod, args, output):
        name = self._name(mod)
        self._fw.discard(name)
        self._grad_hooks(output, lambda: self._bw.add(name))

    def __enter__(self):
        from ..nn.modules.module import (
            register_module_forward_hook,
            register_module_forward_pre_hook,
        )

        self._handles = [
            register_module_forward_pre_hook(self._pre),
            register_module_forward_hook(self._post),
        ]
        return self

    def __exit__(self, *args):
        for handle in self._handles:
            handle.remove()
        self._handles = []
