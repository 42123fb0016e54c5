"""Compiling generated C++ into a shared object, with an on-disk cache.

Note [Kernel cache]
An entry is keyed by the SHA-256 of (generated source, ember's vector-math header, compiler
identity and flags, CPU model and feature flags). It is two files: the shared object, named by
its own content hash (so two writers never replace one object by a different one, and a path
once loaded by dlopen never changes), and `<key>.json` naming it with its size and hash. Both
are written to a temporary file and renamed into place. A reader trusts nothing: a missing,
truncated, corrupt or foreign entry fails the size/hash check and is rebuilt. Builders of one
key take an advisory lock, so two processes compiling the same graph compile it once; when the
directory cannot be written, the process builds into a private temporary directory instead.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

from .._atomic import atomic_write
from . import config, metrics

_compiler_ids: dict = {}
_cpu_id: str | None = None
_fallback_dir: str | None = None
_loaded: dict = {}
_used: dict = {}  # key -> shared object path, every entry this process loaded (cache artifacts)


class CompileError(RuntimeError):
    pass


def find_cxx():
    """The compiler to use, or None when there is none (config.cxx / EMBER_CXX = "")."""
    choice = config.cxx
    if choice is None:
        choice = os.environ.get("EMBER_CXX")
    if choice is None:
        choice = os.environ.get("CXX")
    if choice == "":
        return None
    names = [choice] if choice else ["c++", "g++", "clang++"]
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None


def _compiler_id(cxx):
    if cxx not in _compiler_ids:
        try:
            out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
            _compiler_ids[cxx] = cxx + "\n" + out.stdout
        except (OSError, subprocess.SubprocessError):
            _compiler_ids[cxx] = cxx
    return _compiler_ids[cxx]


def _cpu():
    global _cpu_id
    if _cpu_id is None:
        fields = {}
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if not line.strip():
                        break
                    k, _, v = line.partition(":")
                    fields[k.strip()] = v.strip()
        except OSError:
            pass
        import platform

        _cpu_id = "|".join(
            [platform.machine(), fields.get("model name", ""), fields.get("flags", "")]
        )
    return _cpu_id


def include_dir():
    """Where `ember/cpu/vmath.h` is: installed beside this package, or the source tree."""
    here = Path(__file__).resolve().parent
    for cand in (here / "include", here.parents[2] / "csrc"):
        if (cand / "ember" / "cpu" / "vmath.h").is_file():
            return cand
    # Running from an installed copy synced without the header: find the checkout's.
    for parent in here.parents:
        if (parent / "csrc" / "ember" / "cpu" / "vmath.h").is_file():
            return parent / "csrc"
    raise CompileError("ember._inductor: expected ember/cpu/vmath.h beside the package; got none")


def cache_key(source, cxx):
    h = hashlib.sha256()
    for part in (
        source,
        (include_dir() / "ember" / "cpu" / "vmath.h").read_text(),
        _compiler_id(cxx),
        " ".join(config.cxxflags),
        _cpu(),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _writable_dir():
    """The cache directory, or a private temporary one when it cannot be written."""
    global _fallback_dir
    d = Path(config.resolved_cache_dir())
    try:
        d.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=d, prefix=".probe-", delete=True)
        probe.close()
        return d
    except OSError:
        if _fallback_dir is None:
            _fallback_dir = tempfile.mkdtemp(prefix="ember-inductor-")
            warnings.warn(
                f"ember.compile: the kernel cache directory {d} is not writable; compiling into "
                f"{_fallback_dir} for this process",
                RuntimeWarning,
                stacklevel=3,
            )
        return Path(_fallback_dir)


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _valid(d, key):
    """The entry's shared object if the entry is whole and ours, else None."""
    try:
        meta = json.loads((d / f"{key}.json").read_text())
        so = d / meta["so"]
        if meta.get("key") != key or so.parent != d:
            return None
        if so.stat().st_size != meta["size"] or _sha(so) != meta["sha256"]:
            return None
        return so
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _atomic_write(path, data: bytes):
    atomic_write(path, lambda f: f.write(data), sync=False)  # a cache: a lost file is rebuilt


def _compile(cxx, source, d, key):
    with tempfile.TemporaryDirectory(dir=d, prefix=".build-") as tmp:
        src = Path(tmp) / "kernels.cpp"
        src.write_text(source)
        out = Path(tmp) / "kernels.so"
        cmd = [cxx, *config.cxxflags, f"-I{include_dir()}", str(src), "-o", str(out)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        metrics.add("cpp_compiles")
        if run.returncode != 0:
            raise CompileError(f"ember._inductor: the C++ compiler failed:\n{run.stderr[-4000:]}")
        data = out.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    so = d / f"{key[:24]}-{digest[:16]}.so"
    if not so.exists() or _sha(so) != digest:
        _atomic_write(so, data)
    meta = {"key": key, "so": so.name, "size": len(data), "sha256": digest}
    if config.debug:
        _atomic_write(d / f"{key}.cpp", source.encode())
    _atomic_write(d / f"{key}.json", json.dumps(meta).encode())
    return so


def load(source):
    """Compiles `source` (or finds it in the cache) and returns the loaded library."""
    cxx = find_cxx()
    if cxx is None:
        raise CompileError("ember._inductor: expected a C++ compiler; got none")
    key = cache_key(source, cxx)
    if key in _loaded:
        return _loaded[key]
    d = _writable_dir()
    so = _valid(d, key)
    if so is None:
        lock_path = d / f"{key}.lock"
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                so = _valid(d, key)  # another process may have built it meanwhile
                if so is None:
                    so = _compile(cxx, source, d, key)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    else:
        metrics.add("cache_hits")
    lib = ctypes.CDLL(str(so))
    _loaded[key] = lib
    _used[key] = so
    return lib


def used_entries():
    """{key: shared object path} of the entries this process has loaded."""
    return dict(_used)


def install_entry(key, data: bytes):
    """Writes an entry (its shared object's bytes) into the cache as _compile does; returns its
    path. The caller has checked ``key`` and the bytes' hash."""
    d = _writable_dir()
    digest = hashlib.sha256(data).hexdigest()
    so = d / f"{key[:24]}-{digest[:16]}.so"
    if not so.exists() or _sha(so) != digest:
        _atomic_write(so, data)
    meta = {"key": key, "so": so.name, "size": len(data), "sha256": digest}
    _atomic_write(d / f"{key}.json", json.dumps(meta).encode())
    return so
