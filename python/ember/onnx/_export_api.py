"""ember.onnx.export itself: argument checks, the training mode, and where the model goes."""

import os

from ..autograd.grad_mode import no_grad
from . import _exporter
from ._constant_folding import fold_constants
from ._exporter import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, OperatorExportTypes, TrainingMode
from ._graph import _onnx
from ._onnx_program import ONNXProgram


def _load_symbolics():
    # The mapping tables fill as these modules are imported.
    from . import (  # noqa: F401
        _symbolic_attention,
        _symbolic_elementwise,
        _symbolic_mask,
        _symbolic_nn,
        _symbolic_pool,
        _symbolic_reduce,
        _symbolic_rnn,
        _symbolic_shape,
    )


def export(
    model,
    args=(),
    f=None,
    *,
    kwargs=None,
    verbose=None,
    input_names=None,
    output_names=None,
    opset_version=None,
    dynamo=True,
    external_data=True,
    dynamic_shapes=None,
    custom_translation_table=None,
    report=False,
    optimize=True,
    verify=False,
    profile=False,
    dump_exported_program=False,
    artifacts_dir=".",
    export_params=True,
    keep_initializers_as_inputs=False,
    dynamic_axes=None,
    training=TrainingMode.EVAL,
    operator_export_type=OperatorExportTypes.ONNX,
    do_constant_folding=True,
    custom_opsets=None,
    export_modules_as_functions=False,
    autograd_inlining=True,
):
    """export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None, opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True, verify=False, profile=False, dump_exported_program=False, artifacts_dir='.', export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None, training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True) -> Optional[ONNXProgram]

    Exports `model` to ONNX, as torch.onnx.export does.

    The model is traced with ember.fx (`args` as its example inputs; a trailing dict in `args`
    gives keyword arguments), with ember.nn layers kept whole, and each operation becomes standard
    ONNX operators. Layers and functions with no mapping raise
    :class:`ember.onnx.errors.UnsupportedOperatorError` naming them. With ``dynamo=True`` (the
    default, as torch 2.13's) the result is an :class:`ONNXProgram`, also saved to `f` when
    given; with ``dynamo=False`` the model is written to `f` and None returned (the ModelProto
    when `f` is None).

    Args:
        model (Module or ExportedProgram): the model (or a bare layer such as ``nn.LSTM``).
        args (tuple or Tensor): example inputs.
        f (str, PathLike or binary file object): where to write the model; a path is written
            atomically.
        input_names, output_names (list of str): names of the graph's inputs and outputs, in
            order (tensors of nested inputs flattened; by default the forward's argument names).
        opset_version (int): the ONNX opset, from 13 to 21 (default 17).
        dynamo (bool): return an ONNXProgram (True) or write the file only (False).
        external_data (bool): with dynamo, save the weights beside the model file when it
            exceeds 2 GB (False: never).
        dynamic_shapes (dict or tuple): ``ember.export``-style dynamic dims of the inputs (by
            argument name, or by position); converted to ``dynamic_axes``.
        report (bool): write a Markdown summary of the export (inputs, outputs, operators, and
            the verification and timing when asked) into ``artifacts_dir``.
        optimize, do_constant_folding (bool): fold constant subgraphs into initializers
            (``optimize`` for dynamo, ``do_constant_folding`` otherwise).
        verify (bool): run the exported model with ONNX Runtime on `args` and compare with the
            model's outputs (a warning on mismatch; the numbers go to the report).
        profile (bool): time the capture, conversion and optimization (into the report).
        dump_exported_program (bool): also save ``ember.export.export(model, args)`` into
            ``artifacts_dir``.
        export_params (bool): store the parameters in the file (else they become graph inputs).
        keep_initializers_as_inputs (bool): list the parameters among the graph inputs too.
        dynamic_axes (dict): ``{name: {dim: symbol}}`` or ``{name: [dims]}`` for inputs and
            outputs whose sizes vary; sizes derived from them are computed in the graph.
        training (TrainingMode): EVAL (default) exports in eval mode, PRESERVE as the model is,
            TRAINING in train mode; the model's modes are restored afterwards.
        custom_opsets, export_modules_as_functions, autograd_inlining, verbose: as torch's
            (ember writes standard ONNX operators, flattened).
    """  # noqa: E501
    import time

    onnx = _onnx()
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ValueError(
            f"ember.onnx.export: expected opset_version between {MIN_OPSET} and {MAX_OPSET}; "
            f"got {opset_version}"
        )
    if operator_export_type not in (OperatorExportTypes.ONNX, None):
        raise ValueError("ember.onnx.export: only operator_export_type=ONNX is supported")
    custom = None
    if custom_translation_table:
        from ._custom import Table

        custom = Table(custom_translation_table)
    from .._C import Tensor

    if hasattr(model, "module") and hasattr(model, "graph_signature"):  # an ExportedProgram
        model = _module_of_exported_program(model)
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    if dynamic_shapes is not None:
        dynamic_axes = {
            **_axes_from_dynamic_shapes(model, args, kwargs, dynamic_shapes),
            **(dynamic_axes or {}),
        }
    _load_symbolics()

    timings = {}
    modules = list(model.modules()) if hasattr(model, "modules") else []
    modes = [m.training for m in modules]
    # torch's dynamo exporter takes the model in the mode it is in (its `training` argument is
    # legacy-only); TRAINING still asks for train mode there.
    if training == TrainingMode.EVAL and not dynamo and hasattr(model, "eval"):
        model.eval()
    elif training == TrainingMode.TRAINING and hasattr(model, "train"):
        model.train()
    _exporter._exporting[0] = True
    try:
        with no_grad():
            start = time.perf_counter()
            captured, examples = _exporter._capture.capture(model, args, kwargs)
            timings["capture"] = time.perf_counter() - start
            start = time.perf_counter()
            proto = _exporter.build(
                captured,
                examples,
                opset,
                input_names=input_names,
                output_names=output_names,
                dynamic_axes=dynamic_axes,
                export_params=export_params,
                custom=custom,
            )
            timings["conversion"] = time.perf_counter() - start
    finally:
        _exporter._exporting[0] = False
        for m, mode in zip(modules, modes):
            m.training = mode
    if optimize if dynamo else do_constant_folding:
        start = time.perf_counter()
        fold_constants(proto)
        timings["optimization"] = time.perf_counter() - start
    if keep_initializers_as_inputs:
        listed = {i.name for i in proto.graph.input}
        for t in proto.graph.initializer:
            if t.name not in listed:
                proto.graph.input.append(
                    onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                )
    _exporter.check(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    program = ONNXProgram(proto)
    verification = _verify(program, model, args, kwargs) if verify else None
    if report or profile:
        _write_report(artifacts_dir, proto, verification, timings if profile else None)
    if dump_exported_program:
        _dump_exported_program(artifacts_dir, model, args, kwargs)
    if not dynamo:
        if f is None:
            return proto
        _exporter.write(proto, f)
        return None
    if f is not None:
        program.save(f, external_data=None if external_data else False)
    return program


def _axes_from_dynamic_shapes(model, args, kwargs, dynamic_shapes):
    """dynamic_axes ({input name: {dim: symbol}}) from ember.export-style dynamic_shapes."""
    import inspect

    forward = getattr(model, "forward", model)
    try:
        params = [
            p.name
            for p in inspect.signature(forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
    except (TypeError, ValueError):
        params = [f"arg{i}" for i in range(len(args))]
    if isinstance(dynamic_shapes, dict):
        items = dynamic_shapes.items()
    else:
        items = zip(params, dynamic_shapes)
    axes = {}
    for name, spec in items:
        if spec is None:
            continue
        if isinstance(spec, (list, tuple)):
            spec = dict(enumerate(spec))
        if not isinstance(spec, dict):
            raise ValueError(
                f"ember.onnx.export: dynamic_shapes['{name}'] must be a dict or a list of "
                f"per-dimension specs (nested inputs are not supported); got {spec!r}"
            )
        dims = {}
        for d, dim in spec.items():
            if dim is None:
                continue
            label = getattr(dim, "__name__", None)
            dims[int(d)] = (
                label
                if isinstance(label, str)
                else (dim if isinstance(dim, str) else f"{name}_dim_{d}")
            )
        if dims:
            axes[name] = dims
    return axes


def _verify(program, model, args, kwargs):
    """[(output index, max abs difference, close)] between ONNX Runtime and the model."""
    import warnings

    import numpy as np

    from ._exporter import _leaves

    with no_grad():
        expected = [t for t in _leaves(model(*args, **kwargs), []) if hasattr(t, "numpy")]
    got = program(*args, **kwargs)
    rows = []
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = g.float().numpy(), e.detach().float().numpy()
        diff = float(np.max(np.abs(g - e))) if g.size else 0.0
        close = g.shape == e.shape and bool(np.allclose(g, e, rtol=1e-3, atol=1e-5))
        rows.append((i, diff, close))
        if not close:
            warnings.warn(
                f"ember.onnx.export(verify=True): output {i} differs from the model's "
                f"(max abs difference {diff:.3g})",
                stacklevel=3,
            )
    return rows


def _write_report(directory, proto, verification, timings):
    import collections
    import datetime

    from ._exporter import write_text

    graph = proto.graph
    ops = collections.Counter(n.op_type for n in graph.node)
    lines = ["# ONNX export report (ember)", ""]
    lines += [f"- opset: {proto.opset_import[0].version}", f"- nodes: {len(graph.node)}"]
    lines += [f"- initializers: {len(graph.initializer)}", "", "## Inputs", ""]
    lines += [f"- `{i.name}`" for i in graph.input]
    lines += ["", "## Outputs", ""] + [f"- `{o.name}`" for o in graph.output]
    lines += ["", "## Operators", "", "| operator | count |", "|---|--:|"]
    lines += [f"| {op} | {n} |" for op, n in sorted(ops.items())]
    if verification is not None:
        lines += ["", "## Verification (ONNX Runtime vs the model)", ""]
        lines += ["| output | max abs difference | close |", "|--:|--:|---|"]
        lines += [f"| {i} | {d:.3g} | {c} |" for i, d, c in verification]
    if timings is not None:
        lines += ["", "## Profile", ""] + [f"- {k}: {v:.3f} s" for k, v in timings.items()]
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
    write_text(os.path.join(directory, f"onnx_export_{stamp}_report.md"), "\n".join(lines) + "\n")


def _dump_exported_program(directory, model, args, kwargs):
    import datetime
    import warnings

    from .. import export as _export

    try:
        program = _export.export(model, args, kwargs=kwargs or None)
    except Exception as e:  # the ONNX export itself succeeded; say why the dump did not
        warnings.warn(f"ember.onnx.export: dump_exported_program failed: {e}", stacklevel=3)
        return
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
    _export.save(program, os.path.join(directory, f"onnx_export_{stamp}.pt2"))


def _module_of_exported_program(program):
    """A GraphModule running program's graph, its lifted parameters, buffers and constants read
    as attributes (so they become initializers) and only the user inputs left as inputs."""
    import copy

    from .. import fx
    from ..export import _aten_names, _writes
    from ..export.graph_signature import InputKind

    root = program.module()
    # y[idx] = v, y.fill_(v) as functional ember calls (the overloads have no ONNX function)
    graph = copy.deepcopy(_writes.lower(program.graph))
    lifted = {
        spec.arg.name: spec.target
        for spec in program.graph_signature.input_specs
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    }
    for node in list(graph.nodes):
        if node.op == "call_function":
            node.target = _aten_names.eager_call(node.target)  # traced through to ember's calls
        if node.op == "placeholder" and node.name in lifted:
            with graph.inserting_before(node):
                attr = graph.get_attr(lifted[node.name])
            node.replace_all_uses_with(attr)
            graph.erase_node(node)
    return fx.GraphModule(root, graph)
