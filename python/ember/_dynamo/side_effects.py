"""Side effects: what a capture run did besides tensor ops (Note [Side effects]).

Note [Side effects]
A replayed graph runs only tensor ops, so a Python side effect of the function (printing,
logging, appending to an outer list, setting a module attribute, rebinding a global) would be
silently dropped from the second call on. The capture run is watched in two ways: a profile
hook sees the user's frames (for the globals guards), I/O calls made from them (print, file
writes, logging, warnings) and calls into ember's random-state and init functions; and the
mutable state the function can reach (globals it names, closure cells, its modules' attributes
and the lists/dicts/objects one or two levels below those and below the arguments) is
snapshotted before the run and compared after it. Any difference is a side effect: the
function is marked to run eagerly (fullgraph=True raises instead). An I/O call is instead a
graph break where partial graphs are possible (Watcher._io): the replay reruns it."""

import dis
import gc
import sys
import types

from .. import _C
from ..nn.modules.module import Module
from .call_site import argument_types
from .capture import is_user_code
from .user_api import allowed_in_graph

_IO_BUILTINS = frozenset({"print", "input", "open", "breakpoint", "exec", "eval", "warn"})
_IO_METHODS = frozenset({"write", "writelines", "flush"})
# str(t) / repr(t) / format(t) of a tensor: builtins torch does not trace with a tensor argument
_TEXT_BUILTINS = frozenset({"str", "repr", "format"})
_TEXT_METHODS = frozenset({"__repr__", "__str__", "__format__"})
_STATE_MODULES = ("ember/random.py", "ember/_ops/random.py", "ember/nn/init.py", "logging/")
_GLOBAL_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})
_MISSING = object()
_SIMPLE = (int, float, bool, str, complex, type(None), bytes)


class Watcher:
    """The profile hook of one capture run: user code objects seen and side effects found."""

    def __init__(self, capture=None):
        self.capture = capture  # where calls of allow_in_graph functions become single nodes
        self.codes = {}  # code -> the globals dict it ran with
        self.effects = []
        self.strict_effects = []
        self._io_call = None  # the I/O builtin running now, whose tensor calls run eagerly
        self._old = None
        self._gc_was_enabled = False

    def __enter__(self):
        # The collector runs gc.callbacks and finalizers at whatever line it interrupts; that code
        # is not the function's, so its global stores must not read as the function's side
        # effects (hypothesis's gc callback did): no collection while a capture runs.
        self._gc_was_enabled = gc.isenabled()
        gc.disable()
        self._old = sys.getprofile()
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._old)
        if self._gc_was_enabled:
            gc.enable()
        return False

    def _hook(self, frame, event, arg):
        cap = self.capture
        if cap is not None and (event == "call" or event == "return"):
            fn = allowed_in_graph(frame.f_code)
            if fn is not None:
                if event == "call":
                    cap.begin_opaque(fn, frame)
                else:
                    cap.end_opaque(frame, arg)
        if event == "call":
            code = frame.f_code
            fname = code.co_filename
            if is_user_code(fname):
                if code not in self.codes:
                    self.codes[code] = frame.f_globals
            else:
                back = frame.f_back
                if back is not None and is_user_code(back.f_code.co_filename):
                    norm = fname.replace("\\", "/")
                    if any(m in norm for m in _STATE_MODULES):
                        self.effects.append(f"call to {code.co_name} ({fname}) changes state")
                    elif code.co_name in _TEXT_METHODS and self._io_call is None:
                        self._tensor_text(frame, back)
        elif event == "return":
            if frame is self._io_call:  # the tensor's __repr__ that str(t) called
                self._end_io()
        elif event == "c_return" or event == "c_exception":
            if arg is self._io_call and is_user_code(frame.f_code.co_filename):
                self._end_io()
        elif event == "c_call":
            if self._io_call is not None or not is_user_code(frame.f_code.co_filename):
                return
            name = getattr(arg, "__name__", "")
            owner = getattr(arg, "__self__", None)
            if name in _IO_METHODS and owner is not None and hasattr(owner, "fileno"):
                kind = type(owner).__name__
                self._io(
                    f"I/O: {name}() on {kind}",
                    "Unsupported method call\n  Explanation: Dynamo does not know how to trace "
                    f"method `{name}` of class `{kind}`\n  Hint: Avoid calling `{kind}.{name}` "
                    "in your code.",
                    arg,
                )
            elif name in _IO_BUILTINS and (owner is None or isinstance(owner, types.ModuleType)):
                if owner is None or owner.__name__ == "builtins":
                    why = _builtin_reason(name, frame)
                else:
                    why = (
                        "Attempted to call function marked as skipped\n  Explanation: Dynamo "
                        f"does not know how to trace the Python builtin `{owner.__name__}.{name}`."
                    )
                self._io(f"I/O or Python side effect: {name}()", why, arg)

    def _io(self, effect, why, call):
        """An I/O call of the function: where the capture keeps a call log, a graph break that
        ends the graph there, as torch's (the replay runs the function's Python, so the call
        still happens on every call); the tensor calls it makes (a tensor's repr) run eagerly
        until it returns. Elsewhere a side effect: the function runs eagerly."""
        from .user_api import _error_on_graph_break

        cap = self.capture
        log = getattr(cap, "log", None)
        if log is None or cap.stopped or log.eager_depth or _error_on_graph_break[0]:
            self._effect(effect)
            return
        cap.graph_break(why)
        log.cur_eager = False
        log.user_break()
        log.eager_depth += 1
        self._io_call = call

    def _end_io(self):
        self._io_call = None
        self.capture.log.eager_depth -= 1

    def _tensor_text(self, frame, back):
        """``str(t)`` / ``repr(t)`` of a tensor in the user's code (a type call, which the
        profile hook does not see): a break at the user's call, as torch's."""
        site = argument_types(back)
        if site is None or site[2] not in _TEXT_BUILTINS or "Tensor" not in site[0]:
            return
        name = site[2]
        self._io(f"I/O or Python side effect: {name}()", _builtin_reason(name, back), frame)

    def _effect(self, reason):
        from .user_api import _error_on_graph_break

        self.effects.append(reason)
        if _error_on_graph_break[0]:  # met inside error_on_graph_break(True): the capture raises
            self.strict_effects.append(reason)

    def global_stores(self):
        """Reasons for user code that rebinds globals (``global x; x = ...``)."""
        found = []
        for code in self.codes:
            if _is_installed_library(code.co_filename):
                continue  # a library's own module state (numpy's lazy caches), not the program's
            for ins in dis.get_instructions(code):
                if ins.opname in _GLOBAL_STORES:
                    found.append(f"assignment to global {ins.argval!r} in {code.co_name}")
                    break
        return found


