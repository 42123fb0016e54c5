"""save, load and async_save of ember.distributed.checkpoint (see the package docstring)."""

import concurrent.futures
import io
import pickle
import traceback
import warnings

from ... import _C
from .. import distributed_c10d as c10d
from ..tensor._api import DTensor, Partial, Shard, _lib, _local_box
from .filesystem import (
    FileSystemReader,
    FileSystemWriter,
    _dtype,
    decode_value,
    encode_value,
)

__all__ = [
    "CheckpointException",
    "async_save",
    "load",
    "load_state_dict",
    "save",
    "save_state_dict",
]


class CheckpointException(BaseException):
    """CheckpointException(msg, failures)

    Raised on every rank when a save or load failed on one or more ranks; failures maps each
    failed rank to (exception, traceback summary)."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        return self._failures

    def __str__(self):
        out = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, trace) in self._failures.items():
            out += f"Traceback (most recent call last): (RANK {rank})\n"
            if trace is not None:
                out += "".join(traceback.format_list(trace))
            out += "".join(traceback.format_exception_only(type(exc), exc))
        return out


# --- flattening nested state dicts -----------------------------------------------------------


def _is_tensor(v):
    return isinstance(v, _C.Tensor)


def _traversed(value):
    """Whether a list is walked into (it holds tensors or mappings somewhere), as torch; a
    tuple only when it holds tensors (ember's addition: tensors are never stored as values)."""
    if isinstance(value, tuple):
        return any(_is_tensor(v) for v in value)
    for v in value:
        if _is_tensor(v) or isinstance(v, dict):
            return True
        if isinstance(v, list) and _traversed(v):
            return True
    return False


def _flatten(state_dict, paths=None):
    """{flat key: (container, key in it, value)} for every leaf; mappings are always walked,
    lists and tuples when they hold tensors or mappings. Flat keys join the path with '.'."""
    out = {}

    def walk(prefix, path, container, key, value):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}", (*path, str(k)), value, k, v)
        elif isinstance(value, (list, tuple)) and _traversed(value):
            for i, v in enumerate(value):
                walk(f"{prefix}.{i}", (*path, i), value, i, v)
        else:
            out[prefix] = (container, key, value)
            if paths is not None:
                paths[prefix] = path

    for k, v in state_dict.items():
        walk(str(k), (str(k),), state_dict, k, v)
    return out


# --- the distributed steps --------------------------------------------------------------------


class _Dist:
    """Runs a step on every rank and makes a failure on any rank raise everywhere."""

    def __init__(self, process_group, no_dist):
        self.use = not no_dist and c10d.is_available() and c10d.is_initialized()
        self.group = process_group
        self.rank = c10d.get_rank(process_group) if self.use else 0
        self.world = c10d.get_world_size(process_group) if self.use else 1

    def all_gather(self, step, fn):
        try:
            result = (True, fn())
        except Exception as e:
            result = (False, _wrap(e))
        if self.use and self.world > 1:
            results = [None] * self.world
            c10d.all_gather_object(results, result, group=self.group)
        else:
            results = [result]
        failures = {r: res for r, (ok, res) in enumerate(results) if not ok}
        if failures:
            raise CheckpointException(step, failures)
        return [res for _, res in results]


def _wrap(e):
    pair = (e, traceback.extract_tb(e.__traceback__))
    try:
        pickle.dumps(pair)
    except Exception:
        pair = (RuntimeError(f"{type(e).__name__}: {e}"), pair[1])
    return pair


def _box(t):
    """(offsets, sizes) of this rank's piece of t in the global tensor, and whether this rank
    writes it (replicas along a mesh dimension: only coordinate 0 writes)."""
    if not isinstance(t, DTensor):
        return [0] * t.dim(), list(t.shape), True
    mesh = t.device_mesh
    offsets, sizes = _local_box(t.shape, mesh, t.placements)
    owner = all(
        isinstance(p, Shard) or mesh.get_local_rank(md) == 0 for md, p in enumerate(t.placements)
    )
    return offsets, sizes, owner


