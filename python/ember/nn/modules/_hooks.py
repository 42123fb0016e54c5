"""RemovableHandle and the autograd plumbing behind Module's full backward hooks."""

import warnings
import weakref
from collections import OrderedDict

from ..._C import Tensor
from ...autograd.function import Function


class RemovableHandle:
    """A handle that removes a hook from the dict(s) it was registered in."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        """Unregisters the hook; removing twice is harmless."""
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


class BackwardHookFunction(Function):
    """Passes tensors through; its backward hands the incoming grads to `on_grads`."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


class BackwardHook:
    """Wraps a module's tensor inputs and outputs so full backward (pre) hooks see
    grad_output (before the module's backward) and grad_input (after it), as torch does."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_tensors_index = None

    def _wrap(self, values, on_grads):
        is_tuple = isinstance(values, tuple)
        items = values if is_tuple else (values,)
        index = [i for i, v in enumerate(items) if isinstance(v, Tensor) and v.requires_grad]
        if not index:
            return values, None
        new = BackwardHookFunction.apply(on_grads, *(items[i] for i in index))
        if not isinstance(new, tuple):
            new = (new,)
        out = list(items)
        for i, t in zip(index, new):
            out[i] = t
        return (tuple(out) if is_tuple else out[0]), index

    def _run_hooks(self, grad_inputs):
        for hook in self.hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is None:
                continue
            if len(res) != len(grad_inputs):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got "
                    f"{len(res)}, but expected {len(grad_inputs)}"
                )
            grad_inputs = tuple(res)
        return grad_inputs

    def setup_input_hook(self, args):
        def on_grads(grads):
            full = [None] * self.n_inputs
            for i, g in zip(self.input_tensors_index, grads):
                full[i] = g
            full = self._run_hooks(tuple(full))
            self.grad_outputs = None
            return tuple(full[i] for i in self.input_tensors_index)

        self.n_inputs = len(args)
        wrapped, self.input_tensors_index = self._wrap(tuple(args), on_grads)
        return wrapped

    def setup_output_hook(self, result):
        def on_grads(grads):
            n = len(items)
            full = [None] * n
            for i, g in zip(index, grads):
                full[i] = g
            full = tuple(full)
            for hook in self.pre_hooks:
                res = hook(self.module, full)
                if res is not None:
                    full = tuple(res)
            self.grad_outputs = full
            if self.input_tensors_index is None and self.hooks:
                # No input needs grad: torch calls the hooks now with all-None grad_input.
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module "
                    "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                    "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                    "for more "
                    "details.",
                    stacklevel=5,
                )
                self._run_hooks((None,) * self.n_inputs)
            return tuple(full[i] for i in index)

        items = result if isinstance(result, tuple) else (result,)
        wrapped, index = self._wrap(result, on_grads)
        return wrapped


# Full backward (pre-)hooks common to all modules, run before each module's own.
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()


def register_module_full_backward_pre_hook(hook):
    """register_module_full_backward_pre_hook(hook) -> RemovableHandle

    Registers hook(module, grad_output), run for every module before its own backward pre-hooks
    (see Module.register_full_backward_pre_hook)."""
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook):
    """register_module_full_backward_hook(hook) -> RemovableHandle

    Registers hook(module, grad_input, grad_output), run for every module before its own full
    backward hooks (see Module.register_full_backward_hook)."""
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle
