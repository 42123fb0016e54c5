"""ember.jit: TorchScript's entry points, backed by ember's graph capture.

``trace(module, example_inputs)`` captures the module's forward with ember.export (every
submodule inlined) and returns a module that runs the captured graph (``.graph``, ``.code``);
``script(module)`` captures a module's forward symbolically (ember.fx) and raises a clear error
when that needs a graph break (Python control flow on tensor values); ``save``/``load`` write and
read the export format (one data-only file; see ember.export). ``ignore``, ``unused`` and
``export`` are accepted as decorators. ``is_tracing()``/``is_scripting()`` are true while a trace
or a script capture runs."""

import copy
import io
import os
import sys
import warnings

from .._fork import fork, wait  # noqa: F401  (torch.jit.fork/wait in eager mode)
from ..export._tracing import active as _active
from ..export._tracing import capturing as _capturing

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
    "save",
    "load",
    "ScriptModule",
    "ScriptFunction",
    "TracedModule",
    "freeze",
    "optimize_for_inference",
    "fork",
    "wait",
]


def _ember():
    return sys.modules["ember"]


def _Module():
    return _ember().nn.Module


class _CapturedModule:
    """Mixed into the modules trace/script/load return: the graph and its code."""

    @property
    def graph(self):
        """graph -> ember.fx.Graph

        The captured graph."""
        return self._captured_graph()

    @property
    def code(self):
        """code -> str

        The captured graph as Python source."""
        return self._captured_code()

    def save(self, f, **kwargs):
        """save(f, _extra_files=None) -> None

        Writes the module in the export format (as ember.jit.save)."""
        save(self, f)


def _make_traced(program, original=None):
    module = program.module()
    exported_forward = type(module).forward

    def forward(self, *args, **kwargs):
        # A size the graph was specialized to fails an export guard (AssertionError); under torch
        # a traced graph given other sizes fails in the op that cannot take them, a RuntimeError.
        try:
            return exported_forward(self, *args, **kwargs)
        except AssertionError as e:
            if not str(e).startswith("Guard failed"):
                raise
            raise RuntimeError(
                f"traced module: the trace was specialized to its example's sizes; {e}"
            ) from None

    cls = type(
        "TracedModule" if original is None else type(original).__name__,
        (type(module), ScriptModule),
        {
            "forward": forward,
            "_captured_graph": lambda self: self._program.graph,
            "_captured_code": lambda self: self._program.graph_module.code,
            "_export_program": property(lambda self: self._program),
            # a traced module switches modes (ep.module() does not)
            "train": _Module().train,
            "eval": _Module().eval,
        },
    )
    module.__class__ = cls
    if original is not None:
        module.train(original.training)
    return module


def trace(
    func,
    example_inputs=None,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_kwarg_inputs=None,
    _store_inputs=True,
):
    """trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
        check_tolerance=1e-05, strict=True, example_kwarg_inputs=None) -> Module

    Captures ``func`` (a module or a function) called on ``example_inputs`` into a graph and
    returns a module running that graph (``.graph``, ``.code``; parameters shared with
    ``func``). With check_trace the graph's outputs are compared with an eager call."""
    ember = _ember()
    if example_inputs is None and example_kwarg_inputs is None:
        raise ValueError("trace: expected example_inputs (a tensor or a tuple of them)")
    args = example_inputs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    program = _shape_general_export(func, args, example_kwarg_inputs)
    traced = _make_traced(program, func if isinstance(func, ember.nn.Module) else None)
    if check_trace:
        with ember.no_grad():
            want = func(*args, **(example_kwarg_inputs or {}))
            got = traced(*args, **(example_kwarg_inputs or {}))
        _check_same(want, got, check_tolerance)
    return traced


