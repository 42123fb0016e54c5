"""The tensor collectives and point-to-point calls (torch.distributed.distributed_c10d's), over
the group's Gloo process group; each returns a Work with async_op=True."""

import warnings

from .. import _C as _C_root
from .._C import _distributed as _C
from ._groups import _group, _peer, _timeout_arg, get_rank

ReduceOp = _C.ReduceOp
Work = _C.Work


def _done(work, async_op, stage=None):
    if stage is not None and stage.back:
        work.wait()  # (then the results go back into the caller's tensors)
        for t, dense in stage.back:
            t.copy_(dense)
        return work if async_op else None
    if async_op:
        return work
    work.wait()
    return None


class _Stage:
    """The tensors a collective is given, made ones Gloo can move as torch's gloo backend does:
    a non-contiguous tensor is replaced by a contiguous copy (outputs copied back after the
    call), and a complex tensor of a SUM or AVG reduction by its real view."""

    def __init__(self, name, op=None):
        self.name, self.op, self.back = name, op, []

    def __call__(self, t, out=False):
        if t is None or not isinstance(t, _C_root.Tensor):
            return t
        if not t.is_contiguous():
            dense = t.contiguous()
            if out:
                self.back.append((t, dense))
            t = dense
        if self.op is not None and t.is_complex():
            if self.op not in (ReduceOp.SUM, ReduceOp.AVG):
                raise ValueError(
                    f"{self.name} does not support RedOpType.{self.op.name} on complex tensors"
                )
            from .. import view_as_real

            t = view_as_real(t)
        return t

    def all(self, tensors, out=False):
        return [self(t, out) for t in tensors]


