"""ember.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

A checkpointed region keeps only its inputs: the activations inside it are dropped after the
forward and recomputed, with the forward's RNG state replayed (so dropout draws the same masks),
when the backward reaches the region.

Two variants, as torch's:
- reentrant (`use_reentrant=True`): an autograd.Function whose forward runs under no_grad and
  whose backward recomputes the region and runs a nested backward through it. Gradients reach
  the parameters used inside only when some tensor input requires grad, and `autograd.grad`
  through the region does not reach them (they accumulate into `.grad`), as in torch.
- non-reentrant (`use_reentrant=False`): the region runs once, with grad, under
  saved-tensor hooks (ember.autograd.graph.saved_tensors_hooks) whose pack keeps a small holder
  in place of each tensor the region's ops save. The first unpack in backward reruns the region
  (replaying RNG and autocast) under hooks that fill the holders with the recomputed tensors, and
  stops as soon as the last one is filled (early stop). The region's inputs are saved through a
  no-op Function, so an enclosing checkpoint drops and recomputes them too (nesting). The graph
  is the forward's own: autograd.grad, keyword arguments, nested outputs, parameters read
  through closures and double backward work as without checkpointing.
"""

import contextlib
import warnings
import weakref

from .. import _C
from .._C import Tensor
from .._ops.creation import empty
from .._process import get_autocast_dtype, is_autocast_enabled
from ..amp import autocast
from ..autograd._engine import backward as _autograd_backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..random import get_rng_state, set_rng_state

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "noop_context_fn",
    "detach_variable",
    "set_checkpoint_early_stop",
]

_DETERMINISM_MODES = ("default", "none")


class CheckpointError(RuntimeError):
    """CheckpointError(message)

    Raised when the recomputation of a checkpointed region does not match its forward."""


def noop_context_fn():
    """noop_context_fn() -> Tuple[ContextManager, ContextManager]

    The default `context_fn` of checkpoint: two null contexts (forward, recomputation)."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """detach_variable(inputs) -> Tuple

    Detaches each tensor of the tuple `inputs`, keeping its requires_grad flag."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad_(x.requires_grad)
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


# ---- small pytree over tuples, lists and dicts ------------------------------------------------


def _flatten(obj, leaves):
    """Appends the tensors of `obj` to `leaves`; returns a spec to rebuild `obj` from them (the
    spec keeps container types and non-tensor values, never the tensors)."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return None
    if isinstance(obj, (tuple, list)):
        return (type(obj), [_flatten(x, leaves) for x in obj])
    if isinstance(obj, dict):
        return (type(obj), {k: _flatten(v, leaves) for k, v in obj.items()})
    return ("const", obj)


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    kind, specs = spec
    if kind == "const":
        return specs
    if issubclass(kind, dict):
        return kind({k: _unflatten(s, it) for k, s in specs.items()})
    items = [_unflatten(s, it) for s in specs]
    if hasattr(kind, "_fields"):  # a namedtuple
        return kind(*items)
    return kind(items)


# ---- RNG and autocast state ------------------------------------------------------------------


class _RegionState:
    """What a recomputation needs to replay the forward's conditions."""

    def __init__(self, preserve_rng_state):
        self.rng = get_rng_state() if preserve_rng_state else None
        self.autocast = (is_autocast_enabled("cpu"), get_autocast_dtype("cpu"))

    @contextlib.contextmanager
    def replay(self):
        outer = get_rng_state() if self.rng is not None else None
        try:
            if self.rng is not None:
                set_rng_state(self.rng)
            enabled, dtype = self.autocast
            with enable_grad(), autocast("cpu", dtype=dtype, enabled=enabled):
                yield
        finally:
            if outer is not None:
                set_rng_state(outer)


