"""ember.distributed.fsdp: FSDP2's fully_shard (torch.distributed.fsdp).

fully_shard(module) turns the parameters the module owns (those not already owned by a
fully_shard'ed submodule) into DTensors sharded on dim 0 over the mesh, one group per call.
Before the module's forward, the group's shards are all-gathered in one collective (each shard
padded to the largest piece, so the gathered buffer splits by rank) into whole tensors that the
forward uses; after it, the module's attributes are the sharded DTensors again. The gather is an
autograd Function: its backward reduce-scatters the group's gradients in one collective
(averaged over the mesh, as torch's default) into the shards' .grad, so the optimizer steps on
the local shards. With reshard_after_forward (the default), saved-tensor hooks keep the
gathered parameters that the forward's ops save out of the graph: they are freed after the
forward and gathered again in the module's backward; without it, the gathered parameters stay
the module's attributes until its backward (torch's). See docs/ARCHITECTURE.md.
"""

import functools

from .. import distributed_c10d as c10d
from ..tensor._api import (
    DTensor,
    Replicate,
    Shard,
    _chunk_sizes,
    _dtensor_parameter_class,
    _lib,
    _reduce_scatter_rows,
    _shard,
    _StridedShard,
)

__all__ = [
    "BackwardPrefetch",
    "CPUOffload",
    "CPUOffloadPolicy",
    "FullOptimStateDictConfig",
    "FullStateDictConfig",
    "FullyShardedDataParallel",
    "LocalStateDictConfig",
    "MixedPrecision",
    "OptimStateDictConfig",
    "OptimStateKeyType",
    "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig",
    "ShardingStrategy",
    "StateDictConfig",
    "StateDictSettings",
    "StateDictType",
    "FSDPModule",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "UnshardHandle",
    "fully_shard",
    "register_fsdp_forward_method",
]


class OffloadPolicy:
    """OffloadPolicy()

    No offloading (the default policy)."""


class CPUOffloadPolicy(OffloadPolicy):
    """CPUOffloadPolicy(pin_memory=True)

    Keeps the sharded parameters, gradients and optimizer state in CPU memory. ember computes
    on the CPU, where they already live, so this policy changes nothing (pinning is a CUDA
    transfer optimization)."""

    def __init__(self, pin_memory=True):
        self.pin_memory = pin_memory

    def __repr__(self):
        return f"CPUOffloadPolicy(pin_memory={self.pin_memory})"


class MixedPrecisionPolicy:
    """MixedPrecisionPolicy(param_dtype=None, reduce_dtype=None, output_dtype=None,
        cast_forward_inputs=True)

    The dtypes the forward computes in (param_dtype: the gathered parameters are cast before
    the all-gather), gradients are reduced in (reduce_dtype) and outputs are cast to."""

    def __init__(
        self, param_dtype=None, reduce_dtype=None, output_dtype=None, cast_forward_inputs=True
    ):
        self.param_dtype = param_dtype
        self.reduce_dtype = reduce_dtype
        self.output_dtype = output_dtype
        self.cast_forward_inputs = cast_forward_inputs

    def __repr__(self):
        return (
            f"MixedPrecisionPolicy(param_dtype={self.param_dtype}, reduce_dtype="
            f"{self.reduce_dtype}, output_dtype={self.output_dtype}, cast_forward_inputs="
            f"{self.cast_forward_inputs})"
        )


