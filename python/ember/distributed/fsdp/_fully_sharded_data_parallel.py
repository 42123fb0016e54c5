"""FSDP1: FullyShardedDataParallel (torch.distributed.fsdp.FullyShardedDataParallel).

Each FullyShardedDataParallel instance is a unit: it wraps a module (as `_fsdp_wrapped_module`)
and manages the parameters the module owns that no nested unit manages. A unit is one group of
FSDP2's machinery (fsdp/__init__.py, `_Group`): the same layout (every parameter cut into
torch.chunk's row pieces on dim 0, each rank's pieces padded and laid end to end in one flat
buffer), the same single all-gather before the unit's forward, the same saved-tensor hooks that
free the gathered parameters after forward and gather them again in backward (FULL_SHARD), and
the same single reduce-scatter of the unit's gradients. Only the way the shards are held
differs:

- use_orig_params=False: this rank's flat buffer is one parameter, `_flat_param`, registered on
  the wrapped module in place of the original parameters (the optimizer steps on it); the
  forward reads views of it.
- use_orig_params=True: each original parameter is replaced by a parameter holding this rank's
  rows of it, under its own name.

Sharding strategies map onto meshes: FULL_SHARD and SHARD_GRAD_OP shard over the process group
(a 1-d mesh; SHARD_GRAD_OP keeps the gathered parameters from forward to backward), HYBRID_SHARD
shards over the second dimension of a 2-d mesh and all-reduces over the first, NO_SHARD is a
(world, 1) mesh: pieces of one rank each, gradients averaged over the world.
"""

import contextlib

from ...nn.modules.module import Module, _IncompatibleKeys
from ...nn.parameter import Parameter
from .. import distributed_c10d as c10d
from ..tensor._api import DTensor, Replicate, Shard, _chunk_sizes, _lib
from . import _fsdp1_extras as _extras
from . import _fsdp1_state_dict as _sd
from .api import (
    BackwardPrefetch,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictSettings,
    StateDictType,
)

__all__ = ["FullyShardedDataParallel"]

FSDP_WRAPPED_MODULE = "_fsdp_wrapped_module"
FLAT_PARAM = "_flat_param"


class _Piece:
    """What FSDP2's _Group reads of one managed parameter: this rank's rows (`_local_tensor`,
    read fresh each time: a view of the flat parameter, or the parameter itself), its layout
    and dtype."""

    def __init__(self, unit, index, dtype, requires_grad):
        self._unit = unit
        self._index = index
        self.dtype = dtype
        self.requires_grad = requires_grad
        self.placements = (Shard(0),)

    @property
    def _local_tensor(self):
        return self._unit._local(self._index)


def _fsdp2():
    from .. import fsdp

    return fsdp


