"""AOT autograd: a captured forward graph becomes a joint forward+backward graph, which is
partitioned and compiled into two graphs that run inside one autograd Function
(Note [AOT autograd]).

Note [AOT autograd]
``aot_module_simplified(gm, example_inputs, fw_compiler, bw_compiler)`` lifts the graph's
parameters and buffers (get_attr nodes) to inputs after the placeholders: the *primals*. When a
call needs gradients (grad mode on and a primal requires grad), the first such call builds the
joint graph (joint.py's ``build_joint``: the forward copied node by node, then each node's
derivative formula from derivatives.py in reverse, seeded by one ``tangents_*`` input per
differentiable output), partitions it (partitioners.py), and compiles both halves. Each call
then runs the forward graph inside ``CompiledFunction.forward`` and keeps its extra outputs
(the saved values) for ``backward``, which runs the backward graph. Graphs are specialized on
the primals' shapes, dtypes and requires_grad (the capture guards on them too, except for sizes
it captured as symbolic: each shape then gets its own pair). Calls without grad run the
inference compiler's graph. A graph with an op the table does not know runs through the
inference compiler with ember's autograd instead (``NoFormula``): gradients are never wrong.
Double backward (``create_graph=True``) does not use the compiled backward graph: it replays the
forward graph eagerly under autograd from the primals (reusing saved random draws) and
differentiates that with ember's autograd, so higher-order gradients are eager's.
"""

from __future__ import annotations

import operator
import warnings

from ..fx import Graph, GraphModule
from ..fx.graph import _get_attr
from ..fx.node import Node, map_aggregate
from .builder import Builder, V
from .derivatives import NONDIFF, TABLE, NoFormula, op_name, sum_to
from .partitioners import min_cut_rematerialization_partition

__all__ = [
    "aot_function",
    "aot_module",
    "aot_module_simplified",
    "build_joint",
    "make_boxed_func",
    "make_boxed_compiler",
]


def _ember():
    import ember

    return ember


def _is_tensor(x):
    from .._C import Tensor

    return isinstance(x, Tensor)


def _bind(rule, name, args, kwargs):
    import inspect

    sig = getattr(rule.sig, "__signature__", None) or inspect.signature(rule.sig)
    rule.sig.__signature__ = sig
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise NoFormula(f"{name}: unexpected arguments ({e})") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def _flat_outputs(out_arg):
    if isinstance(out_arg, (tuple, list)):
        if any(isinstance(o, (tuple, list, dict)) for o in out_arg):
            raise NoFormula("nested graph outputs")
        return list(out_arg), type(out_arg)
    return [out_arg], None


def _is_inplace(node, name):
    if node.kwargs.get("inplace") is True:
        return True
    return name.endswith("_") and not name.startswith("__")


def _needs(v):
    return isinstance(v, V) and bool(v.node.meta.get("needs_grad"))


