"""Python views of backward nodes: one class per node name, so type(t.grad_fn).__name__ reads
like PyTorch's ("MulBackward0"); saved-tensor hooks; gradient edges and multi-grad hooks."""

import builtins
import importlib
import threading
import weakref
from typing import NamedTuple

from .. import _C
from .._ops.creation import empty
from .grad_mode import enable_grad

_classes = {}
_live = weakref.WeakValueDictionary()


class Node:
    """A node of the backward graph (`tensor.grad_fn`)."""

    __slots__ = ("_node", "__weakref__", "metadata")

    def __init__(self, node):
        self._node = node
        self.metadata = {}

    def name(self):
        name = self._node.name()
        # torch names the leaf accumulator by its C++ qualified name (the class stays
        # AccumulateGrad)
        return "torch::autograd::AccumulateGrad" if name == "AccumulateGrad" else name

    @property
    def next_functions(self):
        return tuple((wrap_node(n), nr) for n, nr in self._node.next_functions)

    @property
    def variable(self):
        return self._node.variable

    def register_hook(self, fn):
        return self._node._register_hook(fn)

    def register_prehook(self, fn):
        return self._node._register_prehook(fn)

    def __call__(self, *grads):
        return self._node(*grads)

    def __eq__(self, other):
        return isinstance(other, Node) and self._node._id == other._node._id

    def __hash__(self):
        return self._node._id

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


def _class_for(name):
    cls = _classes.get(name)
    if cls is None:
        cls = type(name, (Node,), {"__slots__": ()})
        _classes[name] = cls
    return cls


def wrap_node(node):
    """The Python object for a C++ node (the same object while it is alive)."""
    if node is None:
        return None
    key = node._id
    obj = _live.get(key)
    if obj is None or obj._node._id != key:
        obj = _class_for(node.name())(node)
        _live[key] = obj
    return obj


# ---- saved-tensor hooks (Note [Saved tensor hooks] in csrc/ember/autograd/saved_hooks.h) ------