class _Group:
    """The parameters one fully_shard call manages, gathered and reduced together."""

    def __init__(self, entries, mesh, mp, tp=None):
        # [(owner module, name, DTensor parameter, the shape this group shards)]: the global
        # shape, or for a tensor-parallel parameter its tp piece's
        self.entries = entries
        # per entry, None or (tp mesh, tp placements, global shape, the dim FSDP shards): the
        # gathered tp piece becomes the module's DTensor parameter on the tp mesh
        self.tp = tp or [None] * len(entries)
        self.mesh = mesh
        self.mp = mp
        # HSDP (a 2-d mesh): shard over the last dimension, replicate over the first
        self.n = mesh.size(mesh.ndim - 1)
        self.me = mesh.get_local_rank(mesh.ndim - 1)
        self.group = mesh.get_group(mesh.ndim - 1)
        self.replicas = mesh.get_group(0) if mesh.ndim == 2 else None
        # a parameter sharded on dim d travels with d moved first (shard_placement_fn)
        self.dims = [
            t[3] if t else p.placements[-1].dim for (_, _, p, _), t in zip(entries, self.tp)
        ]
        self.shapes = [
            (shape[d], *shape[:d], *shape[d + 1 :]) if shape else shape
            for (_, _, _, shape), d in zip(entries, self.dims)
        ]
        self.rows = []  # padded rows per rank
        self.offsets = []
        self.sizes = []
        off = 0
        for shape in self.shapes:
            rows = _chunk_sizes(shape[0], self.n)[0] if shape else 1
            inner = 1
            for s in shape[1:]:
                inner *= s
            self.rows.append(rows)
            self.offsets.append(off)
            self.sizes.append(rows * inner)
            off += rows * inner
        self.flat = off
        self.sync = True
        self.all_reduce = True  # HSDP: average the gradient shards over the replicas
        self.divide_factor = None  # set_gradient_divide_factor: sum, then divide by it
        self.pending = None  # accumulated unsharded gradients while sync is off
        self.unsharded = None
        self.regathered = None  # gathered again in backward for saved parameters
        self.prefetched = None  # (output buffer, Work, shard versions) of an early all-gather
        self.after_backward = None  # called once the gather's backward reduced the gradients
        self.forward_prefetch = []  # groups whose all-gather this group's forward starts
        self.backward_prefetch = []  # groups whose regather this group's backward starts

    def adopt_replaced(self):
        """Takes, while the module's attributes are the shards, the DTensor parameters a user
        put in their place (``load_state_dict(sharded_sd, assign=True)`` after a meta-device
        init, as torch's FSDP2 tutorial loads): the group gathers and reduces those from then
        on, as torch's FSDP2 picks them up."""
        if self.unsharded is not None:
            return
        for i, (owner, name, p, shape) in enumerate(self.entries):
            if owner is None:  # FSDP1's flat parameter pieces have no module attribute
                continue
            cur = owner._parameters.get(name)
            if (
                cur is not p
                and isinstance(cur, DTensor)
                and cur.device_mesh == p.device_mesh
                and cur.placements == p.placements
                and cur.shape == p.shape
            ):
                self.entries[i] = (owner, name, cur, shape)

    def shards(self):
        """This rank's shards, in the dtype the forward computes in."""
        self.adopt_replaced()
        shards = [p._local_tensor for _, _, p, _ in self.entries]
        if self.mp.param_dtype is not None:
            shards = [s.to(self.mp.param_dtype) for s in shards]
        return shards

    def prefetch(self):
        """Starts the all-gather of this group's shards (asynchronous; gather() collects it),
        unless its parameters are gathered or being gathered already, or it has none (a module
        whose parameters all belong to its children)."""
        idle = self.prefetched is None and self.unsharded is None and self.regathered is None
        if idle and self.entries:
            out, work = self._launch(self.shards(), async_op=True)
            self.prefetched = (out, work, self._versions())

    def _versions(self):
        return tuple(p._local_tensor._version for _, _, p, _ in self.entries)

    def _launch(self, shards, async_op, dtype=None):
        lib = _lib()
        dtype = dtype or self.mp.param_dtype or shards[0].dtype
        buf = lib.zeros(self.flat, dtype=dtype)
        for s, d, off in zip(shards, self.dims, self.offsets):
            if s.numel():
                buf.narrow(0, off, s.numel()).copy_((s.movedim(d, 0) if d else s).reshape(-1))
        out = lib.empty(self.n * self.flat, dtype=dtype)
        work = c10d.all_gather_single(out, buf, group=self.group, async_op=async_op)
        return out, work

    def gather(self, shards, dtype=None):
        """The whole tensors from this rank's shards (plain tensors, no autograd); an earlier
        prefetch of the same shard values is used when there is one. dtype: that of the
        gathered tensors (default the forward's)."""
        out = None
        if self.prefetched is not None and dtype is None:
            out, work, versions = self.prefetched
            self.prefetched = None
            work.wait()
            if versions != self._versions():
                out = None  # the shards changed (an optimizer step) since the prefetch
        if out is None:
            out = self._launch(shards, async_op=False, dtype=dtype)[0]
        out = out.view(self.n, self.flat)
        fulls = []
        for shape, d, off, size, rows in zip(
            self.shapes, self.dims, self.offsets, self.sizes, self.rows
        ):
            piece = out.narrow(1, off, size).reshape(self.n * rows, *shape[1:])
            full = piece.narrow(0, 0, shape[0]) if shape else piece.reshape(())
            fulls.append(full.movedim(0, d) if d else full)
        return fulls

    # Resharding what autograd saved (Note [FSDP saved parameters] in the docstring of
    # fully_shard's hooks below): saved views of the gathered parameters become handles.
    def pack(self, outer, t):
        fulls = self.unsharded
        if fulls is not None:
            ptr = t.untyped_storage().data_ptr()
            for i, f in enumerate(fulls):
                if f.untyped_storage().data_ptr() == ptr:
                    return (_SavedParam, i, tuple(t.shape), t.stride(), t.storage_offset())
        if outer is not None:  # hooks around the module (a checkpoint) get the rest
            return (_Outer, outer[1], outer[0](t))
        return t

    def unpack(self, packed):
        if not (isinstance(packed, tuple) and packed):
            return packed
        if packed[0] is _Outer:
            return packed[1](packed[2])
        _, i, size, stride, offset = packed
        fulls = self.unsharded or self.regathered
        if fulls is None:  # the first use in backward: all-gather again, once
            with _lib().no_grad():
                fulls = self.regathered = self.gather(self.shards())
                for g in self.backward_prefetch:
                    g.prefetch()
        return fulls[i].as_strided(size, stride, offset)

    def reduce(self, grads):
        """This rank's shards of the gradients, averaged over the mesh (one reduce-scatter)."""
        lib = _lib()
        dtype = self.mp.reduce_dtype or next(g.dtype for g in grads if g is not None)
        buf = lib.zeros(self.n, self.flat, dtype=dtype)
        for g, shape, d, off, size, rows in zip(
            grads, self.shapes, self.dims, self.offsets, self.sizes, self.rows
        ):
            if g is None:
                continue
            if d:
                g = g.movedim(d, 0)
            if shape and shape[0] != self.n * rows:
                padded = lib.zeros(self.n * rows, *shape[1:], dtype=g.dtype)
                padded.narrow(0, 0, shape[0]).copy_(g)
                g = padded
            buf.narrow(1, off, size).copy_(g.reshape(self.n, size))
        if self.pending is not None:
            buf += self.pending
            self.pending = None
        if not self.sync:
            self.pending = buf
            return [None] * len(grads)
        factor = self.divide_factor
        out = _reduce_scatter_rows(buf, self.n, self.group, average=factor is None)
        if self.replicas is not None and self.all_reduce:
            op = c10d.ReduceOp.SUM if factor is not None else c10d.ReduceOp.AVG
            c10d.all_reduce(out, op=op, group=self.replicas)
        if factor is not None:
            out.div_(factor)
        res = []
        for (_, _, p, _), shape, d, off, size, rows in zip(
            self.entries, self.shapes, self.dims, self.offsets, self.sizes, self.rows
        ):
            local_rows = _chunk_sizes(shape[0], self.n)[self.me] if shape else 1
            inner = size // rows if rows else 0
            local = p._local_tensor
            g = out.narrow(0, off, local_rows * inner)
            if d:
                g = g.view(local.movedim(d, 0).shape).movedim(0, d).contiguous()
            else:
                g = g.view(local.shape)
            res.append(g.to(p.dtype))
        return res