def build_joint(gm, primal_vals, needs_grad):
    """build_joint(gm, primal_vals, needs_grad) -> (GraphModule, int)

    The joint forward+backward graph of ``gm`` (placeholders then get_attr nodes as primals,
    with example values ``primal_vals``; ``needs_grad[i]``: primal i requires grad) and the
    number of forward outputs. Raises NoFormula for a graph with an op without a formula."""
    graph = Graph()
    b = Builder(graph)
    env = {}
    src = [n for n in gm.graph.nodes if n.op == "placeholder"]
    src += [n for n in gm.graph.nodes if n.op == "get_attr"]
    for i, (n, val) in enumerate(zip(src, primal_vals)):
        v = b.wrap(graph.placeholder(f"primals_{i + 1}"), val)
        v.node.meta["needs_grad"] = bool(needs_grad[i])
        env[n] = v
    records = []
    multi = {}  # V of a multi-output op -> its element Vs
    out_arg = None
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "output":
            out_arg = node.args[0]
            break
        if node.op not in ("call_function", "call_method"):
            raise NoFormula(f"{node.op} node {node.name}")
        name = op_name(node) or str(node.target)
        args = map_aggregate(node.args, lambda a: env[a] if isinstance(a, Node) else a)
        kwargs = map_aggregate(node.kwargs, lambda a: env[a] if isinstance(a, Node) else a)
        grads_in = []
        map_aggregate((args, kwargs), lambda a: grads_in.append(a) if _needs(a) else None)
        if not grads_in or name in NONDIFF:
            out = b.copy(node, env)
            out.node.meta["needs_grad"] = False
            env[node] = out
            continue
        if _is_inplace(node, name):
            raise NoFormula(f"in-place {name} on a tensor that requires grad")
        if name == "getitem" and isinstance(args[0], V) and args[0] in multi:
            env[node] = multi[args[0]][args[1]]  # an element of a multi-output op
            continue
        rule = TABLE.get(name)
        if rule is None:
            raise NoFormula(f"no derivative formula for {name}")
        a = _bind(rule, name, args, kwargs)
        if rule.forward is not None:
            out, ctx = rule.forward(b, a, node, env)
        else:
            out, ctx = b.copy(node, env), name
        env[node] = out
        if any(out is g for g in grads_in):  # the op returned its input (dropout in eval)
            continue
        if isinstance(out.val, (tuple, list)) and out.val and all(map(_is_tensor, out.val)):
            # several outputs (max with dim, split, unbind): one element V each, read by the
            # graph's getitem nodes; the formula gets the list of their gradients
            elems = [b.call(operator.getitem, out, i) for i in range(len(out.val))]
            for e in elems:
                e.node.meta["needs_grad"] = e.val.dtype.is_floating_point
            out.node.meta["needs_grad"] = True
            multi[out] = elems
            records.append((rule, a, elems, ctx, name, grads_in))
            continue
        if not _is_tensor(out.val):
            raise NoFormula(f"{name} returns {type(out.val).__name__}")
        out.node.meta["needs_grad"] = out.val.dtype.is_floating_point
        if out.val.dtype.is_floating_point:
            records.append((rule, a, out, ctx, name, grads_in))

    flat, _ = _flat_outputs(out_arg)
    fw_outs = [env[o] if isinstance(o, Node) else o for o in flat]
    # backward
    b.phase = "bw"
    grads = {}
    first = next(n for n in graph.nodes if n.op != "placeholder")
    tangents = 0
    for o in fw_outs:
        if _needs(o):
            tangents += 1
            with graph.inserting_before(first):
                t = graph.placeholder(f"tangents_{tangents}")
            tv = b.wrap(t, _ember().ones_like(o.val))
            grads.setdefault(o.node, []).append(tv)

    def total(node):
        gs = grads.get(node)
        if not gs:
            return None
        g = gs[0]
        for h in gs[1:]:
            g = g + h
        return g

    for rule, a, out, ctx, name, grads_in in reversed(records):
        if isinstance(out, list):
            g = [total(e.node) for e in out]
            if all(x is None for x in g):
                continue
        else:
            g = total(out.node)
            if g is None:
                continue
        pairs = rule.backward(b, a, out, g, ctx)
        got = {id(x) for x, _ in pairs}
        for x in grads_in:  # a formula that forgets an input would leave its gradient out
            if id(x) not in got and _is_tensor(x.val) and x.val.dtype.is_floating_point:
                raise NoFormula(f"{name}: no gradient for an input that requires grad")
        for x, gx in pairs:
            if not _needs(x):
                continue
            if not isinstance(gx, V):
                raise NoFormula(f"{name}: gradient is not a tensor")
            gx = sum_to(gx, x.shape)
            if gx.dtype != x.dtype:
                gx = gx.to(x.dtype)
            grads.setdefault(x.node, []).append(gx)
    primal_grads = []
    for n in src:
        v = env[n]
        g = total(v.node) if v.node.meta.get("needs_grad") else None
        primal_grads.append(g.node if g is not None else None)
    outs = [o.node if isinstance(o, V) else o for o in fw_outs]
    graph.output(tuple(outs + primal_grads))
    from ..nn import Module

    return GraphModule(Module(), graph), len(outs)


