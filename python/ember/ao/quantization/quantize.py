"""Eager-mode quantization workflows (torch.ao.quantization.quantize): propagate qconfigs,
attach observers through forward hooks (prepare), swap modules for QAT modules (prepare_qat)
or quantized ones (convert), and the one-call forms quantize, quantize_qat, quantize_dynamic."""

import copy
import inspect
import itertools
import warnings

from ... import nn
from ..nn.intrinsic import _FusedModule
from . import _qtypes as qt
from .fake_quantize import FakeQuantizeBase
from .observer import ObserverBase
from .qconfig import (
    default_dynamic_qconfig,
    float16_dynamic_qconfig,
    float_qparams_weight_only_qconfig,
    float_qparams_weight_only_qconfig_4bit,
)
from .qconfig_mapping import _FIXED_QPARAMS_OP_TO_OBSERVER
from .quantization_mappings import (
    _quantized,
    get_default_dynamic_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_qconfig_propagation_list,
    get_default_static_quant_module_mappings,
    get_default_static_quant_reference_module_mappings,
)
from .stubs import DeQuantStub, QuantWrapper

__all__ = [
    "get_default_custom_config_dict",
    "propagate_qconfig_",
    "add_quant_dequant",
    "prepare",
    "quantize",
    "quantize_dynamic",
    "prepare_qat",
    "quantize_qat",
    "convert",
    "swap_module",
]

_DEFAULT_CUSTOM_CONFIG_DICT = {
    "float_to_observed_custom_module_class": {},
    "observed_to_quantized_custom_module_class": {},
}


def get_default_custom_config_dict():
    """get_default_custom_config_dict()

    The default custom-module configuration (no custom modules)."""
    return copy.deepcopy(_DEFAULT_CUSTOM_CONFIG_DICT)


def _is_activation_post_process(module):
    return isinstance(module, (ObserverBase, FakeQuantizeBase))


def _propagate_qconfig_helper(
    module, qconfig_dict, qconfig_parent=None, prefix="", prepare_custom_config_dict=None
):
    module_qconfig = qconfig_dict.get(type(module), qconfig_parent)
    module_qconfig = qconfig_dict.get(prefix, module_qconfig)
    module_qconfig = getattr(module, "qconfig", module_qconfig)
    module.qconfig = module_qconfig
    cfg = prepare_custom_config_dict or {}
    skip_names = cfg.get("non_traceable_module_name", [])
    skip_classes = cfg.get("non_traceable_module_class", [])
    for name, child in module.named_children():
        child_prefix = prefix + "." + name if prefix else name
        if name in skip_names or type(child) in skip_classes:
            continue
        _propagate_qconfig_helper(child, qconfig_dict, module_qconfig, child_prefix, cfg)


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None)

    Gives every submodule a .qconfig: its own if set, else the one qconfig_dict names for its
    qualified name or its type, else its parent's. In place."""
    _propagate_qconfig_helper(
        module, qconfig_dict or {}, prepare_custom_config_dict=prepare_custom_config_dict
    )


def _observer_forward_hook(self, input, output):
    return self.activation_post_process(output)


def _observer_forward_pre_hook(self, input):
    return self.activation_post_process(input[0])


def _register_activation_post_process_hook(module, pre_hook=False):
    if pre_hook:
        module.register_forward_pre_hook(_observer_forward_pre_hook, prepend=True)
    else:
        module.register_forward_hook(_observer_forward_hook, prepend=True)


def _is_memoryless(observer):
    return hasattr(observer, "averaging_constant") and observer.averaging_constant == 1


def _activation_is_memoryless(qconfig):
    act = qconfig.activation()
    if isinstance(act, FakeQuantizeBase) and hasattr(act, "activation_post_process"):
        return _is_memoryless(act.activation_post_process)
    return _is_memoryless(act)


def _special_act_post_process(module):
    """The fixed-qparams fake-quantizer of a training-mode sigmoid/tanh/hardsigmoid/softmax."""
    from .fake_quantize import FixedQParamsFakeQuantize

    if not module.training:
        return None
    observer = _FIXED_QPARAMS_OP_TO_OBSERVER.get(type(module))
    if observer is None:
        return None
    return FixedQParamsFakeQuantize.with_args(observer=observer)


def _float_functionals():
    nnq, _, _ = _quantized()
    if nnq is None:
        return ()
    return tuple(
        c for c in (getattr(nnq, "FloatFunctional", None), getattr(nnq, "QFunctional", None)) if c
    )


def _has_no_children(module):
    return len(module._modules) == 0


