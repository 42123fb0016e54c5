"""ember.onnx.export itself: argument checks, the training mode, and where the model goes."""

from ..autograd.grad_mode import no_grad
from . import _exporter
from ._exporter import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, OperatorExportTypes, TrainingMode
from ._graph import _onnx


def _load_symbolics():
    # The mapping tables fill as these modules are imported.
    from . import (  # noqa: F401
        _symbolic_attention,
        _symbolic_elementwise,
        _symbolic_nn,
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
    export_params=True,
    verbose=None,
    training=TrainingMode.EVAL,
    input_names=None,
    output_names=None,
    operator_export_type=OperatorExportTypes.ONNX,
    opset_version=None,
    do_constant_folding=True,
    dynamic_axes=None,
    keep_initializers_as_inputs=None,
    custom_opsets=None,
    export_modules_as_functions=False,
    autograd_inlining=True,
    dynamo=False,
    **unused,
):
    """export(model, args=(), f=None, *, kwargs=None, export_params=True, verbose=None, training=TrainingMode.EVAL, input_names=None, output_names=None, operator_export_type=OperatorExportTypes.ONNX, opset_version=None, do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None, custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True, dynamo=False) -> None

    Exports `model` to an ONNX file, as torch.onnx.export does with its TorchScript exporter.

    The model is traced with ember.fx (`args` as its example inputs; a trailing dict in `args`
    gives keyword arguments), with ember.nn layers kept whole, and each operation becomes standard
    ONNX operators. Layers and functions with no mapping raise
    :class:`ember.onnx.errors.UnsupportedOperatorError` naming them.

    Args:
        model (Module): the model (or a bare layer such as ``nn.LSTM``).
        args (tuple or Tensor): example inputs.
        f (str, PathLike or binary file object): where to write the model; a path is written
            atomically. With None, the ``onnx.ModelProto`` is returned instead.
        export_params (bool): store the parameters in the file (else they become graph inputs).
        training (TrainingMode): EVAL (default) exports in eval mode, PRESERVE as the model is,
            TRAINING in train mode; the model's modes are restored afterwards.
        input_names, output_names (list of str): names of the graph's inputs and outputs, in
            order (tensors of nested inputs flattened).
        opset_version (int): the ONNX opset, from 13 to 21 (default 17).
        dynamic_axes (dict): ``{name: {dim: symbol}}`` or ``{name: [dims]}`` for inputs and
            outputs whose sizes vary; sizes derived from them are computed in the graph.
        do_constant_folding, keep_initializers_as_inputs, custom_opsets,
            export_modules_as_functions, autograd_inlining, operator_export_type, dynamo:
            accepted for compatibility.
    """  # noqa: E501
    onnx = _onnx()
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ValueError(
            f"ember.onnx.export: expected opset_version between {MIN_OPSET} and {MAX_OPSET}; "
            f"got {opset_version}"
        )
    if operator_export_type not in (OperatorExportTypes.ONNX, None):
        raise ValueError("ember.onnx.export: only operator_export_type=ONNX is supported")
    if unused.get("dynamic_shapes") is not None:
        raise ValueError("ember.onnx.export: dynamic_shapes is not supported; use dynamic_axes")
    from .._C import Tensor

    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    _load_symbolics()

    modules = list(model.modules()) if hasattr(model, "modules") else []
    modes = [m.training for m in modules]
    if training == TrainingMode.EVAL and hasattr(model, "eval"):
        model.eval()
    elif training == TrainingMode.TRAINING and hasattr(model, "train"):
        model.train()
    _exporter._exporting[0] = True
    try:
        with no_grad():
            captured, examples = _exporter._capture.capture(model, args, kwargs)
            proto = _exporter.build(
                captured,
                examples,
                opset,
                input_names=input_names,
                output_names=output_names,
                dynamic_axes=dynamic_axes,
                export_params=export_params,
            )
    finally:
        _exporter._exporting[0] = False
        for m, mode in zip(modules, modes):
            m.training = mode
    _exporter.check(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is None:
        return proto
    _exporter.write(proto, f)
    return None