_SavedParam = object()  # tags a packed view of a gathered parameter
_Outer = object()  # tags what the hooks around the module packed
_GATHER = []


def _gather_fn():
    if not _GATHER:
        from ...autograd import Function

        class _AllGatherParams(Function):
            @staticmethod
            def forward(ctx, group, *shards):
                ctx.group = group
                return tuple(group.gather(shards))

            @staticmethod
            def backward(ctx, *grads):
                ctx.group.regathered = None  # the module's backward is done with them
                if ctx.group.prefetched is not None:  # prefetched but not needed after all
                    ctx.group.prefetched[1].wait()
                    ctx.group.prefetched = None
                grads = ctx.group.reduce(list(grads))
                if ctx.group.after_backward is not None:
                    ctx.group.after_backward()
                return (None, *grads)

        _GATHER.append(_AllGatherParams)
    return _GATHER[0]


class FSDPModule:
    """The methods fully_shard adds to a module (its class becomes FSDP<Class>)."""

    def unshard(self, async_op=False):
        """unshard(async_op=False) -> Optional[UnshardHandle]

        All-gathers the module's parameters now (the next forward uses them). With
        async_op=True the all-gather only starts; the returned handle's wait() finishes it."""
        state = self._fsdp_state
        if async_op:
            state.group.prefetch()
            return UnshardHandle(self)
        if state.group.unsharded is None:
            state.group.unsharded = _unshard(state.group)
        # the attributes are nn.Parameters, as torch's unsharded parameters: aliases of the
        # gathered tensors, so their gradients still reach the gather's backward
        param = _lib().nn.Parameter
        group = state.group
        for (owner, name, _, _), full, tp in zip(group.entries, group.unsharded, group.tp):
            if tp is None:
                owner._parameters[name] = full.as_subclass(param)
            else:  # the tp piece, a DTensor parameter on the tp mesh as tensor parallelism made it
                owner._parameters[name] = _dtensor_parameter_class()._make(full, *tp[:3])

    def reshard(self):
        """reshard() -> None

        Frees the gathered parameters: the module's attributes are the shards again."""
        state = self._fsdp_state
        state.group.adopt_replaced()
        state.group.unsharded = None
        for owner, name, p, _ in state.group.entries:
            owner._parameters[name] = p

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """set_requires_gradient_sync(requires_gradient_sync, *, recurse=True) -> None

        With False, backward accumulates unsharded gradients locally and reduce-scatters
        nothing; the first backward with True reduces them with its own."""
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._fsdp_state.group.sync = bool(requires_gradient_sync)

    def set_modules_to_forward_prefetch(self, modules):
        """set_modules_to_forward_prefetch(modules) -> None

        This module's forward starts the all-gathers of `modules` (FSDP modules that run
        later), so they overlap this module's computation."""
        self._fsdp_state.group.forward_prefetch = [_fsdp_group(m) for m in modules]

    def set_modules_to_backward_prefetch(self, modules):
        """set_modules_to_backward_prefetch(modules) -> None

        This module's backward starts the all-gathers `modules`' backward needs, so they
        overlap this module's gradient computation."""
        self._fsdp_state.group.backward_prefetch = [_fsdp_group(m) for m in modules]

    def set_gradient_divide_factor(self, factor):
        """set_gradient_divide_factor(factor) -> None

        Gradients are summed over the ranks and divided by `factor` instead of averaged."""
        self._fsdp_state.group.divide_factor = float(factor)

    def set_reduce_scatter_divide_factor(self, factor):
        """set_reduce_scatter_divide_factor(factor) -> None

        The former name of set_gradient_divide_factor."""
        self.set_gradient_divide_factor(factor)

    def set_requires_all_reduce(self, requires_all_reduce, *, recurse=True):
        """set_requires_all_reduce(requires_all_reduce, *, recurse=True) -> None

        HSDP: with False, gradient shards are averaged over the shard group only (no
        all-reduce over the replicas)."""
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._fsdp_state.group.all_reduce = bool(requires_all_reduce)

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        """set_reshard_after_forward(reshard_after_forward, recurse=True) -> None

        Whether forward leaves the module's attributes sharded."""
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._fsdp_state.reshard_after_forward = bool(reshard_after_forward)


