"""ember._dynamo.exc: the errors of ember.compile, with torch's class names and bases."""

__all__ = [
    "TorchDynamoException",
    "Unsupported",
    "InvalidBackend",
    "BackendCompilerFailed",
    "UserError",
    "TorchRuntimeError",
    "InternalTorchDynamoError",
]


class TorchDynamoException(RuntimeError):
    """Base class of ember.compile's errors."""


class Unsupported(TorchDynamoException):
    """Raised under ``fullgraph=True`` where the capture would break the graph (``.item()``,
    data-dependent control flow, Python side effects, ops it cannot see)."""


class InvalidBackend(TorchDynamoException):
    """An unknown backend name passed to ``ember.compile``."""

    def __init__(self, name):
        super().__init__(
            f"Invalid backend: {name!r}, see `ember._dynamo.list_backends()` for available "
            "backends."
        )


class BackendCompilerFailed(TorchDynamoException):
    """The backend raised while compiling a captured graph."""

    def __init__(self, backend_name, inner_exception):
        self.backend_name = backend_name
        self.inner_exception = inner_exception
        super().__init__(
            f"backend={backend_name!r} raised:\n{type(inner_exception).__name__}: {inner_exception}"
        )


class UserError(TorchDynamoException):
    """The program asks for something the capture cannot do for it, e.g. a Python branch on a
    number read from tensor data (``if x.sum().item() > 0``) under ``fullgraph=True``."""


class TorchRuntimeError(TorchDynamoException):
    """An op failed while the capture ran it (torch's name; ember's capture re-raises the op's
    own error, as eager would)."""


class InternalTorchDynamoError(TorchDynamoException):
    """A fault of the capture itself rather than of the program."""
