"""Running a lowered plan: buffers, kernel launches on ember's thread pool, eager calls, and
autograd for fused kernels.

Note [Fused region autograd]
When grad mode is on and an input of a generated kernel requires grad, the kernel runs inside
an autograd Function whose forward launches the generated code and saves only the kernel's
inputs; its backward recomputes the region with ember's eager ops (ops.EAGER, the same
formulas as the graph's own nodes, views read through as_strided) and differentiates that, so
the gradients are eager's and intermediates are never stored. Buffer reuse is off in that mode
(a saved input must not be overwritten).
"""

from __future__ import annotations

import ctypes

from . import ops
from .graph import KernelStep
from .ir import Const, Load, walk

_eager = None


def _ember():
    import ember

    return ember


def eager_ops():
    global _eager
    if _eager is None:
        _eager = ops.eager_table()
    return _eager


def eval_expr(expr, shape, tensors):
    """Evaluates an IR expression with eager ember ops (tensors: buffer id -> tensor)."""
    em = _ember()
    table = eager_ops()
    vals = {}
    for e in walk(expr):
        if isinstance(e, Load):
            t = tensors[e.buf.id]
            v = em.as_strided(t, tuple(shape), tuple(e.strides), t.storage_offset() + e.offset)
        elif isinstance(e, Const):
            v = em.tensor(e.value, dtype=getattr(em, e.dtype))
        elif e.name == "cast":
            v = vals[id(e.args[0])].to(getattr(em, e.dtype))
        else:
            v = table[e.name](*[vals[id(a)] for a in e.args], **e.params)
        vals[id(e)] = v
    return vals[id(expr)]


def eval_row(step, tensors):
    em = _ember()
    from ..nn import functional as F

    s, p = step.spec, step.spec["params"]
    (x_expr, x_shape), *extra = s["operands"]
    x = eval_expr(x_expr, x_shape, tensors)
    dims, kind = s["rdims"], step.kind
    keep = p.get("keepdim", False)
    if kind in ("sum", "mean", "amax", "amin"):
        y = getattr(em, kind)(x, dim=dims, keepdim=keep) if dims else x.clone()
    elif kind in ("var", "std"):
        y = getattr(em, kind)(x, dim=dims, correction=p["correction"], keepdim=keep)
    elif kind in ("softmax", "log_softmax"):
        y = getattr(F, kind)(x, dim=dims[0]) if dims else x / x if kind == "softmax" else x - x
    elif kind == "logsumexp":
        y = em.logsumexp(x, dims, keepdim=keep)
    elif kind == "layer_norm":
        ws = [eval_expr(e, shp, tensors) for e, shp in extra]
        w = ws.pop(0) if p["has_weight"] else None
        b = ws.pop(0) if p["has_bias"] else None
        y = F.layer_norm(x, p["normalized_shape"], w, b, p["eps"])
    else:
        raise NotImplementedError(kind)
    if "epilogue" in s:
        expr, buf = s["epilogue"]
        tensors = dict(tensors)
        tensors[buf.id] = y.reshape(buf.shape).contiguous()
        return eval_expr(expr, s["in_shape"], tensors)
    return y.reshape(step.out.shape)


def eval_step(step, ins):
    tensors = {b.id: t for b, t in zip(step.code.buffers[1:], ins)}
    if step.kind == "pointwise":
        return eval_expr(step.spec["expr"], step.spec["shape"], tensors)
    return eval_row(step, tensors)


def _generated_backward(kernel, bwd, grad, ins):
    """Input gradients from the generated backward kernel (autograd.py)."""
    em = _ember()
    step = kernel.step
    if grad.dtype != kernel.dtype:
        grad = grad.to(kernel.dtype)
    tensors = {b.id: t for b, t in zip(step.code.buffers[1:], ins)}
    tensors[bwd.gout.id] = grad.contiguous()
    nout = len(bwd.loads)
    outs = [em.empty(kernel.shape, dtype=getattr(em, buf.dtype)) for buf, _ in bwd.loads]
    ptrs = [t.data_ptr() for t in outs]
    ptrs += [tensors[b.id].data_ptr() for b in bwd.code.buffers[nout:]]
    if bwd.code.n:
        em._C._launch_kernel(bwd.address, ptrs, bwd.code.n, bwd.code.grain)
    by_buf = {}
    for (buf, dims), g in zip(bwd.loads, outs):
        if dims:
            g = g.sum(dims, keepdim=True)
        g = g.reshape(buf.shape)
        by_buf[buf.id] = g if buf.id not in by_buf else by_buf[buf.id] + g
    return [by_buf.get(b.id) for b in step.code.buffers[1:]]


class Kernel:
    """A generated kernel bound to its address in the loaded library."""

    def __init__(self, step, lib):
        self.step = step
        code = step.code
        self.address = ctypes.cast(getattr(lib, code.name), ctypes.c_void_p).value
        self.n, self.grain = code.n, code.grain
        self.shape = step.out.shape
        self.dtype = None
        # eager results a kernel reads are made contiguous (the layout the kernel assumed)
        self.contig = [j for j, b in enumerate(code.buffers[1:]) if b.kind == "extern"]
        self.bwd = getattr(step, "bwd", None)
        if self.bwd is not None:
            fn = getattr(lib, self.bwd.code.name)
            self.bwd.address = ctypes.cast(fn, ctypes.c_void_p).value

    def covers(self, needs):
        """Whether the generated backward computes every input gradient that `needs` asks for."""
        done = {b.id for b, _ in self.bwd.loads}
        return all(b.id in done or not need for b, need in zip(self.step.code.buffers[1:], needs))

    def launch(self, out, ins):
        if self.n:
            ptrs = [out.data_ptr()] + [t.data_ptr() for t in ins]
            _ember()._C._launch_kernel(self.address, ptrs, self.n, self.grain)
        return out