class saved_tensors_hooks:
    """saved_tensors_hooks(pack_hook, unpack_hook)

    Context manager: while it is active on this thread, every tensor that an operation saves for
    backward is passed to ``pack_hook(tensor)``, and the graph keeps whatever that returns
    instead of the tensor; when backward (or anything else) needs the tensor, ``unpack_hook``
    is called on that object and must return a tensor with the original's content. Contexts
    nest; the innermost pair applies. The pack hook runs under no_grad and must not modify its
    input in place."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """save_on_cpu(pin_memory=False, device_type='cuda')

    Context manager that stores the tensors saved for backward in CPU memory (in pinned memory
    when ``pin_memory``) and moves each back to its device when backward needs it. A tensor
    already on the CPU is kept as is unless ``pin_memory`` asks for a pinned copy."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        # As torch's: memory is pinned only where the device module has a device (never in a
        # CPU-only build, where asking for pinned memory raises); an unknown device type falls
        # back to the cuda module.
        ember = importlib.import_module("ember")
        device_module = getattr(ember, device_type, None) or importlib.import_module("ember.cuda")
        pin = pin_memory and device_module.is_available()

        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = empty(
                tensor.size(), dtype=tensor.dtype, pin_memory=pin and not tensor.is_sparse
            )
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """disable_saved_tensors_hooks(error_message)

    Context manager that forbids saved-tensor hooks on this thread: entering a
    saved_tensors_hooks (or save_on_cpu) inside it raises RuntimeError(error_message), and
    entering it while hooks are active raises the same error."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.maybe_prev_message = _C._saved_tensors_hooks_get_disabled_error_message()
        _C._saved_tensors_hooks_disable(self.error_message)

    def __exit__(self, *args):
        if self.maybe_prev_message is None:
            _C._saved_tensors_hooks_enable()
        else:
            _C._saved_tensors_hooks_disable(self.maybe_prev_message)


class _AllowMutationOnSavedContext:
    """What allow_mutation_on_saved_tensors yields; ``closed`` once its block has exited."""

    def __init__(self):
        self.closed = False


_mutation_ctx_open = False


class allow_mutation_on_saved_tensors:
    """allow_mutation_on_saved_tensors()

    Context manager under which tensors saved for backward may be modified in place: backward
    uses their values at save time. ember saves a copy of each tensor when it is saved (torch
    copies on the first in-place write instead; the results are the same, the memory is not).
    Backward of a graph recorded inside must run inside the same block, as torch requires."""

    def __enter__(self):
        global _mutation_ctx_open
        if _mutation_ctx_open:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        ctx = _AllowMutationOnSavedContext()

        def unpack(copy):
            if ctx.closed:  # torch's class and wording (its message lacks the space)
                raise AssertionError(
                    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                    "in which the graph was originally recorded."
                )
            return copy

        self._ctx = ctx
        self._hooks = saved_tensors_hooks(lambda t: t.clone(), unpack)
        self._hooks.__enter__()
        _mutation_ctx_open = True
        return ctx

    def __exit__(self, *args):
        global _mutation_ctx_open
        self._hooks.__exit__(*args)
        self._ctx.closed = True
        _mutation_ctx_open = False


# ---- gradient edges and multi-grad hooks ------------------------------------------------------


class GradientEdge(NamedTuple):
    """GradientEdge(node, output_nr, ownership_token=None)

    Where a tensor's gradient arrives in the backward graph (get_gradient_edge): the node that
    receives it and which of its inputs. ``autograd.grad(out, inputs=edge)`` gives the gradient
    arriving there, even after the tensor was changed in place."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def _grad_fn_or_accumulator(t):
    """The node a tensor's gradient goes to: its grad_fn, or a leaf's AccumulateGrad."""
    if isinstance(t, GradientEdge):
        return t.node
    node = t.grad_fn
    if node is None and t.requires_grad:
        with enable_grad():
            node = t.view_as(t).grad_fn.next_functions[0][0]
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def get_gradient_edge(tensor):
    """get_gradient_edge(tensor) -> GradientEdge

    The edge of the backward graph at which ``tensor``'s gradient is computed:
    ``autograd.grad(loss, get_gradient_edge(x))`` equals ``autograd.grad(loss, x)``."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    return GradientEdge(_grad_fn_or_accumulator(tensor), tensor.output_nr)


def increment_version(tensor):
    """increment_version(tensor) -> None

    Bumps the version counter of a tensor (or of each tensor of an iterable), as an in-place
    change does: for a custom Function that changed an input in place behind autograd's back,
    so a backward reading a saved copy of it raises."""
    for t in (tensor,) if isinstance(tensor, _C.Tensor) else tensor:
        _C._bump_version(t)


class _MultiHandle:
    """The handle register_multi_grad_hook returns: remove() removes every tensor's hook."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def _task_id():
    task = _C._current_graph_task_id()
    if task == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """register_multi_grad_hook(tensors, fn, *, mode="all") -> handle

    mode "all": once per backward, after the gradients of every tensor of ``tensors`` that this
    backward computes, ``fn(grads)`` with None for the others. mode "any": ``fn(grad)`` with the
    first gradient computed of any of them. ``handle.remove()`` unregisters."""
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        fired = set()  # graph tasks in which fn ran

        def first(grad):
            task = _task_id()
            with lock:
                if task in fired:
                    return
                fired.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))

    nodes = [_grad_fn_or_accumulator(t)._node for t in tensors]
    pending = {}  # graph task -> [gradients so far, how many this task computes, how many came]

    def hook_for(i):
        def hook(grad):
            task = _task_id()
            with lock:
                entry = pending.get(task)
                if entry is None:
                    expected = builtins.sum(map(_C._will_engine_execute_node, nodes))
                    entry = pending[task] = [[None] * len(nodes), expected, 0]
                entry[0][i] = grad
                entry[2] += 1
                done = entry[2] == entry[1]
                if done:
                    del pending[task]
            if done:
                fn(entry[0])

        return hook

    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))