class UnshardHandle:
    """The handle FSDPModule.unshard(async_op=True) returns: wait() finishes the all-gather and
    leaves the module's parameters unsharded."""

    def __init__(self, module):
        self._module = module

    def wait(self):
        """wait() -> None"""
        if self._module is not None:
            self._module.unshard()
            self._module = None


def _fsdp_group(module):
    if not isinstance(module, FSDPModule):
        raise ValueError(f"Expects an FSDPModule but got {type(module).__name__}")
    return module._fsdp_state.group


class _State:
    def __init__(self, group, reshard_after_forward, mp):
        self.hooks = None  # the saved-tensor hooks pushed for the forward
        self.group = group
        self.reshard_after_forward = reshard_after_forward
        self.mp = mp
        # FSDP2 without reshard_after_forward: the gathered parameters stay the attributes
        # from the forward until the backward (torch's), `kept` while they do
        self.keeps_until_backward = False
        self.kept = False


def _abandon(mod, state):
    state.hooks = None
    mod.reshard()


def _unshard(group):
    if not group.entries:
        return []
    shards = group.shards()
    lib = _lib()
    if lib.is_grad_enabled() and any(p.requires_grad for _, _, p, _ in group.entries):
        return list(_gather_fn().apply(group, *shards))
    with lib.no_grad():
        return group.gather(shards)