def _shape_general_export(func, args, kwargs):
    """The program of ``func`` on ``args``, general in every tensor input's sizes where the
    capture allows (as torch's traced graphs record size reads as graph values); where the
    Python code needs a concrete size (a branch, ``range``), the sizes of the example."""
    from .. import export as _export
    from ..export import Dim
    from ..export._capture import _bind

    ember = _ember()
    try:
        bound, _ = _bind(func, args, kwargs or {})
        tensors = {
            name: v.dim()
            for name, v in bound.arguments.items()
            if isinstance(v, ember.Tensor) and v.dim() > 0
        }
    except TypeError:
        tensors = {}
    # Every dim; then all but the last (feature sizes that layers check in Python, as an LSTM
    # does); then the leading dim only; then the example's sizes.
    attempts = [lambda n: range(n), lambda n: range(n - 1), lambda n: range(min(n - 1, 1))]
    with _capturing("trace"):
        tried = set()
        for dims_of in attempts if tensors else ():
            dynamic = {
                name: tuple(Dim.AUTO if d in dims_of(n) else None for d in range(n))
                for name, n in tensors.items()
            }
            key = tuple(sorted((k, tuple(v is not None for v in d)) for k, d in dynamic.items()))
            if key in tried or not any(any(d) for d in dynamic.values()):
                continue
            tried.add(key)
            try:
                return _export._export_callable(func, args, kwargs, dynamic_shapes=dynamic)
            except Exception:  # noqa: BLE001, S112 (the sizes are needed concretely: try fewer)
                continue
        return _export._export_callable(func, args, kwargs)


def _check_same(want, got, tol):
    ember = _ember()
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(want) != len(got):
        raise RuntimeError("trace: the traced graph returns a different number of outputs")
    for k, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, ember.Tensor) and not ember.allclose(w, g, rtol=tol, atol=tol):
            warnings.warn(
                f"trace: output {k} of the traced graph differs from the eager function's "
                "(does it depend on random numbers or on Python state?)",
                stacklevel=3,
            )


def trace_module(
    mod,
    inputs,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_inputs_is_kwarg=False,
    _store_inputs=True,
):
    """trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
        check_tolerance=1e-05, strict=True) -> Module

    trace for a module given ``{"forward": example_inputs}`` (only forward is traced)."""
    if set(inputs) != {"forward"}:
        raise NotImplementedError("trace_module: only the forward method can be traced")
    return trace(mod, inputs["forward"], check_trace=check_trace, check_tolerance=check_tolerance)


class ScriptModule(_CapturedModule):
    """ScriptModule()

    The type of the modules ember.jit.script returns (a GraphModule of the captured forward)."""


class ScriptFunction:
    """ScriptFunction()

    Functions passed to ember.jit.script are returned as they are (they run eagerly)."""


TracedModule = ScriptModule


def _record_call(self, *args, **kwargs):
    # jit.save exports a scripted module with the sizes of its latest call.
    if not kwargs:
        object.__setattr__(self, "_last_inputs", args)
    return _Module().__call__(self, *args, **kwargs)


def _script_module(module):
    from .. import fx

    try:
        with _capturing("script"):
            gm = fx.symbolic_trace(module)
    except Exception as e:
        if type(e).__name__ == "TraceError":
            raise RuntimeError(
                f"ember.jit.script: could not script {type(module).__name__}.forward without a "
                "graph break: it has Python control flow on tensor values, which ember's capture "
                f"cannot follow; trace it with ember.jit.trace or keep it eager. ({e})"
            ) from e
        raise
    gm = _as_scripted(gm, type(module).__name__)
    gm.train(module.training)
    object.__setattr__(gm, "_script_source", module)
    return gm


def _as_scripted(gm, name):
    from .. import fx

    cls = type(
        name,
        (type(gm), ScriptModule),
        {
            "_captured_graph": lambda self: fx.GraphModule.graph.fget(self),
            "_captured_code": lambda self: fx.GraphModule.code.fget(self),
            "__call__": _record_call,
        },
    )
    gm.__class__ = cls
    return gm


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None)
        -> ScriptModule or function

    Captures an nn.Module's forward as a graph (``.graph``, ``.code``), raising RuntimeError when
    it cannot be captured without a graph break; functions and classes are returned unchanged
    (they keep running eagerly), so decorated functions stay usable."""
    ember = _ember()
    if obj is None:
        return lambda fn: script(fn)
    if isinstance(obj, ScriptModule):
        return obj
    if isinstance(obj, ember.nn.Module):
        return _script_module(obj)
    return obj


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """freeze(mod, preserved_attrs=None, optimize_numerics=True) -> ScriptModule

    A copy of the scripted or traced module ``mod`` (in eval mode) whose parameters no longer
    follow the original's (ember's captured graphs have nothing further to fold)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use torch.jit.script or "
            "torch.jit.trace to script your 'nn.Module'."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    return copy.deepcopy(mod)


