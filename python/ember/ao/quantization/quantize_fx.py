"""FX graph mode quantization (torch.ao.quantization.quantize_fx).

prepare_fx traces the model with ember.fx, fuses conv-bn-relu / conv-relu / linear-relu /
linear-bn / bn-relu by matching those chains in the graph (each intermediate value used once),
gives every node its qconfig from the QConfigMapping (module name, regex, object type, global),
swaps modules for their QAT forms (prepare_qat_fx), and inserts observer modules
(activation_post_process_N) at the graph edges torch's x86 backend observes: the tensor inputs
and the output of each quantizable op (conv, linear, batch norm, their fused forms, F.linear,
F.conv*, add, mul, cat, matmul), with weight observers on the weights functional ops read. Ops
that only move or select values (relu, max/avg pooling, reshape, transpose, ...) share their
input's quantization; everything else stays float.

convert_fx turns observers into quantize_per_tensor calls at the points where float values
become quantized, swaps quantizable modules for quantized ones (from_float with the module's
observers), lowers sums and products of two quantized tensors to quantized add/mul (add_relu /
mul_relu when a relu follows: that pair is observed after the relu, as torch's pattern), runs
other functional quantizable ops in torch's reference form (dequantize, float op on
quantize-dequantized weights, quantize with the output observer's qparams) and dequantizes
where a quantized value reaches a float consumer or the output. Nodes whose qconfig is None stay
float."""

import copy
import operator
import re

from ... import _C, fx, nn
from ...nn import functional as F
from .. import _torch
from ..nn import intrinsic as nni
from ..nn import qat as nnqat
from ..nn.intrinsic import qat as nniqat
from .fuser_method_mappings import get_fuser_method
from .fx._convert_decomposed import _convert_to_reference_decomposed_fx  # noqa: F401
from .qconfig_mapping import QConfigMapping
from .quantization_mappings import get_default_qat_module_mappings
from .utils import _is_per_channel

__all__ = [
    "fuse_fx",
    "prepare_fx",
    "prepare_qat_fx",
    "convert_fx",
    "convert_to_reference_fx",
]


def _unwrap(fn):
    """fn through the argument guards the package wraps around the extension's functions
    (`ember.relu` calls `_C.relu`), so that a graph calling either is matched."""
    while type(fn).__name__.endswith("Guard") and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


_RELU_FUNCS = (_unwrap(F.relu), _unwrap(_C.relu))
_CONV_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
_BN_FOR_CONV = {nn.Conv1d: nn.BatchNorm1d, nn.Conv2d: nn.BatchNorm2d, nn.Conv3d: nn.BatchNorm3d}

_QUANT_MODULES = (
    nn.Conv1d,
    nn.Conv2d,
    nn.Conv3d,
    nn.Linear,
    nn.BatchNorm2d,
    nn.BatchNorm3d,
    nni.ConvReLU1d,
    nni.ConvReLU2d,
    nni.ConvReLU3d,
    nni.LinearReLU,
    nni.BNReLU2d,
    nni.BNReLU3d,
    nni.ConvBn1d,
    nni.ConvBn2d,
    nni.ConvBn3d,
    nni.ConvBnReLU1d,
    nni.ConvBnReLU2d,
    nni.ConvBnReLU3d,
    nnqat.Linear,
    nnqat.Conv1d,
    nnqat.Conv2d,
    nniqat.LinearReLU,
    nniqat.ConvReLU1d,
    nniqat.ConvReLU2d,
    nniqat.ConvBn1d,
    nniqat.ConvBn2d,
    nniqat.ConvBnReLU1d,
    nniqat.ConvBnReLU2d,
    nnqat.Conv3d,
    nniqat.ConvReLU3d,
    nniqat.ConvBn3d,
    nniqat.ConvBnReLU3d,
)


def _functions(*names):
    from ..._ops import creation, elementwise, products, shape

    out = set()
    for name in names:
        for src in (_C, F, elementwise, products, shape, creation):
            fn = getattr(src, name, None)
            if fn is not None:
                out.add(_unwrap(fn))
    return out