def _writer_of(storage_writer, checkpoint_id, cls):
    if storage_writer is None:
        if checkpoint_id is None:
            raise RuntimeError(
                "`checkpoint_id` must be specified if storage_reader/storage_writer is None."
            )
        return cls(checkpoint_id)
    if not isinstance(storage_writer, cls):
        raise NotImplementedError(
            f"checkpoint: only {cls.__name__} storage is supported; got "
            f"{type(storage_writer).__name__}"
        )
    if checkpoint_id is not None:
        storage_writer.reset(checkpoint_id)
    return storage_writer


def _is_stateful(v):
    """isinstance(v, Stateful), without typing's protocol check (which, run on a Tensor, leaves
    an `__annotations__` entry in the Tensor class)."""
    if isinstance(v, (dict, list, tuple, str, int, float, _C.Tensor)) or v is None:
        return False
    return all(callable(getattr(v, m, None)) for m in ("state_dict", "load_state_dict"))


def _dtensor_optim_state(optim, osd):
    """osd (optim.state_dict()) with the plain state tensors of DTensor parameters laid out as
    their parameter (ember's SGD momentum buffers are the local piece, Adam's are DTensors)."""
    params = [p for g in getattr(optim, "param_groups", ()) for p in g["params"]]
    if not isinstance(osd, dict) or not any(isinstance(p, DTensor) for p in params):
        return osd
    idxs = [i for g in osd.get("param_groups", ()) for i in g["params"]]
    state = dict(osd.get("state", {}))
    for idx, p in zip(idxs, params):
        st = state.get(idx)
        if not isinstance(p, DTensor) or not st:
            continue
        st = dict(st)
        for k, v in st.items():
            plain = _is_tensor(v) and not isinstance(v, DTensor) and v.dim() > 0
            if plain and tuple(v.shape) == tuple(p._local_tensor.shape):
                st[k] = DTensor._make(v, p.device_mesh, p.placements, p.shape)
        state[idx] = st
    return dict(osd, state=state)


def _to_state_dicts(state_dict):
    return {
        k: _dtensor_optim_state(v, v.state_dict()) if _is_stateful(v) else v
        for k, v in state_dict.items()
    }


def _no_partial(v):
    if isinstance(v, DTensor) and any(isinstance(p, Partial) for p in v.placements):
        raise ValueError(
            "Any checkpointing related operations are not supported for DTensor with partial "
            "placements!"
        )


def _coordinated(dist, planner, plans):
    """The coordinator's create_global_plan(plans), on every rank."""
    return dist.all_gather(
        "global plan", lambda: planner.create_global_plan(plans) if dist.rank == 0 else None
    )[0]


def _metadata_json(metadata, records, values, paths):
    """The checkpoint's JSON for the Metadata the global plan returned, as torch writes that
    object: its keys, dtypes, sizes and chunk order, and its planner_data; each listed chunk
    gets the place where its owner wrote it (a chunk nobody wrote is left out)."""
    from .metadata import BytesStorageMetadata

    md = {}
    for key, entry in metadata.state_dict_metadata.items():
        path = paths.get(key)
        if isinstance(entry, BytesStorageMetadata):
            if key in values:
                md[key] = {"type": "value", "value": values[key], "path": path}
            continue
        written = {tuple(r["offsets"]): r for r in records.get(key, [])}
        chunks = [written.get(tuple(c.offsets)) for c in entry.chunks]
        md[key] = {
            "type": "tensor",
            "dtype": repr(entry.properties.dtype).split(".", 1)[1],
            "size": list(entry.size),
            "chunks": [c for c in chunks if c is not None],
            "path": path,
        }
    out = {"state_dict_metadata": md}
    if metadata.planner_data is not None:
        out["planner_data"] = encode_value(metadata.planner_data, "planner_data")
    return out


def _save(state_dict, writer, planner, dist):
    from .default_planner import DefaultSavePlanner
    from .planner import WriteItemType

    planner = DefaultSavePlanner() if planner is None else planner

    def plan():
        if dist.rank == 0:
            writer._prepare()
        planner.set_up_planner(_to_state_dicts(state_dict), None, dist.rank == 0)
        return planner.create_local_plan()

    plans = dist.all_gather("plan", plan)
    central, metadata = _coordinated(dist, planner, plans)
    final = {}

    def write():
        final["plan"] = planner.finish_plan(central[dist.rank])
        items, values = [], {}
        for item in final["plan"].items:
            key = item.index.fqn
            data = planner.resolve_data(item)
            if item.type == WriteItemType.BYTE_IO:
                values[key] = encode_value(data, key)
            elif data.numel():
                items.append((key, list(item.tensor_data.chunk.offsets), data.detach()))
        paths = {
            i.index.fqn: getattr(planner, "mappings", {}).get(i.index.fqn)
            for i in final["plan"].items
        }
        return writer._write_data(dist.rank, items), values, paths

    written = dist.all_gather("write", write)

    def finish():
        if dist.rank != 0:
            return None
        records, values, paths = {}, {}, {}
        for recs, vals, pths in written:
            for key, rs in recs.items():
                records.setdefault(key, []).extend(rs)
            values.update(vals)
            paths.update({k: list(v) for k, v in pths.items() if v is not None})
        writer._write_metadata(_metadata_json(metadata, records, values, paths))
        return None

    dist.all_gather("finish", finish)
    return metadata


def save(
    state_dict,
    *,
    checkpoint_id=None,
    storage_writer=None,
    planner=None,
    process_group=None,
    no_dist=False,
):
    """save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
        process_group=None, no_dist=False) -> Metadata

    Saves a (nested) state dict in parallel: every rank calls it, each writes only the chunks of
    its DTensors it owns (one copy of replicated data), and the coordinator (rank 0) writes the
    metadata once every rank has written. Stateful values are saved through state_dict()."""
    writer = _writer_of(storage_writer, checkpoint_id, FileSystemWriter)
    dist = _Dist(process_group, no_dist)
    return _save(state_dict, writer, planner, dist)


def _only_rank0_coordinates(name, coordinator_rank):
    if coordinator_rank != 0:
        raise NotImplementedError(f"{name}: ember's coordinator is rank 0; got {coordinator_rank}")


def save_state_dict(
    state_dict,
    storage_writer,
    process_group=None,
    coordinator_rank=0,
    no_dist=False,
    planner=None,
):
    """save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
        no_dist=False, planner=None) -> Metadata

    The former name of save (deprecated, as torch's)."""
    warnings.warn(
        "`save_state_dict` is deprecated and will be removed in future versions."
        "Please use `save` instead.",
        FutureWarning,
        stacklevel=2,
    )
    _only_rank0_coordinates("save_state_dict", coordinator_rank)
    return save(
        state_dict,
        storage_writer=storage_writer,
        planner=planner,
        process_group=process_group,
        no_dist=no_dist,
    )


_ASYNC = {}


