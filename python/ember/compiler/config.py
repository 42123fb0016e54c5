"""ember.compiler.config: torch.compiler.config's knobs.

The capture's own knobs (``recompile_limit``, ``accumulated_recompile_limit``,
``automatic_dynamic_shapes``, ``assume_static_by_default``, ``capture_scalar_outputs``,
``verbose``) are live aliases of ``ember._dynamo.config``'s, as in torch, where both names reach
one setting. The others are accepted and recorded: ``job_id`` and ``cache_key_tag`` (torch's
cache keys; ember's kernel cache keys on the graph, flags and CPU), ``force_disable_caches``,
``dynamic_sources`` / ``unbacked_sources`` (torch's source lists for dynamic sizes; ember marks
dynamic sizes with ``dynamic=`` and ``mark_dynamic``) and the rest of torch's names below."""

import sys
import types


def _dynamo_config():
    """ember._dynamo.config, where the shared names live (written only when the user sets one
    of them here: one setting under two names, as torch's)."""
    from .._dynamo import config

    return config


_SHARED = (
    "recompile_limit",
    "accumulated_recompile_limit",
    "automatic_dynamic_shapes",
    "assume_static_by_default",
    "capture_scalar_outputs",
    "verbose",
)

job_id = None
cache_key_tag = ""
force_disable_caches = False
dynamic_sources = ""
unbacked_sources = ""
dynamic_shapes = True
capture_dynamic_output_shape_ops = False
fail_on_recompile_limit_hit = False
log_file_name = None
wrap_top_frame = False


def patch(arg1=None, arg2=None, **changes):
    """patch(arg1=None, arg2=None, **changes)

    Sets config values for a with block or a decorated function, as ``ember._dynamo.config``'s
    ``patch`` (the shared names change the capture's settings)."""
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    shared = {k: v for k, v in changes.items() if k in _SHARED}
    own = {k: v for k, v in changes.items() if k not in _SHARED}
    module = sys.modules[__name__]
    for name in own:
        if not hasattr(module, name):
            raise AttributeError(f"ember.compiler.config: no config value named {name!r}")
    outer = _dynamo_config().patch(**shared)

    class _Patch:
        def __enter__(self):
            self.saved = {k: getattr(module, k) for k in own}
            for k, v in own.items():
                setattr(module, k, v)
            return outer.__enter__()

        def __exit__(self, *exc):
            for k, v in self.saved.items():
                setattr(module, k, v)
            return outer.__exit__(*exc)

        def __call__(self, fn):
            import functools

            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                with _Patch():
                    return fn(*args, **kwargs)

            return wrapper

    return _Patch()


class _ConfigModule(types.ModuleType):
    def __getattr__(self, name):
        if name in _SHARED:
            return getattr(_dynamo_config(), name)
        raise AttributeError(f"module 'ember.compiler.config' has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _SHARED:
            setattr(_dynamo_config(), name, value)
        else:
            super().__setattr__(name, value)


# This module's own class (as ember._dynamo.config does): attribute reads and writes of the
# shared names go through the class.
_this_module = sys.modules[__name__]
_this_module.__class__ = _ConfigModule
