"""ember.ao.ns._numeric_suite (torch.ao.ns._numeric_suite): eager-mode tools comparing a float
model with its quantized version: their weights (``compare_weights``), the outputs of matching
modules (``compare_model_outputs``, through loggers attached as activation post-processes) and
each quantized module against its float original fed the same input (``compare_model_stub``,
through ``Shadow`` wrappers)."""

from ...nn.modules.module import Module
from ..nn.quantized import DeQuantize
from ..nn.quantized import Linear as _QLinear
from ..nn.quantized.dynamic import LSTM as _DynamicLSTM
from ..nn.quantized.dynamic import Linear as _DynamicLinear
from ..quantization import _qtypes
from ..quantization.qconfig import QConfig
from ..quantization.quantization_mappings import get_default_compare_output_module_list
from ..quantization.quantize import prepare

__all__ = [
    "NON_LEAF_MODULE_TO_ADD_OBSERVER_ALLOW_LIST",
    "Logger",
    "OutputLogger",
    "Shadow",
    "ShadowLogger",
    "compare_model_outputs",
    "compare_model_stub",
    "compare_weights",
    "get_logger_dict",
    "get_matching_activations",
    "prepare_model_outputs",
    "prepare_model_with_stubs",
]


def _non_leaf_modules():
    from ...nn import LSTM

    return {_QLinear, _DynamicLinear, _DynamicLSTM, LSTM}


# Modules holding children that still get an output logger (their children are not observed).
NON_LEAF_MODULE_TO_ADD_OBSERVER_ALLOW_LIST = _non_leaf_modules()


def _find_match(names, key, postfix):
    """The entry of `names` naming the module `key` belongs to (`key` ending in `postfix`):
    the module path compared with its dots dropped, against each name's path without its last
    one or two components; a packed Linear's ``fc._packed_params._packed_params`` matches by
    the path before its last two components."""
    parts = key.split(".")
    if parts[-1] != postfix:
        return None
    candidates = ["".join(parts[:-1])]
    if postfix == "_packed_params":
        candidates.append("".join(parts[:-2]))
    for i, target in enumerate(candidates):
        if i and not target:
            return None
        for name in names:
            pieces = name.split(".")
            if target in ("".join(pieces[:-1]), "".join(pieces[:-2])):
                return name
    return None


def compare_weights(float_dict, quantized_dict):
    """compare_weights(float_dict, quantized_dict) -> dict

    For each weight of the quantized model's state dict, the matching float weight:
    ``{key: {"float": float_weight, "quantized": quantized_weight}}``."""
    out = {}
    for key, value in quantized_dict.items():
        match = _find_match(float_dict, key, "weight")
        if match is not None:
            out[key] = {"float": float_dict[match], "quantized": value}
            continue
        match = _find_match(float_dict, key, "_packed_params")
        if match is not None:
            out[key] = {"float": float_dict[match], "quantized": value[0]}
    return out


def _collect_stats(module, found, prefix):
    if any(isinstance(child, Logger) for child in module.children()):
        child = next(c for c in module.children() if isinstance(c, Logger))
        found[f"{prefix}.stats" if prefix else "stats"] = child.stats
    for name, child in module.named_children():
        _collect_stats(child, found, f"{prefix}.{name}" if prefix else name)


def get_logger_dict(mod, prefix=""):
    """get_logger_dict(mod, prefix='') -> dict

    The stats of every Logger under `mod`, keyed by the path of the module holding it plus
    ``.stats``."""
    found = {}
    _collect_stats(mod, found, prefix)
    return found


class Logger(Module):
    """Logger()

    The base of the loggers: a ``stats`` dict and the dtype it records."""

    def __init__(self):
        super().__init__()
        self.stats = {}
        self.dtype = _qtypes.quint8

    def forward(self, x):
        """forward(x): records nothing (the subclasses record)."""


class ShadowLogger(Logger):
    """ShadowLogger()

    Records a quantized module's output and its float shadow's, in ``stats["quantized"]`` and
    ``stats["float"]`` (the first element of an output holding more than one)."""

    def __init__(self):
        super().__init__()
        self.stats["float"] = []
        self.stats["quantized"] = []

    def forward(self, x, y):
        if len(x) > 1:
            x = x[0]
        if len(y) > 1:
            y = y[0]
        self.stats["quantized"].append(x.detach())
        self.stats["float"].append(y.detach())


class OutputLogger(Logger):
    """OutputLogger()

    Records each output of the module it observes in ``stats["tensor_val"]`` and passes it on."""

    def __init__(self):
        super().__init__()
        self.stats["tensor_val"] = []

    def forward(self, x):
        self.stats["tensor_val"].append(x)
        return x


def _dequantized(x):
    if type(x) is list:
        return [_dequantized(v) for v in x]
    return x.dequantize() if x.is_quantized else x


