"""The op tables and node predicates of FX graph mode quantization, shared by its fusion,
prepare and convert steps: which modules, functions and methods are quantizable ops, which run on
their input's quantization ("share"), which have fixed output qparams, and which node arguments
are activations."""

import operator

from .... import _C, fx, nn
from ....nn import functional as F
from ...nn import intrinsic as nni
from ...nn import qat as nnqat
from ...nn.intrinsic import qat as nniqat


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
    from ...._ops import creation, elementwise, products, shape

    out = set()
    for name in names:
        for src in (_C, F, elementwise, products, shape, creation):
            fn = getattr(src, name, None)
            if fn is not None:
                out.add(_unwrap(fn))
    return out


_LINEAR = _unwrap(F.linear)
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
        if _scalar_binary(node) is not None:
            return "share"  # torch's backend config: one tensor argument shares its observer
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


def _replace_arg(node, old, new):
    def swap(a):
        if a is old:
            return new
        if isinstance(a, (list, tuple)):
            return type(a)(swap(x) for x in a)
        return a

    node.args = tuple(swap(a) for a in node.args)
    node.kwargs = {k: swap(v) for k, v in node.kwargs.items()}


_DYNAMIC_MODULES = (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell, nn.RNNCell)


def _dynamic_op(node, modules):
    """A Linear or recurrent module, or F.linear: what torch's backend config quantizes
    dynamically (its input observed, its output float)."""
    if node.op == "call_module":
        return type(modules[node.target]) in _DYNAMIC_MODULES
    return node.op == "call_function" and _fn(node) is _LINEAR


def _is_dynamic(qconfig):
    return bool(getattr(qconfig.activation(), "is_dynamic", False))


def _is_observer_node(node, modules):
    from ..quantize import _is_activation_post_process

    return node.op == "call_module" and _is_activation_post_process(modules.get(node.target))


def _fused_relu(node, modules):
    """The relu that torch's backend config takes as one pattern with node, observed after the
    relu: the sole user of an add/mul of two tensors (any relu) or of a tensor and a number
    (not Tensor.relu), or of F.linear / F.conv* (nn.ReLU or F.relu); else None."""
    if len(node.users) != 1:
        return None
    (user,) = node.users
    if _lowered_binary(node) is not None:
        return user if _is_relu(user, modules) else None
    if _scalar_binary(node) is not None:  # torch's (add/mul, nn.ReLU / F.relu / torch.relu)
        return user if _is_relu(user, modules) and user.op != "call_method" else None
    if node.op == "call_function" and _fn(node) in _QUANT_FUNCS_WEIGHTED:
        return user if _fuses(user, modules) else None
    return None


def _lowered_binary(node):
    """The quantized op of an add/mul node of two tensors (no alpha), else None."""
    if node.kwargs or len(node.args) != 2 or not all(isinstance(a, fx.Node) for a in node.args):
        return None
    from ...nn.quantized import _ops as qops

    if node.op == "call_method":
        return {"add": qops.add, "mul": qops.mul}.get(node.target)
    if node.op != "call_function":
        return None
    return _add_mul_function(node, qops)


def _add_mul_function(node, qops):
    """qops.add / qops.mul for a call of an add / mul function (operator or ember's), else None."""
    fn = _fn(node)
    if fn is operator.add or fn in _functions("add"):
        return qops.add
    if fn is operator.mul or fn in _functions("mul"):
        return qops.mul
    return None


def _scalar_binary(node):
    """The quantized op of an add/mul call of one tensor and one Python number (either order,
    no alpha), else None: torch lowers it to quantized.add/mul's Scalar overload (its backend
    config lists the functions, not the Tensor methods)."""
    if node.kwargs or len(node.args) != 2 or node.op != "call_function":
        return None
    nodes = [a for a in node.args if isinstance(a, fx.Node)]
    numbers = [a for a in node.args if isinstance(a, (int, float)) and not isinstance(a, bool)]
    if len(nodes) != 1 or len(numbers) != 1:
        return None
    from ...nn.quantized import _ops as qops

    return _add_mul_function(node, qops)


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