_QUANT_FUNCS_WEIGHTED = {_unwrap(f): 1 for f in (F.linear, F.conv1d, F.conv2d, F.conv3d)}
_QUANT_FUNCS = (
    {operator.add, operator.mul, operator.matmul}
    | _functions("add", "mul", "matmul", "cat", "bmm")
    | set(_QUANT_FUNCS_WEIGHTED)
)
_SHARE_MODULES = (
    nn.AdaptiveAvgPool1d,
    nn.AdaptiveAvgPool2d,
    nn.AdaptiveAvgPool3d,
    nn.AvgPool1d,
    nn.AvgPool2d,
    nn.AvgPool3d,
    nn.Hardtanh,
    nn.Identity,
    nn.MaxPool1d,
    nn.MaxPool2d,
    nn.MaxPool3d,
    nn.PixelShuffle,
    nn.PixelUnshuffle,
    nn.ReLU,
    nn.ReLU6,
)
# F.relu runs on its input's quantization; torch.relu is not in torch 2.13's x86 backend config,
# so it stays a float op (dequantize before it), as torch converts it
_SHARE_FUNCS = (
    {_unwrap(F.relu)}
    | _functions(
        "relu6",
        "hardtanh",
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
        "adaptive_avg_pool1d",
        "adaptive_avg_pool2d",
        "adaptive_avg_pool3d",
        "avg_pool1d",
        "avg_pool2d",
        "avg_pool3d",
        "interpolate",
        "pixel_shuffle",
        "pixel_unshuffle",
        "clamp",
        "flatten",
        "mean",
        "narrow",
        "repeat_interleave",
        "transpose",
        "squeeze",
        "stack",
        "unsqueeze",
    )
    | {operator.floordiv}
)
# Ops with a fixed output range (torch's "fixed qparams" ops): their qconfig's observer is a
# FixedQParamsObserver whose scale and zero point are the quantized kernels' output parameters,
# so a quantized input runs through the quantized op
_FIXED_MODULES = (nn.Sigmoid, nn.Tanh, nn.Hardsigmoid)
_FIXED_FUNCS = _functions("sigmoid", "tanh", "hardsigmoid")
_FIXED_METHODS = {"sigmoid", "tanh"}
_SHARE_METHODS = {
    "contiguous",
    "clamp",
    "detach",
    "detach_",
    "mean",
    "permute",
    "repeat",
    "repeat_interleave",
    "reshape",
    "resize_",
    "relu",
    "relu_",
    "squeeze",
    "squeeze_",
    "transpose",
    "unsqueeze",
    "unsqueeze_",
    "view",
}


# ---------------------------------------------------------------------------------------------
# fusion


def _fn(node):
    """A call_function node's function, as the tables below hold it."""
    return _unwrap(node.target)


def _is_relu(node, modules):
    if node.op == "call_module":
        return type(modules[node.target]) is nn.ReLU
    if node.op == "call_function":
        return _fn(node) in _RELU_FUNCS
    return node.op == "call_method" and node.target == "relu"


def _fuses(node, modules):
    """A relu that torch's fusion patterns take after a conv, linear or batch norm: nn.ReLU or
    F.relu (torch.relu and Tensor.relu stay separate ops, as in torch's backend config)."""
    if node.op == "call_module":
        return type(modules[node.target]) is nn.ReLU
    return node.op == "call_function" and _fn(node) is _RELU_FUNCS[0]


def _sole_user(node):
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _module_of(node, modules):
    return modules.get(node.target) if node.op == "call_module" else None


def _set_module(root, qualname, module):
    parent, _, name = qualname.rpartition(".")
    owner = root.get_submodule(parent) if parent else root
    setattr(owner, name, module)


def _chain(node, modules):
    """The fusable chain of nodes starting at node, longest first, or None."""
    first = _module_of(node, modules)
    nxt = _sole_user(node)
    if first is None or nxt is None:
        return None
    second = _module_of(nxt, modules)
    if type(first) in _CONV_TYPES:
        if type(second) is _BN_FOR_CONV[type(first)]:
            after = _sole_user(nxt)
            if after is not None and _fuses(after, modules):
                return [node, nxt, after]
            return [node, nxt]
        if _fuses(nxt, modules):
            return [node, nxt]
    elif type(first) is nn.Linear:
        if type(second) is nn.BatchNorm1d:
            return [node, nxt]
        if _fuses(nxt, modules):
            return [node, nxt]
    elif type(first) in (nn.BatchNorm2d, nn.BatchNorm3d) and _fuses(nxt, modules):
        return [node, nxt]
    return None