def _mesh_for(strategy, process_group, device_mesh):
    """The mesh a unit's collectives run on (see the module docstring)."""
    import numpy as np

    from ..device_mesh import DeviceMesh, _default_mesh

    world = c10d.get_world_size()
    hybrid = strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)
    if device_mesh is not None:
        if hybrid != (device_mesh.ndim == 2):
            raise ValueError(
                f"FullyShardedDataParallel: expected a {'2' if hybrid else '1'}-d device_mesh "
                f"for {strategy}; got {device_mesh}"
            )
        return device_mesh
    if hybrid:
        if process_group is not None:
            return _pair_mesh(process_group)
        local = int(__import__("os").environ.get("LOCAL_WORLD_SIZE", world))
        return _shared_mesh((world // local, local))
    if strategy is ShardingStrategy.NO_SHARD:
        return _shared_mesh((world, 1))
    if process_group is None or process_group is c10d.GroupMember.WORLD:
        return _default_mesh()
    ranks = c10d.get_process_group_ranks(process_group)
    return DeviceMesh("cpu", np.asarray(ranks), _groups=[process_group])


_MESHES = {}  # shape -> (the default group it was made in, the mesh every unit shares)
_PAIR_MESHES = {}  # (id(shard group), id(replicate group)) -> (the groups, their mesh)


def _pair_mesh(groups):
    """HYBRID_SHARD's (shard group, replicate group) as a (replicate, shard) mesh: each rank's
    rows are the shard groups of the ranks of its replicate group (one all_gather_object over
    the world, once per pair)."""
    import numpy as np

    from ..device_mesh import DeviceMesh

    if not (isinstance(groups, (tuple, list)) and len(groups) == 2):
        raise ValueError(
            "FullyShardedDataParallel: HYBRID_SHARD expects process_group to be a pair "
            f"(shard group, replicate group); got {groups!r}"
        )
    key = (id(groups[0]), id(groups[1]))
    made = _PAIR_MESHES.get(key)
    if made is not None and made[0][0] is groups[0] and made[0][1] is groups[1]:
        return made[1]
    intra = c10d.get_process_group_ranks(groups[0])
    inter = c10d.get_process_group_ranks(groups[1])
    me = c10d.get_rank()
    if me not in intra or me not in inter or len(set(intra) & set(inter)) != 1:
        raise ValueError(
            "FullyShardedDataParallel: HYBRID_SHARD's shard group and replicate group must both "
            f"hold this rank ({me}) and share only it; got {intra} and {inter}"
        )
    every = [None] * c10d.get_world_size()
    c10d.all_gather_object(every, intra)
    rows = [every[r] for r in inter]
    if any(len(row) != len(intra) for row in rows):
        raise ValueError(
            f"FullyShardedDataParallel: HYBRID_SHARD's shard groups differ in size: {rows}"
        )
    mesh = DeviceMesh(
        "cpu",
        np.asarray(rows),
        mesh_dim_names=("replicate", "shard"),
        _groups=[groups[1], groups[0]],
    )
    _PAIR_MESHES[key] = ((groups[0], groups[1]), mesh)
    return mesh


def _shared_mesh(shape):
    """One (replicate, shard) mesh per shape for the current default group: its subgroups are
    made once, not once per unit."""
    from ..device_mesh import init_device_mesh

    world = c10d._default()
    made = _MESHES.get(shape)
    if made is None or made[0] is not world:
        made = _MESHES[shape] = (
            world,
            init_device_mesh("cpu", shape, mesh_dim_names=("rep", "shard")),
        )
    return made[1]


class FullyShardedDataParallel(Module):
    """FullyShardedDataParallel(module, process_group=None, sharding_strategy=None,
        cpu_offload=None, auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
        mixed_precision=None, ignored_modules=None, param_init_fn=None, device_id=None,
        sync_module_states=False, forward_prefetch=False, limit_all_gathers=True,
        use_orig_params=False, ignored_states=None, device_mesh=None)

    Shards module's parameters over the process group: each rank keeps its piece, the unit
    all-gathers them around its forward (and again in backward with FULL_SHARD) and
    reduce-scatters the gradients, averaged over the ranks, into the pieces the optimizer steps
    on. auto_wrap_policy makes nested units of submodules (their own gathers, so only one
    unit's parameters are whole at a time). cpu_offload and limit_all_gathers change nothing on
    ember's CPU; backward_prefetch starts the next unit's all-gather in backward and
    forward_prefetch the next unit's in forward, in the order of the first forward."""

    def __init__(
        self,
        module,
        process_group=None,
        sharding_strategy=None,
        cpu_offload=None,
        auto_wrap_policy=None,
        backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
        mixed_precision=None,
        ignored_modules=None,
        param_init_fn=None,
        device_id=None,
        sync_module_states=False,
        forward_prefetch=False,
        limit_all_gathers=True,
        use_orig_params=False,
        ignored_states=None,
        device_mesh=None,
    ):
        from .wrap import _policy_fn, _recursive_wrap

        if not isinstance(module, Module):
            raise TypeError(
                f"FullyShardedDataParallel: expected an nn.Module; got {type(module).__name__}"
            )
        if not c10d.is_initialized():
            c10d.init_process_group("gloo")
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        ignored = set(ignored_modules or ()) | {
            m for m in ignored_states or () if isinstance(m, Module)
        }
        ignored_params = {id(p) for m in ignored for p in m.parameters()} | {
            id(p) for p in ignored_states or () if not isinstance(p, Module)
        }
        if param_init_fn is not None:
            param_init_fn(module)
        if auto_wrap_policy is not None:
            kwargs = dict(
                process_group=process_group,
                sharding_strategy=strategy,
                cpu_offload=cpu_offload,
                backward_prefetch=backward_prefetch,
                mixed_precision=mixed_precision,
                device_id=device_id,
                sync_module_states=sync_module_states,
                forward_prefetch=forward_prefetch,
                limit_all_gathers=limit_all_gathers,
                use_orig_params=use_orig_params,
                ignored_states=[p for m in ignored for p in m.parameters()] or None,
                device_mesh=device_mesh,
            )
            _recursive_wrap(
                module,
                _policy_fn(auto_wrap_policy),
                lambda m: type(self)(m, **kwargs),
                ignored,
                root=True,
            )
        super().__init__()
        self._fsdp_wrapped_module = module
        self.sharding_strategy = strategy
        self.cpu_offload = cpu_offload
        self.mixed_precision = mixed_precision
        self.backward_prefetch = backward_prefetch
        self.forward_prefetch = forward_prefetch
        self._use_orig_params = use_orig_params
        self._is_root = True
        self._order = None  # the units in the order of the root's first forward
        self._record = None  # the list a root's first forward appends the units to
        self._summoned = None  # the whole parameters inside summon_full_params
        self._sd_settings = StateDictSettings(
            StateDictType.FULL_STATE_DICT, FullStateDictConfig(), FullOptimStateDictConfig()
        )
        for sub in module.modules():
            if isinstance(sub, FullyShardedDataParallel):
                sub._is_root = False
        self._mesh = _mesh_for(strategy, process_group, device_mesh)
        self._shard_parameters(module, ignored, ignored_params, sync_module_states)

    # -- construction -------------------------------------------------------------------------
    def _owned_modules(self, module, ignored):
        """The modules whose parameters this unit manages: module and its descendants, not
        looking inside nested units or ignored modules."""
        out, todo = [], [module]
        while todo:
            m = todo.pop(0)
            if isinstance(m, FullyShardedDataParallel) or m in ignored:
                continue
            out.append(m)
            todo[:0] = [c for c in m._modules.values() if c is not None]
        return out

    def _shard_parameters(self, module, ignored, ignored_params, sync):
        lib = _lib()
        fsdp = _fsdp2()
        mp = self.mixed_precision
        owners = self._owned_modules(module, ignored)
        originals, slots, index = [], [], {}
        for owner in owners:
            for name, p in owner._parameters.items():
                if p is None or id(p) in ignored_params:
                    continue
                if id(p) not in index:
                    index[id(p)] = len(originals)
                    originals.append(p)
                slots.append((owner, name, index[id(p)]))
        names = {id(p): n for n, p in module.named_parameters()}
        for p in originals:
            if p.dim() == 0:  # torch's refusal (its flat parameters are made of 1-d pieces)
                raise ValueError(
                    f"FSDP doesn't support scalar parameters. Change {names.get(id(p), '')} to a "
                    "1D tensor with numel equal to 1."
                )
        self._buffer_dtypes = {}
        with lib.no_grad():
            if sync:
                for p in originals:
                    c10d.broadcast(p.detach(), src=0)
            for owner in owners:
                for name, b in owner._buffers.items():
                    if b is None:
                        continue
                    if sync:
                        c10d.broadcast(b, src=0)
                    if mp is not None and mp.buffer_dtype is not None and b.is_floating_point():
                        self._buffer_dtypes[(id(owner), name)] = b.dtype
                        owner._buffers[name] = b.to(mp.buffer_dtype)
        self._slots = slots  # (owner module, name, index of the parameter)
        self._owned = {}  # id(owner) -> [(name, index)] in registration order
        for owner, name, i in slots:
            self._owned.setdefault(id(owner), []).append((name, i))
        self._owners = owners
        self._shapes = [tuple(p.shape) for p in originals]
        self._requires_grad = [p.requires_grad for p in originals]
        entries = [
            (None, None, _Piece(self, i, p.dtype, p.requires_grad), self._shapes[i])
            for i, p in enumerate(originals)
        ]
        policy = fsdp.MixedPrecisionPolicy(
            param_dtype=mp.param_dtype if mp else None,
            reduce_dtype=mp.reduce_dtype if mp else None,
            cast_forward_inputs=bool(mp and mp.cast_root_forward_inputs),
        )
        group = fsdp._Group(entries, self._mesh, policy)
        reshard = self.sharding_strategy in (
            ShardingStrategy.FULL_SHARD,
            ShardingStrategy.HYBRID_SHARD,
        )
        self._fsdp_state = fsdp._State(group, reshard, policy)
        # this rank's rows of each parameter: where they start and how many
        self._rows = []
        for shape in self._shapes:
            sizes = _chunk_sizes(shape[0], group.n) if shape else [1] * group.n
            self._rows.append((sum(sizes[: group.me]), sizes[group.me]))
        with lib.no_grad():
            pieces = [self._rows_of(i, p.detach()) for i, p in enumerate(originals)]
            if self._use_orig_params or not originals:  # (torch makes no empty flat parameter)
                self._params = [
                    Parameter(piece.clone(), requires_grad=rg)
                    for piece, rg in zip(pieces, self._requires_grad)
                ]
                self.__dict__["_flat"] = None  # not a parameter of the unit itself
            else:
                dtype = originals[0].dtype if originals else lib.float32
                if len({p.dtype for p in originals}) > 1:
                    raise ValueError(
                        "FullyShardedDataParallel: use_orig_params=False needs one dtype for "
                        "the parameters of a unit; got "
                        f"{sorted({str(p.dtype) for p in originals})}"
                    )
                if len(set(self._requires_grad)) > 1:
                    raise ValueError(
                        "FullyShardedDataParallel: use_orig_params=False needs uniform "
                        "requires_grad for the parameters of a unit"
                    )
                flat = lib.zeros(group.flat, dtype=dtype)
                for i, piece in enumerate(pieces):
                    flat.narrow(0, group.offsets[i], piece.numel()).copy_(piece.reshape(-1))
                flat = Parameter(flat, requires_grad=all(self._requires_grad))
                self.__dict__["_flat"] = flat  # registered on the wrapped module (reshard)
                self._params = None
        self.reshard()

    def _rows_of(self, i, full):
        """This rank's rows of a whole tensor shaped like parameter i."""
        start, rows = self._rows[i]
        return full.narrow(0, start, rows)

    def _local(self, i):
        """This rank's piece of parameter i (a view of the flat parameter, or the parameter)."""
        if self._flat is None:
            return self._params[i]
        start, rows = self._rows[i]
        shape = (rows, *self._shapes[i][1:])
        numel = 1
        for s in shape:
            numel *= s
        return self._flat.narrow(0, self._fsdp_state.group.offsets[i], numel).view(shape)

    # -- what the FSDP2 forward hooks call --------------------------------------------------
    def unshard(self):
        group = self._fsdp_state.group
        if group.unsharded is None:
            group.unsharded = _fsdp2()._unshard(group)
        for owner, name, i in self._slots:
            owner._parameters[name] = group.unsharded[i]

    def reshard(self):
        self._fsdp_state.group.unsharded = None
        for owner, name, i in self._slots:
            if self._flat is None:
                owner._parameters[name] = self._params[i]
            else:
                owner._parameters.pop(name, None)
        if self._flat is not None:
            self._fsdp_wrapped_module._parameters[FLAT_PARAM] = self._flat

    @property
    def module(self):
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == FSDP_WRAPPED_MODULE:
                raise
            return getattr(self._fsdp_wrapped_module, name)

    def __getitem__(self, key):
        return self._fsdp_wrapped_module.__getitem__(key)

    def forward(self, *args, **kwargs):
        """forward(*args, **kwargs) -> Any

        Gathers the unit's parameters, runs the wrapped module and frees them again."""
        fsdp = _fsdp2()
        state = self._fsdp_state
        if self._is_root and self._order is None:
            self._record = []
            for u in self.fsdp_modules(self):
                u._record = self._record
        if self._record is not None and self not in self._record:
            self._record.append(self)
        args, kwargs = fsdp._pre_forward(state, self, args, kwargs)
        out = self._fsdp_wrapped_module(*args, **kwargs)
        out = fsdp._post_forward(state, self, args, kwargs, out)
        if self._is_root and self._order is None:
            self._order = self._record
            for u in self.fsdp_modules(self):
                u._record = None
            self._set_prefetch()
        return out

    def _set_prefetch(self):
        """Backward (and with forward_prefetch, forward) starts the all-gather of the unit that
        runs next, in the order of the first forward."""
        order = [u for u in self._order if u._fsdp_state.group.entries]
        for i, u in enumerate(order):
            group = u._fsdp_state.group
            if u.backward_prefetch is not None and u._fsdp_state.reshard_after_forward and i:
                group.backward_prefetch = [order[i - 1]._fsdp_state.group]
            if u.forward_prefetch and i + 1 < len(order):
                group.forward_prefetch = [order[i + 1]._fsdp_state.group]

    # -- names --------------------------------------------------------------------------------
    def named_parameters(self, *args, **kwargs):
        """named_parameters(prefix='', recurse=True, remove_duplicate=True) -> Iterator

        Inside summon_full_params the names lose their `_fsdp_wrapped_module.` parts."""
        clean = any(u._summoned is not None for u in self.fsdp_modules(self))
        for name, p in super().named_parameters(*args, **kwargs):
            yield (name.replace(FSDP_WRAPPED_MODULE + ".", "") if clean else name), p

    def named_buffers(self, *args, **kwargs):
        """named_buffers(prefix='', recurse=True, remove_duplicate=True) -> Iterator

        Inside summon_full_params the names lose their `_fsdp_wrapped_module.` parts."""
        clean = any(u._summoned is not None for u in self.fsdp_modules(self))
        for name, b in super().named_buffers(*args, **kwargs):
            yield (name.replace(FSDP_WRAPPED_MODULE + ".", "") if clean else name), b

    # -- the FSDP1 API --------------------------------------------------------------------------
    @staticmethod
    def fsdp_modules(module, root_only=False):
        """fsdp_modules(module, root_only=False) -> List[FullyShardedDataParallel]

        The FSDP units in module (itself included), in module order; with root_only, only those
        inside no other unit."""
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        if root_only:
            inner = {id(m) for u in units for m in u._fsdp_wrapped_module.modules()}
            units = [u for u in units if id(u) not in inner]
        return units

    @contextlib.contextmanager
    def no_sync(self):
        """no_sync() -> ContextManager

        Backward inside the block accumulates unsharded gradients on each rank without
        communicating; the first backward after it reduces them together with its own."""
        units = self.fsdp_modules(self)
        for u in units:
            u._fsdp_state.group.sync = False
        try:
            yield
        finally:
            for u in units:
                u._fsdp_state.group.sync = True

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """clip_grad_norm_(max_norm, norm_type=2.0) -> Tensor

        Scales the gradients of every parameter in the units so that their norm over all ranks
        (the whole gradients') is at most max_norm; returns that norm (before clipping)."""
        lib = _lib()
        norm_type = float(norm_type)
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        group = self._fsdp_state.group
        if not grads:
            return lib.tensor(0.0)
        dtype = grads[0].dtype
        with lib.no_grad():
            if norm_type == float("inf"):
                local = max(g.detach().abs().max().float() for g in grads).reshape(1)
                op = c10d.ReduceOp.MAX
            else:
                local = sum(g.detach().float().abs().pow(norm_type).sum() for g in grads)
                local = local.reshape(1)
                op = c10d.ReduceOp.SUM
            if group.n > 1:  # the pieces of a shard group; replicas hold the same ones
                c10d.all_reduce(local, op=op, group=group.group)
            total = local[0] if op == c10d.ReduceOp.MAX else local[0].pow(1.0 / norm_type)
            coef = float(max_norm) / (total.item() + 1e-6)
            if coef < 1.0:
                for g in grads:
                    g.mul_(coef)
        return total.to(dtype)

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(
        module,
        recurse=True,
        writeback=True,
        rank0_only=False,
        offload_to_cpu=False,
        with_grads=False,
    ):
        """summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
            offload_to_cpu=False, with_grads=False) -> ContextManager

        Inside the block the units' parameters (every unit in module with recurse, else module
        only) are whole, under their original names; with writeback, changes made to them are
        copied into the shards on exit. with_grads (use_orig_params=True): the parameters'
        .grad are whole as well (the shards' gradients are unchanged on exit). Every rank of
        the group must enter it."""
        if isinstance(module, FullyShardedDataParallel) and not recurse:
            units = [module]
        else:
            units = FullyShardedDataParallel.fsdp_modules(module) if recurse else []
        entered = []
        if with_grads and any(u._flat is not None for u in units):
            raise NotImplementedError(
                f"with_grads=True, use_orig_params=False, offload_to_cpu={offload_to_cpu} is not "
                "supported yet"
            )
        try:
            for u in units:
                u._summon(with_grads)
                entered.append(u)
            yield
        finally:
            for u in reversed(entered):
                u._unsummon(writeback)

    def _summon(self, with_grads=False):
        lib = _lib()
        group = self._fsdp_state.group
        grads = None
        with lib.no_grad():
            dtype = self._flat.dtype if self._flat is not None else None
            pieces = [self._local(i) for i in range(len(self._shapes))]
            fulls = group.gather(pieces, dtype=dtype or pieces[0].dtype) if pieces else []
            # every rank must join the gradients' all-gather, also one that has none yet
            have = lib.tensor([float(any(p.grad is not None for p in pieces))]) if pieces else None
            if with_grads and have is not None:
                c10d.all_reduce(have, op=c10d.ReduceOp.MAX, group=group.group)
                if have.item():
                    g = [p.grad if p.grad is not None else lib.zeros_like(p) for p in pieces]
                    grads = [x.clone() for x in group.gather(g, dtype=g[0].dtype)]
        self._summoned = [
            Parameter(f, requires_grad=rg) for f, rg in zip(fulls, self._requires_grad)
        ]
        if grads is not None:
            for p, g in zip(self._summoned, grads):
                p.grad = g
        if self._flat is not None:
            self._fsdp_wrapped_module._parameters.pop(FLAT_PARAM, None)
        for owner, name, i in self._slots:
            owner._parameters[name] = self._summoned[i]

    def _unsummon(self, writeback):
        if writeback:
            with _lib().no_grad():
                for i, full in enumerate(self._summoned):
                    self._local(i).copy_(self._rows_of(i, full.detach()))
        self._summoned = None
        self.reshard()

    # -- state dicts (fsdp/_fsdp1_state_dict.py) ------------------------------------------------
    @staticmethod
    def set_state_dict_type(
        module, state_dict_type, state_dict_config=None, optim_state_dict_config=None
    ):
        """set_state_dict_type(module, state_dict_type, state_dict_config=None,
            optim_state_dict_config=None) -> StateDictSettings

        Sets what state_dict() and optim_state_dict() of every unit in module return; returns
        the settings before."""
        units = FullyShardedDataParallel.fsdp_modules(module)
        if not units:
            raise ValueError("set_state_dict_type: the module holds no FullyShardedDataParallel")
        sharded = state_dict_type is StateDictType.SHARDED_STATE_DICT
        local = state_dict_type is StateDictType.LOCAL_STATE_DICT
        settings = StateDictSettings(
            state_dict_type,
            state_dict_config
            or (
                ShardedStateDictConfig()
                if sharded
                else LocalStateDictConfig()
                if local
                else FullStateDictConfig()
            ),
            optim_state_dict_config
            or (ShardedOptimStateDictConfig() if sharded else FullOptimStateDictConfig()),
        )
        prev = units[0]._sd_settings
        for u in units:
            u._sd_settings = settings
        return prev

    @staticmethod
    def get_state_dict_type(module):
        """get_state_dict_type(module) -> StateDictSettings"""
        units = FullyShardedDataParallel.fsdp_modules(module)
        if not units:
            raise ValueError("get_state_dict_type: the module holds no FullyShardedDataParallel")
        return units[0]._sd_settings

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(
        module, state_dict_type, state_dict_config=None, optim_state_dict_config=None
    ):
        """state_dict_type(module, state_dict_type, state_dict_config=None,
            optim_state_dict_config=None) -> ContextManager

        Inside the block, state_dict() / load_state_dict() and optim_state_dict() of every unit
        in module use state_dict_type with these configurations."""
        prev = FullyShardedDataParallel.set_state_dict_type(
            module, state_dict_type, state_dict_config, optim_state_dict_config
        )
        try:
            yield
        finally:
            for u in FullyShardedDataParallel.fsdp_modules(module):
                u._sd_settings = prev

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """state_dict(destination=None, prefix='', keep_vars=False) -> Dict[str, Tensor]

        Keys are the wrapped model's own names. FULL_STATE_DICT (the default): whole tensors
        (collective: every rank must call it; with rank0_only, other ranks get {}).
        SHARDED_STATE_DICT: DTensors of this rank's rows, which distributed checkpoint saves."""
        out = _sd.model_state_dict(self)
        if destination is None:
            return {prefix + k: v for k, v in out.items()} if prefix else out
        for k, v in out.items():
            destination[prefix + k] = v
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """load_state_dict(state_dict, strict=True, assign=False) -> _IncompatibleKeys

        Copies this rank's rows of each whole tensor (FULL_STATE_DICT) or the DTensors' pieces
        (SHARDED_STATE_DICT) into the shards."""
        missing, unexpected = _sd.load_model_state_dict(self, state_dict)
        if strict and (missing or unexpected):
            msg = []
            if unexpected:
                msg.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
            if missing:
                msg.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(msg)
            )
        return _IncompatibleKeys(missing, unexpected)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        """optim_state_dict(model, optim, optim_state_dict=None, group=None) -> Dict

        optim's state keyed by the model's parameter names, whole tensors (FULL_STATE_DICT)
        or DTensors of this rank's rows (SHARDED_STATE_DICT), as set by state_dict_type.
        Collective: every rank must call it."""
        return _sd.optim_state_dict(model, optim, optim_state_dict)

    @staticmethod
    def optim_state_dict_to_load(
        model, optim, optim_state_dict, is_named_optimizer=False, load_directly=False, group=None
    ):
        """optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
            load_directly=False, group=None) -> Dict

        The state dict optim.load_state_dict takes, from one optim_state_dict returned (this
        rank's rows of each tensor); with load_directly, loads it into optim as well."""
        out = _sd.optim_state_dict_to_load(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(out)
        return out

    @staticmethod
    def full_optim_state_dict(model, optim, optim_input=None, rank0_only=True, group=None):
        """full_optim_state_dict(model, optim, optim_input=None, rank0_only=True, group=None)
            -> Dict

        optim's state with whole tensors keyed by the model's parameter names (rank0_only:
        other ranks get {}). Collective: every rank must call it."""
        return _extras.full_optim_state_dict(model, optim, rank0_only=rank0_only)

    @staticmethod
    def shard_full_optim_state_dict(full_optim_state_dict, model, optim_input=None, optim=None):
        """shard_full_optim_state_dict(full_optim_state_dict, model, optim_input=None,
            optim=None) -> Dict

        This rank's part of a full optimizer state dict (every rank holds it), ready for
        optim.load_state_dict."""
        return _extras.shard_full_optim_state_dict(full_optim_state_dict, model, optim=optim)

    @staticmethod
    def scatter_full_optim_state_dict(
        full_optim_state_dict, model, optim_input=None, optim=None, group=None
    ):
        """scatter_full_optim_state_dict(full_optim_state_dict, model, optim_input=None,
            optim=None, group=None) -> Dict

        As shard_full_optim_state_dict, from the full dict rank 0 holds (others pass None),
        which is broadcast. Collective: every rank must call it."""
        return _extras.scatter_full_optim_state_dict(
            full_optim_state_dict, model, optim=optim, group=group
        )

    @staticmethod
    def rekey_optim_state_dict(
        optim_state_dict, optim_state_key_type, model, optim_input=None, optim=None
    ):
        """rekey_optim_state_dict(optim_state_dict, optim_state_key_type, model,
            optim_input=None, optim=None) -> Dict

        optim_state_dict keyed by parameter names (OptimStateKeyType.PARAM_NAME) or by the
        parameters' indices in optim, or in model.parameters() without optim (PARAM_ID), to
        move optimizer state between a wrapped and an unwrapped model."""
        return _extras.rekey_optim_state_dict(
            optim_state_dict, optim_state_key_type, model, optim=optim
        )

    def _mesh_placements(self):
        return [Replicate()] * (self._mesh.ndim - 1) + [Shard(0)]

    def _dtensor(self, i, piece):
        """A DTensor of this rank's rows `piece` of parameter i (or of a tensor shaped like it)."""
        shape = self._shapes[i]
        stride = []
        acc = 1
        for s in reversed(shape):
            stride.append(acc)
            acc *= s
        return DTensor.from_local(
            piece,
            self._mesh,
            self._mesh_placements(),
            shape=shape,
            stride=tuple(reversed(stride)),
        )
