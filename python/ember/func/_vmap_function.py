"""autograd.Function applied to BatchedTensors (torch's "extending torch.func" rules).

Note [autograd.Function under vmap]: a Function written in torch's functorch-compatible style
(forward without ctx, plus setup_context) is vmapped one of two ways, as in torch:
- its `vmap` staticmethod, called with the arguments unwrapped from the innermost level and
  their batch dims (`in_dims`), returning outputs and their batch dims (`out_dims`);
- with `generate_vmap_rule = True`, forward, setup_context and backward run on the
  BatchedTensors themselves, each op through its batching rule.
A Function with neither raises torch's RuntimeError. When an input requires grad (grad inside
vmap, or a vmap inside a grad), the graph is recorded on the physical tensors: forward runs on
the BatchedTensors (the generated rule: the vmap staticmethod computes the same values, but its
backward would need a vmap of backward that ember's C++ nodes cannot express), and the node's
backward wraps the physical gradients into BatchedTensors, re-entering the vmap levels of the
forward if the backward runs after the vmap returned (grad(vmap(f))), and calls the Function's
backward on them. A user's old-style Function (forward(ctx, ...)) is refused under any transform
with torch's text before it gets here (autograd/function.py); ember's own ones (linalg, sparse)
run on the BatchedTensors.
"""

from .. import _C, overrides
from .._C import Tensor
from ._vmap import BatchedTensor, _levels, _VmapMode, align, levels_of


class VmapInfo:
    """VmapInfo(batch_size, randomness): what a Function's vmap staticmethod receives."""

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness

    def __repr__(self):
        return f"VmapInfo(batch_size={self.batch_size}, randomness='{self.randomness}')"


def _has_vmap(cls):
    from ..autograd.function import Function

    return cls.vmap is not Function.vmap


def apply(cls, ctx, args, kwargs):
    """cls._apply(ctx, args, kwargs) with BatchedTensors among args (Note above)."""
    from ..autograd.function import Function

    uses_setup = cls.setup_context is not Function.setup_context
    tensors = [a for a in args if isinstance(a, Tensor)]
    needs_grad = _C.is_grad_enabled() and any(_phys(a).requires_grad for a in tensors)
    if uses_setup and not getattr(cls, "generate_vmap_rule", False) and not _has_vmap(cls):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
            "details, please see https://pytorch.org/docs/main/notes/extending.func.html"
        )
    if uses_setup and not needs_grad and _has_vmap(cls):
        return _apply_vmap_staticmethod(cls, args, kwargs)
    return _apply_generated(cls, ctx, args, kwargs, needs_grad, uses_setup)


def _phys(x):
    return x._v if type(x) is BatchedTensor else x


