"""Saving and loading sparse tensors under torch's names, so that files travel both ways.

torch pickles a sparse tensor as ``torch._utils._rebuild_sparse_tensor(layout, data)`` with the
layout written as ``torch.serialization._get_layout("torch.sparse_coo")``; COO's data is
(indices, values, size, is_coalesced), CSR's (crow_indices, col_indices, values, size). ember
writes the same records and reads them back, under weights_only too: the rebuild checks the
arrays as the constructors do, so a hostile file gets an error, not a broken tensor.
"""

import threading

from .. import _process
from . import _tensor as st

_LAYOUTS = {
    "torch.sparse_coo": st.sparse_coo,
    "torch.sparse_csr": st.sparse_csr,
    "torch.sparse_csc": st.sparse_csc,
    "torch.sparse_bsr": st.sparse_bsr,
    "torch.sparse_bsc": st.sparse_bsc,
    "torch.strided": _process.strided,
}


def get_layout(name):
    """torch.serialization._get_layout: the layout object named by a pickle."""
    layout = _LAYOUTS.get(name) if isinstance(name, str) else None
    if layout is None:
        raise RuntimeError(f"ember.load: unknown layout {name!r}")
    return layout


_pending = threading.local()  # .items: the sparse tensors a load rebuilt, to check after it


def rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor: a sparse tensor from its arrays. Their contents are
    not read yet while the load runs (storages are filled after the pickle), so only the
    record's structure is checked here and the invariants by check_pending after the load."""
    from .._C import Tensor

    arrays = 2 if layout is st.sparse_coo else 3
    if (
        not isinstance(data, tuple)
        or len(data) != 4
        or not all(isinstance(d, Tensor) for d in data[:arrays])
        or not isinstance(data[arrays], tuple)
        or not all(isinstance(n, int) and n >= 0 for n in data[arrays])
    ):
        raise RuntimeError("ember.load: corrupt sparse tensor record")
    if layout is st.sparse_coo:
        indices, values, size, coalesced = data
        ok = indices.dim() == 2 and values.dim() >= 1 and indices.shape[1] == values.shape[0]
        ok = ok and len(size) == indices.shape[0] + values.dim() - 1
        out = st.coo(indices, values, tuple(size), bool(coalesced))
    elif layout is st.sparse_csr:
        crow, col, values, size = data
        ok = crow.dim() == col.dim() == values.dim() == 1 and len(size) == 2
        out = st.csr(crow, col, values, tuple(size))
    else:
        raise RuntimeError(f"ember.load: sparse layout {layout!r} is not supported")
    if not ok:
        raise RuntimeError("ember.load: corrupt sparse tensor record (array shapes)")
    if not hasattr(_pending, "items"):
        _pending.items = []
    _pending.items.append(out)
    return out


def check_pending(validate=True):
    """Checks (or with validate=False forgets) the sparse tensors rebuilt since the last call:
    the constructors' checks on their arrays (bounds, nnz, crow_indices' order)."""
    items = getattr(_pending, "items", None) or []
    _pending.items = []
    if not validate:
        return
    for s in items:
        if s._layout is st.sparse_coo:
            st.sparse_coo_tensor(s._indices_arr, st._values_of(s), s._size)
        else:
            st.sparse_csr_tensor(s._crow, s._col, st._values_of(s), s._size)


def reduce_sparse(s):
    """(rebuild, args) of a sparse tensor for Python's pickle (copy, multiprocessing)."""
    return _unpickle_sparse, (repr(s._layout), torch_data(s))


def _unpickle_sparse(layout_name, data):
    layout = get_layout(layout_name)
    if layout is st.sparse_coo:
        indices, values, size, coalesced = data
        return st.sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)
    crow, col, values, size = data
    return st.sparse_csr_tensor(crow, col, values, size)


def torch_data(s, size_type=tuple):
    """The data tuple of torch's sparse record."""
    vals = st._values_of(s).detach()
    if s._layout is st.sparse_coo:
        return (s._indices_arr, vals, size_type(s._size), s._coalesced)
    return (s._crow, s._col, vals, size_type(s._size))
