"""quantize_fx._convert_to_reference_decomposed_fx: the reference quantized model with every
quantize / dequantize written as a quantized_decomposed call on plain integer tensors, the form
torch 2.13's FX flow hands to torch.export and its q/dq pattern matchers (torch's PT2E flow, the
same q/dq graph from an exported model, moved out of torch into torchao).

Built on the reference conversion (quantize_fx._convert): each activation quantize_per_tensor /
dequantize pair it writes becomes quantize_per_tensor / dequantize_per_tensor.default with the
observer's scale, zero point and integer range as constants, as torch's graph holds them; each
quantized Linear / Conv keeps its float weight and quantizes and dequantizes it in its forward
(per channel for the x86 / fbgemm qconfigs), so that ember.export captures those calls too."""

import copy

from .... import _op_overloads, nn
from ...._type_info import finfo, iinfo
from ....nn import functional as F
from ... import _torch as _t
from .. import _qtypes as qt
from ..utils import _is_per_channel, get_qparam_dict


def _ops():
    """ember.ops.quantized_decomposed, whose first use defines the operators."""
    return _op_overloads.ops.quantized_decomposed


_INT_REPR = {qt.quint8: _t.uint8, qt.qint8: _t.int8, qt.qint32: _t.int32}


def _buffer(value, dtype):
    """A qparam as a buffer: a tensor's copy (its dtype kept, as torch's), a number in dtype."""
    if isinstance(value, _t.Tensor):
        return value.detach().clone()
    return _t.tensor(value, dtype=dtype)


class _DecomposedWeight:
    """A Linear / Conv whose forward reads its weight quantized and dequantized (torch's
    reference modules with is_decomposed set): buffers weight_scale, weight_zero_point and
    weight_axis, as torch's."""

    def _init_weight_qparams(self, qparams):
        scale, zero_point = qparams["scale"], qparams["zero_point"]
        per_channel = _is_per_channel(qparams["qscheme"])
        self.register_buffer("weight_scale", _buffer(scale, _t.float32))
        self.register_buffer("weight_zero_point", _buffer(zero_point, _t.int32))
        self.register_buffer("weight_axis", _buffer(qparams.get("axis", 0), _t.int32))
        self.weight_qscheme, self.weight_dtype = qparams["qscheme"], qparams["dtype"]
        self.weight_axis_int = qparams.get("axis", 0) if per_channel else None
        self.weight_quant_min = qparams.get("quant_min")
        self.weight_quant_max = qparams.get("quant_max")

    def get_weight(self):
        ops = _ops()
        bounds = (self.weight_quant_min, self.weight_quant_max, _INT_REPR[self.weight_dtype])
        if self.weight_axis_int is None:
            args = (self.weight_scale, self.weight_zero_point, *bounds)
            q = ops.quantize_per_tensor.tensor(self.weight, *args)
            return ops.dequantize_per_tensor.tensor(q, *args)
        args = (self.weight_scale, self.weight_zero_point, self.weight_axis_int, *bounds)
        q = ops.quantize_per_channel.default(self.weight, *args)
        return ops.dequantize_per_channel.default(q, *args)

    def _get_name(self):
        float_cls = next(c for c in type(self).__mro__ if c in _REFERENCE)
        return f"Quantized{float_cls.__name__}(Reference)"


class _Linear(_DecomposedWeight, nn.Linear):
    def forward(self, input):
        return F.linear(input, self.get_weight(), self.bias)


class _Conv(_DecomposedWeight):
    def forward(self, input):
        return self._conv_forward(input, self.get_weight(), self.bias)


_REFERENCE = {
    nn.Linear: _Linear,
    **{c: type(c.__name__, (_Conv, c), {}) for c in (nn.Conv1d, nn.Conv2d, nn.Conv3d)},
}


def _reference_module(float_mod, qconfig):
    """A copy of float_mod (a Linear / Conv, or a fused module whose first child is one) with
    its weight quantized in forward by qconfig's weight observer; None for other modules."""
    inner = float_mod[0] if isinstance(float_mod, nn.Sequential) else float_mod
    cls = _REFERENCE.get(type(inner))
    if cls is None:
        return None
    observer = qconfig.weight()
    observer(inner.weight.detach())
    qparams = get_qparam_dict(observer)
    if qparams["dtype"] not in _INT_REPR:
        return None
    bounds = iinfo(_INT_REPR[qparams["dtype"]])
    qparams.setdefault("quant_min", bounds.min)
    qparams.setdefault("quant_max", bounds.max)
    out = copy.deepcopy(float_mod)
    ref = out[0] if isinstance(out, nn.Sequential) else out
    ref.__class__ = cls
    ref._init_weight_qparams(qparams)
    return out