class _Compiled:
    """The compiled forward/backward pair for one requires_grad pattern of the primals."""

    def __init__(self, fw, bw, num_outs, saved_count, diff_outs, fw_module, bw_module):
        self.fw, self.bw = fw, bw
        self.num_outs, self.saved_count, self.diff_outs = num_outs, saved_count, diff_outs
        self.fw_module, self.bw_module = fw_module, bw_module
        self.function = self._function()

    def _function(self):
        ember = _ember()
        compiled = self

        class CompiledFunction(ember.autograd.Function):
            @staticmethod
            def forward(ctx, *primals):
                ctx.primals = primals  # (for double backward only: references, not copies)
                res = compiled.fw(*primals)
                outs = tuple(res[: compiled.num_outs])
                ctx.saved = tuple(res[compiled.num_outs :])
                # as eager's saved tensors: an in-place change before backward is an error
                ctx.versions = tuple(t._version if _is_tensor(t) else None for t in ctx.saved)
                nondiff = [o for o, d in zip(outs, compiled.diff_outs) if not d and _is_tensor(o)]
                if nondiff:
                    ctx.mark_non_differentiable(*nondiff)
                return outs

            @staticmethod
            def backward(ctx, *grads):
                _check_versions(ctx.saved, ctx.versions)
                if ember.is_grad_enabled():  # create_graph=True: differentiable backward
                    return compiled.double_backward(ctx, grads)
                tangents = [
                    g.contiguous() if _is_tensor(g) else g
                    for g, d in zip(grads, compiled.diff_outs)
                    if d
                ]
                res = compiled.bw(*ctx.saved, *tangents)
                return tuple(res)

        return CompiledFunction

    def double_backward(self, ctx, grads):
        """The backward of a create_graph=True call: the forward graph replayed with ember's
        eager ops under autograd (saved values that carry no gradient, such as dropout's mask,
        are reused, never redrawn; buffers are replayed on copies, so running statistics are
        not updated twice), then differentiated by ember's autograd with create_graph=True."""
        ember = _ember()
        nodes = list(self.fw_module.graph.nodes)
        out_nodes = list(nodes[-1].args[0])
        saved = dict(zip(out_nodes[self.num_outs :], ctx.saved))
        primals = ctx.primals
        env = {}
        it = iter(primals)
        for node in nodes:
            if node.op == "placeholder":
                p = next(it)
                env[node] = p if _is_tensor(p) and p.requires_grad else _clone(p)
            elif node.op == "output":
                break
            elif node in saved and not node.meta.get("needs_grad"):
                env[node] = saved[node]
            elif op_name(node) in _RANDOM:
                raise RuntimeError(
                    "ember.compile: double backward through a graph with a random op whose "
                    "draw was not saved is not supported"
                )
            else:
                args = map_aggregate(node.args, lambda a: env[a] if isinstance(a, Node) else a)
                kw = map_aggregate(node.kwargs, lambda a: env[a] if isinstance(a, Node) else a)
                if node.op == "call_method":
                    env[node] = getattr(args[0], node.target)(*args[1:], **kw)
                else:
                    env[node] = node.target(*args, **kw)
        pairs = [
            (env[o], g)
            for o, g, d in zip(out_nodes[: self.num_outs], grads, self.diff_outs)
            if d and g is not None
        ]
        wanted = [i for i, p in enumerate(primals) if _is_tensor(p) and p.requires_grad]
        got = ember.autograd.grad(
            [o for o, _ in pairs],
            [primals[i] for i in wanted],
            [g for _, g in pairs],
            create_graph=True,
            allow_unused=True,
        )
        full = [None] * len(primals)
        for i, g in zip(wanted, got):
            full[i] = g
        return tuple(full)


_TENSOR_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def _check_versions(saved, versions):
    """Raises eager's error when a tensor the backward reads was modified in place after the
    forward saved it (its version counter moved)."""
    for t, v in zip(saved, versions):
        if v is not None and t._version != v:
            kind = _TENSOR_TYPE_NAMES.get(str(t.dtype).replace("torch.", ""), "Tensor")
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{kind} {list(t.shape)}], is at version {t._version}; "
                f"expected version {v} instead."
            )


_RANDOM = frozenset(
    "bernoulli bernoulli_ rand rand_like randn randn_like randint randint_like normal normal_ "
    "uniform_ random_ multinomial randperm dropout".split()
)


