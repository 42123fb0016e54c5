"""ember.export: whole-program capture for deployment (torch.export's API).

``export(model, args)`` traces ``model`` symbolically with every submodule inlined (ember.fx with
no leaf modules), lifts parameters, buffers and tensor constants to graph inputs, makes in-place
calls functional and runs the graph once on the example inputs (each node's ``meta["val"]``).
The result, an ``ExportedProgram``, runs again as ``ep.module()``; ``run_decompositions()`` maps
its calls onto the runtime op set (``ember.export.ops``, the list ``ember._C._export_runtime_ops()``
shared with C++); ``save``/``load`` write and read it as one file that C++ programs run with
``ember::export_::load(path).run(inputs)`` (examples/cpp/export_run.cpp), without Python.

Data-dependent control flow (``if x.sum() > 0:``) cannot be captured and raises an error naming
the line, as torch.export does. ``dynamic_shapes`` marks dims with ``Dim``: sizes the graph reads
(``x.size(0)``, ``x.shape``) stay graph values computed at run time, so the program runs at any
size in the Dim's range; the other dims are checked against the example's.

File format (version 1)
-----------------------
A file is an ember checkpoint (docs/FORMAT.md: magic ``EMBERCKP``, a version, a JSON header, then
64-byte aligned raw tensor bytes; data only, no pickle, nothing executable; written atomically
through a temporary file, fsync and rename). Its root is a dict:

- ``format``: ``"ember.export"``; ``version``: 1;
- ``inputs``: one dict per graph input in order, ``{name, kind, target, dtype, shape}``, kind one
  of parameter, buffer, constant (``target`` names its entry in ``state``) or user_input;
  ``shape`` holds ints and, for dynamic dims, the Dim's name;
- ``state``: qualified name -> tensor (parameters, buffers, constants);
- ``nodes``: ``{name, op, args}`` in execution order, ``op`` a runtime op and ``args`` all of its
  positional arguments: null, bool, int, float, str, lists, or ``{"ref": name}`` (an input or an
  earlier node), ``{"slice": [start, stop, step]}``, ``{"ellipsis": null}``, ``{"dtype": name}``;
- ``outputs``: references to the output tensors; ``output_structure``: how Python nests them
  (null for one tensor, else ``["tuple" | "list", [child, ...]]`` or
  ``["dict", [[key, child], ...]]``);
- ``dims``: Dim name -> [min, max] (max -1: unbounded).

Loading validates all of it (in C++, for Python and C++ alike): the container (magic, version,
header bounds, tensor table), the format tag and version, each input against its state tensor,
each op name, argument count and literal kind, and that every reference names an earlier value;
a truncated, corrupt or foreign file raises RuntimeError.
"""

from ._decomp import CustomDecompTable, default_decompositions
from ._nested import register_dataclass
from ._ops import ops
from .dynamic_shapes import (
    AdditionalInputs,
    ConstraintViolationError,
    Dim,
    ShapesCollection,
    dims,
)
from .exported_program import ExportedProgram
from .graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = [
    "export",
    "ExportedProgram",
    "ExportGraphSignature",
    "InputKind",
    "InputSpec",
    "OutputKind",
    "OutputSpec",
    "TensorArgument",
    "ConstantArgument",
    "Dim",
    "dims",
    "ShapesCollection",
    "AdditionalInputs",
    "ConstraintViolationError",
    "register_dataclass",
    "default_decompositions",
    "CustomDecompTable",
    "unflatten",
    "draft_export",
    "save",
    "load",
    "ops",
    "runtime_ops",
]


def export(
    mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()
):
    """export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
        preserve_module_call_signature=()) -> ExportedProgram

    Captures ``mod`` (an nn.Module, as torch 2.13 requires: a plain function raises
    ValueError) called on the example ``args``/``kwargs`` as one graph. ``dynamic_shapes`` maps
    each tensor input (by parameter name, or positionally) to ``{dim: Dim(...)}`` or a per-dim
    tuple; those dims stay symbolic in the graph."""
    from ..nn import Module

    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    return _export_callable(mod, args, kwargs, dynamic_shapes=dynamic_shapes)