def _meta(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


# ---- reentrant variant -----------------------------------------------------------------------


class CheckpointFunction(Function):
    """CheckpointFunction(*args, **kwargs)

    The reentrant checkpoint: forward under no_grad, recomputation and a nested backward in
    backward (`CheckpointFunction.apply(function, preserve_rng_state, *args)`)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=4
            )
        ctx.run_function = run_function
        ctx.region = _RegionState(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with ctx.region.replay():
            detached = detach_variable(tuple(inputs))
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [
            (o, g)
            for o, g in zip(outputs, grads)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if not with_grad:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _autograd_backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


# ---- non-reentrant variant -------------------------------------------------------------------


class _StopRecomputation(Exception):
    pass


class _Holder:
    """What the graph keeps in place of a tensor saved inside a checkpointed region."""

    __slots__ = ("__weakref__",)


_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """set_checkpoint_early_stop(enable)

    Context manager: whether non-reentrant checkpoints stop a recomputation as soon as every
    tensor the backward needs was recomputed (the default), overriding their `early_stop`."""
    prev = _early_stop[0]
    _early_stop[0] = enable
    try:
        yield
    finally:
        _early_stop[0] = prev


def _pop_hooks_above(pack):
    """Pops the saved-tensor hooks that code inside a region pushed and left (an exception,
    such as the early stop, unwound it before its exit), down to the region's own."""
    while True:
        top = _C._top_saved_tensors_hooks()
        if top is None or top[0] is pack:
            return
        _C._pop_saved_tensors_hooks()
        on_abandon = getattr(top[0], "_on_abandon", None)  # FSDP reshards its module
        if on_abandon is not None:
            on_abandon()


class _NoopSaveInputs(Function):
    """Saves a region's tensor inputs for its recomputation, as any op saves tensors: through
    the saved-tensor hooks active around the region, so that an enclosing checkpoint drops and
    recomputes them too (nested checkpoints)."""

    @staticmethod
    def forward(ctx, dummy, *inputs):
        ctx.save_for_backward(*inputs)
        return empty(0)

    @staticmethod
    def backward(ctx, *grads):
        raise AssertionError("checkpoint: the input saver is never differentiated")


class _Frame:
    """One checkpointed call: how to rerun it and the holders of what its forward saved."""

    def __init__(self, function, in_spec, state, recompute_ctx, check, debug, early_stop):
        self.function = function
        self.in_spec = in_spec
        self.state = state
        self.recompute_ctx = recompute_ctx
        self.check = check
        self.debug = debug
        self.early_stop = early_stop
        self.weak_holders = []
        self.forward_meta = []
        self.recomputed = weakref.WeakKeyDictionary()  # holder -> recomputed tensor
        self.input_saver = None
        self.recomputations = 0

    def pack(self, tensor):
        holder = _Holder()
        self.weak_holders.append(weakref.ref(holder))
        self.forward_meta.append(_meta(tensor))
        return holder

    def unpack(self, holder):
        if holder not in self.recomputed:
            self.recompute()
        if holder not in self.recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was not "
                "recomputed. The recomputation saved fewer tensors than the original forward."
            )
        return self.recomputed.pop(holder)

    def _mismatch(self, idx, tensor):
        details = (
            f"tensor at position {idx}:\nsaved metadata: {self.forward_meta[idx]}\n"
            f"recomputed metadata: {_meta(tensor)}\n"
        )
        hint = "" if self.debug else "\n(pass debug=True to checkpoint for more details)"
        return CheckpointError(
            "torch.utils.checkpoint: Recomputed values for the following tensors have different "
            "metadata than during the forward pass.\n" + details + hint
        )

    def recompute(self):
        inputs = self.input_saver.grad_fn._node._saved_tensors()
        call_args, call_kwargs = _unflatten(self.in_spec, iter(inputs))
        self.recomputations += 1
        count = [0]
        n = len(self.weak_holders)
        stop = self.early_stop

        def pack(tensor):
            idx = count[0]
            count[0] += 1
            if idx >= n:
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass."
                )
            if self.check and _meta(tensor) != self.forward_meta[idx]:
                raise self._mismatch(idx, tensor)
            holder = self.weak_holders[idx]()
            if holder is not None:  # None: the node that saved it is gone
                self.recomputed[holder] = tensor.detach()
            if stop and count[0] == n:
                raise _StopRecomputation
            return None

        def unpack(_):
            raise CheckpointError("torch.utils.checkpoint: a recomputed graph is never run")

        from ..autograd.graph import saved_tensors_hooks

        try:
            with self.state.replay(), self.recompute_ctx, saved_tensors_hooks(pack, unpack):
                try:
                    self.function(*call_args, **call_kwargs)
                finally:
                    _pop_hooks_above(pack)
        except _StopRecomputation:
            return
        if self.check and count[0] != n:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {n}\n"
                f"Number of tensors saved during recomputation: {count[0]}"
            )


def _checkpoint_without_reentrant(
    function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
):
    from ..autograd.graph import saved_tensors_hooks

    fwd_ctx, recompute_ctx = context_fn()
    if not _C.is_grad_enabled():
        with fwd_ctx:
            return function(*args, **kwargs)
    arg_tensors = []
    in_spec = _flatten((tuple(args), dict(kwargs)), arg_tensors)
    frame = _Frame(
        lambda *a, **k: function(*a, **k),
        in_spec,
        _RegionState(preserve),
        recompute_ctx,
        determinism_check == "default",
        debug,
        early_stop and _early_stop[0],
    )
    dummy = empty(0, requires_grad=True)
    frame.input_saver = _NoopSaveInputs.apply(dummy, *arg_tensors)
    pack = frame.pack
    with saved_tensors_hooks(pack, frame.unpack), fwd_ctx:
        try:
            out = function(*args, **kwargs)
        finally:
            _pop_hooks_above(pack)
    return out


# ---- public entry points ---------------------------------------------------------------------


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=noop_context_fn,
    determinism_check="default",
    debug=False,
    early_stop=True,
    **kwargs,
):
    """checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default", debug=False, early_stop=True, preserve_rng_state=True, **kwargs)

    Runs `function(*args, **kwargs)` without keeping the activations inside it; the backward
    recomputes them (replaying the RNG state when `preserve_rng_state`), giving the gradients
    that the plain call gives. Pass `use_reentrant` explicitly (a warning says so otherwise;
    the default is then True, as torch's).
    """  # noqa: E501
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check not in _DETERMINISM_MODES:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_MODES)}, "
            f"but got {determinism_check}"
        )
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
    )


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs)

    Runs the modules or functions of `functions` (an nn.Sequential or a list) in order,
    checkpointing each of the first `segments - 1` chunks; the last chunk keeps its activations.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details "
            "on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if not isinstance(functions, (list, tuple)) and hasattr(functions, "children"):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
