"""What a checkpoint records (torch.distributed.checkpoint.metadata's classes): for each flat
key, a tensor's dtype, size and saved chunks, or that it is a value. ember's readers build these
from the checkpoint's JSON for planners; the engine reads the JSON itself."""

from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = [
    "BytesStorageMetadata",
    "ChunkStorageMetadata",
    "Metadata",
    "MetadataIndex",
    "TensorProperties",
    "TensorStorageMetadata",
]


@dataclass
class ChunkStorageMetadata:
    """ChunkStorageMetadata(offsets, sizes)

    One saved piece of a tensor: where it starts in the whole tensor and its sizes."""

    offsets: Any
    sizes: Any


@dataclass
class TensorProperties:
    """TensorProperties(dtype=None, layout=None, requires_grad=False, memory_format=None,
        pin_memory=False)

    The saved tensor's dtype (the rest is accepted for torch's signature)."""

    dtype: Any = None
    layout: Any = None
    requires_grad: bool = False
    memory_format: Any = None
    pin_memory: bool = False


@dataclass
class TensorStorageMetadata:
    """TensorStorageMetadata(properties, size, chunks)

    A saved tensor: its properties, its whole size and its chunks."""

    properties: TensorProperties
    size: Any
    chunks: list


@dataclass
class BytesStorageMetadata:
    """BytesStorageMetadata()

    A saved value that is not a tensor."""


@dataclass
class Metadata:
    """Metadata(state_dict_metadata, planner_data=None, storage_data=None, storage_meta=None,
        version=None)

    The checkpoint's table of contents: {flat key: TensorStorageMetadata or
    BytesStorageMetadata}, and the planner's data (the save planner's create_global_plan
    returned it; ember stores it as JSON, so it holds plain values)."""

    state_dict_metadata: dict
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Any = None
    version: Any = None


@dataclass(frozen=True)
class MetadataIndex:
    """MetadataIndex(fqn, offset=None, index=None)

    Names a flat key (and, for a tensor, the offsets of one chunk)."""

    fqn: str
    offset: Optional[Any] = None
    index: Optional[int] = field(hash=False, compare=False, default=None)


def from_json(meta, dtype_of, decode_value):
    """Metadata of the checkpoint's JSON document (dtype_of: name -> dtype; decode_value reads
    the stored planner data)."""
    from ... import Size

    md = meta["state_dict_metadata"]

    out = {}
    for key, entry in md.items():
        if entry["type"] == "tensor":
            chunks = [
                ChunkStorageMetadata(Size(c["offsets"]), Size(c["sizes"])) for c in entry["chunks"]
            ]
            out[key] = TensorStorageMetadata(
                TensorProperties(dtype_of(entry["dtype"])), Size(entry["size"]), chunks
            )
        else:
            out[key] = BytesStorageMetadata()
    planner_data = decode_value(meta["planner_data"]) if "planner_data" in meta else None
    return Metadata(out, planner_data=planner_data)
