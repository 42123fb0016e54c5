"""ember's graph compiler backend: `compile_fx(gm, example_inputs)` turns an ember.fx graph into
fused C++ kernels and eager calls (the backend behind `ember.compile(backend="inductor")`).

Stages, one module each: lowering.py (nodes to pointwise/row/view primitives and eager calls),
graph.py (fusion by inlining, Note [Inductor scheduling]), memory.py (buffer reuse), codegen.py
(C++ per kernel), build.py (compiler and disk cache, Note [Kernel cache]) and runtime.py (launch
on ember's thread pool, autograd, Note [Fused region autograd]). `metrics` counts what happened.
"""

from __future__ import annotations

import warnings

from ..fx.graph import _get_attr
from ..fx.interpreter import Interpreter
from . import autograd, build, codegen, config, memory, metrics
from .graph import GraphLowering, KernelStep, fuse_epilogues, is_tensor, mutates
from .runtime import Plan

__all__ = ["compile_fx", "compile_fx_aot", "config", "metrics"]

_warned_no_compiler = False
_MISSING = object()


class _CopyingInterpreter(Interpreter):
    """Every node's value kept (not dropped after its last use), attributes read through `copy`."""

    def __init__(self, gm, copy):
        super().__init__(gm, garbage_collect_values=False)
        self.extra_traceback = False
        self._copy = copy

    def fetch_attr(self, target):
        return self._copy(_get_attr(self.module, target))


def _example_values(gm, inputs):
    """node -> example value: node.meta["val"] where the capture recorded it for these very
    inputs, else computed by running the graph once (on copies when it mutates its inputs, and
    without consuming random numbers)."""
    import ember

    nodes = list(gm.graph.nodes)
    metas = [n.meta.get("val") if hasattr(n, "meta") else None for n in nodes]
    phs = [n for n in nodes if n.op == "placeholder"]
    same = all(
        not is_tensor(v)
        or (is_tensor(m) and tuple(m.shape) == tuple(v.shape) and m.dtype == v.dtype)
        for n, v, m in zip(
            phs, inputs, [n.meta.get("val") if hasattr(n, "meta") else None for n in phs]
        )
    )
    if same and all(m is not None for n, m in zip(nodes, metas) if n.op not in ("output",)):
        vals = dict(zip(nodes, metas))
        vals.update(zip(phs, inputs))
        for n in nodes:
            if n.op == "get_attr":
                vals[n] = _get_attr(gm, n.target)
        return vals
    writes = any(mutates(n) for n in nodes if n.op not in ("placeholder", "get_attr", "output"))

    def copy(t):
        return t.clone() if writes and is_tensor(t) else t

    state = ember.get_rng_state()
    try:
        with ember.no_grad():
            interpreter = _CopyingInterpreter(gm, copy)
            interpreter.run(*[copy(t) for t in inputs])
    finally:
        ember.set_rng_state(state)
    vals = {n: v for n, v in interpreter.env.items() if n.op != "output"}
    vals.update(zip(phs, inputs))
    for n in nodes:
        if n.op == "get_attr":
            vals[n] = _get_attr(gm, n.target)
    return vals


def _signature(tensors, Tensor=None):
    """What a plan is specialized on: each tensor's shape, strides, dtype and requires_grad."""
    if Tensor is None:
        from .._C import Tensor
    return tuple(
        [
            (t.shape, t.stride(), t.dtype, t.requires_grad) if isinstance(t, Tensor) else type(t)
            for t in tensors
        ]
    )


