"""atomic_write: the one way ember writes a file (checkpoints, exported models, compiled kernels,
downloads) — into a temporary file beside it, then renamed over it, so a reader never sees a
partial file and a failure leaves the old one as it was."""

import os

__all__ = ["atomic_write"]


def atomic_write(path, write, *, sync=True):
    """atomic_write(path, write, *, sync=True) -> None

    Calls write(f) on a new temporary file in path's directory, then renames it to path. With
    sync, the data and the rename are flushed to disk first (fsync of the file and directory)."""
    path = os.fsdecode(os.fspath(path))
    directory = os.path.dirname(os.path.abspath(path))
    tmp = f"{path}.tmp{os.getpid()}.{os.urandom(4).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb", closefd=True) as f:
            write(f)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync:
        try:  # make the rename itself durable
            dfd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
