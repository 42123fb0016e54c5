"""Which leaves ember.func's reverse transforms made, to tell them from the tensors of the
enclosing autograd that func reads from a closure or a module (Note [Enclosing graph]).

Note [Enclosing graph]: torch's transforms keep their results differentiable with respect to
every tensor of the enclosing autograd that func reads, not only their arguments (a CNF's
divergence from vmap(jacrev), a Gauss-Newton Jacobian of functional_call). The leaves a
transform makes to track its inputs are registered here by their AccumulateGrad node while
transforms run on the thread (kept alive, so no other leaf takes the address); after func
runs, a walk of its output's graph that reaches any other leaf asks for the differentiable
backward. The forward transforms (jvp, jacfwd, hessian) ask the same of their primal outputs:
forward AD's own leaves (the aliases its rules differentiate) never enter a primal's graph, as
every op's primal output is the op run on its real arguments or a detached alias; the leaves
jvp's callers make for reverse transforms inside a level (hessian's jacrev) are registered here."""

import threading

from ..autograd import _engine
from ..autograd import forward_ad as _fwad
from ..autograd.grad_mode import enable_grad

_local = threading.local()


def transform_scope(delta):
    """Counts the reverse transforms running on this thread; the leaves they made (own_leaf)
    are forgotten when the last one ends."""
    _engine._transform_entered(delta)
    _local.scopes = getattr(_local, "scopes", 0) + delta
    if not _local.scopes:
        _local.own = {}


def _accumulator(leaf):
    with enable_grad(), _fwad._suspended():  # a view for its graph edge only: no tangent
        return leaf.view_as(leaf)._grad_fn.next_functions[0][0]


def own_leaf(v):
    """Registers v, a leaf a transform made to track its input; returns v."""
    node = _accumulator(v)
    _local.__dict__.setdefault("own", {})[node._id] = node
    return v


def captures_outer_graph(tensors):
    """Whether the graphs of `tensors` (physical) reach a leaf requiring grad that no running
    transform made."""
    own = getattr(_local, "own", {})
    stack, seen = [], set()
    for t in tensors:
        if t.requires_grad:
            stack.append(t._grad_fn if t._grad_fn is not None else _accumulator(t))
    while stack:
        node = stack.pop()
        if node._id in seen:
            continue
        seen.add(node._id)
        if node.name() == "AccumulateGrad":
            if node._id not in own:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False