def _cast(x, dtype):
    lib = _lib()
    if isinstance(x, lib.Tensor) and x.is_floating_point() and not isinstance(x, DTensor):
        return x.to(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype) for v in x)
    if isinstance(x, dict):
        return {k: _cast(v, dtype) for k, v in x.items()}
    return x


# Note [FSDP saved parameters]: with reshard_after_forward, the gathered parameters that the
# forward's ops save for backward are packed as handles (saved-tensor hooks), so resharding
# after the forward frees them; the module's backward all-gathers them again on first use
# and drops them when the gather's own backward runs. FSDP1 (FullyShardedDataParallel) runs
# its units through the same two functions: `mod` has unshard() and reshard().
def _pre_forward(state, mod, args, kwargs):
    from ...autograd.graph import saved_tensors_hooks

    mp = state.mp
    if state.group.entries:
        if state.kept:  # from an earlier forward (maybe without grad): gathered again
            state.kept = False
            mod.reshard()
        if state.hooks is not None:
            # the last forward never reached `post` (an exception, such as a checkpoint's
            # early stop, unwound it): its gathered parameters may be stale
            state.hooks = None
            mod.reshard()
        mod.unshard()
        for g in state.group.forward_prefetch:
            g.prefetch()
        if state.reshard_after_forward and _lib().is_grad_enabled():
            outer = _lib()._C._top_saved_tensors_hooks()
            pack = functools.partial(state.group.pack, outer)
            # called by a checkpoint that pops these hooks after an early stop unwound
            # the forward before `post` (utils/checkpoint.py, _pop_hooks_above)
            pack._on_abandon = functools.partial(_abandon, mod, state)
            state.hooks = saved_tensors_hooks(pack, state.group.unpack)
            state.hooks.__enter__()
    if mp.param_dtype is not None and mp.cast_forward_inputs:
        args, kwargs = _cast(args, mp.param_dtype), _cast(kwargs, mp.param_dtype)
    return args, kwargs