def _add_observer_(
    module,
    qconfig_propagation_list=None,
    non_leaf_module_list=None,
    device=None,
    custom_module_class_mapping=None,
):
    if qconfig_propagation_list is None:
        qconfig_propagation_list = get_default_qconfig_propagation_list()
    custom_module_class_mapping = custom_module_class_mapping or {}
    functionals = _float_functionals()

    def needs_observation(m):
        return getattr(m, "qconfig", None) is not None

    def insert(m, special=None):
        if needs_observation(m) and not isinstance(m, DeQuantStub):
            m.add_module(
                "activation_post_process", special() if special else m.qconfig.activation()
            )
            _register_activation_post_process_hook(m, pre_hook=_activation_is_memoryless(m.qconfig))

    for _, child in module.named_children():
        if type(child) is nn.Dropout:
            continue
        if functionals and isinstance(child, functionals):
            if needs_observation(child):
                child.activation_post_process = child.qconfig.activation()
        elif isinstance(child, _FusedModule):
            if needs_observation(child):
                insert(child)
        elif non_leaf_module_list is not None and type(child) in non_leaf_module_list:
            if needs_observation(child):
                insert(child)
        elif _special_act_post_process(child) is not None:
            insert(child, _special_act_post_process(child))
        elif needs_observation(child) and type(child) in custom_module_class_mapping:
            observed = custom_module_class_mapping[type(child)].from_float(child)
            setattr(module, _name_of(module, child), observed)
            insert(observed)
        else:
            _add_observer_(
                child,
                qconfig_propagation_list,
                non_leaf_module_list,
                device,
                custom_module_class_mapping,
            )
    if (
        _has_no_children(module)
        and not isinstance(module, nn.Sequential)
        and type(module) in qconfig_propagation_list
    ):
        insert(module)
    if (
        hasattr(module, "weight_fake_quant")
        and not isinstance(module, nn.Sequential)
        and type(module) in qconfig_propagation_list
    ):
        insert(module)


def _name_of(parent, child):
    for name, c in parent.named_children():
        if c is child:
            return name
    raise KeyError("child not found")


