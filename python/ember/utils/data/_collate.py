"""default_collate and default_convert, as torch.utils.data._utils.collate."""

import collections.abc
import copy
import re
import sys

from ..._C import Tensor, float64, stack
from ..._ops.creation import as_tensor, empty, tensor
from ..._process import strided as _strided
from ._worker import get_worker_info as _get_worker_info

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_collate_err = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_numpy(obj):
    np = sys.modules.get("numpy")
    return (
        np is not None
        and isinstance(obj, (np.ndarray, np.generic))
        and not isinstance(obj, (np.str_, np.bytes_))
    )


def _like_mapping(elem, items):
    """The dict `items` in a copy of the mapping `elem` where it can be updated, else as is."""
    try:
        clone = copy.copy(elem)
        clone.update(items)
        return clone
    except TypeError:
        return items


def _like_sequence(elem, items):
    """The list `items` in a copy of the sequence `elem` where it can be assigned, else as is."""
    try:
        clone = copy.copy(elem)
        for i, item in enumerate(items):
            clone[i] = item
        return clone
    except TypeError:
        return items


def default_convert(data):
    """Converts numpy arrays (and those inside mappings and sequences) to tensors; no batching."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if data.ndim > 0 and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _like_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _like_sequence(data, [default_convert(d) for d in data])
    return data


# Note [Collate leaves samples untouched]
# A forked worker shares the dataset's pages copy-on-write, and writing any byte of a page gives
# it a private copy. stack(batch, 0) writes each sample's metadata: the binding copies every
# tensor handle (the TensorImpl's reference count) and stack makes a view of each (the
# StorageImpl's count), and that metadata sat on the samples' data pages (glibc places small
# objects beside small blocks; a tensor sharing numpy's memory has its metadata among numpy's
# buffers). A worker reading one epoch of 1x28x28 samples copied 15-27 % of the dataset that way,
# of numpy-shared ones 18 %. In a worker, a batch of plain tensors of one shape is therefore
# collated by copying each sample into its row of the output: copy_ reads the sample through the
# reference its Python object holds, writing nothing of it (4.6 % and 2 % measured, what the
# Python objects' own reference counts cost; benchmarks/loader_memory.py). The result is the
# same as stack's, bit for bit; anything else (subclasses, gradients, mixed shapes, the main
# process) still goes through stack.
def _stack_rows(batch):
    """stack(batch, 0) for a worker's batch; see Note [Collate leaves samples untouched]."""
    elem = batch[0]
    if _get_worker_info() is None or type(elem) is not Tensor or elem.is_quantized:
        return stack(batch, 0)
    shape, dtype = elem.shape, elem.dtype
    if not (elem.is_cpu and elem.is_contiguous() and elem.layout == _strided):
        return stack(batch, 0)
    for b in batch:
        if (
            type(b) is not Tensor
            or b.requires_grad
            or b.shape != shape
            or b.dtype != dtype
            or not b.is_cpu
        ):
            return stack(batch, 0)
    out = empty((len(batch), *shape), dtype=dtype)
    for row, b in zip(out.unbind(0), batch):
        row.copy_(b)
    return out


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors, numpy arrays and numbers become tensors
    with a leading batch dimension; dicts, tuples, lists and namedtuples are collated per field;
    strings stay a list."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_rows(batch)
    if _is_numpy(elem):
        if elem.ndim > 0:
            if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(_collate_err.format(elem.dtype))
            return default_collate([as_tensor(b) for b in batch])
        return as_tensor(sys.modules["numpy"].asarray(batch))  # keeps the scalars' dtype
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # bool too: a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _like_mapping(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _like_sequence(elem, [default_collate(samples) for samples in transposed])
    raise TypeError(_collate_err.format(type(elem)))
