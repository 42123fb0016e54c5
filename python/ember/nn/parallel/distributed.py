"""DistributedDataParallel: one model replica per process, gradients averaged over the group.

Note [DDP buckets]
At construction every parameter and buffer is broadcast from the group's first rank, so every
replica starts equal. Parameters that need gradients are grouped into buckets (reverse
registration order, since backward reaches the last layers first; one dtype per bucket; the
first bucket 1 MB, the others bucket_cap_mb), each a flat tensor with a view per parameter. A
post-accumulate-grad hook on each parameter copies its .grad into its view (or, with
gradient_as_bucket_view, makes the view the .grad) and counts it ready; a bucket whose every
parameter is ready launches an asynchronous all_reduce (AVG) on the group's worker thread while
backward goes on. Buckets launch in index order on every rank, so that the nth all_reduce of each
rank is the same bucket. When the last bucket launched, the hook waits for them all and writes the
averages back into the gradients. With find_unused_parameters the forward walks the graph from its
outputs and counts the parameters it cannot reach as ready at once (their views zero); a MAX
all_reduce of the used flags then leaves .grad None only where no rank used the parameter.
A communication hook (register_comm_hook) replaces the averaging all_reduce of each bucket: it
gets a GradBucket over the bucket's flat buffer and returns a Future of the reduced buffer, which
the last hook waits for and copies back.
"""

import contextlib
import inspect

from ... import _C
from ... import distributed as dist
from ..._ops import creation
from ...autograd.grad_mode import no_grad
from ...distributed import distributed_c10d as c10d
from ...distributed._grad_bucket import GradBucket
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    def __init__(self, params, dtype):
        self.params = params
        total = sum(p.numel() for p in params)
        self.flat = creation.zeros(total, dtype=dtype)
        self.views = []
        self.offsets = []
        off = 0
        for p in params:
            self.views.append(self.flat[off : off + p.numel()].view(p.shape))
            self.offsets.append(off)
            off += p.numel()
        self.pending = len(params)
        self.work = None


