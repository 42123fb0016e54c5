"""Converting between a checkpoint directory and a single ember.save file."""

import os

from .filesystem import FileSystemReader, decode_value

__all__ = ["dcp_to_torch_save", "torch_save_to_dcp"]


def _unflatten(md, lib):
    """The nested state dict of a checkpoint's metadata (each value at its saved path)."""
    reader = FileSystemReader(md[1])
    out = {}
    from ._api import _read_chunk
    from .filesystem import _dtype

    try:
        for key, entry in md[0].items():
            if entry["type"] == "value":
                value = decode_value(entry["value"])
            else:
                dtype = _dtype(entry["dtype"])
                value = lib.zeros(entry["size"], dtype=dtype)
                for c in entry["chunks"] if value.numel() else ():
                    box = value
                    for d, (o, n) in enumerate(zip(c["offsets"], c["sizes"])):
                        box = box.narrow(d, o, n)
                    _read_chunk(reader, box, c, [0] * len(c["sizes"]), c["sizes"], dtype)
            _set_path(out, entry.get("path") or [key], value)
    finally:
        reader._close()
    return out


def _set_path(root, path, value):
    """Puts value at path (dict keys and list indices) in root, making containers on the way."""
    node = root
    for part, nxt in zip(path, path[1:]):
        fresh = [] if isinstance(nxt, int) else {}
        if isinstance(node, list):
            while len(node) <= part:
                node.append(None)
            if node[part] is None:
                node[part] = fresh
            node = node[part]
        else:
            node = node.setdefault(part, fresh)
    last = path[-1]
    if isinstance(node, list):
        while len(node) <= last:
            node.append(None)
    node[last] = value


def dcp_to_torch_save(dcp_checkpoint_dir, torch_save_path):
    """dcp_to_torch_save(dcp_checkpoint_dir, torch_save_path) -> None

    Writes the whole state of a checkpoint directory (every tensor assembled from its chunks)
    as one ember.save file (the nested state dict it was saved from), in one process."""
    from ..tensor._api import _lib

    lib = _lib()
    meta = FileSystemReader(dcp_checkpoint_dir)._read_json()["state_dict_metadata"]
    lib.save(_unflatten((meta, os.fspath(dcp_checkpoint_dir)), lib), torch_save_path)


def torch_save_to_dcp(torch_save_path, dcp_checkpoint_dir):
    """torch_save_to_dcp(torch_save_path, dcp_checkpoint_dir) -> None

    Writes the state dict of an ember.save file (loaded with weights_only=True) as a checkpoint
    directory, in one process."""
    from ..tensor._api import _lib
    from ._api import save

    state = _lib().load(torch_save_path, weights_only=True)
    save(state, checkpoint_id=dcp_checkpoint_dir, no_dist=True)