def _region_function():
    em = _ember()

    class FusedRegion(em.autograd.Function):
        """A generated kernel as one autograd node (Note [Fused region autograd])."""

        @staticmethod
        def forward(ctx, kernel, *ins):
            ctx.kernel = kernel
            out = em.empty(kernel.shape, dtype=kernel.dtype)
            ctx.needs = [bool(t.requires_grad) for t in ins]
            ctx.save_for_backward(*ins)
            return kernel.launch(out, ins)

        @staticmethod
        def backward(ctx, grad):
            ins = ctx.saved_tensors
            bwd = ctx.kernel.bwd
            if bwd is not None and ctx.kernel.covers(ctx.needs):
                grads = _generated_backward(ctx.kernel, bwd, grad, ins)
                return (None, *[g if need else None for g, need in zip(grads, ctx.needs)])
            with em.enable_grad():
                leaves = [
                    t.detach().requires_grad_() if need else t.detach()
                    for t, need in zip(ins, ctx.needs)
                ]
                y = eval_step(ctx.kernel.step, leaves)
                wanted = [t for t, need in zip(leaves, ctx.needs) if need]
                grads = em.autograd.grad(y, wanted, grad, allow_unused=True) if wanted else ()
            it = iter(grads)
            return (None, *[next(it) if need else None for need in ctx.needs])

    return FusedRegion


_fused_region = None


class Plan:
    """The steps of one compiled graph for one input signature."""

    def __init__(self, G, lib, storage, last_use, slot_of):
        global _fused_region
        if _fused_region is None:
            _fused_region = _region_function()
        self.G = G
        self.slot_of = slot_of
        self.nslots = len(slot_of)
        self.input_slots = [slot_of[b.id] for b in G.inputs]
        self.param_slots = [slot_of[b.id] for _, b in G.params]
        self.program = []
        em = _ember()
        for i, step in enumerate(G.steps):
            frees = [slot_of[bid] for bid, last in last_use.items() if last == i]
            if isinstance(step, KernelStep):
                k = Kernel(step, lib)
                k.dtype = getattr(em, step.out.dtype)
                ins = [slot_of[b.id] for b in step.code.buffers[1:]]
                sid = storage.get(step.out.id)
                dt = getattr(em, step.out.dtype)
                self.program.append(("k", k, ins, slot_of[step.out.id], sid, dt, frees))
            else:
                self.program.append(("e", step, slot_of[step.out.id], frees))
        self.nstorage = max(storage.values(), default=-1) + 1
        self.output = G.output
        self.any_requires_grad = None
        # ember.cond runs Python branches that may read parameters the graph never sees: its
        # result can require grad when no input does, so the kernels after it check at run time
        from .._higher_order_ops import cond

        self.opaque_grad = any(e[0] == "e" and e[1].fn is cond for e in self.program)
        from .ir import Buffer

        out = G.output
        if isinstance(out, Buffer):
            i = slot_of[out.id]
            self._output = lambda slots: slots[i]
        elif isinstance(out, tuple) and all(isinstance(o, Buffer) for o in out):
            idx = [slot_of[o.id] for o in out]
            self._output = lambda slots: tuple([slots[i] for i in idx])
        else:
            self._output = lambda slots: self._resolve(out, slots)

    def _resolve(self, obj, slots):
        from .ir import Buffer

        if isinstance(obj, Buffer):
            return slots[self.slot_of[obj.id]]
        if isinstance(obj, (tuple, list)):
            return type(obj)(self._resolve(o, slots) for o in obj)
        if isinstance(obj, dict):
            return {k: self._resolve(v, slots) for k, v in obj.items()}
        if isinstance(obj, slice):
            return slice(
                self._resolve(obj.start, slots),
                self._resolve(obj.stop, slots),
                self._resolve(obj.step, slots),
            )
        return obj

    def run(self, args, params):
        em = _ember()
        slots = [None] * self.nslots
        for s, a in zip(self.input_slots, args):
            slots[s] = a
        for s, p in zip(self.param_slots, params):
            slots[s] = p
        if self.any_requires_grad is None:  # fixed by the plan's signature
            self.any_requires_grad = any(
                getattr(t, "requires_grad", False) for t in (*args, *params)
            )
        grad = (self.any_requires_grad or self.opaque_grad) and em.is_grad_enabled()
        stor = [None] * self.nstorage
        empty = em.empty
        for entry in self.program:
            if entry[0] == "k":
                _, k, ins, o, sid, dt, frees = entry
                tens = [slots[s] for s in ins]
                for j in k.contig:
                    tens[j] = tens[j].contiguous()
                if grad and any(t.requires_grad for t in tens):
                    out = _fused_region.apply(k, *tens)
                    slots[o] = out
                    for f in frees:
                        slots[f] = None
                    continue
                if grad or sid is None:
                    out = empty(k.shape, dtype=dt)
                else:
                    base = stor[sid]
                    if base is None:
                        base = stor[sid] = empty(k.shape, dtype=dt)
                    out = base.view(k.shape)
                k.launch(out, tens)
                slots[o] = out
            else:
                _, step, o, frees = entry
                slots[o] = step.fn(
                    *self._resolve(step.args, slots), **self._resolve(step.kwargs, slots)
                )
            for f in frees:
                slots[f] = None
        return self._output(slots)
