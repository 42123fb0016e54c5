"""Collectives as differentiable functions (torch.distributed.nn.functional): each returns new
tensors instead of writing in place, and its backward is the adjoint collective — broadcast and
reduce, gather and scatter, all_gather and reduce-scatter, all_to_all and itself, all_reduce and
itself. Every rank of the group must run the backward, as every rank ran the forward."""

import warnings

from ..._ops import creation
from ...autograd.function import Function
from .. import distributed_c10d as dist
from ..distributed_c10d import ReduceOp, group

__all__ = [
    "all_gather",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "broadcast",
    "gather",
    "reduce",
    "reduce_scatter",
    "scatter",
]


def _deprecated(name, replacement):
    warnings.warn(
        f"torch.distributed.nn.functional.{name} is deprecated, use {replacement} instead.",
        category=FutureWarning,
        stacklevel=3,
    )


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, pg, tensor):
        ctx.src, ctx.pg = src, pg
        out = tensor.clone()
        dist.broadcast(out, src, group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        total = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.pg, grad)
        if dist.get_rank() != ctx.src:
            total = total.zero_()
        return None, None, total


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, pg, tensor):
        ctx.dst, ctx.pg = dst, pg
        out = tensor.clone()
        dist.reduce(out, dst, op=op, group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.pg, grad)


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, pg, tensor):
        ctx.dst, ctx.pg = dst, pg
        outs = [creation.zeros_like(tensor) for _ in range(dist.get_world_size(pg))]
        mine = dist.get_rank() == dst
        dist.gather(tensor.contiguous(), outs if mine else None, dst, group=pg)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return None, None, _Scatter.apply(ctx.dst, ctx.pg, *grads)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, pg, *tensors):
        ctx.src, ctx.pg = src, pg
        out = creation.zeros_like(tensors[0])
        mine = dist.get_rank() == src
        dist.scatter(out, [t.contiguous() for t in tensors] if mine else None, src, group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None, *_Gather.apply(ctx.src, ctx.pg, grad))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, pg, tensor):
        ctx.op, ctx.pg = op, pg
        out = tensor.contiguous().clone()
        dist.all_reduce(out, op=op, group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, _AllReduce.apply(ctx.op, ctx.pg, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, pg, tensor):
        ctx.pg = pg
        outs = [creation.empty_like(tensor) for _ in range(dist.get_world_size(pg))]
        dist.all_gather(outs, tensor.contiguous(), group=pg)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        out = creation.empty_like(grads[0])
        dist.reduce_scatter(out, [g.contiguous() for g in grads], op=ReduceOp.SUM, group=ctx.pg)
        return None, out


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, pg, output, *inputs):
        ctx.pg = pg
        out = output.contiguous()
        dist.reduce_scatter(out, [t.contiguous() for t in inputs], op=op, group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None, None, *_AllGather.apply(ctx.pg, grad))


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, pg, outputs, *inputs):
        ctx.pg = pg
        ctx.sizes = [t.shape for t in inputs]
        outs = list(outputs)
        dist.all_to_all(outs, [t.contiguous() for t in inputs], group=pg)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        outs = [creation.empty(s, dtype=grads[0].dtype) for s in ctx.sizes]
        return (None, None, *_AllToAll.apply(ctx.pg, outs, *grads))


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, pg, output, output_split_sizes, input_split_sizes, tensor):
        ctx.pg, ctx.shape = pg, tensor.shape
        ctx.splits = (input_split_sizes, output_split_sizes)  # swapped for the backward
        dist.all_to_all_single(
            output, tensor.contiguous(), output_split_sizes, input_split_sizes, group=pg
        )
        return output

    @staticmethod
    def backward(ctx, grad):
        out = creation.empty(ctx.shape, dtype=grad.dtype)
        back = _AllToAllSingle.apply(ctx.pg, out, *ctx.splits, grad.contiguous())
        return None, None, None, None, back


def broadcast(tensor, src, group=group.WORLD):
    """broadcast(tensor, src, group=group.WORLD) -> Tensor

    A copy of rank src's tensor on every rank; the gradient of src's tensor is the sum of every
    rank's gradient (zero on the other ranks)."""
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=group.WORLD):
    """gather(tensor, dst=0, group=group.WORLD) -> Tuple[Tensor]

    Every rank's tensor, on rank dst (zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=group.WORLD):
    """scatter(tensors, src=0, group=group.WORLD) -> Tensor

    Rank r's piece tensors[r] of rank src's list."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD):
    """reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD) -> Tensor

    The reduction of every rank's tensor, on rank dst."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD):
    """reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD) -> Tensor

    Rank r gets the reduction over ranks of input_list[r] (written into output)."""
    _deprecated("reduce_scatter", "torch.distributed._functional_collectives.reduce_scatter")
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=group.WORLD):
    """all_gather(tensor, group=group.WORLD) -> Tuple[Tensor]

    Every rank's tensor, on every rank; the gradient of this rank's tensor is the sum over
    ranks of the gradients of its copies."""
    _deprecated("all_gather", "torch.distributed._functional_collectives.all_gather")
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD):
    """all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD) -> Tuple[Tensor]

    Rank r sends input_tensor_list[q] to rank q and receives rank q's into
    output_tensor_list[q]."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=group.WORLD
):
    """all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
        group=group.WORLD) -> Tensor

    all_to_all on the rows of one tensor (split evenly, or by the split sizes)."""
    _deprecated("all_to_all_single", "torch.distributed._functional_collectives.all_to_all_single")
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD):
    """all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD) -> Tensor

    The reduction of every rank's tensor, on every rank; its gradient is the all_reduce of the
    gradients."""
    _deprecated("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    return _AllReduce.apply(op, group, tensor)