class Shadow(Module):
    """Shadow(q_module, float_module, logger_cls)

    Runs the quantized module (``orig_module``) and its float original (``shadow_module``, fed
    the dequantized input) and logs both outputs; returns the quantized one."""

    def __init__(self, q_module, float_module, logger_cls):
        super().__init__()
        self.orig_module = q_module
        self.shadow_module = float_module
        self.dequant = DeQuantize()
        self.logger = logger_cls()

    def forward(self, *x):
        args = list(x)
        output = self.orig_module(*args)
        shadow = self.shadow_module(*_dequantized(args))
        self.logger(output, shadow)
        return output

    def _both(self, name, x, y, dequantize_y):
        output = getattr(self.orig_module, name)(x, y)
        shadow = getattr(self.shadow_module, name)(
            x.dequantize(), y.dequantize() if dequantize_y else y
        )
        self.logger(output, shadow)
        return output

    def add(self, x, y):
        return self._both("add", x, y, True)

    def add_scalar(self, x, y):
        return self._both("add_scalar", x, y, False)

    def mul(self, x, y):
        return self._both("mul", x, y, True)

    def mul_scalar(self, x, y):
        return self._both("mul_scalar", x, y, False)

    def add_relu(self, x, y):
        return self._both("add_relu", x, y, True)

    def cat(self, x, dim=0):
        output = self.orig_module.cat(x, dim)
        shadow = self.shadow_module.cat([v.dequantize() for v in x], dim)
        self.logger(output, shadow)
        return output


def _same_module_types(a, b):
    return [type(m) for m in a.modules()] == [type(m) for m in b.modules()]


def prepare_model_with_stubs(float_module, q_module, module_swap_list, logger_cls):
    """prepare_model_with_stubs(float_module, q_module, module_swap_list, logger_cls)

    Replaces, in place, each child of `q_module` whose float counterpart's type is in
    `module_swap_list` (and differs from it) by a Shadow of the two."""
    float_children = dict(float_module.named_children())
    swapped = {}
    for name, child in q_module.named_children():
        if name not in float_children:
            continue
        float_child = float_children[name]
        if type(float_child) not in module_swap_list:
            prepare_model_with_stubs(float_child, child, module_swap_list, logger_cls)
        elif not _same_module_types(child, float_child):
            swapped[name] = Shadow(child, float_child, logger_cls)
    for name, shadow in swapped.items():
        q_module._modules[name] = shadow


def compare_model_stub(float_model, q_model, module_swap_list, *data, logger_cls=ShadowLogger):
    """compare_model_stub(float_model, q_model, module_swap_list, *data,
        logger_cls=ShadowLogger) -> dict

    Shadows the quantized modules whose float types are in `module_swap_list`, runs `q_model`
    on `data` and returns the loggers' stats (get_logger_dict)."""
    prepare_model_with_stubs(float_model, q_model, module_swap_list, logger_cls)
    q_model(*data)
    return get_logger_dict(q_model)


def get_matching_activations(float_module, q_module):
    """get_matching_activations(float_module, q_module) -> dict

    The logged outputs of the quantized model's modules with those of the matching float
    modules: ``{key: {"float": [...], "quantized": [...]}}``."""
    float_dict = get_logger_dict(float_module)
    q_dict = get_logger_dict(q_module)
    out = {}
    for key, stats in q_dict.items():
        if len(stats["tensor_val"]) == 0:
            continue
        match = _find_match(sorted(float_dict, reverse=True), key, "stats")
        if match is not None:
            out[key] = {
                "float": float_dict[match]["tensor_val"],
                "quantized": stats["tensor_val"],
            }
    return out


def prepare_model_outputs(float_module, q_module, logger_cls=OutputLogger, allow_list=None):
    """prepare_model_outputs(float_module, q_module, logger_cls=OutputLogger, allow_list=None)

    Attaches, in place, a `logger_cls` to the output of every module of both models whose type
    is in `allow_list` (get_default_compare_output_module_list() by default)."""
    if allow_list is None:
        allow_list = get_default_compare_output_module_list()
    debug = QConfig(activation=logger_cls, weight=None)
    float_module.qconfig = debug
    prepare(float_module, inplace=True, allow_list=allow_list, prepare_custom_config_dict={})
    q_module.qconfig = debug
    prepare(
        q_module,
        inplace=True,
        allow_list=allow_list,
        observer_non_leaf_module_list=NON_LEAF_MODULE_TO_ADD_OBSERVER_ALLOW_LIST,
        prepare_custom_config_dict={},
    )


def compare_model_outputs(float_model, q_model, *data, logger_cls=OutputLogger, allow_list=None):
    """compare_model_outputs(float_model, q_model, *data, logger_cls=OutputLogger,
        allow_list=None) -> dict

    Logs the outputs of the matching modules of both models on `data` and pairs them
    (get_matching_activations)."""
    if allow_list is None:
        allow_list = get_default_compare_output_module_list()
    prepare_model_outputs(float_model, q_model, logger_cls, allow_list)
    float_model(*data)
    q_model(*data)
    return get_matching_activations(float_model, q_model)
