"""FX graph mode quantization, convert step: observers become quantize calls, quantizable
modules are swapped for quantized (or dynamic quantized) modules, add/mul of quantized tensors
are lowered to quantized ops, other quantizable ops run in torch's reference form, and
dequantize calls are put where quantized values reach float consumers."""

import copy

from .... import _C, fx, nn
from ....fx._namespace import Namespace
from ... import _torch
from ...nn import intrinsic as nni
from ..utils import _is_per_channel
from ._patterns import (
    _LINEAR,
    _all_node_args,
    _dynamic_op,
    _fn,
    _fused_relu,
    _is_dynamic,
    _is_observer_node,
    _kind,
    _lowered_binary,
    _qconfig_of,
    _replace_arg,
    _scalar_binary,
    _set_module,
    _tensor_inputs,
)


def _qparams(observer):
    return observer.calculate_qparams()


def _quantize_args(observer):
    """(function, args after the input) quantizing with an observer's qparams."""
    from .... import quantize_per_channel, quantize_per_tensor  # the quantized-tensor core

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
    from ..quantization_mappings import (
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
            if is_reference and _is_dynamic_observer(obs):
                # torch's reference form: quantized with qparams chosen per call
                from .... import backends  # the engine decides reduce_range, as torch's

                with graph.inserting_before(node):
                    args = (src, obs.dtype, backends.quantized.engine in ("fbgemm", "x86"))
                    q = graph.create_node(
                        "call_function", _quantize_dynamic(), args, name=names[node][1]
                    )
                node.replace_all_uses_with(q)
                graph.erase_node(node)
                quantized[q] = names[node][0]
                continue
            if (
                _is_dynamic_observer(obs)
                or getattr(obs, "dtype", None) in (_C.float32, None)
                or not hasattr(obs, "calculate_qparams")
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
        qconfig = _qconfig_of(gm, node)
        if qconfig is not None and _is_dynamic(qconfig) and _dynamic_op(node, modules):
            if is_reference:
                # dequantized input, quantize-dequantized weight (torch's reference Linear)
                for a in [x for x in _all_node_args(node) if x in quantized]:
                    _replace_arg(node, a, dequantized(node, a))
                if node.op == "call_module":
                    modules[node.target].qconfig = qconfig
                    _fake_quantize_module_weight(modules[node.target])
                continue
            if node.op == "call_function" and node.args[1] in quantized:
                _lower_dynamic_linear(gm, node)  # torch's quantized::linear_dynamic
                continue
        if node.op == "call_module" and not is_reference:
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
            # its qconfig is None: it stays float, but for a fixed-qparams op between a quantized
            # input and an observed output (its neighbours' qconfigs), which torch's lowering
            # (dq -> op -> q becomes op on the quantized tensor) runs quantized all the same
            observed = any(_is_observer_node(u, modules) for u in node.users)
            inputs = _tensor_inputs(node) if node.op != "placeholder" else []
            if not (kind == "fixed" and observed and inputs and inputs[0] in quantized):
                kind = None
        inputs = _tensor_inputs(node) if node.op not in ("placeholder", "get_attr") else []
        if kind in ("share", "fixed") and inputs and inputs[0] in quantized and not is_reference:
            if _scalar_binary(node) is not None:
                # torch's quantized.add/mul Scalar overload: the output's qparams follow the
                # input's (the op shares its input's observer)
                from ...nn.quantized._ops_namespace import namespace

                relu = _fused_relu(node, modules)
                name = _scalar_binary(node).__name__ + ("_relu" if relu is not None else "")
                with graph.inserting_before(node):
                    q = graph.call_function(getattr(namespace, name), node.args)
                if relu is not None:
                    relu.replace_all_uses_with(q)
                    graph.erase_node(relu)
                node.replace_all_uses_with(q)
                graph.erase_node(node)
                node = q
            quantized[node] = None
            continue
        out_obs_node = next((u for u in node.users if _is_observer_node(u, modules)), None)
        relu = _fused_relu(node, modules)
        if relu is not None and not is_reference and all(a in quantized for a in inputs):
            relu_obs = next((u for u in relu.users if _is_observer_node(u, modules)), None)
            if kind == "quant" and relu_obs is not None and _lowerable(node, quantized):
                q = _lower(gm, node, modules[relu_obs.target], relu_obs, relu=True)
                lowered_obs.add(relu_obs)
                relu.replace_all_uses_with(q)
                graph.erase_node(relu)
                if q is not node:
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
            if _lowerable(node, quantized) and not is_reference:
                q = _lower(gm, node, out_obs, out_obs_node, relu=False)
                lowered_obs.add(out_obs_node)
                if q is not node:
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
    if _fold_packed_weights(gm):
        graph.eliminate_dead_code()
        # as torch's fold_weight: a new GraphModule holding only what the graph reads (the
        # float weights, biases and weight qparams that were packed are gone)
        gm = _rebuilt(gm, graph)
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
        if _is_dynamic_observer(obs):
            base = "quantize_per_tensor_dynamic"
        elif getattr(obs, "dtype", None) in (_C.float32, None) or not hasattr(
            obs, "calculate_qparams"
        ):
            continue
        elif _is_per_channel(obs.qscheme):
            base = "quantize_per_channel"
        else:
            base = "quantize_per_tensor"
        k = per_function.get(base, 0)
        per_function[base] = k + 1
        out[node] = (count, base if not k else f"{base}_{k}")
        count += 1
    return out


def _is_dynamic_observer(obs):
    return bool(getattr(obs, "is_dynamic", False)) and getattr(obs, "dtype", None) in (
        _C.quint8,
        _C.qint8,
    )


def _quantize_dynamic():
    from .... import quantize_per_tensor_dynamic

    return quantize_per_tensor_dynamic


def _lower_dynamic_linear(gm, node):
    """F.linear(x, quantized weight, bias) as quantized::linear_dynamic(x, packed weight,
    reduce_range), as torch's convert_fx lowers it (reduce_range True, its default)."""
    from ...nn.quantized._ops_namespace import namespace

    x, qweight, *rest = node.args
    kwargs = dict(node.kwargs)
    if "bias" in kwargs:
        kwargs["B"] = kwargs.pop("bias")
    with gm.graph.inserting_before(node):
        packed = gm.graph.call_function(namespace.linear_prepack, (qweight, *rest), kwargs)
    node.target = namespace.linear_dynamic
    node.args = (x, packed, True)
    node.kwargs = {}


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


def _lowerable(node, quantized):
    """Whether convert_fx lowers node to a quantized op: an add/mul of two tensors, or an
    F.linear whose weight was quantized (torch's STATIC_LOWER_FUNCTIONAL_MAP; its F.conv*
    lowering needs every conv argument written out, so those stay in reference form here)."""
    if _lowered_binary(node) is not None:
        return True
    return (
        node.op == "call_function"
        and _fn(node) is _LINEAR
        and len(node.args) >= 2
        and node.args[1] in quantized
    )


def _lower(gm, node, observer, obs_node, relu):
    """A call of the quantized op (with the output observer's qparams) in place of node; an
    F.linear node is retargeted in place (it keeps its name, as torch's lowering keeps it)."""
    if _lowered_binary(node) is not None:
        return _lower_binary(gm, node, observer, obs_node, relu)
    from ...nn.quantized._ops_namespace import namespace

    x, qweight, *rest = node.args
    kwargs = dict(node.kwargs)
    if "bias" in kwargs:  # linear_prepack's schema names it B
        kwargs["B"] = kwargs.pop("bias")
    scale, zp = _qparams(observer)
    with gm.graph.inserting_before(node):
        packed = gm.graph.call_function(namespace.linear_prepack, (qweight, *rest), kwargs)
        qparams = _qparam_attrs(gm, gm.graph, node, obs_node, (float(scale), int(zp)))
    node.target = namespace.linear_relu if relu else namespace.linear
    node.args = (x, packed, *qparams)
    node.kwargs = {}
    return node


def _fold_packed_weights(gm):
    """Each linear_prepack whose inputs come from attributes only (not from graph inputs) run
    once at conversion and read from an attribute `_packed_weight_N`, as torch's fold_weight
    does; returns whether any was folded."""
    from ...nn.quantized._ops_namespace import namespace

    folded = False
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not namespace.linear_prepack:
            continue
        try:
            value = _attribute_value(gm, node)
        except _ReadsInput:
            continue
        n = 0
        while hasattr(gm, f"_packed_weight_{n}"):
            n += 1
        setattr(gm, f"_packed_weight_{n}", value)
        with gm.graph.inserting_before(node):
            attr = gm.graph.get_attr(f"_packed_weight_{n}")
        node.replace_all_uses_with(attr)
        gm.graph.erase_node(node)
        folded = True
    return folded


class _ReadsInput(Exception):
    pass


def _attribute_value(gm, node):
    """node's value computed from gm's attributes; _ReadsInput where it needs a graph input."""

    def value(a):
        return fx.map_arg(a, lambda n: _attribute_value(gm, n))

    if node.op == "get_attr":
        out = gm
        for part in node.target.split("."):
            out = getattr(out, part)
        return out
    if node.op == "call_function":
        return node.target(*value(node.args), **value(node.kwargs))
    if node.op == "call_method":
        self_, *args = value(node.args)
        return getattr(self_, node.target)(*args, **value(node.kwargs))
    raise _ReadsInput


def _rebuilt(gm, graph):
    new = fx.GraphModule(gm, graph, type(gm).__name__)
    new._register_state_dict_hook(_save_packed_weights)
    new.register_load_state_dict_pre_hook(_load_packed_weights)
    for attr in ("_node_qconfig_by_name", "_qconfig_mapping", "_is_qat", "_qparam_names_taken"):
        if attr in gm.__dict__:
            setattr(new, attr, gm.__dict__[attr])
    return new


def _is_packed_weight(name, value):
    from ...nn.quantized._ops import PackedLinearWeight

    return name.startswith("_packed_weight_") and isinstance(value, PackedLinearWeight)


def _save_packed_weights(module, destination, prefix, local_metadata):
    """The folded packed weights are attributes, not buffers: saved under their names, as
    torch's converted models save theirs."""
    for name, value in vars(module).items():
        if _is_packed_weight(name, value):
            destination[prefix + name] = value


def _load_packed_weights(module, state_dict, prefix, *_):
    for key in [k for k in state_dict if k.startswith(prefix)]:
        name = key[len(prefix) :]
        if _is_packed_weight(name, state_dict[key]):
            setattr(module, name, state_dict.pop(key))


def _lower_binary(gm, node, observer, obs_node, relu):
    """A call of torch's quantized add/mul (add_relu/mul_relu) in place of node, with the output
    observer's scale and zero point."""
    from ...nn.quantized import _ops as qops
    from ...nn.quantized._ops_namespace import namespace

    fn = _lowered_binary(node)
    if relu:
        fn = qops.add_relu if fn is qops.add else qops.mul_relu
    op = getattr(namespace, fn.__name__)  # the graph calls ember.ops.quantized.<op>
    scale, zp = _qparams(observer)
    with gm.graph.inserting_before(node):
        qparams = _qparam_attrs(gm, gm.graph, node, obs_node, (float(scale), int(zp)))
        return gm.graph.call_function(op, (*node.args, *qparams))


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


def _fake_quantize_module_weight(mod):
    """Replaces a float module's weight by its quantize-dequantized value (reference form); a
    recurrent module's weights (weight_ih_l0, ...) each with an observer of its own, as
    torch's reference RNN modules quantize them."""
    from ....autograd.grad_mode import no_grad

    if mod.qconfig is None:
        return
    names = ["weight"] if hasattr(mod, "weight") else []
    if isinstance(mod, (nn.RNNBase, nn.RNNCellBase)):
        names = [n for n, _ in mod.named_parameters(recurse=False) if n.startswith("weight")]
    for name in names:
        weight = getattr(mod, name)
        obs = getattr(mod, "weight_fake_quant", None) or mod.qconfig.weight()
        obs(weight.detach())
        fn, args = _quantize_args(obs)
        with no_grad():
            weight.copy_(fn(weight.detach(), *args).dequantize())


def _hand_back(prepared, converted):
    """torch's conversion rewrites the prepared model's graph in place and registers the
    quantization parameters on it, so after convert_fx the prepared model's `.graph` is the
    converted graph (its code, not recompiled, still runs the observers). The same here: the
    prepared graph's nodes are replaced by a copy of the converted ones, without recompiling."""
    graph = prepared.graph
    for node in reversed(list(graph.nodes)):
        graph.erase_node(node)
    # rebuilt from scratch, so the converted nodes keep their names (erased names stay taken)
    graph._graph_namespace = Namespace()
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
