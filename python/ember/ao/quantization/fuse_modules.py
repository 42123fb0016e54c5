"""fuse_modules / fuse_modules_qat (torch.ao.quantization.fuse_modules): replace named module
sequences by one fused module (the first position) and Identity (the rest)."""

import copy

from ... import nn
from .fuser_method_mappings import get_fuser_method

__all__ = ["fuse_known_modules", "fuse_modules", "fuse_modules_qat", "get_fuser_method"]


def _get_module(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set_module(model, name, new):
    *path, last = name.split(".")
    for part in path:
        model = getattr(model, part)
    setattr(model, last, new)


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None)

    The list of replacements for mod_list: the fused module then Identity for each other
    position. The first module's forward pre-hooks and the last one's forward hooks move to
    the fused module."""
    types = tuple(type(m) for m in mod_list)
    fuser = get_fuser_method(types, additional_fuser_method_mapping)
    new_mod = [None] * len(mod_list)
    fused = fuser(is_qat, *mod_list)
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    new_mod[0] = fused
    for i in range(1, len(mod_list)):
        identity = nn.Identity()
        identity.training = mod_list[0].training
        new_mod[i] = identity
    return new_mod


def _fuse_modules_helper(model, names, is_qat, fuser_func, fuse_custom_config_dict=None):
    extra = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    mods = [_get_module(model, n) for n in names]
    new_mods = fuser_func(mods, is_qat, extra)
    for name, new in zip(names, new_mods):
        _set_module(model, name, new)


def _fuse_modules(model, modules_to_fuse, is_qat, inplace, fuser_func, fuse_custom_config_dict):
    if not inplace:
        model = copy.deepcopy(model)
    if all(isinstance(x, str) for x in modules_to_fuse):
        modules_to_fuse = [modules_to_fuse]
    for names in modules_to_fuse:
        _fuse_modules_helper(model, list(names), is_qat, fuser_func, fuse_custom_config_dict)
    return model


def fuse_modules(
    model,
    modules_to_fuse,
    inplace=False,
    fuser_func=fuse_known_modules,
    fuse_custom_config_dict=None,
):
    """fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
        fuse_custom_config_dict=None)

    Fuses each named list of modules (conv/bn/relu, linear/relu, bn/relu ...) of an eval-mode
    model: batch norms are folded into the conv or linear before them."""
    return _fuse_modules(
        model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict
    )


def fuse_modules_qat(
    model,
    modules_to_fuse,
    inplace=False,
    fuser_func=fuse_known_modules,
    fuse_custom_config_dict=None,
):
    """fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
        fuse_custom_config_dict=None)

    The QAT form of fuse_modules (training mode): conv + bn become ConvBn modules that keep
    the batch norm for prepare_qat to fold into the fake-quantized weight."""
    return _fuse_modules(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)