def _fuse_graph(gm, is_qat, extra_fusers=None):
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        if node.graph is None or node.op != "call_module":
            continue
        chain = _chain(node, modules)
        if chain is None:
            continue
        mods = []
        for n in chain:
            m = _module_of(n, modules)
            if m is None:  # functional or method relu
                m = nn.ReLU()
                m.training = mods[0].training
            mods.append(m)
        fuser = get_fuser_method(tuple(type(m) for m in mods), extra_fusers)
        fused = fuser(is_qat, *mods)
        _set_module(gm, node.target, fused)
        modules[node.target] = fused
        chain[-1].replace_all_uses_with(node)
        for n in reversed(chain[1:]):
            gm.graph.erase_node(n)
    gm.graph.lint()
    gm.recompile()
    return gm


def _trace(model, prepare_custom_config):
    cfg = prepare_custom_config or {}
    if not isinstance(cfg, dict):
        cfg = cfg.to_dict() if hasattr(cfg, "to_dict") else {}
    leaf_names = set(cfg.get("non_traceable_module_name", []))
    leaf_classes = tuple(cfg.get("non_traceable_module_class", []))

    class _Tracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            if qualname in leaf_names or (leaf_classes and isinstance(m, leaf_classes)):
                return True
            if isinstance(m, nni._FusedModule):
                return True
            return super().is_leaf_module(m, qualname)

    tracer = _Tracer()
    graph = tracer.trace(model)
    return fx.GraphModule(model, graph)  # torch's class name: GraphModule, whatever the model


def fuse_fx(model, fuse_custom_config=None, backend_config=None):
    """fuse_fx(model, fuse_custom_config=None, backend_config=None)

    Traces model and fuses conv-bn(-relu), conv-relu, linear-relu, linear-bn and bn-relu
    chains of an eval-mode model; returns the GraphModule."""
    gm = _trace(model, None)
    extra = (fuse_custom_config or {}).get("additional_fuser_method_mapping", {})
    return _fuse_graph(gm, False, extra)


# ---------------------------------------------------------------------------------------------
# qconfig assignment


def _as_mapping(qconfig_mapping):
    if qconfig_mapping is None:
        return QConfigMapping()
    if isinstance(qconfig_mapping, dict):
        return QConfigMapping.from_dict(qconfig_mapping)
    return qconfig_mapping


def _qconfig_for(node, modules, mapping, counters):
    if node.op == "call_module":
        typ = type(modules[node.target])
        name = node.target
    elif node.op in ("call_function", "call_method"):
        typ = node.target
        name = ""
    else:
        return None
    qconfig = mapping.global_qconfig
    for key, qc in mapping.object_type_qconfigs.items():
        if key is typ or key == typ or (isinstance(key, type) and _fused_root(typ) is key):
            qconfig = qc
            break
    for regex, qc in mapping.module_name_regex_qconfigs.items():
        if name and re.match(regex, name):
            qconfig = qc
            break
    # The longest registered module-name prefix of the node's module wins.
    best = -1
    for mod_name, qc in mapping.module_name_qconfigs.items():
        if name == mod_name or name.startswith(mod_name + ".") or mod_name == "":
            if len(mod_name) > best:
                best, qconfig = len(mod_name), qc
    if mapping.module_name_object_type_order_qconfigs:
        key = ("", typ)
        index = counters.get(key, 0)
        counters[key] = index + 1
        qc = mapping.module_name_object_type_order_qconfigs.get(("", typ, index))
        if qc is not None:
            qconfig = qc
    return qconfig


def _fused_root(typ):
    """nn.Conv2d for ConvReLU2d etc.: a fused module takes its first module's object type."""
    for fused, root in (
        (nni.ConvReLU1d, nn.Conv1d),
        (nni.ConvReLU2d, nn.Conv2d),
        (nni.ConvReLU3d, nn.Conv3d),
        (nni.LinearReLU, nn.Linear),
        (nni.BNReLU2d, nn.BatchNorm2d),
        (nni.BNReLU3d, nn.BatchNorm3d),
        (nni.ConvBn1d, nn.Conv1d),
        (nni.ConvBn2d, nn.Conv2d),
        (nni.ConvBnReLU1d, nn.Conv1d),
        (nni.ConvBnReLU2d, nn.Conv2d),
        (nni.ConvBn3d, nn.Conv3d),
        (nni.ConvBnReLU3d, nn.Conv3d),
    ):
        if typ is fused:
            return root
    return None


# ---------------------------------------------------------------------------------------------
# observer insertion


