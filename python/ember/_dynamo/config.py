"""ember._dynamo.config: the knobs of ember.compile's capture, with torch's names.

``recompile_limit`` (alias ``cache_size_limit``): how many captured entries one compiled function
keeps; a call whose guards match none of them once the limit is reached runs eagerly (with one
warning). ``patch(**changes)`` sets values for a with block or a decorated function."""

import contextlib
import functools
import sys
import types

recompile_limit = 8
accumulated_recompile_limit = 256
# Sizes change between calls -> the next capture treats them as symbolic (torch's default).
automatic_dynamic_shapes = True
assume_static_by_default = True
# A backend that raises: False -> BackendCompilerFailed; True -> a warning and eager execution.
suppress_errors = False
verbose = False
# Tensor.item()/tolist() (integer tensors) become graph values instead of graph breaks (torch's
# unbacked scalars); fullgraph=True implies it, as in torch.
capture_scalar_outputs = False
# Ops whose result's shape depends on tensor data (indexing by a boolean mask, masked_select,
# repeat_interleave with tensor repeats) are graph values instead of graph breaks, as torch's;
# nonzero, argwhere and unique are graph values either way, as in torch 2.13.
capture_dynamic_output_shape_ops = False
# A graph break splits the capture into graphs before and after it (Note [Partial graphs]).
# True: the graphs are compiled (and counted) and later calls replay them where that measured
# faster than running the function eagerly (three timed calls each way; a replay pays for
# entering a function mode); "always": replay every call; False: a function with a break runs
# eagerly on every call and no graph is compiled.
partial_graphs = True
# Capture-time detection of Python side effects (print, outer lists, attributes, globals).
detect_side_effects = True

_NAMES = (
    "recompile_limit",
    "accumulated_recompile_limit",
    "automatic_dynamic_shapes",
    "assume_static_by_default",
    "suppress_errors",
    "verbose",
    "detect_side_effects",
    "capture_scalar_outputs",
    "capture_dynamic_output_shape_ops",
    "partial_graphs",
)


def patch(arg1=None, arg2=None, **changes):
    """patch(arg1=None, arg2=None, **changes)

    A context manager (and decorator) that sets config values and restores them afterwards:
    ``patch(recompile_limit=2)``, ``patch("recompile_limit", 2)`` or ``patch({...})``."""
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    module = sys.modules[__name__]
    for name in changes:
        if not hasattr(module, name):
            raise AttributeError(f"ember._dynamo.config: no config value named {name!r}")

    @contextlib.contextmanager
    def _ctx():
        saved = {name: getattr(module, name) for name in changes}
        for name, value in changes.items():
            setattr(module, name, value)
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(module, name, value)

    class _Patch:
        def __enter__(self):
            self._cm = _ctx()
            return self._cm.__enter__()

        def __exit__(self, *exc):
            return self._cm.__exit__(*exc)

        def __call__(self, fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                with _ctx():
                    return fn(*args, **kwargs)

            return wrapper

    return _Patch()


class _ConfigModule(types.ModuleType):
    # torch's older name for recompile_limit, kept as a live alias.
    @property
    def cache_size_limit(self):
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


# This module's own class (not another module's): the alias needs a property.
_this_module = sys.modules[__name__]
_this_module.__class__ = _ConfigModule
