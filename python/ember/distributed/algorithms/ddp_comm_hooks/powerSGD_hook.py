"""PowerSGD gradient compression for DDP (torch.distributed.algorithms.ddp_comm_hooks.
powerSGD_hook; Vogels et al., 2019): each gradient matrix M (n x m, a parameter's gradient
viewed as rows x the rest) is replaced by the low-rank product P Q^T of one power-iteration
step, P = M Q and Q = M^T P, so a rank-r approximation sends (n + m) r numbers instead of n m.
P and Q are all-reduced (summed), P orthogonalized in between; the result is divided by the
world size. Vectors (biases, norms) and matrices too small to gain are all-reduced whole, in
one collective. Error feedback adds what the last approximation missed on this rank to the
next gradient; warm start begins each power iteration from the last Q. The first
start_powerSGD_iter - 1 iterations average exactly, as allreduce_hook.

The collectives run inside the hook and the returned future is complete: the bucket's
approximation needs two dependent all-reduces, and ember's DDP overlaps buckets with backward
either way."""

import math

import numpy as np

from ....futures import Future
from ... import distributed_c10d as dist
from .default_hooks import _mean_async

__all__ = ["PowerSGDState", "batched_powerSGD_hook", "powerSGD_hook"]


def _lib():
    import ember

    return ember


class PowerSGDState:
    """PowerSGDState(process_group, matrix_approximation_rank=1, start_powerSGD_iter=1000,
        min_compression_rate=2, use_error_feedback=True, warm_start=True,
        orthogonalization_epsilon=0, random_seed=0, compression_stats_logging_frequency=10000,
        batch_tensors_with_same_shape=False)

    The state powerSGD_hook and batched_powerSGD_hook keep between iterations: the per-bucket
    errors (error feedback) and Q matrices (warm start), the iteration count and compression
    statistics. Pass it to DDP.register_comm_hook(state, hook)."""

    __slots__ = [
        "process_group",
        "matrix_approximation_rank",
        "start_powerSGD_iter",
        "min_compression_rate",
        "orthogonalization_epsilon",
        "use_error_feedback",
        "warm_start",
        "batch_tensors_with_same_shape",
        "rng",
        "error_dict",
        "p_memory_dict",
        "q_memory_dict",
        "iter",
        "total_numel_before_compression",
        "total_numel_after_compression",
        "compression_stats_logging_frequency",
        "next_stats_report",
    ]

    def __init__(
        self,
        process_group,
        matrix_approximation_rank=1,
        start_powerSGD_iter=1_000,
        min_compression_rate=2,
        use_error_feedback=True,
        warm_start=True,
        orthogonalization_epsilon=0,
        random_seed=0,
        compression_stats_logging_frequency=10_000,
        batch_tensors_with_same_shape=False,
    ):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError(
                "Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is "
                "enabled, because PowerSGD can only be applied after the first two iterations "
                "in DDP."
            )
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape
        # the same seed on every rank: the random Q matrices agree without communication
        self.rng = np.random.RandomState(random_seed)
        self.error_dict = {}
        self.p_memory_dict = {}
        self.q_memory_dict = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__ if k != "process_group"}

    def __setstate__(self, state):
        self.process_group = None
        for k, v in state.items():
            setattr(self, k, v)

    def maybe_increase_iter(self, bucket):
        """maybe_increase_iter(bucket) -> None

        Counts an iteration when the backward pass reaches its last bucket."""
        if bucket.is_last():
            self.iter += 1

    def compression_stats(self):
        """compression_stats() -> Tuple[float, int, int]

        (compression rate, numbers before compression, numbers sent) over the compressed
        iterations so far."""
        after = self.total_numel_after_compression
        rate = self.total_numel_before_compression / after if after > 0 else 0
        return rate, self.total_numel_before_compression, after


def _group(state):
    return state.process_group if state.process_group is not None else dist.group.WORLD


def _orthogonalize(matrix, epsilon):
    """Gram-Schmidt on matrix's columns, in place."""
    for i in range(matrix.shape[1]):
        col = matrix[:, i]
        norm = col.norm()
        if epsilon == 0:
            col.div_(norm)
        else:
            col.div_(norm + epsilon)
        if i + 1 < matrix.shape[1]:
            rest = matrix[:, i + 1 :]
            rest.sub_(col.reshape(-1, 1) * (col.reshape(1, -1) @ rest))


def _random(state, rows, cols, dtype):
    return _lib().tensor(state.rng.standard_normal((rows, cols)), dtype=dtype)