def optimize_for_inference(mod, other_methods=None):
    """optimize_for_inference(mod, other_methods=None) -> ScriptModule

    Puts the scripted or traced ``mod`` in eval mode and returns it frozen (ember.jit.freeze)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
            "or torch.jit.trace to script your 'nn.Module'."
        )
    return freeze(mod.eval(), preserved_attrs=other_methods)


def ignore(drop=False, **kwargs):
    """ignore(drop=False) -> decorator

    Marks a method to be left out of the captured graph; accepted and kept eager."""
    if callable(drop):
        drop._ember_jit_ignore = True
        return drop

    def decorate(fn):
        fn._ember_jit_ignore = True
        return fn

    return decorate


def unused(fn):
    """unused(fn) -> fn

    Marks a method as not used by the scripted program; accepted and kept as is."""
    fn._ember_jit_unused = True
    return fn


def export(fn):
    """export(fn) -> fn

    Marks a method as an entry point besides forward; accepted and kept as is."""
    fn._ember_jit_export = True
    return fn


def is_scripting():
    """is_scripting() -> bool

    True while ember.jit.script captures a module."""
    return _active("script")


def is_tracing():
    """is_tracing() -> bool

    True while ember.jit.trace (or ember.export) captures a program."""
    return _active("trace")


def annotate(the_type, the_value):
    """annotate(the_type, the_value) -> the_value

    A type hint for TorchScript; returns the value."""
    return the_value


class _FinalType:
    def __getitem__(self, item):
        return item


Final = _FinalType()


def _program_of(m):
    """The ExportedProgram behind a traced module (or one exported from a scripted module's
    recorded inputs)."""
    program = getattr(m, "_export_program", None)
    if program is not None:
        return program
    if isinstance(m, ScriptModule):
        source = getattr(m, "_script_source", m)
        inputs = getattr(m, "_last_inputs", None)
        if inputs is None:
            return None  # never called: saved as its symbolic graph (_script_file)
        return _shape_general_export(source, inputs, None)
    raise TypeError(
        f"ember.jit.save: expected a module from ember.jit.trace/script/load; got "
        f"{type(m).__name__}"
    )


def save(m, f, _extra_files=None):
    """save(m, f, _extra_files=None) -> None

    Writes a traced, scripted or loaded module to ``f`` (a path or a binary buffer) in the export
    format: one data-only file, written atomically, that ember.jit.load and the C++ runtime
    read. A scripted module that was never called is written as its symbolic graph instead
    (ember.jit._script_file; ember.jit.load reads it, the C++ runtime does not)."""
    from ..export import _serialize
    from ..serialization import _save_ember_format
    from ._script_file import save_script

    if _extra_files:
        raise NotImplementedError("ember.jit.save: _extra_files is not supported")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(
            f"ember.jit.save: expected a path or a writable buffer; got {type(f).__name__}"
        )
    program = _program_of(m)
    if program is None:
        save_script(m, f, _save_ember_format)
    else:
        _serialize.save(program, f, module_training=getattr(m, "training", None))


def load(f, map_location=None, _extra_files=None):
    """load(f, map_location=None, _extra_files=None) -> Module

    Reads a file written by ember.jit.save (or ember.export.save) and returns a module running
    its graph; a corrupt, truncated or foreign file raises RuntimeError."""
    from .. import export as _export
    from ._script_file import is_script_file, load_script

    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "read"):
        raise TypeError(
            f"ember.jit.load: expected a path or a readable buffer; got {type(f).__name__}"
        )
    if hasattr(f, "read") and not isinstance(f, (str, os.PathLike)):
        f = io.BytesIO(f.read())  # read twice: for its format tag, then by its loader
    root = _read_root(f)
    if is_script_file(root):
        return _as_scripted(load_script(root), "RecursiveScriptModule")
    if hasattr(f, "seek"):
        f.seek(0)
    module = _make_traced(_export.load(f))
    training = getattr(module._program, "_module_training", None)
    if training is not None:  # files written before the flag was kept load in training mode
        module.train(training)
    return module


def _read_root(f):
    """The root of a data-only ember file, or None where ``f`` is not one (the export loader
    then reports what is wrong with it)."""
    try:
        root = _ember().load(f, weights_only=True)
    except Exception:  # noqa: BLE001 (export.load validates it and raises the error)
        return None
    return root
