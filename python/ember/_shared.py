"""Tensor.share_memory_ and is_shared: data moved into an anonymous shared mapping (see
ember.multiprocessing for what is and is not shared)."""

import mmap

from ._C import from_numpy, int16

_NP_NAMES = {
    "float32": "float32",
    "float64": "float64",
    "float16": "float16",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}


def share_memory_(self):
    """share_memory_()

    Moves the data into shared memory in place (the tensor keeps its identity); processes
    forked afterwards see each other's in-place writes. A no-op if already shared."""
    import numpy as np

    if is_shared(self):
        return self
    name = str(self.dtype).replace("torch.", "")
    src = self.detach().contiguous()
    if name == "bfloat16":  # numpy has no bfloat16: move the raw 16-bit words
        src, name = src.view(int16), "int16"
    buf = mmap.mmap(-1, max(self.nbytes, 1), flags=mmap.MAP_SHARED)
    arr = np.frombuffer(buf, np.dtype(_NP_NAMES[name]), self.numel()).reshape(tuple(self.shape))
    arr[...] = src.numpy()
    shared = from_numpy(arr)  # zero-copy: the mapping lives as long as the tensor data
    if shared.dtype != self.dtype:
        shared = shared.view(self.dtype)
    self.data = shared
    self._shared_memory = True
    return self


def is_shared(self):
    """is_shared()

    Whether the tensor's storage lives in shared memory."""
    return getattr(self, "_shared_memory", False)
