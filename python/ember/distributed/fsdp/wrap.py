"""Which submodules FSDP1 wraps in their own FullyShardedDataParallel unit
(torch.distributed.fsdp.wrap): the auto-wrap policies and the wrap()/enable_wrap() pair.

A policy is called as policy(module=, recurse=, nonwrapped_numel=): with recurse=True it says
whether to look inside the module's children, with recurse=False whether to wrap the module
itself, given the number of its parameters not yet in a unit."""

import contextlib
import functools

__all__ = [
    "ModuleWrapPolicy",
    "enable_wrap",
    "lambda_auto_wrap_policy",
    "size_based_auto_wrap_policy",
    "transformer_auto_wrap_policy",
    "wrap",
]


def _default_leaf_and_excluded():
    from ...nn import ModuleDict, ModuleList, MultiheadAttention

    return {MultiheadAttention}, {ModuleList, ModuleDict}


def size_based_auto_wrap_policy(
    module,
    recurse,
    nonwrapped_numel,
    min_num_params=int(1e8),
    force_leaf_modules=None,
    exclude_wrap_modules=None,
):
    """size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=100000000,
        force_leaf_modules=None, exclude_wrap_modules=None) -> bool

    Wraps a module once at least min_num_params of its parameters are in no unit yet; never
    looks inside force_leaf_modules (default MultiheadAttention) and never wraps
    exclude_wrap_modules (default ModuleList and ModuleDict)."""
    leaf, excluded = _default_leaf_and_excluded()
    leaf = leaf if force_leaf_modules is None else force_leaf_modules
    excluded = excluded if exclude_wrap_modules is None else exclude_wrap_modules
    if recurse:
        return not isinstance(module, tuple(leaf))
    return nonwrapped_numel >= min_num_params and not isinstance(module, tuple(excluded))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)
        -> bool

    Wraps every module that is an instance of one of transformer_layer_cls."""
    if recurse:
        return True
    return isinstance(module, tuple(transformer_layer_cls))


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn) -> bool

    Wraps every module for which lambda_fn(module) is true."""
    if recurse:
        return True
    return bool(lambda_fn(module))


class ModuleWrapPolicy:
    """ModuleWrapPolicy(module_classes)

    Wraps every submodule that is an instance of one of module_classes."""

    def __init__(self, module_classes):
        self._module_classes = tuple(dict.fromkeys(module_classes))

    def __call__(self, module, recurse, *args, **kwargs):
        if recurse:
            return True
        return isinstance(module, self._module_classes)

    def __repr__(self):
        return f"ModuleWrapPolicy({', '.join(c.__name__ for c in self._module_classes)})"


def _recursive_wrap(module, policy, make_unit, ignored, root=False):
    """Wraps module's children (post-order) where policy says so, then module itself unless it
    is the root; returns (module or its unit, the parameter count now inside units)."""
    from ._fully_sharded_data_parallel import FullyShardedDataParallel

    if isinstance(module, FullyShardedDataParallel) or module in ignored:
        return module, 0
    free = _unwrapped_numel(module, ignored)
    if not policy(module=module, recurse=True, nonwrapped_numel=free):
        return module, 0
    total = 0
    for name, child in list(module.named_children()):
        wrapped, n = _recursive_wrap(child, policy, make_unit, ignored)
        if wrapped is not child:
            setattr(module, name, wrapped)
        total += n
    if not root and policy(module=module, recurse=False, nonwrapped_numel=free - total):
        return make_unit(module), free
    return module, total


def _unwrapped_numel(module, ignored):
    from ._fully_sharded_data_parallel import FullyShardedDataParallel

    skip = set()
    for m in module.modules():
        if isinstance(m, FullyShardedDataParallel) or m in ignored:
            skip |= {id(p) for p in m.parameters()}
    return sum(p.numel() for p in module.parameters() if id(p) not in skip)


_WRAP_CONTEXT = []  # (wrapper class, its keyword arguments) inside enable_wrap


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """enable_wrap(*, wrapper_cls, **wrapper_kwargs) -> ContextManager

    Inside the block, wrap(module) wraps module in wrapper_cls(module, **wrapper_kwargs)."""
    _WRAP_CONTEXT.append((wrapper_cls, wrapper_kwargs))
    try:
        yield
    finally:
        _WRAP_CONTEXT.pop()


def wrap(module, **wrap_overrides):
    """wrap(module, **wrap_overrides) -> nn.Module

    Inside enable_wrap, the module wrapped in the enabled wrapper class (its keyword arguments
    updated by wrap_overrides); outside, the module unchanged."""
    if not _WRAP_CONTEXT:
        return module
    cls, kwargs = _WRAP_CONTEXT[-1]
    return cls(module, **{**kwargs, **wrap_overrides})


def _policy_fn(policy):
    """The auto_wrap_policy argument as a callable (module, recurse, nonwrapped_numel)."""
    if isinstance(policy, (set, frozenset, list, tuple)):
        return ModuleWrapPolicy(policy)
    if isinstance(policy, functools.partial) or callable(policy):
        return policy
    raise ValueError(f"FullyShardedDataParallel: unsupported auto_wrap_policy {policy!r}")
