"""autograd.Function: custom forward/backward written in Python."""

import functools

from .. import _C
from .._C import Tensor
from .._ops.creation import zeros
from . import _engine, forward_ad
from .grad_mode import no_grad


class FunctionCtx:
    """FunctionCtx()

    The `ctx` passed to forward and backward."""

    def __init__(self):
        self.to_save = ()
        self.saved_versions = ()
        self.non_differentiable = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        # Once the node is attached, it holds the saved tensors (through saved-tensor hooks, as
        # built-in ops save theirs): `_saved_layout` keeps the non-tensor items, `_unpack` reads
        # the tensors back while the node's backward runs.
        self._saved_layout = None
        self._unpack = None

    def save_for_backward(self, *tensors):
        self.to_save = tensors
        self.saved_versions = tuple(t._version if isinstance(t, Tensor) else None for t in tensors)

    @property
    def saved_tensors(self):
        if self._unpack is not None:
            tensors = iter(self._unpack())
            return tuple(next(tensors) if x is _TENSOR else x for x in self._saved_layout)
        if self.to_save is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or if "
                "you need to access saved tensors after calling backward."
            )
        for t, v in zip(self.to_save, self.saved_versions):
            if isinstance(t, Tensor) and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an "
                    f"inplace operation: is at version {t._version}; expected version {v} instead."
                )
        return self.to_save

    def save_for_forward(self, *tensors):
        """save_for_forward(*tensors) -> None

        Keeps tensors for the jvp staticmethod, which reads them as ctx.saved_tensors."""
        self._saved_for_forward = (
            tensors,
            tuple(t._version if isinstance(t, Tensor) else None for t in tensors),
        )

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def mark_dirty(self, *tensors):
        self.dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value


# (class, handler) that ember.func registers: Function.apply on its BatchedTensors
_batched_apply = None


def _set_batched_apply(cls, handler):
    """Registers ember.func's BatchedTensor class and Function.apply on its instances."""
    global _batched_apply
    _batched_apply = (cls, handler)


_TENSOR = object()  # marks a tensor's place in FunctionCtx._saved_layout


def _attach(ctx, name, backward, inputs, outputs, non_differentiable, keep_saved=False):
    """Attaches the node of a Python-defined backward to `outputs`, the node saving the tensors
    of ctx.save_for_backward (so saved-tensor hooks see them); `backward(grads)` reads them
    through ctx.saved_tensors."""
    to_save = ctx.to_save or ()
    ctx._saved_layout = tuple(_TENSOR if isinstance(t, Tensor) else t for t in to_save)

    def run(grads, unpack):
        ctx._unpack = unpack
        try:
            return backward(grads)
        finally:
            ctx._unpack = None

    node = _C._attach_function(
        name,
        run,
        inputs,
        outputs,
        non_differentiable,
        [t for t in to_save if isinstance(t, Tensor)],
    )
    if not keep_saved:
        ctx.to_save = None  # the node holds them now
    return node


def _refused_by_transforms(cls):
    """A user's Function in the old style (forward(ctx, ...), no setup_context): torch.func's
    transforms refuse it, as torch's do. ember's own Functions (linalg, sparse, hooks) stand
    for operators that torch implements in C++ and keep working under the transforms."""
    return cls.setup_context is Function.setup_context and not cls.__module__.startswith("ember.")


class _FunctionMeta(type):
    pass


class Function(metaclass=_FunctionMeta):
    """Function(*args, **kwargs)

    Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `apply`."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        """vmap(info, in_dims, *args) -> (output, out_dims)

        Override to give the Function a batching rule: called with the arguments unwrapped from
        vmap's innermost level, `in_dims` their batch dimensions (None when not batched) and
        `info.batch_size` / `info.randomness`; returns the outputs and their batch dimensions."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        if (
            _engine._transform_count
            and _refused_by_transforms(cls)
            and _engine._transforms_active()
        ):
            raise RuntimeError(
                "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
                "jacrev, ...), it must override the setup_context staticmethod. For more details, "
                "please see https://pytorch.org/docs/main/notes/extending.func.html"
            )
        if forward_ad._is_active():
            ctx = FunctionCtx()
            ctx._keep_saved = True  # jvp reads ctx.saved_tensors after the forward
            return forward_ad._function_apply(
                cls, ctx, args, kwargs, lambda: cls._apply(ctx, args, kwargs)
            )
        return cls._apply(FunctionCtx(), args, kwargs)

    @classmethod
    def _apply(cls, ctx, args, kwargs):
        if _batched_apply is not None:  # vmap's BatchedTensors (ember/func/_vmap_function.py)
            kind, handler = _batched_apply
            if any(type(a) is kind for a in args):
                return handler(cls, ctx, args, kwargs)
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if uses_setup:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, output)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensor_args)):
            return output
        # Outputs that alias inputs get fresh handles so the inputs keep their own history,
        # except inputs marked dirty: modified in place, they are returned as themselves and
        # their history moves onto this node (as an in-place op's does).
        dirty = getattr(ctx, "dirty", ())
        for t in dirty:
            if isinstance(t, Tensor) and t.is_leaf and t.requires_grad:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
        outputs = tuple(
            o.detach()
            if isinstance(o, Tensor)
            and any(o is a for a in tensor_args)
            and not any(o is d for d in dirty)
            else o
            for o in outputs
        )
        arg_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensor_outputs = [o for o in outputs if isinstance(o, Tensor)]
        # The node keeps the outputs' metadata and the inputs' count only: holding the outputs
        # or inputs would keep them alive beside (or despite) what the node saved.
        output_meta = [(o.shape, o.dtype, o.device) for o in tensor_outputs]
        n_args = len(args)

        def backward(grads):
            grads = list(grads)
            if ctx.materialize_grads:
                grads = [
                    zeros(shape, dtype=dtype, device=device) if g is None else g
                    for g, (shape, dtype, device) in zip(grads, output_meta)
                ]
            result = cls.backward(ctx, *grads)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) < n_args:
                raise RuntimeError(
                    f"function {cls.__name__}Backward returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(result)})"
                )
            return tuple(result[i] for i in arg_positions)

        _attach(
            ctx,
            cls.__name__ + "Backward",
            backward,
            tensor_args,
            tensor_outputs,
            list(ctx.non_differentiable),
            keep_saved=getattr(ctx, "_keep_saved", False),
        )
        return outputs if is_tuple else outputs[0]


class _DelayedError(Function):
    """The node once_differentiable puts on a backward's gradients when a double backward could
    reach them: differentiating through it raises torch's error."""

    @staticmethod
    def forward(ctx, n, *tensors):
        # the first n are the gradients handed on; the rest (the grad outputs that require
        # grad) only connect the node to the graph
        return tuple(g.view_as(g) for g in tensors[:n])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(fn):
    """once_differentiable(fn)

    Decorates a Function.backward so that it runs without recording a graph. Its gradients do not
    require grad, unless a grad output does (create_graph=True over a graph that needs it): then
    they carry a node that raises if a double backward goes through them."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled() or not any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        ):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = list((outputs,) if single else outputs)
        where = [
            i
            for i, o in enumerate(outs)
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)
        ]
        if not where:
            return outputs
        linked = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        flagged = _DelayedError.apply(len(where), *(outs[i] for i in where), *linked)
        for i, g in zip(where, flagged if isinstance(flagged, tuple) else (flagged,)):
            outs[i] = g
        return outs[0] if single else tuple(outs)

    return wrapper
