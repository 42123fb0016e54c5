"""ember.jit: TorchScript's entry points for programs that decorate or trace their models.

ember runs eagerly, so scripting and tracing return what they are given (as ember.compile
does), and the queries report that no scripting or tracing is under way."""

__all__ = [
    "script",
    "trace",
    "trace_module",
    "ignore",
    "unused",
    "export",
    "is_scripting",
    "is_tracing",
    "annotate",
    "Final",
]


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


class _FinalType:
    def __getitem__(self, item):
        return item


Final = _FinalType()