def _kind(node, modules):
    """'quant' (quantizable op), 'share' (runs on its input's quantization), 'fixed' (a fixed
    output range) or None (float)."""
    if node.op == "call_module":
        m = modules[node.target]
        if isinstance(m, _QUANT_MODULES):
            return "quant"
        if type(m) in _SHARE_MODULES:
            return "share"
        return "fixed" if type(m) in _FIXED_MODULES else None
    if node.op == "call_function":
        if _fn(node) in _QUANT_FUNCS:
            return "quant"
        if _fn(node) in _SHARE_FUNCS:
            return "share"
        return "fixed" if _fn(node) in _FIXED_FUNCS else None
    if node.op == "call_method" and node.target in _SHARE_METHODS:
        return "share"
    if node.op == "call_method" and node.target in _FIXED_METHODS:
        return "fixed"
    return None


def _tensor_inputs(node):
    """The argument nodes of node that are activations (not weights or biases)."""
    if node.op == "call_function" and _fn(node) in _QUANT_FUNCS_WEIGHTED:
        return [node.args[0]] if isinstance(node.args[0], fx.Node) else []
    if node.op == "call_function" and _fn(node) in _functions("cat", "stack"):
        seq = node.args[0] if node.args else []
        return [a for a in seq if isinstance(a, fx.Node)]
    return [a for a in node.args if isinstance(a, fx.Node)]


class _Inserter:
    def __init__(self, gm):
        self.gm = gm
        self.count = 0
        self.modules = dict(gm.named_modules())

    def observer(self, after, observer_module):
        name = f"activation_post_process_{self.count}"
        self.count += 1
        self.gm.add_submodule(name, observer_module)
        self.modules[name] = observer_module
        with self.gm.graph.inserting_after(after):
            return self.gm.graph.call_module(name, (after,))


def _replace_arg(node, old, new):
    def swap(a):
        if a is old:
            return new
        if isinstance(a, (list, tuple)):
            return type(a)(swap(x) for x in a)
        return a

    node.args = tuple(swap(a) for a in node.args)
    node.kwargs = {k: swap(v) for k, v in node.kwargs.items()}


def _observe_input(ins, node, arg, qconfig, quantized):
    """An observer on the float value arg where node reads it."""
    obs = ins.observer(arg, qconfig.activation())
    _replace_arg(node, arg, obs)
    quantized[arg] = obs
    quantized[obs] = obs
    # Later quantized consumers of the same float value reuse this observer.
    for user in list(arg.users):
        if user is not obs and user is not node and _kind(user, ins.modules) is not None:
            _replace_arg(user, arg, obs)


def _is_dynamic(qconfig):
    return bool(getattr(qconfig.activation(), "is_dynamic", False))


def _prepare(model, qconfig_mapping, is_qat, example_inputs, prepare_custom_config):
    mapping = _as_mapping(qconfig_mapping)
    gm = _trace(model, prepare_custom_config)
    _fuse_graph(gm, is_qat)
    modules = dict(gm.named_modules())
    counters = {}
    qconfigs = {}
    for node in gm.graph.nodes:
        qconfigs[node] = _qconfig_for(node, modules, mapping, counters)
    if is_qat:
        qat_map = get_default_qat_module_mappings()
        for node in gm.graph.nodes:
            if node.op != "call_module" or qconfigs[node] is None:
                continue
            mod = modules[node.target]
            if type(mod) in qat_map:
                mod.qconfig = qconfigs[node]
                new = qat_map[type(mod)].from_float(mod)
                _set_module(gm, node.target, new)
                modules[node.target] = new
    ins = _Inserter(gm)
    quantized = {}  # value node -> observer node whose qparams it carries
    fused_relus = set()
    for node in list(gm.graph.nodes):
        qconfig = qconfigs.get(node)
        if qconfig is None or node.op in ("placeholder", "get_attr", "output"):
            continue
        if node in fused_relus:
            continue
        kind = _kind(node, ins.modules)
        if kind == "share":
            src = _tensor_inputs(node)
            dynamic = _is_dynamic(qconfig)
            if src and src[0] is node.args[0] and src[0] not in quantized and not dynamic:
                # A float value entering a share op (torch.flatten after torch.relu, a view of
                # a graph input) is observed first, as torch's backend config observes the
                # input of every op it lists; the op then runs on the quantized value.
                _observe_input(ins, node, src[0], qconfig, quantized)
            if src and src[0] in quantized:
                # As torch: the output is observed by the input's observer instance, called
                # again on the output (moving averages and histograms see both).
                shared = ins.modules[quantized[src[0]].target]
                out = ins.observer(node, shared)
                for user in list(node.users):
                    if user is not out:
                        _replace_arg(user, node, out)
                quantized[node] = out
                quantized[out] = out
            continue
        if kind not in ("quant", "fixed") or _is_dynamic(qconfig):
            continue
        for arg in _tensor_inputs(node):
            if arg not in quantized:
                _observe_input(ins, node, arg, qconfig, quantized)
        if node.op == "call_function" and _fn(node) in _QUANT_FUNCS_WEIGHTED:
            weight = node.args[1]
            if isinstance(weight, fx.Node) and qconfig.weight is not None:
                wobs = ins.observer(weight, qconfig.weight())
                _replace_arg(node, weight, wobs)
        # add/mul followed by relu is one pattern (torch's add_relu): observed after the relu.
        relu = _binary_relu(node, ins.modules)
        last = node if relu is None else relu
        if relu is not None:
            fused_relus.add(relu)
        out = ins.observer(last, qconfig.activation())
        for user in list(last.users):
            if user is not out:
                _replace_arg(user, last, out)
        quantized[last] = out
        quantized[out] = out
    gm.graph.lint()
    # A fresh GraphModule over the graph, as torch's prepare returns: it holds only the modules
    # the graph calls (not those fusion replaced), registered in the graph's order.
    gm = fx.GraphModule(gm, gm.graph)
    gm._qconfig_mapping = mapping
    gm._is_qat = is_qat
    gm._node_qconfig_by_name = {n.name: qconfigs.get(n) for n in gm.graph.nodes if n in qconfigs}
    return gm