def _stage(value):
    """A copy of value's tensors."""
    if isinstance(value, DTensor):
        return DTensor._make(
            value._local_tensor.detach().clone(), value.device_mesh, value.placements, value.shape
        )
    if _is_tensor(value):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _stage(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and _traversed(value):
        return type(value)(_stage(v) for v in value)
    return value


def async_save(
    state_dict,
    *,
    checkpoint_id=None,
    storage_writer=None,
    planner=None,
    process_group=None,
    async_checkpointer_type=None,
    async_stager=None,
    no_dist=False,
    use_collectives=True,
):
    """async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
        process_group=None, no_dist=False) -> Future

    Like save, in a background thread: the state is copied (staged) before it returns, so
    training may change the tensors at once; the Future's result() waits for the write. The
    writes use a process group of their own (made once, collectively, on first use), so they
    do not interleave with the training's collectives."""
    writer = _writer_of(storage_writer, checkpoint_id, FileSystemWriter)
    staged = _stage(_to_state_dicts(state_dict))
    dist = _Dist(process_group, no_dist)
    if dist.use and process_group is None:
        if "group" not in _ASYNC:
            _ASYNC["group"] = c10d.new_group(list(range(c10d.get_world_size())))
        dist.group = _ASYNC["group"]
    if "pool" not in _ASYNC:
        _ASYNC["pool"] = concurrent.futures.ThreadPoolExecutor(1, "ember-dcp-async")
    return _ASYNC["pool"].submit(_save, staged, writer, planner, dist)


# --- load -------------------------------------------------------------------------------------


def _saved_chunk(entry, index):
    """The saved chunk record that a ReadItem's storage_index names (its index is a hint, its
    offset decides, as torch's lookup)."""
    chunks = entry["chunks"]
    want = list(index.offset) if index.offset is not None else None
    i = index.index
    if i is not None and i < len(chunks) and (want is None or chunks[i]["offsets"] == want):
        return chunks[i]
    for c in chunks:
        if want is None or c["offsets"] == want:
            return c
    raise ValueError(f"checkpoint.load: no saved chunk of {index.fqn} at offsets {want}")


def _read_chunk(reader, target, chunk, start, lengths, dtype):
    """Copies the box (start, lengths) of a saved chunk into target, reading only the byte
    range that covers it (straight into target when the box is the whole chunk)."""
    if (
        not any(start)
        and chunk["sizes"] == list(lengths)
        and target.dtype == dtype
        and target.is_contiguous()
    ):
        reader._read_into(chunk["file"], chunk["offset"], target)
        return
    strides, acc = [], 1
    for s in reversed(chunk["sizes"]):
        strides.append(acc)
        acc *= s
    strides.reverse()
    first = sum(o * st for o, st in zip(start, strides))
    last = sum((o + n - 1) * st for o, n, st in zip(start, lengths, strides))
    span = _lib().empty(last - first + 1, dtype=dtype)
    reader._read_into(chunk["file"], chunk["offset"] + first * span.element_size(), span)
    target.copy_(span.as_strided(list(lengths), strides, 0))


def _load(state_dict, reader, planner, dist):
    from .default_planner import DefaultLoadPlanner
    from .metadata import from_json
    from .planner import LoadItemType

    planner = DefaultLoadPlanner() if planner is None else planner
    statefuls = {k: v for k, v in state_dict.items() if _is_stateful(v)}
    sd = dict(state_dict)  # top-level values are replaced here, then in the caller's dict
    for k, v in statefuls.items():
        sd[k] = _dtensor_optim_state(v, v.state_dict())
    holder = {}

    def plan():
        meta = reader._read_json()
        holder["md"] = meta["state_dict_metadata"]
        planner.set_up_planner(sd, from_json(meta, _dtype, decode_value), dist.rank == 0)
        return planner.create_local_plan()

    plans = dist.all_gather("plan", plan)
    central = _coordinated(dist, planner, plans)

    def read():
        md = holder["md"]
        lib = _lib()
        try:
            with lib.no_grad():
                for item in planner.finish_plan(central[dist.rank]).items:
                    entry = md[item.storage_index.fqn]
                    if item.type == LoadItemType.BYTE_IO:
                        buf = io.BytesIO()
                        lib.save(decode_value(entry["value"]), buf)
                        buf.seek(0)
                        planner.load_bytes(item, buf)
                        continue
                    target = planner.resolve_tensor(item)
                    chunk = _saved_chunk(entry, item.storage_index)
                    dtype = _dtype(entry["dtype"])
                    _read_chunk(reader, target, chunk, item.storage_offsets, item.lengths, dtype)
                    planner.commit_tensor(item, target)
        finally:
            reader._close()

    dist.all_gather("read", read)
    for k in state_dict:
        if k not in statefuls:
            state_dict[k] = sd[k]
    for k, v in statefuls.items():
        v.load_state_dict(sd[k])


def load(
    state_dict,
    *,
    checkpoint_id=None,
    storage_reader=None,
    planner=None,
    process_group=None,
    no_dist=False,
):
    """load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
        process_group=None, no_dist=False) -> None

    Loads a checkpoint into state_dict in place: its tensors and DTensors receive the saved
    values (each rank reads only the byte ranges of its own pieces, whatever the number of
    ranks and the placements at save time), other values are replaced, and Stateful values get
    load_state_dict() with the loaded state. Every key of state_dict must be in the
    checkpoint."""
    reader = _writer_of(storage_reader, checkpoint_id, FileSystemReader)
    dist = _Dist(process_group, no_dist)
    _load(state_dict, reader, planner, dist)


def load_state_dict(
    state_dict,
    storage_reader,
    process_group=None,
    coordinator_rank=0,
    no_dist=False,
    planner=None,
):
    """load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
        no_dist=False, planner=None) -> None

    The former name of load (deprecated, as torch's)."""
    warnings.warn(
        "`load_state_dict` is deprecated and will be removed in future versions. "
        "Please use `load` instead.",
        FutureWarning,
        stacklevel=2,
    )
    _only_rank0_coordinates("load_state_dict", coordinator_rank)
    load(
        state_dict,
        storage_reader=storage_reader,
        planner=planner,
        process_group=process_group,
        no_dist=no_dist,
    )
