"""``save_cache_artifacts`` / ``load_cache_artifacts`` over ember's kernel cache.

torch's "mega-cache" gathers what the compilations of a process put in its caches into one
bytes object, so that another machine or a fresh container can start warm. ember's one
persistent cache is the kernel cache (Note [Kernel cache] in ember/_inductor/build.py), so an
artifact is one of its entries: the compiled shared object under the key that names it (source,
compiler, flags, CPU). The bytes are data only: a magic line, a JSON header listing each entry's
key, size and SHA-256, then the objects' bytes. Loading checks the header, each entry's size and
hash and the key's form before writing it into the cache exactly as a compile would (temporary
file, rename), so a later compile of the same graph on a matching machine finds it instead of
invoking the compiler; an entry whose key no compile asks for is never loaded. The objects are
machine code: load only artifacts you trust, as with the cache directory itself. Malformed bytes
give a warning and None, as torch's do."""

import hashlib
import json
import re
import warnings
from collections import defaultdict

__all__ = ["CacheInfo", "save_cache_artifacts", "load_cache_artifacts"]

_MAGIC = b"EMBER-CACHE-ARTIFACTS\n"
_KEY = re.compile(r"^[0-9a-f]{64}$")
_MAX_HEADER = 1 << 24


class CacheInfo:
    """CacheInfo()

    What save/load_cache_artifacts handled: the keys of each artifact kind. ember's artifacts
    are inductor kernels (``inductor_artifacts``); the other kinds of torch's are empty."""

    def __init__(self):
        self.artifacts = defaultdict(list)

    @property
    def inductor_artifacts(self):
        return self.artifacts["inductor"]

    @property
    def autotune_artifacts(self):
        return self.artifacts["autotune"]

    @property
    def aot_autograd_artifacts(self):
        return self.artifacts["aot_autograd"]

    @property
    def pgo_artifacts(self):
        return self.artifacts["pgo"]

    @property
    def precompile_artifacts(self):
        return self.artifacts["precompile"]

    def empty(self):
        """empty() -> bool

        True when no artifact was handled."""
        return not any(self.artifacts.values())

    def clear(self):
        """clear() -> None

        Forgets the keys."""
        self.artifacts.clear()

    def __repr__(self):
        return f"CacheInfo(inductor_artifacts={self.inductor_artifacts!r})"


def save_cache_artifacts():
    """save_cache_artifacts() -> Optional[Tuple[bytes, CacheInfo]]

    The kernel-cache entries this process compiled or loaded, as one bytes object that
    ``load_cache_artifacts`` takes in another process; None when there are none."""
    from .._inductor import build

    info = CacheInfo()
    entries, blobs = [], []
    for key, so in sorted(build.used_entries().items()):
        try:
            data = open(so, "rb").read()
        except OSError:
            continue  # removed since it was loaded: nothing to carry
        entries.append({"key": key, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        blobs.append(data)
        info.artifacts["inductor"].append(key)
    if not entries:
        return None
    header = json.dumps({"version": 1, "entries": entries}).encode()
    out = _MAGIC + len(header).to_bytes(8, "little") + header + b"".join(blobs)
    return out, info


def _parse(data):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes; got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
        raise ValueError("not ember cache artifacts (bad magic)")
    pos = len(_MAGIC)
    n = int.from_bytes(data[pos : pos + 8], "little")
    pos += 8
    if n > _MAX_HEADER or pos + n > len(data):
        raise ValueError("truncated header")
    header = json.loads(data[pos : pos + n])
    pos += n
    if header.get("version") != 1 or not isinstance(header.get("entries"), list):
        raise ValueError("unknown header version")
    out = []
    for e in header["entries"]:
        key, size, digest = e.get("key"), e.get("size"), e.get("sha256")
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValueError("an entry has a malformed key")
        if not isinstance(size, int) or size < 0 or pos + size > len(data):
            raise ValueError(f"entry {key[:12]} is truncated")
        blob = data[pos : pos + size]
        pos += size
        if hashlib.sha256(blob).hexdigest() != digest:
            raise ValueError(f"entry {key[:12]} fails its hash check")
        out.append((key, blob))
    if pos != len(data):
        raise ValueError("trailing bytes after the last entry")
    return out


def load_cache_artifacts(serialized_artifacts):
    """load_cache_artifacts(serialized_artifacts) -> Optional[CacheInfo]

    Writes the entries of ``serialized_artifacts`` (``save_cache_artifacts()[0]`` of another
    process) into ember's kernel cache, so compiling the same graphs here finds them without
    invoking the compiler. Returns what was loaded; malformed bytes warn and return None."""
    try:
        entries = _parse(serialized_artifacts)
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        warnings.warn(f"load_cache_artifacts: the artifacts were not loaded: {e}", stacklevel=2)
        return None
    from .._inductor import build

    info = CacheInfo()
    for key, blob in entries:
        build.install_entry(key, blob)
        info.artifacts["inductor"].append(key)
    return info