def prepare_fx(
    model, qconfig_mapping, example_inputs, prepare_custom_config=None, backend_config=None
):
    """prepare_fx(model, qconfig_mapping, example_inputs, prepare_custom_config=None,
        backend_config=None)

    Traces an eval-mode model, fuses it and inserts observers for post-training static
    quantization; run calibration data through the result, then convert_fx."""
    if model.training:
        raise AssertionError("prepare_fx expects a model in eval mode; use prepare_qat_fx")
    return _prepare(model, qconfig_mapping, False, example_inputs, prepare_custom_config)


def prepare_qat_fx(
    model, qconfig_mapping, example_inputs, prepare_custom_config=None, backend_config=None
):
    """prepare_qat_fx(model, qconfig_mapping, example_inputs, prepare_custom_config=None,
        backend_config=None)

    Traces a training-mode model, fuses it for QAT, swaps modules for QAT modules and inserts
    fake-quantizers; train the result, then convert_fx."""
    if not model.training:
        raise AssertionError("prepare_qat_fx expects a model in training mode")
    return _prepare(model, qconfig_mapping, True, example_inputs, prepare_custom_config)


# ---------------------------------------------------------------------------------------------
# convert


def _is_observer_node(node, modules):
    from .quantize import _is_activation_post_process

    return node.op == "call_module" and _is_activation_post_process(modules.get(node.target))


def _qparams(observer):
    return observer.calculate_qparams()


def _quantize_args(observer):
    """(function, args after the input) quantizing with an observer's qparams."""
    from ... import quantize_per_channel, quantize_per_tensor  # the quantized-tensor core

    scale, zp = _qparams(observer)
    if _is_per_channel(observer.qscheme):
        return quantize_per_channel, (scale, zp, observer.ch_axis, observer.dtype)
    return quantize_per_tensor, (float(scale), int(zp), observer.dtype)


def _qparam_attrs(gm, graph, src, user, args):
    """args with the scale and zero point made buffers of gm read by get_attr nodes, named as
    torch's converted graphs name them: a value observed only as another op's input (its own
    node has no qconfig: a graph input, an op left float) after that op's module with `_input`
    (`linear_input_scale_0`, `_input_scale_0`), any other after its own node's module
    (`fc1_scale_0`; `_scale_0` outside modules)."""
    out = list(args)
    for i, name in enumerate(_qparam_names(gm, src, user)):
        value = out[i]
        if not isinstance(value, _C.Tensor):
            value = _torch.tensor(value)
        gm.register_buffer(name, value)
        out[i] = graph.get_attr(name)
    return tuple(out)


def _qparam_names(gm, src, user):
    """The next free scale and zero-point names for the value src read by user; each is
    reserved on gm (torch numbers them in its reference graph, so those of observers that
    lowering removes are skipped, not reused)."""
    by_name = getattr(gm, "_node_qconfig_by_name", {})
    if src.name in by_name and by_name[src.name] is None:
        prefix = f"{user.target if user.op == 'call_module' else ''}_input"
    else:
        prefix = src.target if src.op == "call_module" else ""
    taken = gm.__dict__.setdefault("_qparam_names_taken", set())  # dropped when _convert ends
    names = []
    for key in ("_scale_", "_zero_point_"):
        n = 0
        while hasattr(gm, f"{prefix}{key}{n}") or f"{prefix}{key}{n}" in taken:
            n += 1
        names.append(f"{prefix}{key}{n}")
        taken.add(names[-1])
    return names


