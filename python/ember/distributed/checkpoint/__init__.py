"""ember.distributed.checkpoint: saving and loading (sharded) training state in parallel
(torch.distributed.checkpoint).

    state = {"model": model, "optim": optimizer, "step": 7}
    dcp.save(state, checkpoint_id="ckpt")      # every rank writes the chunks it owns
    dcp.load(state, checkpoint_id="ckpt")      # any number of ranks, any placements

A checkpoint is a directory: one data file per rank that owns data (the raw bytes of its
chunks) and `.metadata`, JSON written by the coordinator after every rank wrote (each file
atomically). Loading reads each rank's byte ranges only, resharding as needed, and never runs
code. The on-disk format is ember's own: torch's DCP directories are not read (and ember's are
not torch's). See docs/ARCHITECTURE.md.
"""

from . import default_planner, format_utils, metadata, planner, state_dict, stateful
from ._api import CheckpointException, async_save, load, load_state_dict, save, save_state_dict
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    TensorStorageMetadata,
)
from .planner import LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner, WriteItem
from .stateful import Stateful

__all__ = [
    "BytesStorageMetadata",
    "CheckpointException",
    "ChunkStorageMetadata",
    "LoadPlan",
    "LoadPlanner",
    "Metadata",
    "ReadItem",
    "SavePlan",
    "SavePlanner",
    "TensorStorageMetadata",
    "WriteItem",
    "DefaultLoadPlanner",
    "DefaultSavePlanner",
    "FileSystemReader",
    "FileSystemWriter",
    "Stateful",
    "async_save",
    "default_planner",
    "format_utils",
    "load",
    "load_state_dict",
    "metadata",
    "planner",
    "save",
    "save_state_dict",
    "state_dict",
    "stateful",
]
