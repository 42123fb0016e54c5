"""loss_parallel: cross-entropy on logits sharded over the class dim (a vocabulary-parallel
output layer) without gathering them. Each rank holds a slice of the classes; the log-sum-exp
is assembled from per-rank maxima (all-reduce MAX) and sums (all-reduce SUM), the target's logit
from the one rank whose slice holds it (all-reduce SUM), and the gradient, softmax minus one-hot
on the local slice, stays sharded like the logits."""

import contextlib

from ... import distributed_c10d as c10d
from .. import _dispatch
from .._api import DTensor, Replicate, Shard, _chunk_sizes, _lib

__all__ = ["loss_parallel"]


@contextlib.contextmanager
def loss_parallel():
    """loss_parallel() -> ContextManager

    Inside, F.cross_entropy on logits sharded on the class dim (Shard(1), or Shard(-1) of 2-d
    logits) with replicated (or plain) targets computes on the local slices: no rank gathers
    the logits, and their gradient stays sharded. Run the backward inside as well."""
    with _dispatch.mode_flag("loss_parallel"), _dispatch.mode_flag("implicit"):
        yield


def active():
    return _dispatch.flag_on("loss_parallel")


def _function():
    from ....autograd import Function

    class _VocabParallelCrossEntropy(Function):
        @staticmethod
        def forward(ctx, logits, target, offset, group, ignore_index, reduction):
            lib = _lib()
            x = logits.float()
            high = x.amax(dim=1)
            c10d.all_reduce(high, op=c10d.ReduceOp.MAX, group=group)
            e = (x - high[:, None]).exp()
            total = e.sum(dim=1)
            c10d.all_reduce(total, group=group)
            mine = (target >= offset) & (target < offset + x.shape[1])
            index = lib.where(mine, target - offset, lib.zeros_like(target))
            picked = x.gather(1, index[:, None]).squeeze(1) * mine.to(x.dtype)
            c10d.all_reduce(picked, group=group)
            keep = (target != ignore_index).to(x.dtype)
            losses = (total.log() + high - picked) * keep
            count = keep.sum()
            ctx.save_for_backward(e / total[:, None], index, mine, keep, count)
            ctx.reduction, ctx.dtype = reduction, logits.dtype
            if reduction == "none":
                return losses.to(logits.dtype)
            if reduction == "sum":
                return losses.sum().to(logits.dtype)
            return (losses.sum() / count).to(logits.dtype)

        @staticmethod
        def backward(ctx, grad):
            soft, index, mine, keep, count = ctx.saved_tensors
            g = soft.clone()
            rows = _lib().arange(g.shape[0])
            g[rows, index] -= mine.to(g.dtype)
            g = g * keep[:, None]
            grad = grad.float()
            if ctx.reduction == "none":
                g = g * grad[:, None]
            elif ctx.reduction == "mean":
                g = g * (grad / count)
            else:
                g = g * grad
            return g.to(ctx.dtype), None, None, None, None, None

    return _VocabParallelCrossEntropy


_FN = []


def cross_entropy(x, target, ignore_index, reduction):
    """The vocabulary-parallel cross-entropy of DTensor logits x (Shard on dim 1 of a 1-d mesh)
    and class indices target, or None when the layout is not that one (the caller then takes
    the general rule)."""
    if x.ndim != 2 or x.device_mesh.ndim != 1 or x.placements != (Shard(1),):
        return None
    if isinstance(target, DTensor):
        if target.placements != (Replicate(),):
            return None
        target = target.to_local()
    mesh = x.device_mesh
    sizes = _chunk_sizes(x.shape[1], mesh.size())
    offset = sum(sizes[: mesh.get_local_rank()])
    if not _FN:
        _FN.append(_function())
    local = x._local_tensor
    out = _FN[0].apply(local, target, offset, mesh.get_group(), ignore_index, reduction)
    shape = tuple(target.shape) if reduction == "none" else ()
    return DTensor._make(out, mesh, (Replicate(),), shape)
