"""FX graph mode quantization, prepare step: each node's qconfig from the QConfigMapping
(module name, regex, object type, global), QAT module swaps and observer insertion at the edges
torch's x86 backend config observes."""

import re

from .... import fx, nn
from ...nn import intrinsic as nni
from ..qconfig_mapping import QConfigMapping
from ..quantization_mappings import get_default_qat_module_mappings
from ._fuse import _fuse_graph, _trace
from ._patterns import (
    _QUANT_FUNCS_WEIGHTED,
    _dynamic_op,
    _fn,
    _fused_relu,
    _is_dynamic,
    _kind,
    _replace_arg,
    _set_module,
    _tensor_inputs,
    _unwrap,
)


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
    elif node.op == "get_attr":
        # as torch: an attribute takes its owning module's qconfig (type, regex, name), so
        # a functional op's weight is observed under that module's scale names
        name = node.target.rpartition(".")[0]
        typ = type(modules.get(name))
        counters = None
    else:
        return None
    qconfig = mapping.global_qconfig
    # a function matches through the package's argument guards (torch.sigmoid in the mapping,
    # the graph calling the guarded ember.sigmoid)
    plain = _unwrap(typ)
    for key, qc in mapping.object_type_qconfigs.items():
        if key is typ or key == typ or (isinstance(key, type) and _fused_root(typ) is key):
            qconfig = qc
            break
        if not isinstance(key, (str, type)) and _unwrap(key) is plain:
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
    if mapping.module_name_object_type_order_qconfigs and counters is not None:
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


def _observe_dynamic(ins, node, qconfig, quantized):
    """torch's observers for a dynamically quantized op: its input's (a PlaceholderObserver
    with is_dynamic: convert quantizes with qparams chosen per call; a recurrent module's state
    stays float) and, for F.linear, its weight's; none on the output, which stays float."""
    arg = node.args[0] if node.args else None
    if isinstance(arg, fx.Node) and arg not in quantized:
        _observe_input(ins, node, arg, qconfig, quantized)
    if node.op == "call_function" and isinstance(node.args[1], fx.Node):
        _replace_arg(node, node.args[1], ins.observer(node.args[1], qconfig.weight()))


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
                relu = _fused_relu(node, ins.modules)  # x + 1.0 then relu: add_relu's pattern
                last = node if relu is None else relu
                if relu is not None:
                    fused_relus.add(relu)
                out = ins.observer(last, shared)
                for user in list(last.users):
                    if user is not out:
                        _replace_arg(user, last, out)
                quantized[last] = out
                quantized[out] = out
            continue
        if _is_dynamic(qconfig):
            if _dynamic_op(node, ins.modules):
                _observe_dynamic(ins, node, qconfig, quantized)
            continue
        if kind not in ("quant", "fixed"):
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
        relu = _fused_relu(node, ins.modules)
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