def add_quant_dequant(module):
    """add_quant_dequant(module)

    Wraps every leaf module that has a qconfig in a QuantWrapper."""
    if _has_no_children(module) and getattr(module, "qconfig", None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


def prepare(
    model,
    inplace=False,
    allow_list=None,
    observer_non_leaf_module_list=None,
    prepare_custom_config_dict=None,
):
    """prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
        prepare_custom_config_dict=None)

    Propagates qconfigs and attaches an observer (qconfig.activation()) to the output of every
    module that will be quantized, through a forward hook, ready for calibration."""
    cfg = prepare_custom_config_dict or get_default_custom_config_dict()
    custom = cfg.get("float_to_observed_custom_module_class", {})
    if not inplace:
        model = copy.deepcopy(model)
    propagation = allow_list if allow_list is not None else get_default_qconfig_propagation_list()
    propagate_qconfig_(model, qconfig_dict=None)
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        warnings.warn(
            "None of the submodule got qconfig applied. Make sure you passed correct "
            "configuration through `qconfig_dict` or by assigning the `.qconfig` attribute "
            "directly on submodules",
            stacklevel=2,
        )
    _add_observer_(
        model, propagation, observer_non_leaf_module_list, custom_module_class_mapping=custom
    )
    return model


def _remove_activation_post_process(module):
    if hasattr(module, "activation_post_process") and _is_activation_post_process(
        module.activation_post_process
    ):
        delattr(module, "activation_post_process")
    for hooks, fn in (
        (module._forward_pre_hooks, _observer_forward_pre_hook),
        (module._forward_hooks, _observer_forward_hook),
    ):
        for key in [k for k, h in hooks.items() if h is fn]:
            hooks.pop(key)


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    _remove_activation_post_process(module)


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """quantize(model, run_fn, run_args, mapping=None, inplace=False)

    Static post-training quantization in one call: prepare, run_fn(model, *run_args) to
    calibrate, convert."""
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """quantize_dynamic(model, qconfig_spec=None, dtype=torch.qint8, mapping=None, inplace=False)

    Swaps Linear/LSTM/... for dynamically quantized modules: weights quantized now,
    activations quantized on the fly at each call. qconfig_spec is a set of module types or
    names (taking the dtype's default qconfig) or a dict of them to qconfigs."""
    dtype = qt.qint8 if dtype is None else dtype
    model.eval()
    if qconfig_spec is None:
        if dtype == qt.qint8:
            types = (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell)
            qconfig_spec = dict.fromkeys(types, default_dynamic_qconfig)
        elif dtype == qt.float16:
            types = (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell)
            qconfig_spec = dict.fromkeys(types, float16_dynamic_qconfig)
        elif dtype == qt.quint8:
            qconfig_spec = dict.fromkeys(
                (nn.EmbeddingBag, nn.Embedding), float_qparams_weight_only_qconfig
            )
        elif dtype == qt.quint4x2:
            qconfig_spec = {nn.EmbeddingBag: float_qparams_weight_only_qconfig_4bit}
        else:
            raise ValueError(
                f"Don't know how to quantize with default settings for {dtype}. Provide full "
                "qconfig please"
            )
    elif isinstance(qconfig_spec, set):
        default = {
            id(qt.qint8): default_dynamic_qconfig,
            id(qt.float16): float16_dynamic_qconfig,
            id(qt.quint8): float_qparams_weight_only_qconfig,
            id(qt.quint4x2): float_qparams_weight_only_qconfig_4bit,
        }.get(id(dtype))
        if default is None:
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def prepare_qat(model, mapping=None, inplace=False):
    """prepare_qat(model, mapping=None, inplace=False)

    Swaps modules for their QAT forms (fake-quantized weights; conv-bn kept for folding) and
    attaches fake-quantizers to activations. The model must be in training mode."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_dict=None)
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


def quantize_qat(model, run_fn, run_args, inplace=False):
    """quantize_qat(model, run_fn, run_args, inplace=False)

    Quantization-aware training in one call: prepare_qat, run_fn(model, *run_args) to train,
    convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model


def convert(
    module,
    mapping=None,
    inplace=False,
    remove_qconfig=True,
    is_reference=False,
    convert_custom_config_dict=None,
    use_precomputed_fake_quant=False,
):
    """convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
        convert_custom_config_dict=None, use_precomputed_fake_quant=False)

    Swaps each module with a qconfig whose type the mapping names for the mapped class's
    from_float(module) (by default the quantized modules), then drops qconfigs and observers."""
    if not inplace:
        module = copy.deepcopy(module)
    _convert(
        module,
        mapping,
        inplace=True,
        is_reference=is_reference,
        convert_custom_config_dict=convert_custom_config_dict,
        use_precomputed_fake_quant=use_precomputed_fake_quant,
    )
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def _convert(
    module,
    mapping=None,
    inplace=False,
    is_reference=False,
    convert_custom_config_dict=None,
    use_precomputed_fake_quant=False,
):
    if mapping is None:
        mapping = (
            get_default_static_quant_reference_module_mappings()
            if is_reference
            else get_default_static_quant_module_mappings()
        )
    cfg = convert_custom_config_dict or get_default_custom_config_dict()
    custom = cfg.get("observed_to_quantized_custom_module_class", {})
    if not inplace:
        module = copy.deepcopy(module)
    reassign = {}
    for name, mod in module.named_children():
        if not isinstance(mod, _FusedModule) and type(mod) not in custom:
            _convert(mod, mapping, True, is_reference, cfg, use_precomputed_fake_quant)
        reassign[name] = swap_module(mod, mapping, custom, use_precomputed_fake_quant)
    for key, value in reassign.items():
        module._modules[key] = value
    return module


def swap_module(mod, mapping, custom_module_class_mapping, use_precomputed_fake_quant=False):
    """swap_module(mod, mapping, custom_module_class_mapping, use_precomputed_fake_quant=False)

    mod's replacement: mapping[type(mod)].from_float(mod) when mod has a qconfig and its type
    is mapped, else mod. The replacement keeps mod's user hooks (not the observer hook)."""
    if getattr(mod, "qconfig", None) is None:
        return mod
    if type(mod) in custom_module_class_mapping:
        new_mod = custom_module_class_mapping[type(mod)].from_observed(mod)
    elif type(mod) in mapping:
        qmod = mapping[type(mod)]
        try:
            params = inspect.signature(qmod.from_float).parameters
        except (TypeError, ValueError):
            params = {}
        if "use_precomputed_fake_quant" in params:
            new_mod = qmod.from_float(mod, use_precomputed_fake_quant=use_precomputed_fake_quant)
        else:
            new_mod = qmod.from_float(mod)
    else:
        return mod
    for hook in mod._forward_pre_hooks.values():
        if hook is not _observer_forward_pre_hook:
            new_mod.register_forward_pre_hook(hook)
    for hook in mod._forward_hooks.values():
        if hook is not _observer_forward_hook:
            new_mod.register_forward_hook(hook)
    return new_mod
