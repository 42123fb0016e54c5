"""The arguments a `__torch_function__` handler receives for a call of an nn.functional function.

torch's nn.functional functions written in Python hand a handler their required arguments by
position and every defaulted one by keyword, defaults filled in (`F.relu(x)` reaches a mode as
`relu(x, inplace=False)`, `F.max_pool2d(x, 2)` as `max_pool2d(x, 2, stride=None, padding=0, ...)`),
whatever form the caller used; FX graphs record, and their code prints, that form. ember's
functions of the same names have torch's signatures, so the handed form comes from binding the
call to the signature. The functions torch implements as bindings (gelu, conv2d, linear, ...) hand
their arguments as called and are not listed."""

import inspect

_NAMES = frozenset(
    (
        "relu relu6 hardtanh leaky_relu elu selu celu silu mish hardswish hardsigmoid rrelu "
        "threshold glu softmax log_softmax softmin dropout dropout1d dropout2d dropout3d "
        "alpha_dropout feature_alpha_dropout max_pool1d max_pool2d max_pool3d adaptive_max_pool1d "
        "adaptive_max_pool2d adaptive_max_pool3d lp_pool1d lp_pool2d layer_norm group_norm "
        "instance_norm local_response_norm normalize interpolate pad"
    ).split()
)
_signatures = {}  # id(function) -> (function, signature)


def _signature(func):
    entry = _signatures.get(id(func))
    if entry is not None and entry[0] is func:
        return entry[1]
    sig = None
    module = getattr(func, "__module__", None) or ""
    if module.startswith("ember.nn.functional") and getattr(func, "__name__", None) in _NAMES:
        try:
            sig = inspect.signature(func)
        except (TypeError, ValueError):
            sig = None
    _signatures[id(func)] = (func, sig)
    return sig


def handed(func, args, kwargs):
    """(args, kwargs) of a call of `func` as torch hands them to a handler."""
    sig = _signature(func)
    if sig is None:
        return args, kwargs
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:  # the call itself raises torch's error when it runs
        return args, kwargs
    bound.apply_defaults()
    positional, keywords = [], {}
    for name, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            return args, kwargs
        if param.default is param.empty:
            positional.append(bound.arguments[name])
        else:
            keywords[name] = bound.arguments[name]
    return tuple(positional), keywords