# Joint graphs are specialized on the primals' shapes (formulas read static shapes); a graph
# captured with symbolic sizes gets one pair per shape seen, up to this many.
_MAX_SPECIALIZATIONS = 8


def _clone(x):
    return x.detach().clone() if _is_tensor(x) else x


class AOTCallable:
    """What ``aot_module_simplified`` returns: the graph's calling convention, running the
    compiled forward/backward pair when gradients are needed."""

    def __init__(self, gm, fw_compiler, bw_compiler, partition_fn, inference_compiler):
        self.gm = gm
        self.fw_compiler, self.bw_compiler = fw_compiler, bw_compiler or fw_compiler
        self.partition_fn = partition_fn
        self.inference_compiler = inference_compiler or fw_compiler
        nodes = list(gm.graph.nodes)
        self.param_names = [n.target for n in nodes if n.op == "get_attr"]
        out = nodes[-1].args[0] if nodes and nodes[-1].op == "output" else None
        self._out_kind = type(out) if isinstance(out, (tuple, list)) else None
        self._inference = None
        self._compiled = {}  # (shape, dtype, requires_grad) per primal -> _Compiled or None
        self.fallback_reason = None

    def _params(self):
        return [_get_attr(self.gm, t) for t in self.param_names]

    def inference(self, example_inputs=None):
        if self._inference is None:
            self._inference = self.inference_compiler(self.gm, list(example_inputs or []))
        return self._inference

    def _build(self, primals, key, n_inputs):
        ember = _ember()
        state = ember.get_rng_state()
        try:
            vals = [_clone(p) for p in primals]
            joint, num_outs = build_joint(self.gm, vals, key)
        finally:
            ember.set_rng_state(state)
        fw_gm, bw_gm = self.partition_fn(joint, None, num_fwd_outputs=num_outs)
        fw_nodes = list(fw_gm.graph.nodes)
        fw_out = fw_nodes[-1].args[0]
        diff = [isinstance(o, Node) and bool(o.meta.get("needs_grad")) for o in fw_out[:num_outs]]
        fw_ex = [n.meta["val"] for n in fw_nodes if n.op == "placeholder"]
        bw_ex = [n.meta["val"] for n in bw_gm.graph.nodes if n.op == "placeholder"]
        fw = self.fw_compiler(fw_gm, fw_ex)
        bw = _without_nones(bw_gm, self.bw_compiler, bw_ex)
        return _Compiled(fw, bw, num_outs, len(fw_out) - num_outs, diff, fw_gm, bw_gm)

    def compiled_for(self, primals, n_inputs):
        key = tuple(
            (tuple(p.shape), p.dtype, p.requires_grad) if _is_tensor(p) else p for p in primals
        )
        if key not in self._compiled:
            if len(self._compiled) >= _MAX_SPECIALIZATIONS:
                self.fallback_reason = "too many input shapes"
                return None
            try:
                needs = [_is_tensor(p) and p.requires_grad for p in primals]
                self._compiled[key] = self._build(primals, needs, n_inputs)
            except NoFormula as e:
                self.fallback_reason = str(e)
                self._compiled[key] = None
            except Exception as e:  # a bug here must not break the program: fall back
                self.fallback_reason = f"{type(e).__name__}: {e}"
                warnings.warn(
                    f"aot_autograd: using ember's autograd for this graph: {self.fallback_reason}",
                    RuntimeWarning,
                    stacklevel=3,
                )
                self._compiled[key] = None
        return self._compiled[key]

    def __call__(self, *args):
        ember = _ember()
        params = self._params()
        primals = list(args) + params
        if ember.is_grad_enabled() and any(_is_tensor(p) and p.requires_grad for p in primals):
            c = self.compiled_for(primals, len(args))
            if c is not None:
                outs = c.function.apply(*primals)
                return outs if self._out_kind is not None else outs[0]
        return self.inference(args)(*args)


def _without_nones(bw_gm, compiler, example_inputs):
    """Compiles the backward graph without its None outputs (absent gradients) and puts them
    back around the compiled callable."""
    out_node = list(bw_gm.graph.nodes)[-1]
    outs = list(out_node.args[0])
    keep = [i for i, o in enumerate(outs) if o is not None]
    if len(keep) < len(outs):
        out_node.args = (tuple(outs[i] for i in keep),)
        bw_gm.recompile()
    fn = compiler(bw_gm, example_inputs)
    n = len(outs)

    def run(*args):
        res = fn(*args)
        full = [None] * n
        for i, r in zip(keep, res):
            full[i] = r
        return full

    return run


