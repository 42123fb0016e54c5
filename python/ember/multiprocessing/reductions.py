"""How tensors travel between processes (torch.multiprocessing.reductions): multiprocessing's
pickler (Queue, Pipe, and the arguments of spawn/forkserver-started processes) sends a tensor's
shared segment, not a copy of its data. A tensor that is not shared yet is moved into shared
memory first, in place, as torch does. Plain pickle.dumps still copies the data."""

import multiprocessing
from multiprocessing.reduction import ForkingPickler

from .. import _C, _shared


def rebuild_tensor_fd(dupfd, nbytes, dtype, size, stride, offset, requires_grad):
    """rebuild_tensor_fd(dupfd, nbytes, dtype, size, stride, offset, requires_grad) -> Tensor

    The receiving side of the file_descriptor strategy: maps the received descriptor."""
    segment = _shared.Segment("file_descriptor", nbytes, fd=dupfd.detach())
    return _finish(_shared.tensor_on(segment, dtype, size, stride, offset), requires_grad)


def rebuild_tensor_filename(name, nbytes, dtype, size, stride, offset, requires_grad):
    """rebuild_tensor_filename(name, nbytes, dtype, size, stride, offset, requires_grad) -> Tensor

    The receiving side of the file_system strategy: maps the named /dev/shm file."""
    segment = _shared.Segment.open_name(name, nbytes)
    return _finish(_shared.tensor_on(segment, dtype, size, stride, offset), requires_grad)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(tensor):
    """reduce_tensor(tensor) -> tuple

    The pickle reduction of a tensor for multiprocessing: its shared segment (by descriptor or by
    name) and its geometry."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue)."
        )
    if not _shared.can_share(tensor.dtype):  # quantized dtypes: sent as a copy, as before
        return tensor.__reduce_ex__(2)
    segment = _shared.segment_of(tensor)
    if segment is None:
        tensor.share_memory_()
        segment = _shared.segment_of(tensor)
    geometry = (
        segment.nbytes,
        tensor.dtype,
        tuple(tensor.shape),
        tensor.stride(),
        tensor.storage_offset(),
        tensor.requires_grad,
    )
    if segment.strategy == "file_system":
        return (rebuild_tensor_filename, (segment.name, *geometry))
    return (rebuild_tensor_fd, (multiprocessing.reduction.DupFd(segment.fd), *geometry))


def init_reductions():
    """init_reductions() -> None

    Registers the tensor reduction with multiprocessing's pickler (done on import)."""
    ForkingPickler.register(_C.Tensor, reduce_tensor)


init_reductions()
