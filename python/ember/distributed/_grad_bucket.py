"""GradBucket and the built-in hook types: what DistributedDataParallel hands a communication
hook (torch.distributed.GradBucket, registered with DDP.register_comm_hook)."""

import enum

__all__ = ["BuiltinCommHookType", "GradBucket"]


class BuiltinCommHookType(enum.Enum):
    """The hooks DDP._register_builtin_comm_hook accepts."""

    ALLREDUCE = 1
    FP16_COMPRESS = 2


class GradBucket:
    """One DDP bucket: a flat buffer of gradients, with a view per parameter.

    A communication hook reduces buffer() over the process group and returns a Future whose value
    is the reduced buffer (a tensor of the same number of elements); DDP writes it back into the
    parameters' gradients."""

    def __init__(self, index, buffer, params, views, is_last):
        self._index = index
        self._buffer = buffer
        self._params = params
        self._views = views
        self._is_last = is_last

    def index(self):
        """index() -> int

        The bucket's position in DDP's reduction order (0 is reduced first)."""
        return self._index

    def buffer(self):
        """buffer() -> Tensor

        The bucket's gradients, flattened into one 1-d tensor."""
        return self._buffer

    def set_buffer(self, buffer):
        """set_buffer(buffer) -> None

        Replaces the tensor buffer() returns (a compressing hook's cast copy, for example)."""
        self._buffer = buffer

    def gradients(self):
        """gradients() -> List[Tensor]

        The parameters' gradients, as views of the bucket's own buffer."""
        return list(self._views)

    def parameters(self):
        """parameters() -> List[Tensor]

        The parameters whose gradients the bucket holds, in buffer order."""
        return list(self._params)

    def is_last(self):
        """is_last() -> bool

        Whether this is the last bucket of the backward pass."""
        return self._is_last
