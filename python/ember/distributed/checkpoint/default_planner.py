"""The default planners of save and load (torch.distributed.checkpoint.default_planner): nested
state dicts flattened to dotted keys; each DTensor chunk written by its owner (coordinate 0 of
replicated mesh dims), a plain tensor or value by the lowest rank that has it; on load, each
tensor's piece on this rank read in place. Subclass them to customize (planner.py)."""

import collections
import dataclasses

from .metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    TensorProperties,
    TensorStorageMetadata,
)
from .planner import (
    LoadItemType,
    LoadPlan,
    LoadPlanner,
    ReadItem,
    SavePlan,
    SavePlanner,
    TensorWriteData,
    WriteItem,
    WriteItemType,
)

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


def _api():
    from . import _api

    return _api


def _dedup(plans, lowest_rank):
    """plans with each write planned by several ranks kept by one: in order of first
    appearance, the rank with the fewest bytes planned so far (the lowest rank with
    lowest_rank); a value counts as one byte."""
    owners, items = {}, {}
    for r, plan in enumerate(plans):
        for item in plan.items:
            owners.setdefault(item.index, []).append(r)
            items[item.index] = item
    planned, keep = [0] * len(plans), {}
    for index, ranks in owners.items():
        r = ranks[0] if lowest_rank else min(ranks, key=lambda k: planned[k])
        planned[r] += items[index].tensor_storage_size() or 1
        keep[index] = r
    return [
        dataclasses.replace(plan, items=[i for i in plan.items if keep[i.index] == r])
        for r, plan in enumerate(plans)
    ]


class DefaultSavePlanner(SavePlanner):
    """DefaultSavePlanner(flatten_state_dict=True, flatten_sharded_tensors=True,
        dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False, enable_plan_caching=False)

    The save plan: nested state dicts flattened, each chunk written by one rank (a chunk that
    several ranks hold by the one with the fewest bytes planned so far, as torch's; with
    dedup_save_to_lowest_rank, by the lowest rank)."""

    def __init__(
        self,
        flatten_state_dict=True,
        flatten_sharded_tensors=True,
        dedup_replicated_tensors=None,
        dedup_save_to_lowest_rank=False,
        **kwargs,
    ):
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank
        self.mappings = {}

    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        """set_up_planner(state_dict, storage_meta=None, is_coordinator=False) -> None

        Keeps the state dict, flattened ({dotted key: value}; the paths in self.mappings)."""
        if self.flatten_state_dict:
            paths = {}
            flat = _api()._flatten(state_dict, paths)
            self.state_dict = {k: v for k, (_, _, v) in flat.items()}
            self.mappings = paths
        else:
            self.state_dict = dict(state_dict)
            self.mappings = {}
        self.is_coordinator = is_coordinator

    def create_local_plan(self):
        """create_local_plan() -> SavePlan

        A SHARD item per DTensor piece this rank owns, a TENSOR item per plain tensor and a
        BYTE_IO item per value."""
        api = _api()
        items = []
        for key, v in self.state_dict.items():
            if not api._is_tensor(v):
                items.append(WriteItem(MetadataIndex(key), WriteItemType.BYTE_IO))
                continue
            api._no_partial(v)
            offsets, sizes, owner = api._box(v)
            sharded = isinstance(v, api.DTensor)
            if sharded and not (owner and all(sizes)) and v.numel():
                continue
            chunk = ChunkStorageMetadata(api._lib().Size(offsets), api._lib().Size(sizes))
            data = TensorWriteData(chunk, TensorProperties(v.dtype), api._lib().Size(v.shape))
            kind = WriteItemType.SHARD if sharded and v.numel() else WriteItemType.TENSOR
            items.append(WriteItem(MetadataIndex(key, chunk.offsets), kind, data))
        # torch's planner carries its flattening paths as planner data (create_global_plan
        # merges them into the checkpoint's Metadata)
        return SavePlan(items, planner_data=self.mappings if self.flatten_state_dict else None)

    def create_global_plan(self, all_plans):
        """create_global_plan(all_plans) -> Tuple[List[SavePlan], Metadata]

        Leaves each write that several ranks planned (a whole tensor, a value) to one of them,
        as torch's dedup; the metadata lists every key's chunks, and its planner_data merges
        the plans' (the flattening paths) when flatten_state_dict."""
        plans = _dedup(all_plans, self.dedup_save_to_lowest_rank)
        md = {}
        for plan in plans:
            for item in plan.items:
                if item.type == WriteItemType.BYTE_IO:
                    md[item.index.fqn] = BytesStorageMetadata()
                    continue
                td = item.tensor_data
                entry = md.setdefault(
                    item.index.fqn, TensorStorageMetadata(td.properties, td.size, [])
                )
                entry.chunks.append(td.chunk)
        planner_data = None
        if self.flatten_state_dict:
            planner_data = dict(collections.ChainMap(*(p.planner_data for p in plans)))
        return plans, Metadata(md, planner_data=planner_data)

    def finish_plan(self, new_plan):
        """finish_plan(new_plan) -> SavePlan

        The plan as the global step left it."""
        return new_plan

    def resolve_data(self, write_item):
        """resolve_data(write_item) -> Union[Tensor, Any]

        This rank's piece of the tensor (the DTensor's local tensor), or the value."""
        v = self.state_dict[write_item.index.fqn]
        if write_item.type == WriteItemType.BYTE_IO:
            return v
        api = _api()
        return (v._local_tensor if isinstance(v, api.DTensor) else v).detach()


