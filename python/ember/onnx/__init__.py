"""ember.onnx: export a model to ONNX, as torch.onnx.export does (its dynamo=True and legacy
forms).

The model is captured with ember.fx (ember.nn layers stay whole, so an LSTM becomes one ONNX
LSTM and a Conv2d one Conv), each node is mapped to ONNX operators (``_symbolic_*`` modules, by
family) and the graph is written with the `onnx` package, which ember needs only here and loads
on the first export."""

from . import errors
from ._custom import ops
from ._export_api import export
from ._exporter import (
    DEFAULT_OPSET,
    MAX_OPSET,
    MIN_OPSET,
    OperatorExportTypes,
    TrainingMode,
    is_in_onnx_export,
)
from ._onnx_program import ONNXProgram

__all__ = [
    "ONNXProgram",
    "export",
    "is_in_onnx_export",
    "TrainingMode",
    "OperatorExportTypes",
    "errors",
    "ops",
    "DEFAULT_OPSET",
    "MIN_OPSET",
    "MAX_OPSET",
]