def _sum(group, tensors):
    """All-reduces (sums) the tensors in one collective, in place."""
    lib = _lib()
    if not tensors:
        return
    flat = lib.cat([t.reshape(-1) for t in tensors])
    dist.all_reduce(flat, group=group)
    off = 0
    for t in tensors:
        t.copy_(flat.narrow(0, off, t.numel()).view(t.shape))
        off += t.numel()


def _views(bucket, buffer):
    out, off = [], 0
    for g in bucket.gradients():
        out.append(buffer.narrow(0, off, g.numel()).view(g.shape))
        off += g.numel()
    return out


def _should_compress(rows, cols, rank, min_compression_rate):
    return (rows + cols) * rank * min_compression_rate < rows * cols


def _feedback(state, index, buffer):
    """Adds the last error to buffer; returns a copy of the compensated buffer (or None)."""
    if not state.use_error_feedback:
        return None
    if index in state.error_dict:
        buffer.add_(state.error_dict[index])
    else:
        state.error_dict[index] = _lib().zeros_like(buffer)
    return buffer.clone()


def _approximate(state, group, keyed):
    """Replaces each (key, matrix) by its rank-r PowerSGD approximation, averaged over the
    group (two all-reduces for all of them)."""
    world = dist.get_world_size(group)
    qs, ps = [], []
    for key, mat in keyed:
        n, m = mat.shape
        r = min(n, m, state.matrix_approximation_rank)
        q = state.q_memory_dict.get(key) if state.warm_start else None
        if q is None or tuple(q.shape) != (m, r):
            q = _random(state, m, r, mat.dtype)
        _orthogonalize(q, state.orthogonalization_epsilon)
        qs.append(q)
        ps.append(mat @ q)
    _sum(group, ps)
    for p in ps:
        _orthogonalize(p, state.orthogonalization_epsilon)
    qs = [mat.t() @ p for (_, mat), p in zip(keyed, ps)]
    _sum(group, qs)
    for (key, mat), p, q in zip(keyed, ps, qs):
        mat.copy_((p @ q.t()).div_(world))
        state.p_memory_dict[key] = p
        if state.warm_start:
            state.q_memory_dict[key] = q
        state.total_numel_after_compression += p.numel() + q.numel()


def _done(value):
    fut = Future()
    fut.set_result(value)
    return fut


def _run_hook(state, bucket, average):
    """The frame both hooks share: plain averaging before state.start_powerSGD_iter, afterwards
    `average(state, bucket, group, index, buffer)` (which averages the buffer in place) between
    the error feedback's two halves."""
    group = _group(state)
    buffer = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return _mean_async(group, buffer)
    index = bucket.index()
    before = _feedback(state, index, buffer)
    average(state, bucket, group, index, buffer)
    if before is not None:
        state.error_dict[index] = before - buffer
    state.maybe_increase_iter(bucket)
    return _done(buffer)


def _average_per_matrix(state, bucket, group, index, buffer):
    whole, keyed = [], []
    for i, view in enumerate(_views(bucket, buffer)):
        if view.dim() > 1:
            mat = view.reshape(view.shape[0], -1)
            n, m = mat.shape
            r = min(n, m, state.matrix_approximation_rank)
            state.total_numel_before_compression += n * m
            if _should_compress(n, m, r, state.min_compression_rate):
                keyed.append(((index, i), mat))
                continue
            state.total_numel_after_compression += n * m
        else:
            state.total_numel_before_compression += view.numel()
            state.total_numel_after_compression += view.numel()
        whole.append(view)
    _sum(group, whole)
    world = dist.get_world_size(group)
    for view in whole:
        view.div_(world)
    _approximate(state, group, keyed)


def _average_batched(state, bucket, group, index, buffer):
    total = buffer.numel()
    side = math.ceil(math.sqrt(total))
    square = _lib().zeros(side * side, dtype=buffer.dtype)
    square.narrow(0, 0, total).copy_(buffer)
    state.total_numel_before_compression += total
    _approximate(state, group, [((index, "batched"), square.view(side, side))])
    buffer.copy_(square.narrow(0, 0, total))


def powerSGD_hook(state, bucket):
    """powerSGD_hook(state, bucket) -> Future

    Averages the bucket's gradients over state.process_group with PowerSGD: each gradient
    matrix worth compressing as a rank-state.matrix_approximation_rank approximation, the other
    gradients whole (one all-reduce), with error feedback and warm start as state says."""
    return _run_hook(state, bucket, _average_per_matrix)


def batched_powerSGD_hook(state, bucket):
    """batched_powerSGD_hook(state, bucket) -> Future

    PowerSGD on the whole bucket at once: the flat buffer, padded with zeros to a square
    matrix, gets one rank-state.matrix_approximation_rank approximation (fewer, larger
    collectives than powerSGD_hook; a coarser approximation)."""
    return _run_hook(state, bucket, _average_batched)
