"""ExportGraphSignature: which graph inputs are lifted parameters, buffers and constants, which
are the user's, and what the outputs are (torch.export.graph_signature's classes)."""

from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any, Optional

__all__ = [
    "InputKind",
    "OutputKind",
    "TensorArgument",
    "ConstantArgument",
    "InputSpec",
    "OutputSpec",
    "ExportGraphSignature",
]


class InputKind(Enum):
    """InputKind(value)

    What a graph input stands for."""

    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


class OutputKind(Enum):
    """OutputKind(value)

    What a graph output stands for."""

    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclass
class TensorArgument:
    """TensorArgument(name)

    A graph value that is a tensor, by node name."""

    name: str


@dataclass
class ConstantArgument:
    """ConstantArgument(name, value)

    A non-tensor input or output fixed at export time."""

    name: str
    value: Any


@dataclass
class InputSpec:
    """InputSpec(kind, arg, target, persistent=None)

    One graph input: its kind, its placeholder and, for lifted ones, the qualified name in the
    module (persistent says whether a buffer is in the state_dict)."""

    kind: InputKind
    arg: Any
    target: Optional[str]
    persistent: Optional[bool] = None


@dataclass
class OutputSpec:
    """OutputSpec(kind, arg, target)

    One graph output."""

    kind: OutputKind
    arg: Any
    target: Optional[str]


@dataclass
class ExportGraphSignature:
    """ExportGraphSignature(input_specs, output_specs)

    The inputs and outputs of an exported graph, lifted parameters and buffers included, as
    torch.export's: parameters, buffers and constants come first, then the user inputs."""

    input_specs: list = field(default_factory=list)
    output_specs: list = field(default_factory=list)

    def _names(self, kind):
        return tuple(s.target for s in self.input_specs if s.kind == kind)

    @property
    def parameters(self):
        """parameters -> tuple[str, ...]

        Qualified names of the lifted parameters, in input order."""
        return self._names(InputKind.PARAMETER)

    @property
    def buffers(self):
        """buffers -> tuple[str, ...]

        Qualified names of the lifted buffers, in input order."""
        return self._names(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        """non_persistent_buffers -> tuple[str, ...]

        Buffers that are not part of the state_dict."""
        return tuple(
            s.target
            for s in self.input_specs
            if s.kind == InputKind.BUFFER and s.persistent is False
        )

    @property
    def lifted_tensor_constants(self):
        """lifted_tensor_constants -> tuple[str, ...]

        Tensor attributes that are neither parameters nor buffers."""
        return self._names(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self):
        """user_inputs -> tuple[str, ...]

        Placeholder names of the inputs the caller passes."""
        return tuple(s.arg.name for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        """user_outputs -> tuple[str, ...]

        Names of the outputs the caller receives."""
        return tuple(s.arg.name for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT)

    def _inputs_to(self, kind):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == kind}

    @property
    def inputs_to_parameters(self):
        """inputs_to_parameters -> dict[str, str]

        Placeholder name -> parameter name."""
        return self._inputs_to(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self):
        """inputs_to_buffers -> dict[str, str]

        Placeholder name -> buffer name."""
        return self._inputs_to(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self):
        """inputs_to_lifted_tensor_constants -> dict[str, str]

        Placeholder name -> constant name."""
        return self._inputs_to(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self):
        """buffers_to_mutate -> dict[str, str]

        Output name -> the buffer it updates (the BUFFER_MUTATION outputs: a training-mode
        batch norm's running statistics, a buffer's in-place update)."""
        return {
            s.arg.name: s.target for s in self.output_specs if s.kind == OutputKind.BUFFER_MUTATION
        }

    def __str__(self):
        lines = ["", "# inputs"]
        for s in self.input_specs:
            target = f" target='{s.target}'" if s.target is not None else ""
            persistent = f" persistent={s.persistent}" if s.persistent is not None else ""
            lines.append(f"{s.arg.name}: {s.kind.name}{target}{persistent}")
        lines.append("")
        lines.append("# outputs")
        for s in self.output_specs:
            target = f" target='{s.target}'" if s.target is not None else ""
            lines.append(f"{s.arg.name}: {s.kind.name}{target}")
        return "\n".join(lines) + "\n"