def _pg(group, op):
    g = _group(group)
    if g is None:
        warnings.warn(
            f"Running {op} on global rank {get_rank()} which does not belong to the given group."
        )
    return g


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False) -> Optional[Work]

    Reduces tensor over every rank of group, in place on every rank."""
    g = _pg(group, "all_reduce")
    if g is None:
        return None
    st = _Stage("all_reduce", op)
    return _done(g._pg.allreduce(st(tensor, True), op, async_op), async_op, st)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False) -> Optional[Work]

    Reduces tensor over every rank into the tensor of rank dst."""
    g = _pg(group, "reduce")
    if g is None:
        return None
    root = group_dst if group_dst is not None else _peer(g, 0 if dst is None else dst, "reduce")
    st = _Stage("reduce", op)
    return _done(g._pg.reduce(st(tensor, True), root, op, async_op), async_op, st)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """broadcast(tensor, src=None, group=None, async_op=False) -> Optional[Work]

    Copies rank src's tensor into every rank's tensor."""
    g = _pg(group, "broadcast")
    if g is None:
        return None
    root = group_src if group_src is not None else _peer(g, 0 if src is None else src, "broadcast")
    st = _Stage("broadcast")
    return _done(g._pg.broadcast(st(tensor, True), root, async_op), async_op, st)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """all_gather(tensor_list, tensor, group=None, async_op=False) -> Optional[Work]

    tensor_list[r] receives the tensor of group rank r, on every rank."""
    g = _pg(group, "all_gather")
    if g is None:
        return None
    st = _Stage("all_gather")
    work = g._pg.allgather(st.all(tensor_list, True), st(tensor), async_op)
    return _done(work, async_op, st)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """all_gather_single(output_tensor, input_tensor, group=None, async_op=False)
        -> Optional[Work]

    output_tensor receives every rank's input_tensor, concatenated on dim 0 (or stacked)."""
    g = _pg(group, "all_gather_into_tensor")
    if g is None:
        return None
    st = _Stage("all_gather_into_tensor")
    work = g._pg.allgather_into_tensor(st(output_tensor, True), st(input_tensor), async_op)
    return _done(work, async_op, st)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather(tensor, gather_list=None, dst=None, group=None, async_op=False) -> Optional[Work]

    Rank dst's gather_list[r] receives the tensor of group rank r."""
    g = _pg(group, "gather")
    if g is None:
        return None
    root = group_dst if group_dst is not None else _peer(g, 0 if dst is None else dst, "gather")
    outs = list(gather_list) if gather_list is not None and g.rank() == root else []
    if g.rank() != root and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    st = _Stage("gather")
    return _done(g._pg.gather(st.all(outs, True), st(tensor), root, async_op), async_op, st)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """scatter(tensor, scatter_list=None, src=None, group=None, async_op=False) -> Optional[Work]

    tensor receives scatter_list[rank] from rank src."""
    g = _pg(group, "scatter")
    if g is None:
        return None
    root = group_src if group_src is not None else _peer(g, 0 if src is None else src, "scatter")
    if g.rank() != root and scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    ins = list(scatter_list) if scatter_list is not None and g.rank() == root else []
    st = _Stage("scatter")
    return _done(g._pg.scatter(st(tensor, True), st.all(ins), root, async_op), async_op, st)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False)
        -> Optional[Work]

    output receives the reduction over ranks of their input_list[rank]."""
    g = _pg(group, "reduce_scatter")
    if g is None:
        return None
    st = _Stage("reduce_scatter", op)
    work = g._pg.reduce_scatter(st(output, True), st.all(input_list), op, async_op)
    return _done(work, async_op, st)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False)
        -> Optional[Work]

    output receives the reduction over ranks of chunk rank of their input (split on dim 0)."""
    g = _pg(group, "reduce_scatter_tensor")
    if g is None:
        return None
    st = _Stage("reduce_scatter_tensor", op)
    work = g._pg.reduce_scatter_tensor(st(output, True), st(input), op, async_op)
    return _done(work, async_op, st)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False)
        -> Optional[Work]

    output_tensor_list[r] receives input_tensor_list[rank] of group rank r."""
    g = _pg(group, "all_to_all")
    if g is None:
        return None
    for what, tensors in (("input", input_tensor_list), ("output", output_tensor_list)):
        if len(tensors) != g.size():  # torch's RuntimeError and words
            raise RuntimeError(
                f"ProcessGroupGloo::alltoall: {what} tensor list size {len(tensors)} does not "
                f"match world size {g.size()}"
            )
    work = g._pg.alltoall(list(output_tensor_list), list(input_tensor_list), async_op)
    return _done(work, async_op)


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
        group=None, async_op=False) -> Optional[Work]

    Splits input on dim 0 (evenly, or by input_split_sizes) and sends split r to group rank r;
    output gathers the splits received, in rank order."""
    g = _pg(group, "all_to_all_single")
    if g is None:
        return None
    outs = list(output_split_sizes or [])
    ins = list(input_split_sizes or [])
    if not (output.is_contiguous() and input.is_contiguous()):
        raise ValueError("Tensors must be contiguous")  # torch's gloo: ValueError here
    return _done(g._pg.alltoall_base(output, input, outs, ins, async_op), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """barrier(group=None, async_op=False, device_ids=None) -> Optional[Work]

    Returns once every rank of group called it."""
    g = _pg(group, "barrier")
    if g is None:
        return None
    return _done(g._pg.barrier(async_op), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """monitored_barrier(group=None, timeout=None, wait_all_ranks=False) -> None

    A barrier whose rank 0 raises RuntimeError naming the ranks that did not reach it within
    timeout (all of them with wait_all_ranks)."""
    g = _pg(group, "monitored_barrier")
    if g is None:
        return None
    timeout = g._pg.timeout if timeout is None else _timeout_arg(timeout)
    g._pg.monitored_barrier(timeout, wait_all_ranks)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """isend(tensor, dst=None, group=None, tag=0) -> Optional[Work]

    Starts sending tensor to rank dst; wait() on the Work finishes it."""
    g = _pg(group, "isend")
    if g is None:
        return None
    peer = group_dst if group_dst is not None else _peer(g, dst, "isend")
    return g._pg.send(tensor, peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """irecv(tensor, src=None, group=None, tag=0) -> Optional[Work]

    Starts receiving into tensor from rank src (any rank when None)."""
    g = _pg(group, "irecv")
    if g is None:
        return None
    if group_src is not None:
        peer = group_src
    else:
        peer = -1 if src is None else _peer(g, src, "irecv")
    return g._pg.recv(tensor, peer, tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """send(tensor, dst=None, group=None, tag=0) -> None

    Sends tensor to rank dst and waits until it left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """recv(tensor, src=None, group=None, tag=0) -> int

    Receives into tensor from rank src (any rank when None); returns the sender's rank."""
    g = _group(group)
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return g._ranks[work._source_rank()]


class P2POp:
    """P2POp(op, tensor, peer=None, group=None, tag=0)

    One send or receive of batch_isend_irecv: op is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                "``torch.distributed.irecv``."
            )
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    """batch_isend_irecv(p2p_op_list) -> List[Work]

    Starts every send and receive of the list; returns their Works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError(
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``."
        )
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


def _get_future(self):
    """get_future() -> Future

    A Future completed with the call's output tensors once it finished."""
    from ..futures import Future

    fut = Future()

    def done():
        err = self.exception()
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(self.result())

    self._add_callback(done)
    return fut


Work.get_future = _get_future
