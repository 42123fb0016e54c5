"""backward and grad: the entry points to the C++ autograd engine."""

import threading

from .. import _C
from .._C import Tensor
from . import forward_ad
from .graph import GradientEdge

# The engine calls running on this thread, innermost last: True for a backward() without
# `inputs` (it accumulates into every leaf it reaches), False for grad() or backward(inputs=).
_calls = threading.local()


def _accumulates_into_leaves():
    """Whether the innermost engine call on this thread is a backward() that accumulates into
    every leaf's .grad (ember.utils.checkpoint then lets a recomputed region accumulate into the
    parameters directly instead of returning their gradients)."""
    stack = getattr(_calls, "stack", None)
    return bool(stack) and stack[-1]


def _run(accumulates, fn, *args):
    stack = getattr(_calls, "stack", None)
    if stack is None:
        stack = _calls.stack = []
    stack.append(accumulates)
    try:
        return fn(*args)
    finally:
        stack.pop()


# (class, handler, check): ember.func registers BatchedTensor, the autograd.grad of its instances
# (the physical backward of vmap, Note [Forward-over-reverse under vmap]; the C++ engine would
# reject them) and check(outputs, inputs, grad_outputs), which raises torch's error where a
# user's autograd.grad of them has no meaning (no grad transform inside the innermost vmap).
_batched_grad_handler = None
# ember.func's test whether one of its transforms (vmap, grad, vjp, jvp, ...) is running in this
# thread, and the count of transforms running in any thread: backward() asks the test only while
# the count is not 0, so it costs one integer test otherwise.
_transforms_active = None
_transform_count = 0
_count_lock = threading.Lock()


def _transform_entered(delta):
    """ember.func's transforms call this with 1 on entry and -1 on exit."""
    global _transform_count
    with _count_lock:
        _transform_count += delta


def _set_batched_grad_handler(cls, handler, check, transforms_active):
    """Registers ember.func's BatchedTensor class, the autograd.grad of its instances, the check
    of a user's call and the test for running transforms."""
    global _batched_grad_handler, _transforms_active
    _batched_grad_handler = (cls, handler, check)
    _transforms_active = transforms_active


