"""The exceptions of ember.onnx, as torch.onnx.errors names them."""

__all__ = [
    "OnnxExporterError",
    "OnnxExporterWarning",
    "CheckerError",
    "SymbolicValueError",
    "UnsupportedOperatorError",
]


class OnnxExporterWarning(UserWarning):
    """OnnxExporterWarning(UserWarning)

    Warnings of the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """OnnxExporterError(RuntimeError)

    Errors raised by the ONNX exporter."""


class CheckerError(OnnxExporterError):
    """CheckerError(OnnxExporterError)

    The exported model failed ``onnx.checker``."""


class SymbolicValueError(OnnxExporterError):
    """SymbolicValueError(OnnxExporterError)

    An operator's arguments cannot be expressed in ONNX (a value the mapping needs is not known
    when the model is exported, or is out of the range ONNX allows)."""


class UnsupportedOperatorError(OnnxExporterError):
    """UnsupportedOperatorError(name, version, supported_version)

    No ONNX mapping exists for an operator or module of the captured graph at the requested
    opset: ``name`` is the operator (``ember.erfinv``, ``Tensor.unfold``) or module class."""

    def __init__(self, name, version, supported_version=None):
        if supported_version is not None:
            msg = (
                f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                f"supported. Support for this operator was added in version "
                f"{supported_version}, try exporting with this version."
            )
        else:
            msg = (
                f"Exporting the operator '{name}' to ONNX opset version {version} is not supported."
            )
        super().__init__(msg)
        self.name = name