def _export_callable(mod, args, kwargs=None, *, dynamic_shapes=None):
    """_export_callable(mod, args, kwargs=None, *, dynamic_shapes=None) -> ExportedProgram

    ``export`` for a module or a plain function: ember.jit traces functions through it (torch's
    ``export`` itself asks for a Module)."""
    from ._capture import capture
    from ._nested import flatten_model
    from .dynamic_shapes import ShapesCollection

    if isinstance(dynamic_shapes, ShapesCollection):
        dynamic_shapes = dynamic_shapes.dynamic_shapes(mod, args, kwargs)
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    model = mod
    nested = flatten_model(mod, args, kwargs, dynamic_shapes)
    if nested is not None:  # containers of tensors among the inputs: capture the leaves
        example = (args, dict(kwargs or {}))
        mod, args, dynamic_shapes, nested = nested
        kwargs = None
    parts = capture(mod, args, kwargs, dynamic_shapes)
    if nested is not None:
        parts["example_inputs"] = example
    ep = ExportedProgram(
        parts["graph_module"],
        parts["graph_signature"],
        parts["state_dict"],
        parts["range_constraints"],
        parts["constants"],
        input_shapes=parts["input_shapes"],
        output_structure=parts["output_structure"],
        example_inputs=parts["example_inputs"],
    )
    ep._nested = nested
    ep._size_guards = parts["size_guards"]
    ep._model = model  # unflatten exports its submodules on their own
    return ep


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None):
    """save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None) -> None

    Writes the ExportedProgram ``ep`` to the path ``f`` (see the module docstring for the format),
    atomically; raises RuntimeError naming a node whose op the C++ runtime cannot run."""
    from ._serialize import save as _save

    return _save(ep, f, extra_files=extra_files)


def load(f, *, extra_files=None, expected_opset_version=None):
    """load(f, *, extra_files=None, expected_opset_version=None) -> ExportedProgram

    Reads a program written by ``save``, validating the whole file first; a truncated, corrupt or
    foreign file raises RuntimeError."""
    from ._serialize import load as _load

    return _load(f)


def runtime_ops():
    """runtime_ops() -> list[str]

    The ops the C++ runtime runs: a program is savable when every node calls one of them."""
    from .. import _C

    return list(_C._export_runtime_ops())


def unflatten(module, flat_args_adapter=None):
    """unflatten(module, flat_args_adapter=None) -> ember.nn.Module

    The ExportedProgram `module` as a module with the original model's hierarchy: submodules by
    their qualified names holding their parameters and buffers (``u.conv.weight``), and a
    forward that runs the program. For a program exported in this process, each such
    submodule is callable on its own (``u.conv(x)``): export inlines every module, so unflatten
    exports each submodule on the inputs it received when the model ran on the example inputs
    (a submodule that cannot be exported alone, or a loaded program's, only holds state)."""
    import sys

    from ._unlift import UnflattenedModule

    ember = sys.modules["ember"]
    if not isinstance(module, ExportedProgram):
        raise TypeError(f"unflatten: expected an ExportedProgram; got {type(module).__name__}")
    root = UnflattenedModule(module)
    model = getattr(module, "_model", None)
    if isinstance(model, ember.nn.Module) and module.example_inputs is not None:
        _callable_submodules(root, model, module.example_inputs)
    return root


def _callable_submodules(root, model, example):
    """Replaces each state container of ``root`` by the program of that submodule of ``model``,
    exported on the inputs it got in one eager run of ``model`` (buffers restored after)."""
    import sys

    from ._unlift import InterpreterModule
    from .exported_program import _get_by_name

    ember = sys.modules["ember"]
    names = {id(m): n for n, m in model.named_modules() if n}
    seen, handles = {}, []

    def record(mod, args, kwargs):
        seen.setdefault(names[id(mod)], (args, kwargs))

    for n, m in model.named_modules():
        if n:
            handles.append(m.register_forward_pre_hook(record, with_kwargs=True))
    saved = [(b, b.clone()) for _, b in model.named_buffers() if b is not None]
    try:
        with ember.no_grad():
            args, kwargs = example
            model(*args, **kwargs)
    except Exception:  # noqa: BLE001 (no recorded inputs: the containers stay as they are)
        return
    finally:
        for h in handles:
            h.remove()
        with ember.no_grad():
            for b, value in saved:
                b.copy_(value)
    for name in sorted(seen, key=lambda q: q.count(".")):  # parents first
        parent_name, _, leaf = name.rpartition(".")
        try:
            parent = _get_by_name(root, parent_name) if parent_name else root
        except AttributeError:
            continue
        sub_model = _get_by_name(model, name)
        try:
            sub = InterpreterModule(_export_callable(sub_model, *seen[name]))
        except Exception:  # noqa: BLE001 (not exportable alone: it keeps holding the state)
            continue
        held = parent._modules.get(leaf)  # a container of the submodule's state, if any
        for k, v in held._modules.items() if held is not None else ():
            if k not in sub._modules:
                sub._modules[k] = v
        parent._modules[leaf] = sub  # (a stateless module gets its entry too, as torch's)
        order = list(_get_by_name(model, parent_name)._modules if parent_name else model._modules)
        keys = sorted(parent._modules, key=lambda k: order.index(k) if k in order else len(order))
        parent._modules = type(parent._modules)((k, parent._modules[k]) for k in keys)


def draft_export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, **_):
    """draft_export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False) -> ExportedProgram

    ``export`` for a first try: ember's export either captures the program or raises naming the
    line that stops it, so this is export with an empty report (``ep._report.failures``)."""
    ep = export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict)
    ep._report = _DraftReport()
    return ep


class _DraftReport:
    def __init__(self):
        self.failures = []

    def successful(self):
        return not self.failures

    def __str__(self):
        return "No issues found." if not self.failures else "\n".join(map(str, self.failures))
