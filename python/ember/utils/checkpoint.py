"""ember.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

A checkpointed region keeps only its inputs: the activations inside it are dropped after the
forward and recomputed, with the forward's RNG state replayed (so dropout draws the same masks),
when the backward reaches the region.

Two variants, as torch's:
- reentrant (`use_reentrant=True`): an autograd.Function whose forward runs under no_grad and
  whose backward recomputes the region and runs a nested backward through it. Gradients reach
  the parameters used inside only when some tensor input requires grad, and `autograd.grad`
  through the region does not reach them (they accumulate into `.grad`), as in torch.
- non-reentrant (`use_reentrant=False`): ember has no saved-tensor hooks, so the region's forward
  runs with grad once to find every tensor requiring grad that it reads (its tensor arguments,
  and the leaves, such as parameters, that its graph reaches), then that graph is dropped and an
  autograd.Function takes those tensors as inputs. Its backward recomputes the region and
  differentiates the recomputed outputs with `autograd.grad`, so `autograd.grad`, keyword
  arguments, nested structures of outputs and parameters not passed as arguments all work.
  The nested backward frees the recomputed graph as it goes, so a region that reads a non-leaf
  tensor requiring grad through a closure (not as an argument) must not share that tensor's
  history with the rest of the graph: pass such tensors as arguments.
"""

import contextlib
import warnings

from .. import _C
from .._C import Tensor
from .._process import get_autocast_dtype, is_autocast_enabled
from ..amp import autocast
from ..autograd._engine import _accumulates_into_leaves
from ..autograd._engine import backward as _autograd_backward
from ..autograd._engine import grad as _autograd_grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..random import get_rng_state, set_rng_state

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "noop_context_fn",
    "detach_variable",
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
    return (tuple(t.shape), t.dtype, t.device)


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


def _reached_leaves(outputs, arg_tensors):
    """The leaves requiring grad that the graph of `outputs` reaches, stopping at the tensor
    arguments' own nodes."""
    stop = {(t.grad_fn._node._id, t.output_nr) for t in arg_tensors if t.grad_fn is not None}
    seen = set()
    stack = [(o.grad_fn._node, o.output_nr) for o in outputs if o.grad_fn is not None]
    leaves = []
    while stack:
        node, nr = stack.pop()
        if (node._id, nr) in stop:
            continue
        if node._id in seen:
            continue
        seen.add(node._id)
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
            continue
        stack.extend((n, i) for n, i in node.next_functions if n is not None)
    # Outputs that are leaves themselves (the function returned a parameter).
    leaves.extend(o for o in outputs if o.grad_fn is None and o.requires_grad)
    return leaves


class _NonReentrantCheckpoint(Function):
    """The non-reentrant checkpoint's node: `apply(region, *inputs)` returns the outputs the
    region computed (detached), and its backward recomputes the region."""

    @staticmethod
    def forward(ctx, region, *inputs):
        ctx.region = region
        ctx.save_for_backward(*inputs)
        ctx.mark_non_differentiable(
            *[o for o, rg in zip(region.outputs, region.out_requires_grad) if not rg]
        )
        outs = region.outputs
        region.outputs = None  # the node holds them only through the caller's result
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        region = ctx.region
        inputs = ctx.saved_tensors
        n_args = region.n_args
        with region.state.replay(), region.recompute_ctx:
            args = [x.detach().requires_grad_(x.requires_grad) for x in inputs[:n_args]]
            call_args, call_kwargs = _unflatten(region.in_spec, iter(args))
            out = region.function(*call_args, **call_kwargs)
        flat = []
        _flatten(out, flat)
        if region.check and [_meta(t) for t in flat] != region.out_meta:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n"
                f"forward: {region.out_meta}\nrecomputed: {[_meta(t) for t in flat]}"
                + ("" if region.debug else "\n(pass debug=True for the region's details)")
            )
        pairs = [(o, g) for o, g in zip(flat, grads) if o.requires_grad and g is not None]
        result = [None] * len(inputs)
        if not pairs:
            return (None,) + tuple(result)
        outs, gouts = [o for o, _ in pairs], [g for _, g in pairs]
        if _accumulates_into_leaves():
            # Within a backward() that accumulates into every leaf: the leaves the region reads
            # (parameters) accumulate their gradients as the nested backward reaches them, so
            # the region's parameter gradients never all exist at once.
            arg_targets = [t for t in args if t.requires_grad]
            _autograd_backward(
                outs,
                gouts,
                create_graph=_C.is_grad_enabled(),
                inputs=arg_targets + list(inputs[n_args:]),
            )
            for i, t in enumerate(args):
                result[i] = t.grad if t.requires_grad else None
            return (None,) + tuple(result)
        targets = [(i, t) for i, t in enumerate(args) if t.requires_grad]
        targets += [(n_args + j, t) for j, t in enumerate(inputs[n_args:])]
        if targets:
            gs = _autograd_grad(
                outs,
                [t for _, t in targets],
                gouts,
                create_graph=_C.is_grad_enabled(),
                allow_unused=True,
            )
            for (i, _), g in zip(targets, gs):
                result[i] = g
        return (None,) + tuple(result)


class _Region:
    pass


def _checkpoint_without_reentrant(
    function, preserve, context_fn, determinism_check, debug, args, kwargs
):
    fwd_ctx, recompute_ctx = context_fn()
    if not _C.is_grad_enabled():
        with fwd_ctx:
            return function(*args, **kwargs)
    region = _Region()
    region.state = _RegionState(preserve)
    with fwd_ctx:
        out = function(*args, **kwargs)
    arg_tensors = []
    region.in_spec = _flatten((tuple(args), dict(kwargs)), arg_tensors)
    flat_out = []
    out_spec = _flatten(out, flat_out)
    if not any(o.requires_grad for o in flat_out):
        return out
    leaves = _reached_leaves(flat_out, arg_tensors)
    region.function = function
    region.n_args = len(arg_tensors)
    region.check = determinism_check == "default"
    region.debug = debug
    region.out_meta = [_meta(t) for t in flat_out]
    region.out_requires_grad = [o.requires_grad for o in flat_out]
    region.outputs = [o.detach() for o in flat_out]
    region.recompute_ctx = recompute_ctx
    del out, flat_out  # drops the region's graph: only the inputs stay alive
    outs = _NonReentrantCheckpoint.apply(region, *arg_tensors, *leaves)
    return _unflatten(out_spec, iter(outs))


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
        function, preserve, context_fn, determinism_check, debug, args, kwargs
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
