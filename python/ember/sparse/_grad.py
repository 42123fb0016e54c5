"""Sparse gradients of dense tensors: what Embedding(sparse=True) and EmbeddingBag(sparse=True)
leave in weight.grad.

The engine accumulates C++ tensors of the parameter's shape; a sparse gradient is a Python
object, so it is kept beside the tensor instead, in a table from the tensor object to its sparse
gradient that Tensor.grad reads first (ember/_ops/tensor.py, _SPARSE_GRADS; a dict check while
no sparse gradient exists). Accumulating a second sparse gradient concatenates the entries
(uncoalesced, as torch's); a dense gradient meeting a sparse one makes the sum dense.
"""

import weakref

from .._ops.tensor import _SPARSE_GRADS
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from . import _tensor as st


def _entry(t):
    e = _SPARSE_GRADS.get(id(t))
    if e is not None and e[0]() is t:
        return e
    return None


def store(t, g):
    """Makes the sparse tensor g the gradient of the dense tensor t."""
    key = id(t)
    _SPARSE_GRADS[key] = (weakref.ref(t, lambda _r, k=key: _SPARSE_GRADS.pop(k, None)), g)


def accumulate(t, g):
    """Adds the sparse gradient g into t's gradient."""
    e = _entry(t)
    if e is not None:
        from ._ops import add

        with no_grad():
            store(t, add(e[1], g))
        return
    dense = t.grad
    if dense is not None:
        with no_grad():
            t.grad = dense + st.to_dense(g)
        return
    store(t, g)


class _SparseGather(Function):
    """weight[index] whose gradient for weight is the sparse COO tensor of the rows read."""

    @staticmethod
    def forward(ctx, weight, index, target, padding_idx, scale_grad_by_freq):
        ctx.target = target
        ctx.info = (index, tuple(weight.shape), padding_idx, scale_grad_by_freq)
        return weight.detach()[index]

    @staticmethod
    def backward(ctx, grad):
        index, shape, padding_idx, scale = ctx.info
        values = grad.reshape((-1,) + tuple(shape[1:]))
        if padding_idx is not None and padding_idx >= 0:
            keep = index != padding_idx
            index, values = index[keep], values[keep]
        if scale:  # torch's sparse backward has no frequency scaling either
            raise RuntimeError(
                "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
            )
        g = st.coo(index.reshape(1, -1), values.contiguous(), shape, False)
        accumulate(ctx.target, g)
        return None, None, None, None, None


def gather_rows(weight, index, padding_idx=None, scale_grad_by_freq=False):
    """weight[index] (index 1-D) whose gradient reaches weight as a sparse tensor."""
    return _SparseGather.apply(weight, index, weight, padding_idx, scale_grad_by_freq)
