"""The planner interface of save and load (torch.distributed.checkpoint.planner): a SavePlanner
turns the state dict into WriteItems (tensor chunks and values) and hands each one's data over;
a LoadPlanner turns it into ReadItems and receives their data. Subclass DefaultSavePlanner or
DefaultLoadPlanner (default_planner.py) to rename keys, transform data on the way, or add
planner data, as torch's docs show.

ember's engine calls the same methods in the same order as torch's (set_up_planner,
create_local_plan, create_global_plan on the coordinator, finish_plan, then resolve_data for
each write, or load_bytes / resolve_tensor / commit_tensor for each read). A load reads one
ReadItem per saved chunk that overlaps this rank's piece (dest_offsets in the piece,
storage_offsets in the chunk), and a save records the Metadata that create_global_plan returns,
as torch's do."""

import abc
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any, Optional

from .metadata import ChunkStorageMetadata, MetadataIndex, TensorProperties

__all__ = [
    "LoadItemType",
    "LoadPlan",
    "LoadPlanner",
    "ReadItem",
    "SavePlan",
    "SavePlanner",
    "TensorWriteData",
    "WriteItem",
    "WriteItemType",
]


class WriteItemType(Enum):
    """What a WriteItem writes: a whole TENSOR, a SHARD of one, or a value (BYTE_IO)."""

    TENSOR = auto()
    SHARD = auto()
    BYTE_IO = auto()


class LoadItemType(Enum):
    """What a ReadItem reads: a TENSOR (piece) or a value (BYTE_IO)."""

    TENSOR = auto()
    BYTE_IO = auto()


@dataclass(frozen=True)
class TensorWriteData:
    """TensorWriteData(chunk, properties, size)

    The chunk a tensor write covers, the tensor's properties and its whole size."""

    chunk: ChunkStorageMetadata
    properties: TensorProperties
    size: Any


@dataclass(frozen=True)
class WriteItem:
    """WriteItem(index, type, tensor_data=None)

    One thing a rank writes."""

    index: MetadataIndex
    type: WriteItemType
    tensor_data: Optional[TensorWriteData] = None

    def tensor_storage_size(self):
        """tensor_storage_size() -> Optional[int]

        The bytes of the written chunk (None for a value)."""
        if self.tensor_data is None:
            return None
        from ... import empty

        n = 1
        for s in self.tensor_data.chunk.sizes:
            n *= s
        return n * empty(0, dtype=self.tensor_data.properties.dtype).element_size()


@dataclass(frozen=True)
class ReadItem:
    """ReadItem(type, dest_index, dest_offsets, storage_index, storage_offsets, lengths)

    One thing a rank reads: lengths elements per dim from storage_offsets of the saved key into
    dest_offsets of the target."""

    type: LoadItemType
    dest_index: MetadataIndex
    dest_offsets: Any
    storage_index: MetadataIndex
    storage_offsets: Any
    lengths: Any


@dataclass(frozen=True)
class SavePlan:
    """SavePlan(items, storage_data=None, planner_data=None, usable=True)

    A rank's writes."""

    items: list
    storage_data: Any = None
    planner_data: Any = None
    usable: bool = True


@dataclass
class LoadPlan:
    """LoadPlan(items, storage_data=None, planner_data=None)

    A rank's reads."""

    items: list
    storage_data: Any = None
    planner_data: Any = None


class SavePlanner(abc.ABC):
    """The interface save() drives (see the module's docstring)."""

    @abc.abstractmethod
    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        """set_up_planner(state_dict, storage_meta=None, is_coordinator=False) -> None

        Receives the state dict to save."""

    @abc.abstractmethod
    def create_local_plan(self):
        """create_local_plan() -> SavePlan

        This rank's writes."""

    @abc.abstractmethod
    def create_global_plan(self, all_plans):
        """create_global_plan(all_plans) -> Tuple[List[SavePlan], Metadata]

        On the coordinator: every rank's plan, adjusted, and the checkpoint's metadata."""

    @abc.abstractmethod
    def finish_plan(self, new_plan):
        """finish_plan(new_plan) -> SavePlan

        This rank's plan after the global step."""

    @abc.abstractmethod
    def resolve_data(self, write_item):
        """resolve_data(write_item) -> Union[Tensor, Any]

        The data of a write: the chunk's tensor, or the value."""


class LoadPlanner(abc.ABC):
    """The interface load() drives (see the module's docstring)."""

    @abc.abstractmethod
    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        """set_up_planner(state_dict, metadata=None, is_coordinator=False) -> None

        Receives the state dict to load into and the checkpoint's Metadata."""

    @abc.abstractmethod
    def create_local_plan(self):
        """create_local_plan() -> LoadPlan

        This rank's reads."""

    @abc.abstractmethod
    def create_global_plan(self, global_plan):
        """create_global_plan(global_plan) -> List[LoadPlan]

        On the coordinator: every rank's plan, adjusted."""

    @abc.abstractmethod
    def finish_plan(self, central_plan):
        """finish_plan(central_plan) -> LoadPlan

        This rank's plan after the global step."""

    @abc.abstractmethod
    def load_bytes(self, read_item, value):
        """load_bytes(read_item, value) -> None

        Receives a saved value as a stream that ember.load reads."""

    @abc.abstractmethod
    def resolve_tensor(self, read_item):
        """resolve_tensor(read_item) -> Tensor

        The tensor a read fills."""

    @abc.abstractmethod
    def commit_tensor(self, read_item, tensor):
        """commit_tensor(read_item, tensor) -> None

        Called once tensor (from resolve_tensor) holds the read data."""
