"""torch's grad_fn names on functional composites (Note [Composite node names] in
docs/ARCHITECTURE.md).

torch computes F.mse_loss, F.pad or F.interpolate with one fused kernel, so the result's grad_fn
prints as MseLossBackward0; ember builds several of them from smaller ops, whose last node would
print as MeanBackward0. Programs print and test these names, so the wrapped functions give their
result a pass-through node carrying torch's name (ember._C._rename_grad_fn); the gradients are
unchanged and still flow through the smaller ops' nodes."""

import functools

from .. import _C


def arg(args, kwargs, index, name, default=None):
    """The argument at position `index` or keyword `name` of a call."""
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def named(fn, name):
    """`fn` whose tensor result gets a grad_fn named `name` (a string, or a function of the call's
    (args, kwargs) returning the name, or None to keep the composite's own). Of a tuple result
    (svd's, std_mean's) each tensor with history gets the name, as torch's outputs share its
    one node."""

    def rename(out, args, kwargs):
        if not isinstance(out, _C.Tensor) or not out.requires_grad:
            return
        # vmap's batched wrappers (Tensor subclasses) expose no _grad_fn: nothing to rename
        if getattr(out, "_grad_fn", None) is not None:
            if not any(out is a for a in args):  # an input handed back keeps its own node
                node_name = name if isinstance(name, str) else name(args, kwargs)
                # a node already of that name (the fused loss kernels' own) needs no second one
                if node_name and out._grad_fn.name() != node_name:
                    _C._rename_grad_fn(out, node_name)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, tuple):
            for part in out:
                rename(part, args, kwargs)
        else:
            rename(out, args, kwargs)
        return out

    return wrapper


def unweighted(name, weight_index):
    """`name` unless the call passed a `weight` (torch then computes it another way)."""
    return lambda args, kwargs: name if arg(args, kwargs, weight_index, "weight") is None else None
