"""gumbel_softmax and pdist, composed from other ops."""

from ... import linalg
from ..._ops import _names
from ..._ops.creation import empty_like, triu_indices, zeros_like

__all__ = ["gumbel_softmax", "pdist"]


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1)

    Samples from Gumbel-softmax; `hard` returns one-hot values with the soft sample's gradient
    (the straight-through estimator)."""
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """pdist(input, p=2) -> Tensor

    The p-norm distances between the rows of a 2-D input, pairs (i < j) in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1)
    return linalg.vector_norm(input[i] - input[j], p, dim=1)


pdist = _names.named(pdist, "PdistBackward0")