def _builtin_reason(name, frame):
    """torch's reason for a break at a builtin call, naming the argument types where the call's
    bytecode shows them (call_site.py)."""
    found = argument_types(frame)
    if found is None:
        return (
            "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace "
            f"builtin operator `{name}`"
        )
    types, has_kwargs, _ = found
    return (
        "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace "
        f"builtin operator `{name}` with argument types {types} (has_kwargs {has_kwargs})\n"
        f"  Hint: Avoid calling builtin `{name}` with argument types {types}. Consider using an "
        f"equivalent alternative function/method to `{name}`."
    )


def _is_installed_library(filename):
    norm = filename.replace("\\", "/")
    return "/site-packages/" in norm or "/dist-packages/" in norm


def _is_plain_object(v):
    t = type(v)
    return (
        hasattr(v, "__dict__")
        and not isinstance(
            v, (type, types.ModuleType, types.FunctionType, types.MethodType, _C.Tensor, Module)
        )
        and t.__module__ != "builtins"
        and not t.__module__.startswith("ember")
    )


class Snapshot:
    """Shallow copies of the mutable state a function can reach, compared after the run."""

    def __init__(self):
        self.items = []  # (description, container, copy)
        self._seen = set()

    def add_dict(self, what, d):
        if id(d) not in self._seen:
            self._seen.add(id(d))
            self.items.append((what, d, dict(d)))

    def add_value(self, what, v, depth=2):
        if depth <= 0 or isinstance(v, _SIMPLE) or id(v) in self._seen:
            return
        if isinstance(v, Module):
            self.add_module(what, v)
            return
        if type(v) in (list, set, bytearray):
            self._seen.add(id(v))
            self.items.append((what, v, list(v)))
            for i, x in enumerate(v if type(v) is list else ()):
                self.add_value(f"{what}[{i}]", x, depth - 1)
        elif type(v) is dict:
            self.add_dict(what, v)
            for k, x in v.items():
                self.add_value(f"{what}[{k!r}]", x, depth - 1)
        elif type(v) is tuple:
            for i, x in enumerate(v):
                self.add_value(f"{what}[{i}]", x, depth)
        elif _is_plain_object(v):
            self.add_dict(f"{what} attributes", v.__dict__)
            for k, x in v.__dict__.items():
                self.add_value(f"{what}.{k}", x, depth - 1)

    def add_module(self, what, mod):
        for name, sub in mod.named_modules(remove_duplicate=False):
            label = f"{what}.{name}" if name else what
            if id(sub.__dict__) in self._seen:
                continue
            self.add_dict(f"attributes of {label}", sub.__dict__)
            for key in ("_parameters", "_buffers", "_modules"):
                self.add_dict(f"{key} of {label}", sub.__dict__[key])
            for k, v in sub.__dict__.items():
                if not k.startswith("_") and type(v) in (list, dict, set):
                    self.add_value(f"{label}.{k}", v, 1)

    def add_globals(self, what, g, names):
        entry = {n: g.get(n, _MISSING) for n in names}
        self.items.append((what, ("globals", g), entry))
        for n, v in entry.items():
            if v is not _MISSING and not isinstance(v, types.ModuleType):
                self.add_value(f"global {n}", v)

    def changes(self):
        """Descriptions of what differs from the snapshot."""
        found = []
        for what, container, before in self.items:
            if isinstance(container, tuple):  # globals: only the names read
                g = container[1]
                for n, v in before.items():
                    if g.get(n, _MISSING) is not v:
                        found.append(f"mutation of global {n!r}")
            elif isinstance(container, dict):
                if len(container) != len(before) or any(
                    container.get(k, _MISSING) is not v for k, v in before.items()
                ):
                    found.append(f"mutation of {what}")
            else:
                now = list(container)
                if len(now) != len(before) or any(a is not b for a, b in zip(now, before)):
                    found.append(f"mutation of {what} ({type(container).__name__})")
        return found


def code_names(code):
    """Global names a code object (and the code objects nested in it) may read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= code_names(c)
    return names
