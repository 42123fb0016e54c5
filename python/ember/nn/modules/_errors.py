"""Errors that say where: an exception raised inside Module.forward gains the path of the module
it failed in (from the outermost module called: `model.classifier.0 (Linear)`), the op, the
shapes and dtypes involved and, where one is evident, the likely fix. The location is a note on
the exception (PEP 678: tracebacks print it under the message), so the exception keeps its class
and `str(e)` stays torch's exact text: code matching, or comparing, torch's wording still works.

Only the exception path does work: Module.__call__ calls `annotate` from an `except` clause, and
each enclosing module's __call__ extends the path as the exception passes through it.
"""

import linecache
import re

from ..._C import Tensor

__all__ = ["ANNOTATED", "annotate"]

# What gets a location: the errors ops raise (NotImplementedError is a RuntimeError that says
# what is missing, not where an op failed).
ANNOTATED = (RuntimeError, ValueError, TypeError, IndexError)

_STATE = "_ember_module_error"
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


class _Where:
    __slots__ = ("leaf", "top", "path", "args", "op", "note")

    def __init__(self, module, args, op):
        self.leaf, self.top, self.path, self.args, self.op = module, module, [], args, op
        self.note = None  # the index of this note in exc.__notes__


def annotate(module, exc, args, kwargs):
    """Adds (or extends) the location of `exc`, raised by `module.forward(*args, **kwargs)`."""
    try:
        if isinstance(exc, NotImplementedError):
            return
        where = getattr(exc, _STATE, None)
        if where is None:
            tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
            where = _Where(module, tensors, _op_of(exc))
            setattr(exc, _STATE, where)
        elif where.top is module:
            return
        else:
            name = _child_name(module, where.top)
            if name is None:
                return  # called from outside this module's tree: the path stops here
            where.path.insert(0, name)
            where.top = module
        text = _render(where)
        notes = getattr(exc, "__notes__", None)
        if where.note is None or notes is None or where.note >= len(notes):
            if notes is None:  # Python < 3.11 keeps the list but does not print it
                notes = exc.__notes__ = []
            notes.append(text)
            where.note = len(notes) - 1
        else:
            notes[where.note] = text
    except Exception:  # never let the annotation hide the real error
        return


def _child_name(parent, child):
    for name, m in parent._modules.items():
        if m is child:
            return name
    for name, m in parent.named_modules():
        if m is child and name:
            return name
    return None


def _op_of(exc):
    """The outermost function called on the innermost Python line of the traceback
    (`return F.conv2d(x, w, _pair(p))` -> 'conv2d')."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    line = linecache.getline(frame.f_code.co_filename, tb.tb_lineno, frame.f_globals).strip()
    calls = [c for c in _CALL.findall(line) if c.split(".")[-1] not in ("super", "self")]
    return calls[0].split(".")[-1] if calls else None


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


def _describe(t):
    return f"[{', '.join(str(s) for s in t.shape)}] ({_dtype(t)})"


def _render(where):
    leaf = where.leaf
    cls = type(leaf).__name__
    path = ".".join(["model", *where.path])
    lines = [f"In {path} ({cls}):"]
    detail = f"  {where.op}" if where.op else "  forward"
    if where.args:
        detail += " got " + ", ".join("input " + _describe(t) for t in where.args)
    params = [(n, p) for n, p in leaf._parameters.items() if p is not None]
    if params:
        detail += "; " + ", ".join(f"{n} {_describe(p)}" for n, p in params)
    lines.append(detail)
    fix = _likely_fix(leaf, cls, where.args, params)
    if fix:
        lines.append("  Likely fix: " + fix)
    return "\n".join(lines)


def _likely_fix(module, cls, inputs, params):
    x = inputs[0] if inputs else None
    in_features = getattr(module, "in_features", None)
    if x is not None and isinstance(in_features, int) and x.dim() >= 1:
        got = x.shape[-1]
        if got != in_features:
            return (
                f"{cls} expects in_features={in_features}, but the input's last dimension is "
                f"{got}: make the layer before it produce {in_features} features, or build this "
                f"layer with in_features={got}."
            )
    in_channels = getattr(module, "in_channels", None)
    if x is not None and isinstance(in_channels, int) and "Conv" in cls:
        spatial = len(getattr(module, "kernel_size", ())) or 2
        channel_dim = 1 if x.dim() == spatial + 2 else 0
        if x.dim() in (spatial + 1, spatial + 2):
            got = x.shape[channel_dim]
            if got != in_channels:
                return (
                    f"{cls} expects in_channels={in_channels}, but the input has {got} channels "
                    f"(dim {channel_dim} of its shape): make the layer before it produce "
                    f"{in_channels} channels, or build this layer with in_channels={got}."
                )
        elif x.dim() != spatial + 2:
            return (
                f"{cls} takes input of {spatial + 1} dims (unbatched) or {spatial + 2} dims "
                f"(batched); got {x.dim()} dims."
            )
    float_inputs = [t for t in inputs if t.is_floating_point()]
    float_params = [p for _, p in params if p.is_floating_point()]
    if float_inputs and float_params:
        want, got = float_params[0].dtype, float_inputs[0].dtype
        if want != got:
            name = str(want).replace("torch.", "")
            return (
                f"the input is {_dtype(float_inputs[0])} but the parameters are {name}: cast the "
                f"input with .to(torch.{name}), or the module with .to(torch."
                f"{_dtype(float_inputs[0])})."
            )
    return None