def _apply_vmap_staticmethod(cls, args, kwargs):
    stack = _levels()
    level = stack[-1]
    cur = level.id
    unwrapped, in_dims = [], []
    for a in args:
        if type(a) is BatchedTensor and cur in a._lv:
            pos = a._lv.index(cur)
            rest = a._lv[:pos] + a._lv[pos + 1 :]
            v = a._v.movedim(pos, len(rest))
            unwrapped.append(BatchedTensor(v, rest) if rest else v)
            in_dims.append(0)
        else:
            unwrapped.append(a)
            in_dims.append(None)
    info = VmapInfo(level.size, level.randomness)
    stack.pop()  # the staticmethod runs at the levels outside this one
    try:
        result = cls.vmap(info, tuple(in_dims), *unwrapped, **kwargs)
    finally:
        stack.append(level)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            f"{cls.__name__}.vmap: expected the vmap staticmethod to return (output, out_dims); "
            f"got {type(result).__name__}"
        )
    out, out_dims = result
    if isinstance(out, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(out)
        if len(dims) != len(out):
            raise RuntimeError(
                f"{cls.__name__}.vmap: expected out_dims to have one entry per output "
                f"({len(out)}); got {out_dims}"
            )
        return tuple(_rewrap(o, d, cur, level.size) for o, d in zip(out, dims))
    return _rewrap(out, out_dims, cur, level.size)


def _rewrap(o, d, cur, size):
    if not isinstance(o, Tensor):
        return o
    if d is None:  # not batched over this level: the same value for every example
        lv = o._lv if type(o) is BatchedTensor else ()
        v = align(o, lv + (cur,), expand=False)
        v = v.expand(tuple(v.shape[: len(lv)]) + (size,) + tuple(v.shape[len(lv) + 1 :]))
        return BatchedTensor(v, lv + (cur,))
    if type(o) is BatchedTensor:
        nb = len(o._lv)
        d %= o.dim()
        return BatchedTensor(o._v.movedim(nb + d, nb), o._lv + (cur,))
    d %= o.dim()
    return BatchedTensor(o.movedim(d, 0), (cur,))


def _apply_generated(cls, ctx, args, kwargs, needs_grad, uses_setup):
    from ..autograd.grad_mode import no_grad

    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and _phys(a).requires_grad for a in args)
    with no_grad():
        output = cls.forward(*args, **kwargs) if uses_setup else cls.forward(ctx, *args, **kwargs)
    if uses_setup:
        cls.setup_context(ctx, args, output)
    if not needs_grad:
        return output
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    tensor_args = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensor_outputs = [o for o in outputs if isinstance(o, Tensor)]
    active = {lv.id: lv for lv in _levels()}
    levels = levels_of(*[a for _, a in tensor_args], *tensor_outputs)
    saved_levels = [active[i] for i in levels if i in active]
    out_lv = [o._lv if type(o) is BatchedTensor else () for o in tensor_outputs]
    out_meta = [(tuple(o.shape), o.dtype) for o in tensor_outputs]
    n_args = len(args)

    def backward(grads):
        from .._ops.creation import zeros

        with _levels_entered(saved_levels):
            gs = []
            for g, lv, (shape, dtype) in zip(grads, out_lv, out_meta):
                if g is None:
                    gs.append(zeros(shape, dtype=dtype) if ctx.materialize_grads else None)
                else:
                    gs.append(BatchedTensor(g, lv) if lv else g)
            result = cls.backward(ctx, *gs)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) < n_args:
                raise RuntimeError(
                    f"function {cls.__name__}Backward returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(result)})"
                )
            return tuple(_to_physical(result[i], a) for i, a in tensor_args)

    phys_outputs = [_fresh_output(o, args) for o in tensor_outputs]
    # the node saves nothing in C++: ctx keeps the (logical) saved tensors for backward
    _C._attach_function(
        cls.__name__ + "Backward",
        lambda grads, unpack: backward(grads),
        [_phys(a) for _, a in tensor_args],
        [p for p, _ in phys_outputs],
        [_phys(t) for t in ctx.non_differentiable],
        [],
    )
    it = iter(w for _, w in phys_outputs)
    result = tuple(next(it) if isinstance(o, Tensor) else o for o in outputs)
    return result if is_tuple else result[0]


def _fresh_output(o, args):
    """(physical tensor the node attaches to, the logical output wrapping it)."""
    p = _phys(o)
    if any(p is _phys(a) for a in args if isinstance(a, Tensor)):
        p = p.detach()
    return p, (BatchedTensor(p, o._lv) if type(o) is BatchedTensor else p)


def _to_physical(g, a):
    """The Function's (logical) gradient for input a as a tensor of a's physical shape."""
    if g is None:
        return None
    pa = _phys(a)
    lv = a._lv if type(a) is BatchedTensor else ()
    glv = g._lv if type(g) is BatchedTensor else ()
    extra = tuple(x for x in glv if x not in lv)
    if extra:  # gradient batched where the input is not: the examples' sum
        v = align(g, tuple(sorted(set(glv) | set(lv))), rank=a.dim(), expand=True)
        union = tuple(sorted(set(glv) | set(lv)))
        dims = [union.index(x) for x in extra]
        v = v.sum(dims)
        return v.expand(tuple(pa.shape)) if tuple(v.shape) != tuple(pa.shape) else v
    v = align(g, lv, rank=a.dim(), expand=True) if lv else g
    return v.expand(tuple(pa.shape)) if tuple(v.shape) != tuple(pa.shape) else v


class _levels_entered:
    """The vmap levels of a forward, active again while its backward runs (if they are not)."""

    def __init__(self, saved):
        self.saved = saved

    def __enter__(self):
        stack = _levels()
        ids = {lv.id for lv in stack}
        self.pushed = [lv for lv in self.saved if lv.id not in ids]
        stack.extend(self.pushed)
        stack.sort(key=lambda lv: lv.id)
        modes = overrides._get_current_function_mode_stack()
        self.mode = None
        if self.pushed and not any(isinstance(m, _VmapMode) for m in modes):
            self.mode = _VmapMode()
            self.mode.__enter__()

    def __exit__(self, *exc):
        if self.mode is not None:
            self.mode.__exit__(None, None, None)
        stack = _levels()
        for lv in self.pushed:
            stack.remove(lv)