def _post_forward(state, mod, args, kwargs, out):
    if state.group.entries:
        if state.hooks is not None:
            top = _lib()._C._top_saved_tensors_hooks()
            if top is not None and top[0] is state.hooks.pack_hook:
                state.hooks.__exit__(None, None, None)
            state.hooks = None
        # the attributes are the shards again; the gathered tensors are freed, unless
        # reshard_after_forward is False (the graph then keeps what its ops saved; FSDP2
        # keeps them as the attributes until the backward, as torch's)
        if state.keeps_until_backward and not state.reshard_after_forward:
            state.kept = True
        else:
            mod.reshard()
    if state.mp.output_dtype is not None:
        out = _cast(out, state.mp.output_dtype)
    return out


def _post_backward(state, mod):
    if state.kept:
        state.kept = False
        mod.reshard()


def fully_shard(
    module,
    *,
    mesh=None,
    reshard_after_forward=True,
    shard_placement_fn=None,
    mp_policy=None,
    offload_policy=None,
    ignored_params=None,
):
    """fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None,
        mp_policy=MixedPrecisionPolicy(), offload_policy=None, ignored_params=None) -> FSDPModule

    Shards the parameters module owns (not those of fully_shard'ed submodules) on dim 0 (or the
    dim shard_placement_fn(param) gives as Shard(dim)) over mesh (default the whole world) and
    all-gathers them around each forward; their gradients are reduce-scattered in backward. A
    2-d mesh (with dim names) is HSDP: parameters are sharded over its second dimension and
    replicated over its first, whose groups all-reduce the gradient shards. The module's class
    becomes FSDP<Class>, a subclass of FSDPModule. Call it on submodules first (the transformer
    blocks), then on the root."""
    from ...nn import Module, Parameter
    from ..device_mesh import _default_mesh
    from ..tensor import distribute_tensor

    if isinstance(module, (list, tuple)):
        for m in module:
            fully_shard(
                m,
                mesh=mesh,
                reshard_after_forward=reshard_after_forward,
                mp_policy=mp_policy,
                ignored_params=ignored_params,
            )
        return module
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard: expected an nn.Module; got {type(module).__name__}")
    if offload_policy is not None and not isinstance(offload_policy, OffloadPolicy):
        raise ValueError(f"fully_shard: expected an OffloadPolicy; got {offload_policy!r}")
    mesh = mesh or _default_mesh()
    if mesh.ndim not in (1, 2):
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}")
    if mesh.ndim == 2 and mesh.mesh_dim_names is None:
        raise AssertionError("Please init the 2D mesh for HSDP with mesh_dim_names specified")
    replicate = [Replicate()] * (mesh.ndim - 1)
    mp = mp_policy or MixedPrecisionPolicy()
    ignored = {id(p) for p in ignored_params or ()}
    managed = set()
    for sub in module.modules():
        if sub is not module and isinstance(sub, FSDPModule):
            managed |= {id(p) for _, _, p, _ in sub._fsdp_state.group.entries}
    entries, tp = [], []
    seen = {}
    for owner in module.modules():
        for name, p in list(owner._parameters.items()):
            if p is None or id(p) in managed or id(p) in ignored:
                continue
            if id(p) in seen:  # a tied parameter: the same shard under both names
                owner._parameters[name] = seen[id(p)]
                continue
            shard = shard_placement_fn(p) if shard_placement_fn is not None else None
            shard = Shard(0) if shard is None else shard
            if not isinstance(shard, Shard) or not -max(p.dim(), 1) <= shard.dim < max(p.dim(), 1):
                raise ValueError(
                    f"fully_shard: shard_placement_fn must return Shard(dim) with dim in "
                    f"[{-p.dim()}, {p.dim()}) for a parameter of shape {tuple(p.shape)} (or None); "
                    f"got {shard!r}"
                )
            shard = Shard(shard.dim % max(p.dim(), 1))
            if isinstance(p, DTensor):
                sp, info = _shard_tp_param(p, mesh, shard.dim)
                shape = tuple(p._local_tensor.shape)
            else:
                dt = distribute_tensor(p.detach(), mesh, replicate + [shard], src_data_rank=None)
                sp, info, shape = Parameter(dt, p.requires_grad), None, tuple(p.shape)
            seen[id(p)] = sp
            owner._parameters[name] = sp
            entries.append((owner, name, sp, shape))
            tp.append(info)
    state = _State(_Group(entries, mesh, mp, tp), reshard_after_forward, mp)
    state.keeps_until_backward = True
    state.group.after_backward = functools.partial(_post_backward, state, module)
    module._fsdp_state = state
    pre, post = functools.partial(_pre_forward, state), functools.partial(_post_forward, state)
    state.hooks_pair = (pre, post)
    module.register_forward_pre_hook(pre, with_kwargs=True)
    module.register_forward_hook(post, with_kwargs=True)
    cls = module.__class__
    if not isinstance(module, FSDPModule):
        module.__class__ = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return module


