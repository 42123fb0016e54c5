"""The Python function rows of a `with_stack=True` profile, as torch's profiler shows them.

torch 2.13 records, for such a profile, one event per Python function call and per builtin
call (`file.py(12): forward`, `<built-in method sum of Tensor object at 0x...>`), with the ops
nested inside the calls that ran them, and an `nn.Module: Linear_0` event for each module call
(class name and the module's number among the profile's modules of that class); the ops keep no
stack of their own. The tracer here is a `sys.setprofile` hook on the thread that starts the
profile: the frames already running when it starts are open calls from the start, those still
running at the stop are closed there."""

import os
import site
import sys
import threading

from .. import _C


def _prefixes():
    """The path prefixes stripped from file names (torch's: site-packages, sys.path, the user
    base, and the directory holding the package)."""
    raw = list(site.getsitepackages()) + list(sys.path)
    for extra in (site.getuserbase, site.getusersitepackages):
        try:
            raw.append(extra())
        except Exception:  # noqa: BLE001 (a site module without user paths)
            pass
    raw.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return [p + os.sep for p in sorted({os.path.abspath(p) for p in raw if p}, reverse=True)]


class PythonTracer:
    """Records Python calls between start() and stop(); `events` then holds one tuple per call:
    (python id, parent id or None, module id or -1, name, start ns, end ns, thread id)."""

    def __init__(self):
        self.events = []
        self._open = []  # indices into events, innermost last
        self._names = {}
        self._modules = {}  # id(module) -> (class name, number)
        self._per_class = {}
        self._prefixes = _prefixes()
        self._tid = threading.get_native_id()
        self._previous = None  # the profile function installed before start()
        from ..nn.modules.module import Module

        self._module_call = Module.__call__.__code__

    def _file(self, filename):
        for p in self._prefixes:
            if filename.startswith(p):
                return filename[len(p) :]
        return filename

    def _frame_name(self, frame):
        """(name, module id) of a Python frame's event."""
        code = frame.f_code
        if code is self._module_call:
            module = frame.f_locals.get("self")
            if module is not None:
                return self._module_name(module)
        key = (code, frame.f_lineno)
        entry = self._names.get(key)
        if entry is None:
            entry = f"{self._file(code.co_filename)}({frame.f_lineno}): {code.co_name}", -1
            self._names[key] = entry
        return entry

    def _module_name(self, module):
        entry = self._modules.get(id(module))
        if entry is None:
            cls = type(module).__name__
            n = self._per_class.get(cls, 0)
            self._per_class[cls] = n + 1
            entry = (f"nn.Module: {cls}_{n}", n)
            self._modules[id(module)] = entry
        return entry

    def _push(self, name, module_id, t):
        parent = (
            self.events[self._open[-1]][0] if self._open and self._open[-1] is not None else None
        )
        self.events.append([len(self.events) + 1, parent, module_id, name, t, -1, self._tid])
        self._open.append(len(self.events) - 1)

    def _pop(self, t):
        if self._open:
            index = self._open.pop()
            if index is not None:
                self.events[index][5] = t

    def _hook(self, frame, event, arg):
        t = _C._profiler_now_ns()
        if event == "call":
            name, module_id = self._frame_name(frame)
            self._push(name, module_id, t)
        elif event == "c_call":
            self._push(repr(arg), -1, t)
        else:  # return, c_return, c_exception
            self._pop(t)

    def start(self):
        frames = []
        frame = sys._getframe(1)
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        t = _C._profiler_now_ns()
        for frame in reversed(frames):
            name, module_id = self._frame_name(frame)
            self._push(name, module_id, t)
        self._open.append(None)  # this call, whose return the hook sees first
        self._previous = sys.getprofile()
        sys.setprofile(self._hook)

    def stop(self):
        sys.setprofile(self._previous)
        t = _C._profiler_now_ns()
        while self._open:
            self._pop(t)
        return [tuple(e) for e in self.events]
