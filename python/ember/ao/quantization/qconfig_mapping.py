"""QConfigMapping (torch.ao.quantization.qconfig_mapping): qconfigs by global default, object
type (module class, function or method name), module-name regex and module name, with torch's
default mappings per backend."""

from collections import OrderedDict

from ... import _C, nn
from ...nn import functional as F
from .fake_quantize import FixedQParamsFakeQuantize, default_weight_fake_quant
from .observer import (
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer,
    default_placeholder_observer,
    default_weight_observer,
)
from .qconfig import (
    QConfig,
    default_quint8_weight_qconfig,
    default_reuse_input_qconfig,
    get_default_qat_qconfig,
    get_default_qconfig,
)

__all__ = ["get_default_qconfig_mapping", "get_default_qat_qconfig_mapping", "QConfigMapping"]

_GLOBAL_DICT_KEY = ""
_OBJECT_TYPE_DICT_KEY = "object_type"
_MODULE_NAME_REGEX_DICT_KEY = "module_name_regex"
_MODULE_NAME_DICT_KEY = "module_name"
_MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY = "module_name_object_type_order"

_FIXED_QPARAMS_OP_TO_OBSERVER = {
    nn.Hardsigmoid: default_fixed_qparams_range_0to1_observer,
    F.hardsigmoid: default_fixed_qparams_range_0to1_observer,
    "hardsigmoid": default_fixed_qparams_range_0to1_observer,
    "hardsigmoid_": default_fixed_qparams_range_0to1_observer,
    nn.Sigmoid: default_fixed_qparams_range_0to1_observer,
    _C.sigmoid: default_fixed_qparams_range_0to1_observer,
    "sigmoid": default_fixed_qparams_range_0to1_observer,
    "sigmoid_": default_fixed_qparams_range_0to1_observer,
    nn.Softmax: default_fixed_qparams_range_0to1_observer,
    nn.Tanh: default_fixed_qparams_range_neg1to1_observer,
    _C.tanh: default_fixed_qparams_range_neg1to1_observer,
    "tanh": default_fixed_qparams_range_neg1to1_observer,
    "tanh_": default_fixed_qparams_range_neg1to1_observer,
}

_QCONFIG_STYLE_ORDER = [
    "global_qconfig",
    "object_type_qconfigs",
    "module_name_regex_qconfigs",
    "module_name_qconfigs",
    "module_name_object_type_order_qconfigs",
]


class QConfigMapping:
    """QConfigMapping()

    Which qconfig each part of a model gets. The most specific setting wins: module name and
    object-type order, then module name, then module-name regex, then object type, then the
    global qconfig. Setters return the mapping, so calls chain."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        """set_global(global_qconfig)

        The qconfig of everything not matched by a more specific setting."""
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        """set_object_type(object_type, qconfig)

        The qconfig of a module class, a function, or a method name."""
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        """set_module_name_regex(module_name_regex, qconfig)

        The qconfig of submodules whose qualified names match the regex (first match wins)."""
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        """set_module_name(module_name, qconfig)

        The qconfig of the submodule with this qualified name (and its children)."""
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        """set_module_name_object_type_order(module_name, object_type, index, qconfig)

        The qconfig of the index-th call of object_type inside module_name (FX mode)."""
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for style in _QCONFIG_STYLE_ORDER:
            out += f"\n {style}"
            qconfigs = getattr(self, style)
            if isinstance(qconfigs, OrderedDict) and len(qconfigs) > 0:
                for key, qconfig in qconfigs.items():
                    out += f"\n  {key}: {qconfig}"
            else:
                out += f"\n  {qconfigs}"
        return out + "\n)"

    def to_dict(self):
        """to_dict()

        The mapping as torch's legacy qconfig_dict."""
        return {
            _GLOBAL_DICT_KEY: self.global_qconfig,
            _OBJECT_TYPE_DICT_KEY: list(self.object_type_qconfigs.items()),
            _MODULE_NAME_REGEX_DICT_KEY: list(self.module_name_regex_qconfigs.items()),
            _MODULE_NAME_DICT_KEY: list(self.module_name_qconfigs.items()),
            _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY: [
                (*k, v) for k, v in self.module_name_object_type_order_qconfigs.items()
            ],
        }

    @classmethod
    def from_dict(cls, qconfig_dict):
        """from_dict(qconfig_dict)

        A mapping from torch's legacy qconfig_dict."""
        conf = cls()
        if _GLOBAL_DICT_KEY in qconfig_dict:
            conf.set_global(qconfig_dict[_GLOBAL_DICT_KEY])
        for object_type, qconfig in qconfig_dict.get(_OBJECT_TYPE_DICT_KEY, []):
            conf.set_object_type(object_type, qconfig)
        for regex, qconfig in qconfig_dict.get(_MODULE_NAME_REGEX_DICT_KEY, []):
            conf.set_module_name_regex(regex, qconfig)
        for name, qconfig in qconfig_dict.get(_MODULE_NAME_DICT_KEY, []):
            conf.set_module_name(name, qconfig)
        for name, object_type, index, qconfig in qconfig_dict.get(
            _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY, []
        ):
            conf.set_module_name_object_type_order(name, object_type, index, qconfig)
        return conf


def _get_default_qconfig_mapping(is_qat, backend, version):
    qconfig = (
        get_default_qat_qconfig(backend, version)
        if is_qat
        else get_default_qconfig(backend, version)
    )
    default_weight = default_weight_fake_quant if is_qat else default_weight_observer
    if backend in ("fbgemm", "x86"):
        qconfig_transpose = QConfig(activation=qconfig.activation, weight=default_weight)
    else:
        qconfig_transpose = qconfig
    qconfig_layernorm = QConfig(activation=qconfig.activation, weight=default_placeholder_observer)
    mapping = (
        QConfigMapping()
        .set_global(qconfig)
        .set_object_type("reshape", default_reuse_input_qconfig)
        .set_object_type(nn.ConvTranspose1d, qconfig_transpose)
        .set_object_type(nn.ConvTranspose2d, qconfig_transpose)
        .set_object_type(nn.ConvTranspose3d, qconfig_transpose)
        .set_object_type(F.conv_transpose1d, qconfig_transpose)
        .set_object_type(F.conv_transpose2d, qconfig_transpose)
        .set_object_type(F.conv_transpose3d, qconfig_transpose)
        .set_object_type(F.layer_norm, qconfig_layernorm)
        .set_object_type(nn.LayerNorm, qconfig_layernorm)
        .set_object_type(nn.PReLU, default_quint8_weight_qconfig)
    )
    by_observer = {}
    for op, observer in _FIXED_QPARAMS_OP_TO_OBSERVER.items():
        if id(observer) not in by_observer:
            act = FixedQParamsFakeQuantize.with_args(observer=observer) if is_qat else observer
            by_observer[id(observer)] = QConfig(activation=act, weight=default_weight)
        mapping.set_object_type(op, by_observer[id(observer)])
    return mapping


def get_default_qconfig_mapping(backend="x86", version=0):
    """get_default_qconfig_mapping(backend='x86', version=0)

    torch's default post-training QConfigMapping: get_default_qconfig(backend) globally, fixed
    qparams for sigmoid/tanh/hardsigmoid/softmax, input-reusing observers for reshape."""
    return _get_default_qconfig_mapping(False, backend, version)


def get_default_qat_qconfig_mapping(backend="x86", version=1):
    """get_default_qat_qconfig_mapping(backend='x86', version=1)

    torch's default QAT QConfigMapping (get_default_qat_qconfig(backend) globally)."""
    return _get_default_qconfig_mapping(True, backend, version)