class CompiledGraph:
    """The callable compile_fx returns: one plan per input signature (shapes, strides, dtypes),
    each a sequence of generated kernels and eager calls."""

    def __init__(self, gm, example_inputs):
        self.gm = gm
        self.param_names = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
        self.plans = {}
        from .._C import Tensor

        self._tensor = Tensor
        self.kernels = []  # generated sources (for inspection)
        self._plan(list(example_inputs), self._params())

    def _params(self):
        return [_get_attr(self.gm, p) for p in self.param_names]

    def _plan(self, args, params):
        key = _signature((*args, *params), self._tensor)
        plan = self.plans.get(key, _MISSING)
        if plan is _MISSING:  # (None: this signature runs eagerly)
            plan = self.plans[key] = self._build(list(args))
        return plan

    def _build(self, args):
        try:
            return self._lower(args)
        except build.CompileError as e:
            reason = str(e)
        except Exception as e:  # never fail: a graph the compiler cannot handle runs eagerly
            reason = f"{type(e).__name__}: {e}"
        warnings.warn(
            f"ember.compile: running this graph eagerly: {reason}", RuntimeWarning, stacklevel=4
        )
        return None

    def _lower(self, args):
        G = GraphLowering(self.gm, _example_values(self.gm, args)).run()
        fuse_epilogues(G)
        sources = []
        for i, step in enumerate(s for s in G.steps if isinstance(s, KernelStep)):
            sources.append(step.generate(f"ember_kernel_{i}").source)
        metrics.add("kernels_generated", len(sources))
        no_grad = _inputs_without_grad(G, args, self._params())
        if no_grad is not None:  # this plan runs under autograd: generate backward kernels
            for i, step in enumerate(s for s in G.steps if isinstance(s, KernelStep)):
                if step.kind == "pointwise":
                    needing = {b.id for b in step.code.buffers[1:] if b.id not in no_grad}
                    step.bwd = autograd.generate(step, f"ember_kernel_{i}_bwd", needing)
                    if step.bwd is not None:
                        sources.append(step.bwd.code.source)
                        metrics.add("backward_kernels")
        self.kernels = sources
        lib = build.load(codegen.PRELUDE + "\n".join(sources)) if sources else None
        storage, last_use = memory.plan(G)
        slot_of = {}
        for b in _all_buffers(G):
            slot_of.setdefault(b.id, len(slot_of))
        return Plan(G, lib, storage, last_use, slot_of)

    def __call__(self, *args):
        params = self._params()
        plan = self._plan(args, params)
        if plan is None:
            return self.gm(*args)
        return plan.run(args, params)


def _inputs_without_grad(G, args, params):
    """Ids of the input/parameter buffers that do not require grad, or None when nothing in
    this call can require grad (grad mode off, or no input or parameter requires it)."""
    import ember

    tensors = list(zip(G.inputs, args)) + [(b, p) for (_, b), p in zip(G.params, params)]
    if not ember.is_grad_enabled() or not any(
        getattr(t, "requires_grad", False) for _, t in tensors
    ):
        return None
    return {b.id for b, t in tensors if not getattr(t, "requires_grad", False)}


def _all_buffers(G):
    from .memory import _buffers_in

    bufs = list(G.inputs) + [b for _, b in G.params]
    for s in G.steps:
        if isinstance(s, KernelStep):
            bufs += s.code.buffers
        else:
            bufs += _buffers_in((s.args, s.kwargs), [])
        bufs.append(s.out)
    bufs += _buffers_in(G.output, [])
    return bufs


def compile_fx(gm, example_inputs):
    """compile_fx(gm, example_inputs) -> Callable

    Compiles an ember.fx GraphModule into fused C++ kernels (pointwise chains, reductions with
    their pointwise producers, GEMM/conv bias-and-activation epilogues) and eager calls of
    everything else, and returns a callable with the graph's calling convention. Without a C++
    compiler the graph runs through ember's eager kernels (one warning per process).

    Args:
        gm (ember.fx.GraphModule): the captured graph; parameters are get_attr nodes.
        example_inputs (list of Tensor): inputs of the shapes, strides and dtypes to compile for.
    """
    global _warned_no_compiler
    metrics.add("graphs_compiled")
    if build.find_cxx() is None:
        metrics.add("eager_fallbacks")
        if not _warned_no_compiler:
            _warned_no_compiler = True
            warnings.warn(
                "ember.compile: no C++ compiler found; compiled graphs run through ember's eager "
                "kernels",
                RuntimeWarning,
                stacklevel=2,
            )
        return _Eager(gm)
    return CompiledGraph(gm, example_inputs)


def compile_fx_aot(gm, example_inputs):
    """compile_fx_aot(gm, example_inputs) -> Callable

    ``compile_fx`` under AOT autograd (the ``inductor`` backend): calls without grad run
    ``compile_fx(gm)``; calls that need gradients run the partitioned forward and backward
    graphs of the joint graph, each compiled by ``compile_fx`` into fused kernels. A graph with
    an op that has no derivative formula keeps ``compile_fx``'s own autograd.

    Args:
        gm (ember.fx.GraphModule): the captured graph; parameters are get_attr nodes.
        example_inputs (list of Tensor): inputs of the shapes, strides and dtypes to compile for.
    """
    from .._functorch import aot_module_simplified

    return aot_module_simplified(gm, example_inputs, fw_compiler=compile_fx)


class _Eager:
    def __init__(self, gm):
        self.gm = gm

    def __call__(self, *args):
        return self.gm(*args)