def _convert(gm, is_reference):
    from .quantization_mappings import (
        get_default_dynamic_quant_module_mappings,
        get_default_static_quant_module_mappings,
    )

    gm = _copy_graph_module(gm)
    graph = gm.graph
    # a share op's output observer is its input's instance under a second name
    modules = dict(gm.named_modules(remove_duplicate=False))
    static_map = get_default_static_quant_module_mappings()
    dynamic_map = get_default_dynamic_quant_module_mappings()
    # nodes whose value is a quantized tensor in the converted graph -> the number of the
    # observer that gave it its qparams (None until its output observer is reached)
    quantized = {}
    names = _reference_names(graph, modules)
    dequantize_of = {}
    lowered_obs = set()  # output observers whose qparams a lowered add/mul already reads
    swapped = set()  # targets of the modules swapped for quantized ones
    gm_qconfigs = getattr(gm, "_node_qconfig_by_name", None)

    def dequantized(node, arg):
        """arg as a float tensor: one dequantize call after the quantized value, named as
        torch's reference graph names the dequantize of its observer."""
        if arg not in quantized:
            return arg
        if arg not in dequantize_of:
            number = quantized[arg]
            name = "dequantize" if not number else f"dequantize_{number}"
            with graph.inserting_after(arg):
                dequantize_of[arg] = graph.create_node(
                    "call_method", "dequantize", (arg,), name=name
                )
        return dequantize_of[arg]

    for node in list(graph.nodes):
        if node.op == "output":

            def fix(a):
                if isinstance(a, fx.Node) and a in quantized:
                    return dequantized(node, a)
                if isinstance(a, (list, tuple)):
                    return type(a)(fix(x) for x in a)
                return a

            node.args = tuple(fix(a) for a in node.args)
            continue
        if _is_observer_node(node, modules):
            obs = modules[node.target]
            src = node.args[0]
            consumer = next(iter(node.users), node)
            if src in quantized:
                # The output observer of a swapped module or a share op: already quantized.
                quantized[src] = names.get(node, (None, None))[0]
                if node not in lowered_obs:
                    _qparam_names(gm, src, next(iter(node.users), node))
                node.replace_all_uses_with(src)
                graph.erase_node(node)
                continue
            if getattr(obs, "dtype", None) in (_C.float32, None) or not hasattr(
                obs, "calculate_qparams"
            ):
                node.replace_all_uses_with(src)
                graph.erase_node(node)
                continue
            fn, args = _quantize_args(obs)
            with graph.inserting_before(node):
                args = _qparam_attrs(gm, graph, src, consumer, args)
                q = graph.create_node("call_function", fn, (src, *args), name=names[node][1])
            node.replace_all_uses_with(q)
            graph.erase_node(node)
            quantized[q] = names[node][0]
            continue
        if node.op == "call_module" and not is_reference:
            qconfig = _qconfig_of(gm, node)
            dcls = dynamic_map.get(type(modules[node.target]))
            if qconfig is not None and dcls is not None and _is_dynamic(qconfig):
                # A dynamic qconfig: the module swapped for its dynamic quantized form (float
                # in and out, so the graph around it is unchanged), as torch's convert_fx does.
                mod = modules[node.target]
                mod.qconfig = qconfig
                qmod = dcls.from_float(mod)
                _set_module(gm, node.target, qmod)
                modules[node.target] = qmod
                continue
        if node.op == "call_module" and node.target in swapped:
            # A module called again: already quantized with its first call's output qparams.
            quantized[node] = None
            continue
        kind = _kind(node, modules) if node.op != "placeholder" else None
        if kind in ("quant", "fixed") and gm_qconfigs and _qconfig_of(gm, node) is None:
            kind = None  # its qconfig is None: it stays float
        inputs = _tensor_inputs(node) if node.op not in ("placeholder", "get_attr") else []
        if kind in ("share", "fixed") and inputs and inputs[0] in quantized and not is_reference:
            quantized[node] = None
            continue
        out_obs_node = next((u for u in node.users if _is_observer_node(u, modules)), None)
        relu = _binary_relu(node, modules)
        if relu is not None and not is_reference and all(a in quantized for a in inputs):
            relu_obs = next((u for u in relu.users if _is_observer_node(u, modules)), None)
            if kind == "quant" and relu_obs is not None:
                q = _lower_binary(gm, node, modules[relu_obs.target], relu_obs, relu=True)
                lowered_obs.add(relu_obs)
                relu.replace_all_uses_with(q)
                graph.erase_node(relu)
                graph.erase_node(node)
                quantized[q] = None
                continue
        if kind == "quant" and out_obs_node is not None and all(a in quantized for a in inputs):
            out_obs = modules[out_obs_node.target]
            if node.op == "call_module" and not is_reference:
                mod = modules[node.target]
                qcls = static_map.get(type(mod))
                if qcls is not None:
                    for sub in mod.modules():
                        sub.qconfig = _qconfig_of(gm, node)
                    mod.activation_post_process = out_obs
                    qmod = qcls.from_float(mod)
                    _set_module(gm, node.target, qmod)
                    modules[node.target] = qmod
                    swapped.add(node.target)
                    quantized[node] = None
                    continue
            if _lowered_binary(node) is not None and not is_reference:
                q = _lower_binary(gm, node, out_obs, out_obs_node, relu=False)
                lowered_obs.add(out_obs_node)
                node.replace_all_uses_with(q)
                graph.erase_node(node)
                quantized[q] = None
                continue
            # Reference form: dequantize inputs, float op (weights quantize-dequantized through
            # their observers), then the output observer quantizes.
            # (A weight observer already became quantize_per_tensor/channel: it is dequantized
            # here with the activations.)
            for a in [x for x in _all_node_args(node) if x in quantized]:
                _replace_arg(node, a, dequantized(node, a))
            mod = modules.get(node.target) if node.op == "call_module" else None
            mod = mod[0] if isinstance(mod, nni._FusedModule) else mod  # a fused conv: its conv
            if hasattr(mod, "weight"):
                mod.qconfig = _qconfig_of(gm, node)
                _fake_quantize_module_weight(mod)
            continue
        if _reads_metadata(node) and not is_reference:
            continue  # x.shape, x.size(0) of a quantized x need no dequantize (torch's too)
        # A float op: quantized inputs are dequantized for it.
        for a in [x for x in _all_node_args(node) if x in quantized]:
            _replace_arg(node, a, dequantized(node, a))
    for name in [n for n in list(modules) if n.startswith("activation_post_process_")]:
        if hasattr(gm, name):
            delattr(gm, name)
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    gm.__dict__.pop("_qparam_names_taken", None)
    return gm


