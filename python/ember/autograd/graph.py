"""Python views of backward nodes: one class per node name, so type(t.grad_fn).__name__ reads
like PyTorch's ("MulBackward0")."""

import importlib
import weakref

from .. import _C
from .._ops.creation import empty

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