def _shard_tp_param(p, mesh, dim):
    """A tensor-parallel DTensor parameter p (on a 1-d tp mesh) sharded on `dim` over the 1-d
    mesh fully_shard got, a sibling slice of the same 2-d mesh (the 2-d "dp" x "tp" recipe): a
    DTensor parameter on that 2-d mesh whose piece is this rank's chunk of its tp piece, and
    the group's record of it. When tp also shards `dim` and dp comes first in the mesh, dp's
    placement is _StridedShard (it cuts the tp piece), as torch's."""
    tp_mesh = p.device_mesh
    root = tp_mesh._root
    if not (
        mesh.ndim == 1
        and tp_mesh.ndim == 1
        and root is not None
        and root is mesh._root
        and root.ndim == 2
        and mesh._root_dims != tp_mesh._root_dims
    ):
        raise ValueError(
            "fully_shard: the module's parameters are already DTensors; fully_shard takes "
            "DTensor parameters only on a 1-d slice of a 2-d DeviceMesh beside the one given"
        )
    dp_dim, tp_dim = mesh._root_dims[0], tp_mesh._root_dims[0]
    tp_pl = p.placements[0]
    placements = [None, None]
    placements[tp_dim] = tp_pl
    if isinstance(tp_pl, Shard) and tp_pl.dim == dim and dp_dim < tp_dim:
        placements[dp_dim] = _StridedShard(dim, split_factor=tp_mesh.size())
    else:
        placements[dp_dim] = Shard(dim)
    local = p._local_tensor.detach()
    local = _shard(local, dim, mesh.size(), mesh.get_local_rank()).requires_grad_(p.requires_grad)
    sp = _dtensor_parameter_class()._make(local, root, placements, tuple(p.shape))
    return sp, (tp_mesh, p.placements, tuple(p.shape), dim)


def register_fsdp_forward_method(module, method_name):
    """register_fsdp_forward_method(module, method_name) -> None

    Makes module.<method_name>() gather and reshard the module's parameters around the call, as
    forward does (for methods such as generate() that run the model without calling forward)."""
    if not isinstance(module, FSDPModule):
        return  # as torch: the same code runs with and without FSDP
    if not hasattr(module, method_name):
        raise ValueError(f"{type(module)} does not have a method {method_name}")
    pre, post = module._fsdp_state.hooks_pair
    method = getattr(module, method_name)

    @functools.wraps(method)
    def wrapped(*args, **kwargs):
        args, kwargs = pre(module, args, kwargs)
        return post(module, args, kwargs, method(*args, **kwargs))

    setattr(module, method_name, wrapped)


# FSDP1 (FullyShardedDataParallel) runs its units on the machinery above
from ._fully_sharded_data_parallel import FullyShardedDataParallel  # noqa: E402
from .api import (  # noqa: E402
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    OptimStateDictConfig,
    OptimStateKeyType,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)