def _is_dequantize(node):
    return node.op == "call_method" and node.target == "dequantize"


def _decompose_weights(prepared, gm):
    from ._patterns import _qconfig_of, _set_module

    for node in gm.graph.nodes:
        qconfig = _qconfig_of(prepared, node)
        if node.op != "call_module" or qconfig is None:
            continue
        if not any(isinstance(a, type(node)) and _is_dequantize(a) for a in node.args):
            continue  # not quantized: left float
        ref = _reference_module(prepared.get_submodule(node.target), qconfig)
        if ref is not None:
            _set_module(gm, node.target, ref)


def _decompose_dynamic(graph, node, observer):
    """A reference quantize_per_tensor_dynamic call as torch's decomposed graph writes it: the
    qparams chosen by choose_qparams(_symmetric).tensor over the observer's integer range, then
    the .tensor quantize / dequantize overloads reading them."""
    import operator

    dtype = _INT_REPR[observer.dtype]
    bounds = iinfo(dtype)
    qmin = bounds.min if observer.quant_min is None else observer.quant_min
    qmax = bounds.max if observer.quant_max is None else observer.quant_max
    symmetric = observer.qscheme in (qt.per_tensor_symmetric, qt.per_channel_symmetric)
    choose = _ops().choose_qparams_symmetric if symmetric else _ops().choose_qparams
    src = node.args[0]
    eps = finfo(_t.float32).eps
    with graph.inserting_before(node):
        qparams = graph.call_function(choose.tensor, (src, qmin, qmax, eps, dtype))
        scale = graph.call_function(operator.getitem, (qparams, 0))
        zp = graph.call_function(operator.getitem, (qparams, 1))
        args = (scale, zp, qmin, qmax, dtype)
        q = graph.call_function(_ops().quantize_per_tensor.tensor, (src, *args))
    for user in list(node.users):
        if _is_dequantize(user):
            with graph.inserting_before(user):
                dq = graph.call_function(_ops().dequantize_per_tensor.tensor, (q, *args))
            user.replace_all_uses_with(dq)
            graph.erase_node(user)
    node.replace_all_uses_with(q)
    graph.erase_node(node)


def _decompose_activations(gm, observers):
    """Each reference quantize call (named as quantize_fx._reference_names names it) and its
    dequantize users, rewritten with the quantized_decomposed operators."""
    graph = gm.graph
    for node in list(graph.nodes):
        observer = observers.get(node.name) if node.op == "call_function" else None
        if observer is None:
            continue
        if getattr(observer, "is_dynamic", False):
            _decompose_dynamic(graph, node, observer)
            continue
        src, scale_node, zp_node = node.args[:3]
        dtype = _INT_REPR[observer.dtype]
        bounds = (observer.quant_min, observer.quant_max, dtype)
        if _is_per_channel(observer.qscheme):
            qparams = (scale_node, zp_node, observer.ch_axis)
            q_op, dq_op = _ops().quantize_per_channel.default, _ops().dequantize_per_channel.default
        else:
            scale, zp = getattr(gm, scale_node.target), getattr(gm, zp_node.target)
            qparams = (float(scale), int(zp))
            q_op, dq_op = _ops().quantize_per_tensor.default, _ops().dequantize_per_tensor.default
        with graph.inserting_before(node):
            q = graph.call_function(q_op, (src, *qparams, *bounds))
        for user in list(node.users):
            if _is_dequantize(user):
                with graph.inserting_before(user):
                    dq = graph.call_function(dq_op, (q, *qparams, *bounds))
                user.replace_all_uses_with(dq)
                graph.erase_node(user)
        node.replace_all_uses_with(q)
        graph.erase_node(node)
        for attr in (scale_node, zp_node):
            if not attr.users:
                graph.erase_node(attr)
                delattr(gm, attr.target)


def _convert_to_reference_decomposed_fx(
    graph_module, convert_custom_config=None, qconfig_mapping=None, backend_config=None
):
    """_convert_to_reference_decomposed_fx(graph_module, convert_custom_config=None,
        qconfig_mapping=None, backend_config=None)

    The reference quantized model (convert_to_reference_fx) with its quantize and dequantize
    calls as torch.ops.quantized_decomposed operators on integer tensors."""
    from ._convert import _convert, _hand_back, _reference_names

    modules = dict(graph_module.named_modules(remove_duplicate=False))
    observers = {
        q_name: modules[node.target]
        for node, (_, q_name) in _reference_names(graph_module.graph, modules).items()
    }
    gm = _convert(graph_module, is_reference=True)
    _decompose_weights(graph_module, gm)
    _decompose_activations(gm, observers)
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return _hand_back(graph_module, gm)