def _seq(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return [x]
    return list(x)


def _edge_roots(outputs, grads, batched=False):
    """outputs that are GradientEdges (backward of one stage of a pipeline, from where its output's
    gradient arrives) become roots the engine can start from: an alias of the edge's
    grad_output whose history is the edge. ember's nodes do not record the shape arriving at
    each edge, so the implicit ones gradient exists only for a leaf's edge."""
    for o in outputs:  # a loop, not any(generator): this runs on every backward
        if isinstance(o, GradientEdge):
            break
    else:
        return outputs, grads
    if batched:
        raise RuntimeError("Batched grads are not supported with GradientEdge")
    grads = list(grads) if grads is not None else [None] * len(outputs)
    outputs = list(outputs)
    for i, o in enumerate(outputs):
        if not isinstance(o, GradientEdge):
            continue
        g = grads[i]
        leaf = getattr(o.node, "variable", None)
        if leaf is not None:
            if g is None:
                if leaf.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                from .._ops.creation import ones_like

                g = ones_like(leaf)
            elif tuple(g.shape) != tuple(leaf.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {leaf.shape}."
                )
        elif g is None:
            raise RuntimeError(
                f"grad: output[{i}] is a GradientEdge of a non-leaf tensor: pass its "
                "grad_outputs entry (ember does not record the shape arriving at an edge)"
            )
        outputs[i] = _C._edge_root(g, o.node._node, o.output_nr)
        grads[i] = g
    return outputs, grads


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
):
    """backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
        grad_variables=None, inputs=None)

    Accumulates gradients of `tensors` into the leaves' `.grad`."""
    if _transform_count and _transforms_active():
        raise RuntimeError(
            "backward() called inside a functorch transform. This is not supported, please use "
            "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
            "transforms."
        )
    tensors = _seq(tensors)
    grads = _seq(grad_tensors if grad_tensors is not None else grad_variables) or [None] * len(
        tensors
    )
    tensors, grads = _edge_roots(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None and not isinstance(inputs, Tensor):
        inputs = (inputs,) if isinstance(inputs, GradientEdge) else tuple(inputs)
        if any(isinstance(i, GradientEdge) for i in inputs):
            edges = [
                (i.node._node, i.output_nr) if isinstance(i, GradientEdge) else i for i in inputs
            ]
            _run(False, _C._backward_edges, tensors, grads, retain_graph, create_graph, edges)
            return
    inputs = _seq(inputs)
    _run(inputs is None, _C._backward, tensors, grads, retain_graph, create_graph, inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
        only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False)

    Returns d(outputs)/d(inputs) without touching `.grad`. An input may be a GradientEdge
    (graph.get_gradient_edge): the gradient arriving at that edge; an output may be one too
    (the gradient flowing back from there, given in grad_outputs)."""
    outputs, grad_outputs = _edge_roots(_seq(outputs), _seq(grad_outputs), is_grads_batched)
    if not isinstance(inputs, Tensor):
        inputs = (inputs,) if isinstance(inputs, GradientEdge) else tuple(inputs)
        if any(isinstance(i, GradientEdge) for i in inputs):
            return _grad_edges(
                outputs,
                inputs,
                grad_outputs,
                retain_graph,
                create_graph,
                allow_unused,
                is_grads_batched,
                materialize_grads,
            )
    if _transform_count and _batched_grad_handler is not None:  # BatchedTensors exist
        cls, _, check = _batched_grad_handler
        go = _seq(grad_outputs)
        if any(type(t) is cls for t in (*_seq(outputs), *_seq(inputs), *(go or ()))):
            check(_seq(outputs), _seq(inputs), go)
    return _grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph,
        create_graph,
        only_inputs,
        allow_unused,
        is_grads_batched,
        materialize_grads,
    )


def _grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """autograd.grad without the check of a user's call on BatchedTensors: ember's own transforms
    (forward-mode rules inside vmap) take gradients of them."""
    single = isinstance(inputs, Tensor)
    outs = _seq(outputs)
    go = _seq(grad_outputs)
    if _batched_grad_handler is not None:
        cls, handler, _ = _batched_grad_handler
        if any(type(t) is cls for t in (*outs, *_seq(inputs), *(go or ()))):
            if allow_unused is None:
                allow_unused = materialize_grads
            res = handler(outs, _seq(inputs), go, create_graph, allow_unused, materialize_grads)
            return res if not single else tuple(res)
    if is_grads_batched:
        return _batched_grad(
            outputs, inputs, go, retain_graph, create_graph, allow_unused, materialize_grads
        )
    if go is not None:
        go = [g if g is not None else None for g in go]
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    result = None
    if forward_ad._is_active():

        def run_grad(o, i, g, create, unused):
            # the levels outside the one giving tangents now (nested forward levels)
            if forward_ad._is_active():
                return _grad(o, i, g, retain_graph=True, create_graph=create, allow_unused=unused)
            return _run(False, _C._grad, o, i, g, True, create, unused)

        result = forward_ad._grad_with_tangents(
            outs, _seq(inputs), go, create_graph, allow_unused, run_grad
        )
    if result is None:
        result = _run(
            False, _C._grad, outs, _seq(inputs), go, retain_graph, create_graph, allow_unused
        )
    if materialize_grads:
        from .._ops.creation import zeros_like

        result = tuple(zeros_like(i) if r is None else r for r, i in zip(result, _seq(inputs)))
    return result if not single else tuple(result)


def _grad_edges(
    outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, batched, materialize
):
    """grad with GradientEdge inputs: the engine reads the gradient arriving at each edge."""
    from .graph import GradientEdge

    if batched:
        raise RuntimeError("Batched grads are not supported with GradientEdge")
    if allow_unused is None:
        allow_unused = materialize
    edges = [(i.node._node, i.output_nr) if isinstance(i, GradientEdge) else i for i in inputs]
    result = _run(
        False,
        _C._grad_edges,
        _seq(outputs),
        edges,
        _seq(grad_outputs),
        retain_graph,
        create_graph,
        allow_unused,
    )
    if materialize:
        if any(r is None and isinstance(i, GradientEdge) for r, i in zip(result, inputs)):
            raise NotImplementedError(
                "grad: materialize_grads=True for an unused GradientEdge input is not supported"
            )
        from .._ops.creation import zeros_like

        result = tuple(zeros_like(i) if r is None else r for r, i in zip(result, inputs))
    return result


def _batched_grad(outputs, inputs, go, retain_graph, create_graph, allow_unused, materialize):
    """grad(is_grads_batched=True): the first dim of every grad_output is a batch of vectors;
    one vector-Jacobian product per row (each pass keeps the graph for the next), stacked."""
    from .._C import stack
    from .._ops.creation import zeros_like

    if go is None or any(g is None for g in go):
        raise RuntimeError("grad: is_grads_batched=True needs a tensor in every grad_outputs")
    n = go[0].shape[0]
    rows = [
        grad(
            outputs,
            inputs,
            [g[b] for g in go],
            retain_graph=True if b + 1 < n else retain_graph,
            create_graph=create_graph,
            allow_unused=allow_unused,
            materialize_grads=materialize,
        )
        for b in range(n)
    ]
    result = []
    for k, inp in enumerate(_seq(inputs)):
        col = [r[k] for r in rows]
        if all(c is None for c in col):
            result.append(None)
        else:
            result.append(stack([zeros_like(inp) if c is None else c for c in col]))
    return tuple(result)