def _chunk_reads(key, chunks, offsets, sizes, Size):
    """The ReadItems that fill the box (offsets, sizes) of a tensor from its saved chunks: one
    per overlapping chunk, its dest_offsets in the box and its storage_offsets in the chunk, as
    torch's planner plans them."""
    items = []
    dest = MetadataIndex(key, Size(offsets), 0)
    for i, c in enumerate(chunks):
        lo = [max(a, b) for a, b in zip(offsets, c.offsets)]
        hi = [min(a + n, b + m) for a, n, b, m in zip(offsets, sizes, c.offsets, c.sizes)]
        if any(h <= l for l, h in zip(lo, hi)):
            continue
        items.append(
            ReadItem(
                LoadItemType.TENSOR,
                dest,
                Size([l - o for l, o in zip(lo, offsets)]),
                MetadataIndex(key, c.offsets, i),
                Size([l - o for l, o in zip(lo, c.offsets)]),
                Size([h - l for l, h in zip(lo, hi)]),
            )
        )
    return items


class DefaultLoadPlanner(LoadPlanner):
    """DefaultLoadPlanner(flatten_state_dict=True, flatten_sharded_tensors=True,
        allow_partial_load=False)

    The load plan; allow_partial_load=True skips the keys of the state dict that the
    checkpoint lacks instead of raising."""

    def __init__(
        self, flatten_state_dict=True, flatten_sharded_tensors=True, allow_partial_load=False
    ):
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.allow_partial_load = allow_partial_load
        self.mappings = {}

    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        """set_up_planner(state_dict, metadata=None, is_coordinator=False) -> None

        Keeps the state dict (flattened; self.original_state_dict is the one given) and the
        checkpoint's Metadata."""
        self.original_state_dict = state_dict
        if self.flatten_state_dict:
            flat = _api()._flatten(state_dict)
            self.state_dict = {k: v for k, (_, _, v) in flat.items()}
            self.mappings = {k: (c, key) for k, (c, key, _) in flat.items()}
        else:
            self.state_dict = dict(state_dict)
            self.mappings = {k: (state_dict, k) for k in state_dict}
        self.metadata = metadata
        self.is_coordinator = is_coordinator

    def _set(self, key, value):
        self.state_dict[key] = value
        container, k = self.mappings.get(key, (None, None))
        if container is not None and not isinstance(container, tuple):
            container[k] = value

    def create_local_plan(self):
        """create_local_plan() -> LoadPlan

        A TENSOR item per saved chunk that overlaps this rank's piece of a tensor, a BYTE_IO
        item per value; a key the checkpoint lacks raises unless allow_partial_load."""
        api = _api()
        saved = self.metadata.state_dict_metadata
        items = []
        for key, v in self.state_dict.items():
            api._no_partial(v)
            if key not in saved:
                if not self.allow_partial_load:
                    raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
                continue
            entry = saved[key]
            index = MetadataIndex(key)
            if isinstance(entry, BytesStorageMetadata):
                if api._is_tensor(v):
                    raise ValueError(
                        f"checkpoint.load: {key} is a tensor here but not in the checkpoint"
                    )
                items.append(ReadItem(LoadItemType.BYTE_IO, index, [], index, [], []))
                continue
            if api._is_tensor(v):
                if list(v.shape) != list(entry.size):
                    raise ValueError(
                        f"Size mismatch between saved {api._lib().Size(entry.size)} and "
                        f"current: {v.shape} for {key}"
                    )
                offsets, sizes, _ = api._box(v)
            else:
                offsets, sizes = [0] * len(entry.size), list(entry.size)
            if all(sizes):
                items += _chunk_reads(key, entry.chunks, offsets, sizes, api._lib().Size)
        return LoadPlan(items)

    def create_global_plan(self, global_plan):
        """create_global_plan(global_plan) -> List[LoadPlan]

        The plans unchanged."""
        return global_plan

    def finish_plan(self, central_plan):
        """finish_plan(central_plan) -> LoadPlan

        The plan unchanged."""
        return central_plan

    def load_bytes(self, read_item, value):
        """load_bytes(read_item, value) -> None

        Puts the saved value (read from the stream value) in place of the state dict's."""
        from ... import load

        self._set(read_item.dest_index.fqn, load(value, weights_only=False))

    def resolve_tensor(self, read_item):
        """resolve_tensor(read_item) -> Tensor

        The tensor the read fills: this rank's piece of the state dict's tensor (a new one when
        the state dict had a value there)."""
        api = _api()
        key = read_item.dest_index.fqn
        v = self.state_dict[key]
        if not api._is_tensor(v):
            entry = self.metadata.state_dict_metadata[key]
            v = api._lib().zeros(list(entry.size), dtype=entry.properties.dtype)
            self._set(key, v)
        t = v._local_tensor if isinstance(v, api.DTensor) else v
        for d, (o, n) in enumerate(zip(read_item.dest_offsets, read_item.lengths)):
            t = t.narrow(d, o, n)
        return t

    def commit_tensor(self, read_item, tensor):
        """commit_tensor(read_item, tensor) -> None

        Nothing: the data was read into the state dict's own tensor."""