def _reference_names(graph, modules):
    """observer node -> (its number, the name of its quantize call): torch converts to the
    reference graph first (a quantize and a dequantize call per observer, numbered in graph
    order) and lowers that, so the nodes left keep the reference graph's names."""
    out = {}
    count = 0
    per_function = {}
    for node in graph.nodes:
        if not _is_observer_node(node, modules):
            continue
        obs = modules[node.target]
        if getattr(obs, "dtype", None) in (_C.float32, None) or not hasattr(
            obs, "calculate_qparams"
        ):
            continue
        base = "quantize_per_channel" if _is_per_channel(obs.qscheme) else "quantize_per_tensor"
        k = per_function.get(base, 0)
        per_function[base] = k + 1
        out[node] = (count, base if not k else f"{base}_{k}")
        count += 1
    return out


def _reads_metadata(node):
    """A node that reads a tensor's shape, dtype or device, not its values."""
    if node.op == "call_method":
        return node.target in ("size", "dim", "numel")
    return (
        node.op == "call_function"
        and node.target is getattr
        and len(node.args) == 2
        and node.args[1] in ("shape", "dtype", "device", "ndim")
    )


def _binary_relu(node, modules):
    """The relu that is the sole user of an add/mul node of two tensors, else None."""
    if _lowered_binary(node) is None or len(node.users) != 1:
        return None
    (user,) = node.users
    return user if _is_relu(user, modules) else None


def _lower_binary(gm, node, observer, obs_node, relu):
    """A call of torch's quantized add/mul (add_relu/mul_relu) in place of node, with the output
    observer's scale and zero point."""
    from ..nn.quantized import _ops as qops
    from ..nn.quantized._ops_namespace import namespace

    fn = _lowered_binary(node)
    if relu:
        fn = qops.add_relu if fn is qops.add else qops.mul_relu
    op = getattr(namespace, fn.__name__)  # the graph calls ember.ops.quantized.<op>
    scale, zp = _qparams(observer)
    with gm.graph.inserting_before(node):
        qparams = _qparam_attrs(gm, gm.graph, node, obs_node, (float(scale), int(zp)))
        return gm.graph.call_function(op, (*node.args, *qparams))