def make_boxed_func(f):
    """make_boxed_func(f) -> callable

    ``f`` in torch's boxed calling convention (one list of inputs, emptied by the call) as
    compilers passed to ``aot_autograd`` return it. ember calls compiled graphs with the inputs
    as arguments, so the result accepts both forms."""

    def g(*args):
        if len(args) == 1 and type(args[0]) is list:
            boxed = args[0]
            args = tuple(boxed)
            boxed.clear()
        return f(*args)

    g._boxed_call = True
    return g


def make_boxed_compiler(compiler):
    """make_boxed_compiler(compiler) -> callable

    ``compiler`` whose result is made boxed (``make_boxed_func``)."""

    def boxed_compiler(gm, example_inputs):
        return make_boxed_func(compiler(gm, example_inputs))

    return boxed_compiler


def aot_module_simplified(
    mod,
    args,
    fw_compiler,
    bw_compiler=None,
    partition_fn=min_cut_rematerialization_partition,
    decompositions=None,
    keep_inference_input_mutations=False,
    inference_compiler=None,
):
    """aot_module_simplified(mod, args, fw_compiler, bw_compiler=None, partition_fn=min_cut_rematerialization_partition, decompositions=None, keep_inference_input_mutations=False, inference_compiler=None) -> Callable

    AOT autograd for a captured GraphModule (the form ember.compile's backends receive): returns
    a callable with ``mod``'s calling convention whose backward is a compiled graph.

    Args:
        mod (ember.fx.GraphModule): the forward graph; get_attr nodes become inputs.
        args (list of Tensor): example inputs.
        fw_compiler (callable): ``fw_compiler(gm, example_inputs) -> callable`` for the
            forward graph.
        bw_compiler (callable, optional): the same for the backward graph (default:
            ``fw_compiler``).
        partition_fn (callable, optional): splits the joint graph,
            ``partition_fn(joint, inputs, num_fwd_outputs=n) -> (fw_gm, bw_gm)``.
        inference_compiler (callable, optional): compiles ``mod`` itself for calls without
            grad and for graphs without a formula (default: ``fw_compiler``).
    """  # noqa: E501
    return AOTCallable(mod, fw_compiler, bw_compiler, partition_fn, inference_compiler)


def aot_function(
    fn,
    fw_compiler,
    bw_compiler=None,
    partition_fn=min_cut_rematerialization_partition,
    decompositions=None,
    num_params_buffers=0,
    inference_compiler=None,
):
    """aot_function(fn, fw_compiler, bw_compiler=None, partition_fn=min_cut_rematerialization_partition, decompositions=None, num_params_buffers=0, inference_compiler=None) -> Callable

    ``fn`` captured on its first call (ember.compile's capture, with its guards) and run through
    AOT autograd: the forward and backward graphs are compiled by ``fw_compiler`` and
    ``bw_compiler``.
    """  # noqa: E501
    ember = _ember()

    def backend(gm, example_inputs):
        return aot_module_simplified(
            gm,
            example_inputs,
            fw_compiler,
            bw_compiler,
            partition_fn,
            inference_compiler=inference_compiler,
        )

    return ember.compile(fn, backend=backend)


def aot_module(
    mod,
    fw_compiler,
    bw_compiler=None,
    partition_fn=min_cut_rematerialization_partition,
    decompositions=None,
    num_params_buffers=0,
    inference_compiler=None,
):
    """aot_module(mod, fw_compiler, bw_compiler=None, partition_fn=min_cut_rematerialization_partition, decompositions=None, num_params_buffers=0, inference_compiler=None) -> Module

    ``aot_function`` for a module: its forward captured with its parameters and buffers, which
    the compiled graphs read (and differentiate) on every call."""  # noqa: E501
    return aot_function(
        mod,
        fw_compiler,
        bw_compiler,
        partition_fn,
        inference_compiler=inference_compiler,
    )