def _tensors_in(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


class _DDPJoinHook(JoinHook):
    """On a rank that ran out of inputs: issues the collectives one DDP iteration issues."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        ddp._sync_buffers(joined=True)
        if not ddp._global_backward_sync(joined=True):
            return
        works = [ddp._launch(i, zeros=True) for i in range(len(ddp._buckets))]
        if ddp.find_unused_parameters:
            used = creation.zeros(len(ddp._params), dtype=_C.int32)
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=ddp.process_group)
        for w in works:
            w.wait()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        src = ddp._common_rank(is_last_joiner)
        tensors = [p.detach() for p in ddp.module.parameters()]
        if ddp.broadcast_buffers:
            tensors += list(ddp.module.buffers())
        ddp._broadcast_coalesced(tensors, src)


class DistributedDataParallel(Module, Joinable):
    """DistributedDataParallel(module, device_ids=None, output_device=None, dim=0,
        broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
        find_unused_parameters=False, check_reduction=False, gradient_as_bucket_view=False,
        static_graph=False)

    Wraps module for data-parallel training: every process runs module on its own batch, and
    backward leaves each parameter's .grad averaged over the process group (Note [DDP
    buckets])."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=True,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
    ):
        super().__init__()
        Joinable.__init__(self)
        if device_mesh is not None:
            process_group = device_mesh.get_group()
        group = c10d._group(process_group)
        if group is None:
            raise ValueError("DistributedDataParallel: this process is not in process_group")
        params = []
        seen = set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter "
                "that requires a gradient."
            )
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.process_group = group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = 25 if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self._params = params
        self._root = c10d.get_global_rank(group, 0)
        if init_sync:
            self._broadcast_coalesced(
                [p.detach() for p in module.parameters()] + [b for b in module.buffers()]
            )
        self._build_buckets()
        for i, p in enumerate(params):
            p.register_post_accumulate_grad_hook(self._make_hook(i))
        self._active = False  # a synced backward is under way
        self._next = 0
        self._used = None
        self._comm_hook = None  # (state, hook) from register_comm_hook
        self._divide_by_initial_world_size = True
        self._join_work = None  # this iteration's announcement to ranks that joined

    # ---- construction ----

    def _broadcast_coalesced(self, tensors, src=None):
        by_dtype = {}
        for t in tensors:
            if t.numel():
                by_dtype.setdefault(t.dtype, []).append(t)
        with no_grad():
            for ts in by_dtype.values():
                flat = _C.cat([t.reshape(-1) for t in ts])
                root = self._root if src is None else src
                dist.broadcast(flat, src=root, group=self.process_group)
                off = 0
                for t in ts:
                    t.copy_(flat[off : off + t.numel()].view(t.shape))
                    off += t.numel()

    def _build_buckets(self):
        buckets, current, size = [], {}, {}
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for p in reversed(self._params):
            dt = p.dtype
            current.setdefault(dt, []).append(p)
            size[dt] = size.get(dt, 0) + p.numel() * p.element_size()
            if size[dt] >= cap:
                buckets.append(_Bucket(current.pop(dt), dt))
                size[dt] = 0
                cap = self.bucket_bytes_cap
        for dt, ps in current.items():
            buckets.append(_Bucket(ps, dt))
        self._buckets = buckets
        self._where = {}
        for bi, b in enumerate(buckets):
            for j, p in enumerate(b.params):
                self._where[id(p)] = (bi, j)
        self._index = {id(p): i for i, p in enumerate(self._params)}

    # ---- forward ----

    @contextlib.contextmanager
    def no_sync(self):
        """no_sync() -> ContextManager

        Inside, backward accumulates gradients locally without communication; the first synced
        backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        sync = _C.is_grad_enabled() and self.require_backward_grad_sync
        self._join_work = Join.notify_join_context(self)
        if sync:
            self._prepare()
        self._sync_buffers(joined=False)
        if self._join_config.enable:
            self._global_backward_sync(joined=False)
        out = self.module(*inputs, **kwargs)
        if sync and self.find_unused_parameters:
            self._mark_unused(out)
        return out

    def _prepare(self):
        if self._active and self._next < len(self._buckets):
            started = any(b.pending < len(b.params) for b in self._buckets)
            if started:
                raise RuntimeError(
                    "Expected to have finished reduction in the prior iteration before starting "
                    "a new one. This error indicates that your module has parameters that were "
                    "not used in producing loss. You can enable unused parameter detection by "
                    "passing the keyword argument `find_unused_parameters=True` to "
                    "`torch.nn.parallel.DistributedDataParallel`, and by making sure all "
                    "`forward` function outputs participate in calculating loss."
                )
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._next = 0
        self._active = True
        self._used = None

    def _mark_unused(self, out):
        reached = set()
        stack = [t.grad_fn for t in _tensors_in(out, []) if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            key = node._node._id if hasattr(node, "_node") else id(node)
            if key in seen:
                continue
            seen.add(key)
            if node.name() == "torch::autograd::AccumulateGrad" or "AccumulateGrad" in node.name():
                reached.add(node.variable.data_ptr())
                continue
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        used = [1 if p.data_ptr() in reached else 0 for p in self._params]
        self._used = creation.tensor(used, dtype=_C.int32)
        for i, p in enumerate(self._params):
            if not used[i]:
                bi, j = self._where[id(p)]
                self._buckets[bi].views[j].zero_()
                self._ready(bi)

    def _sync_buffers(self, joined):
        """Every rank takes the buffers of the group's first rank (of the last rank still
        training, under Join)."""
        if not self.broadcast_buffers or self.process_group.size() == 1:
            return
        bufs = list(self.module.buffers())
        if bufs:
            src = self._common_rank(not joined) if self._join_config.enable else None
            self._broadcast_coalesced(bufs, src)

    def _common_rank(self, candidate):
        """The highest global rank among the ranks passing candidate=True."""
        me = creation.tensor([c10d.get_rank() if candidate else -1])
        dist.all_reduce(me, op=dist.ReduceOp.MAX, group=self.process_group)
        return int(me.item())

    def _global_backward_sync(self, joined):
        """Under Join: whether any rank still training will reduce gradients this iteration."""
        syncing = not joined and self.require_backward_grad_sync
        flag = creation.ones(1) if syncing else creation.zeros(1)
        dist.all_reduce(flag, group=self.process_group)
        return flag.item() != 0

    # ---- uneven inputs ----

    def join(
        self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False
    ):
        """join(divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False)
            -> Join

        Context manager for ranks with different numbers of inputs: ranks that ran out
        shadow the others' gradient reductions until every rank ran out, then all take the
        model of the last rank to finish. Gradients are divided by the initial world size, or
        with divide_by_initial_world_size=False by the number of ranks still training."""
        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs):
        """join_hook(**kwargs) -> JoinHook

        The hook Join runs on this rank once it ran out of inputs."""
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        from ..._device import device

        return device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

    # ---- communication hooks ----

    def register_comm_hook(self, state, hook):
        """register_comm_hook(state, hook) -> None

        Replaces the averaging all-reduce of each gradient bucket by hook(state, bucket), which
        gets a dist.GradBucket and returns a Future of the reduced bucket buffer (a tensor with
        the buffer's number of elements; DDP does not divide by the world size for it). Register
        once, before the first backward."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        ann = sig.parameters["bucket"].annotation
        if ann is not inspect.Parameter.empty and ann is not dist.GradBucket:
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if getattr(hook, "__name__", "") in ("bf16_compress_hook", "bf16_compress_wrapper_hook"):
            # torch refuses the bf16 hooks without CUDA+NCCL or XPU+XCCL: on the CPU, always
            raise TypeError(
                "BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and "
                "XCCL"
            )
        if self._comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        self._comm_hook = (state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type):
        """_register_builtin_comm_hook(comm_hook_type) -> None

        Registers one of the built-in hooks (dist.BuiltinCommHookType) on the process group."""
        from ...distributed.algorithms.ddp_comm_hooks import default_hooks

        hooks = {
            dist.BuiltinCommHookType.ALLREDUCE: default_hooks.allreduce_hook,
            dist.BuiltinCommHookType.FP16_COMPRESS: default_hooks.fp16_compress_hook,
        }
        if comm_hook_type not in hooks:
            raise ValueError(f"Unknown built-in DDP comm hook type {comm_hook_type}")
        if self._comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        self._comm_hook = (self.process_group, hooks[comm_hook_type])

    def _launch(self, bi, zeros=False):
        """Starts bucket bi's reduction (of zeros: a joined rank's share); returns its Future."""
        b = self._buckets[bi]
        flat = creation.zeros_like(b.flat) if zeros else b.flat
        if self._comm_hook is None:
            # under Join, without dividing by the initial world size: a sum, divided later by
            # the number of ranks still training
            mean = not self._join_config.enable or self._divide_by_initial_world_size
            op = dist.ReduceOp.AVG if mean else dist.ReduceOp.SUM
            return dist.all_reduce(
                flat, op=op, group=self.process_group, async_op=True
            ).get_future()
        state, hook = self._comm_hook
        views = b.views
        if zeros:  # the joined rank's stand-in bucket: views of its zeros
            views = [flat[o : o + v.numel()].view(v.shape) for o, v in zip(b.offsets, b.views)]
        return hook(state, GradBucket(bi, flat, b.params, views, bi == len(self._buckets) - 1))

    # ---- backward ----

    def _make_hook(self, i):
        def hook(p):
            if not self._active:
                return
            bi, j = self._where[id(p)]
            view = self._buckets[bi].views[j]
            g = p.grad
            if g is not None and g.data_ptr() != view.data_ptr():
                view.copy_(g)
                if self.gradient_as_bucket_view:
                    p.grad = view
            self._ready(bi)

        return hook

    def _ready(self, bi):
        b = self._buckets[bi]
        b.pending -= 1
        if b.pending:
            return
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            self._buckets[self._next].work = self._launch(self._next)
            self._next += 1
        if self._next == len(self._buckets):
            self._finish()

    def _finish(self):
        globally_used = None
        if self._used is not None:
            dist.all_reduce(self._used, op=dist.ReduceOp.MAX, group=self.process_group)
            globally_used = self._used.tolist()
        for b in self._buckets:
            reduced = b.work.wait()
            if isinstance(reduced, list):  # a collective's own future: [the bucket]
                reduced = reduced[0]
            if reduced is not b.flat and reduced.data_ptr() != b.flat.data_ptr():
                if reduced.numel() != b.flat.numel():
                    raise RuntimeError(
                        f"DistributedDataParallel: the communication hook returned a tensor of "
                        f"{reduced.numel()} elements for a bucket of {b.flat.numel()}"
                    )
                b.flat.copy_(reduced.reshape(-1))
            if self._comm_hook is None and self._join_config.enable:
                if not self._divide_by_initial_world_size:
                    b.flat.div_(self._join_work.get_future().wait()[0].item())
        for b in self._buckets:
            for p, view in zip(b.params, b.views):
                if globally_used is not None and not globally_used[self._index[id(p)]]:
                    continue
                g = p.grad
                if g is None or self.gradient_as_bucket_view:
                    if g is None or g.data_ptr() != view.data_ptr():
                        p.grad = view if self.gradient_as_bucket_view else view.clone()
                elif g.data_ptr() != view.data_ptr():
                    g.copy_(view)
        self._active = False

    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel cannot be pickled; save .module instead")