def _lowered_binary(node):
    """The quantized op of an add/mul node of two tensors (no alpha), else None."""
    if node.kwargs or len(node.args) != 2 or not all(isinstance(a, fx.Node) for a in node.args):
        return None
    from ..nn.quantized import _ops as qops

    if node.op == "call_method":
        return {"add": qops.add, "mul": qops.mul}.get(node.target)
    if node.op != "call_function":
        return None
    if _fn(node) is operator.add or _fn(node) in _functions("add"):
        return qops.add
    if _fn(node) is operator.mul or _fn(node) in _functions("mul"):
        return qops.mul
    return None


def _copy_graph_module(gm):
    """A copy of a prepared GraphModule: its own graph (sharing the op targets, which are not
    all copyable) and its own modules, parameters and observers."""
    graph = fx.Graph()
    out = graph.graph_copy(gm.graph, {})
    graph.output(out)
    new = fx.GraphModule(gm, graph, type(gm).__name__)
    for name, child in list(new.named_children()):
        setattr(new, name, copy.deepcopy(child))
    for name, p in list(new.named_parameters(recurse=False)):
        setattr(new, name, nn.Parameter(p.detach().clone(), p.requires_grad))
    for attr in ("_node_qconfig_by_name", "_qconfig_mapping", "_is_qat"):
        if hasattr(gm, attr):
            setattr(new, attr, getattr(gm, attr))
    return new


def _all_node_args(node):
    out = []

    def walk(a):
        if isinstance(a, fx.Node):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            for x in a:
                walk(x)
        elif isinstance(a, dict):
            for x in a.values():
                walk(x)

    walk(node.args)
    walk(node.kwargs)
    return out


def _qconfig_of(gm, node):
    return getattr(gm, "_node_qconfig_by_name", {}).get(node.name)


def _fake_quantize_module_weight(mod):
    """Replaces a float module's weight by its quantize-dequantized value (reference form)."""
    from ...autograd.grad_mode import no_grad

    if mod.qconfig is None:
        return
    obs = getattr(mod, "weight_fake_quant", None) or mod.qconfig.weight()
    obs(mod.weight.detach())
    fn, args = _quantize_args(obs)
    with no_grad():
        mod.weight.copy_(fn(mod.weight.detach(), *args).dequantize())


def convert_fx(
    graph_module,
    convert_custom_config=None,
    _remove_qconfig=True,
    qconfig_mapping=None,
    backend_config=None,
    keep_original_weights=False,
):
    """convert_fx(graph_module, convert_custom_config=None, _remove_qconfig=True,
        qconfig_mapping=None, backend_config=None, keep_original_weights=False)

    Turns a calibrated (or QAT-trained) prepared model into a quantized one: quantized modules
    where they exist, torch's reference form for functional ops."""
    return _hand_back(graph_module, _convert(graph_module, is_reference=False))


def convert_to_reference_fx(
    graph_module,
    convert_custom_config=None,
    _remove_qconfig=True,
    qconfig_mapping=None,
    backend_config=None,
):
    """convert_to_reference_fx(graph_module, convert_custom_config=None, _remove_qconfig=True,
        qconfig_mapping=None, backend_config=None)

    The reference quantized model: every quantizable op in float between dequantize and
    quantize, with quantize-dequantized weights."""
    return _hand_back(graph_module, _convert(graph_module, is_reference=True))


def _hand_back(prepared, converted):
    """torch's conversion rewrites the prepared model's graph in place and registers the
    quantization parameters on it, so after convert_fx the prepared model's `.graph` is the
    converted graph (its code, not recompiled, still runs the observers). The same here: the
    prepared graph's nodes are replaced by a copy of the converted ones, without recompiling."""
    graph = prepared.graph
    for node in reversed(list(graph.nodes)):
        graph.erase_node(node)
    graph.output(graph.graph_copy(converted.graph, {}))
    for node in graph.nodes:
        if node.op != "get_attr" or "." in node.target or hasattr(prepared, node.target):
            continue
        value = getattr(converted, node.target)
        if isinstance(value, _C.Tensor):
            prepared.register_buffer(node.target, value)
        else:
            setattr(prepared, node.target, value)
    return converted
