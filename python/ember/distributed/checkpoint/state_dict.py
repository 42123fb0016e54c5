"""ember.distributed.checkpoint.state_dict: one way to get and set the state of a model and its
optimizers whatever wraps or shards them (torch.distributed.checkpoint.state_dict).

Keys are FQNs as the user wrote the model: DDP's `module.` and torch.compile's `_orig_mod.`
are dropped, and optimizer state is keyed by parameter FQN instead of by index. With
full_state_dict=True, DTensors (FSDP2, tensor parallel) are gathered into whole tensors; setting
accepts whole tensors or DTensors of any placement for any parameter and keeps each rank's piece.
"""

import contextlib
from dataclasses import dataclass

from .. import distributed_c10d as c10d
from ..tensor._api import DTensor, _lib
from ._api import _box, _dtensor_optim_state

__all__ = [
    "StateDictOptions",
    "get_model_state_dict",
    "get_optimizer_state_dict",
    "get_state_dict",
    "set_model_state_dict",
    "set_optimizer_state_dict",
    "set_state_dict",
]

# the child a wrapper module forwards to: its name is not part of the FQN
_WRAPPED = ("module", "_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module")


@dataclass
class StateDictOptions:
    """StateDictOptions(full_state_dict=False, cpu_offload=False, ignore_frozen_params=False,
        keep_submodule_prefixes=True, strict=True, broadcast_from_rank0=False,
        flatten_optimizer_state_dict=False, dsd_fqn_modifiers='_fqn_modifiers')

    How the state_dict functions get and set state: whole tensors (gathered DTensors) or
    pieces, only on rank 0 (cpu_offload with full_state_dict), without frozen parameters, the
    strictness of loading, a full state dict present on rank 0 only, and a flat optimizer
    state dict."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _options(options):
    opts = options or StateDictOptions()
    if opts.broadcast_from_rank0 and not opts.full_state_dict:
        raise ValueError("full_state_dict must be True when broadcast_from_rank0 is True.")
    return opts


def _is_wrapper(mod, name):
    from ...nn.parallel import DistributedDataParallel

    if name == "module":
        return isinstance(mod, DistributedDataParallel)
    if name == "_orig_mod":
        return type(mod).__name__ == "OptimizedModule"
    return name in _WRAPPED


def _fqn(model, key):
    """key (a state_dict key of model) without the names of wrapper modules."""
    out, mod = [], model
    for part in key.split("."):
        child = mod._modules.get(part) if mod is not None else None
        if child is not None and _is_wrapper(mod, part):
            mod = child
            continue
        out.append(part)
        mod = child
    return ".".join(out)


def _fsdp1(model):
    """Whether model holds FSDP1 units (FullyShardedDataParallel): their state_dict() and
    FSDP.optim_state_dict() already name tensors by FQN; these helpers read them as DTensors."""
    from ..fsdp import FullyShardedDataParallel

    return bool(FullyShardedDataParallel.fsdp_modules(model))


def _fsdp1_sharded(model):
    """Inside it, model's FSDP1 units give SHARDED_STATE_DICT (DTensors); else nothing."""
    from ..fsdp import FullyShardedDataParallel, StateDictType

    if not _fsdp1(model):
        return contextlib.nullcontext()
    return FullyShardedDataParallel.state_dict_type(model, StateDictType.SHARDED_STATE_DICT)


def _rank():
    return c10d.get_rank() if c10d.is_available() and c10d.is_initialized() else 0


def _full(v):
    return v.full_tensor() if isinstance(v, DTensor) else v


def _submodule_filter(model, submodules, opts, sd):
    if not submodules:
        return sd
    prefixes = []
    names = {id(m): _fqn(model, n) for n, m in model.named_modules()}
    for m in submodules:
        prefixes.append(names[id(m)] + ".")
    out = {}
    for k, v in sd.items():
        for p in prefixes:
            if k.startswith(p):
                out[k if opts.keep_submodule_prefixes else k[len(p) :]] = v
                break
    return out


def get_model_state_dict(model, *, submodules=None, options=None):
    """get_model_state_dict(model, *, submodules=None, options=None) -> Dict[str, ValueType]

    The model's state dict keyed by FQN (no `module.` of DDP nor `_orig_mod.` of compile); with
    options.full_state_dict, DTensors are gathered into whole tensors (and with cpu_offload too
    only rank 0 keeps them: the other ranks get an empty dict)."""
    opts = _options(options)
    frozen = set()
    if opts.ignore_frozen_params:
        frozen = {_fqn(model, n) for n, p in model.named_parameters() if not p.requires_grad}
    sd = {}
    with _fsdp1_sharded(model):
        items = model.state_dict().items()
    for k, v in items:
        fqn = _fqn(model, k)
        if fqn not in frozen:
            sd[fqn] = v
    sd = _submodule_filter(model, submodules, opts, sd)
    if opts.full_state_dict:
        sd = {k: _full(v) for k, v in sd.items()}
        if opts.cpu_offload and _rank() != 0:
            return {}
    return sd


def _broadcast(value):
    """value (rank 0's; any nested dict/list of tensors and plain values) on every rank: the
    structure as an object, each tensor with a broadcast."""
    lib = _lib()
    if not (c10d.is_available() and c10d.is_initialized()) or c10d.get_world_size() == 1:
        return value
    tensors = []

    def strip(v):
        if isinstance(v, lib.Tensor):
            v = _full(v).detach().contiguous()
            tensors.append(v)
            return ("__tensor__", len(tensors) - 1, repr(v.dtype).split(".")[1], list(v.shape))
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(strip(x) for x in v)
        return v

    box = [strip(value) if c10d.get_rank() == 0 else None]
    c10d.broadcast_object_list(box, src=0)

    def fill(v):
        if isinstance(v, tuple) and len(v) == 4 and v[0] == "__tensor__":
            if c10d.get_rank() == 0:
                t = tensors[v[1]]
            else:
                t = lib.empty(v[3], dtype=getattr(lib, v[2]))
            c10d.broadcast(t, src=0)
            return t
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(fill(x) for x in v)
        return v

    return fill(box[0])


def _assign(target, value, key):
    """Copies value (a whole tensor or a DTensor of any placement) into target (a tensor or a
    DTensor: only its piece), in place."""
    if tuple(value.shape) != tuple(target.shape):
        raise RuntimeError(
            f"size mismatch for {key}: copying a param with shape {value.shape} from "
            f"checkpoint, the shape in current model is {target.shape}."
        )
    if isinstance(target, DTensor):
        if (
            isinstance(value, DTensor)
            and value.device_mesh == target.device_mesh
            and value.placements == target.placements
        ):
            target._local_tensor.copy_(value._local_tensor)
            return
        value = _full(value)
        offsets, sizes, _ = _box(target)
        piece = value
        for d, (o, s) in enumerate(zip(offsets, sizes)):
            piece = piece.narrow(d, o, s)
        target._local_tensor.copy_(piece)
    else:
        target.copy_(_full(value))


def set_model_state_dict(model, model_state_dict, *, options=None):
    """set_model_state_dict(model, model_state_dict, *, options=None) -> _IncompatibleKeys

    Loads a state dict keyed by FQN (as get_model_state_dict gives) into model in place: whole
    tensors or DTensors, for plain, DDP, compiled or fully_shard'ed models (each rank keeps its
    piece). With options.broadcast_from_rank0, the full state dict is read from rank 0 only."""
    from ...nn.modules.module import _IncompatibleKeys

    opts = _options(options)
    if opts.broadcast_from_rank0:
        model_state_dict = _broadcast(model_state_dict if _rank() == 0 else None)
    with _fsdp1_sharded(model):  # FSDP1: DTensors over the units' shards, filled in place
        targets = {_fqn(model, k): v for k, v in model.state_dict(keep_vars=True).items()}
    frozen = set()
    if opts.ignore_frozen_params:
        frozen = {_fqn(model, n) for n, p in model.named_parameters() if not p.requires_grad}
    missing = [k for k in targets if k not in model_state_dict and k not in frozen]
    unexpected = [k for k in model_state_dict if k not in targets]
    if opts.strict and (missing or unexpected):
        msgs = []
        if unexpected:
            msgs.append(
                "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". "
            )
        if missing:
            msgs.append(
                "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
            )
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(model).__name__}:\n\t" + "\n\t".join(msgs)
        )
    with _lib().no_grad():
        for k, target in targets.items():
            if k in model_state_dict and target is not None:
                _assign(target, model_state_dict[k], k)
    return _IncompatibleKeys(missing, unexpected)


def _optims(optimizers):
    return list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]


def _param_fqns(model):
    out = {}
    for name, p in model.named_parameters():
        out.setdefault(id(p), _fqn(model, name))
    return out


def _init_state(optim):
    """Gives a fresh optimizer its state (a step with zero gradients at lr 0), so that a state
    dict of it has every key to load into."""
    if optim.state:
        return
    lib = _lib()
    made = []
    for g in optim.param_groups:
        for p in g["params"]:
            if p.requires_grad and p.grad is None:
                local = p._local_tensor if isinstance(p, DTensor) else p
                p.grad = lib.zeros_like(local.detach())
                made.append(p)
    lrs = [g["lr"] for g in optim.param_groups]
    for g in optim.param_groups:
        g["lr"] = 0.0
    try:
        optim.step()
    finally:
        for g, lr in zip(optim.param_groups, lrs):
            g["lr"] = lr
        for p in made:
            p.grad = None


def _flatten_optim(osd):
    out = {}
    for fqn, st in osd["state"].items():
        for k, v in st.items():
            out[f"state.{fqn}.{k}"] = v
    for g in osd["param_groups"]:
        for fqn in g["params"]:
            for k, v in g.items():
                if k != "params":
                    out[f"param_groups.{fqn}.{k}"] = v
    return out


def _unflatten_optim(flat, model, optims):
    fqns = _param_fqns(model)
    state, groups = {}, []
    for optim in optims:
        for g in optim.param_groups:
            names = [fqns[id(p)] for p in g["params"]]
            group = {"params": names}
            for fqn in names:
                prefix = f"state.{fqn}."
                st = {k[len(prefix) :]: v for k, v in flat.items() if k.startswith(prefix)}
                if st:
                    state[fqn] = st
                gp = f"param_groups.{fqn}."
                for k, v in flat.items():
                    if k.startswith(gp):
                        group[k[len(gp) :]] = v
            groups.append(group)
    return {"state": state, "param_groups": groups}


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None)
        -> OptimizerStateType

    The optimizers' state dict with parameters named by FQN: {"state": {fqn: {...}},
    "param_groups": [{..., "params": [fqn, ...]}]} (a fresh optimizer's state is initialized
    first, as torch does); full_state_dict gathers DTensor states, cpu_offload with it leaves
    the other ranks empty, flatten_optimizer_state_dict gives flat "state.<fqn>.<key>" and
    "param_groups.<fqn>.<key>" keys."""
    opts = _options(options)
    fqns = _param_fqns(model)
    state, groups = {}, []
    for optim in _optims(optimizers):
        _init_state(optim)
        if _fsdp1(model):  # FSDP1 names its flat parameters' states itself
            from ..fsdp import FullyShardedDataParallel

            with _fsdp1_sharded(model):
                osd = FullyShardedDataParallel.optim_state_dict(model, optim)
            state.update(osd["state"])
            groups.extend(osd["param_groups"])
            continue
        osd = _dtensor_optim_state(optim, optim.state_dict())
        index = {}
        for g_sd, g in zip(osd["param_groups"], optim.param_groups):
            names = [fqns[id(p)] for p in g["params"]]
            index.update(zip(g_sd["params"], names))
            groups.append({**{k: v for k, v in g_sd.items() if k != "params"}, "params": names})
        for idx, st in osd["state"].items():
            state[index[idx]] = dict(st)
    if opts.full_state_dict:
        state = {k: {n: _full(v) for n, v in st.items()} for k, st in state.items()}
        if opts.cpu_offload and _rank() != 0:
            return {}
    out = {"state": state, "param_groups": groups}
    return _flatten_optim(out) if opts.flatten_optimizer_state_dict else out


def _fit(value, current):
    """A loaded optimizer state value laid out like the optimizer's current one."""
    lib = _lib()
    if not isinstance(value, lib.Tensor) or not isinstance(current, lib.Tensor):
        return value
    if isinstance(current, DTensor):
        if isinstance(value, DTensor) and value.placements == current.placements:
            return value
        value = _full(value)
        offsets, sizes, _ = _box(current)
        for d, (o, s) in enumerate(zip(offsets, sizes)):
            value = value.narrow(d, o, s)
        local = value.to(current.dtype).clone()
        return DTensor._make(local, current.device_mesh, current.placements, current.shape)
    return _full(value).clone()


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None) -> None

    Loads an optimizer state dict keyed by FQN (nested or flattened; whole tensors or DTensors)
    into the optimizers, each parameter's state laid out like the parameter."""
    opts = _options(options)
    optims = _optims(optimizers)
    if opts.broadcast_from_rank0:
        optim_state_dict = _broadcast(optim_state_dict if _rank() == 0 else None)
    if "state" not in optim_state_dict and "param_groups" not in optim_state_dict:
        optim_state_dict = _unflatten_optim(optim_state_dict, model, optims)
    if _fsdp1(model):  # one optimizer over the FSDP1 model, as FSDP.optim_state_dict_to_load
        from ..fsdp import FullyShardedDataParallel

        for optim in optims:
            optim.load_state_dict(
                FullyShardedDataParallel.optim_state_dict_to_load(model, optim, optim_state_dict)
            )
        return
    fqns = _param_fqns(model)
    given_groups = {}
    for g in optim_state_dict["param_groups"]:
        for fqn in g["params"]:
            given_groups[fqn] = g
    for optim in optims:
        _init_state(optim)
        cur = _dtensor_optim_state(optim, optim.state_dict())
        new_state, new_groups = {}, []
        for g_sd, g in zip(cur["param_groups"], optim.param_groups):
            names = [fqns[id(p)] for p in g["params"]]
            src = next((given_groups[n] for n in names if n in given_groups), None)
            group = dict(g_sd)
            if src is not None:
                group.update({k: v for k, v in src.items() if k != "params"})
            new_groups.append(group)
            for idx, fqn in zip(g_sd["params"], names):
                st = optim_state_dict["state"].get(fqn)
                if st is None:
                    continue
                now = cur["state"].get(idx, {})
                new_state[idx] = {k: _fit(v, now.get(k)) for k, v in st.items()}
        optim.load_state_dict({"state": new_state, "param_groups": new_groups})


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """get_state_dict(model, optimizers, *, submodules=None, options=None)
        -> Tuple[Dict[str, ValueType], OptimizerStateType]

    get_model_state_dict and get_optimizer_state_dict together."""
    return (
        get_model_state_dict(model, submodules=submodules, options=options),
        get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options),
    )


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None)
        -> _IncompatibleKeys

    set_model_state_dict and set_optimizer_state_dict together."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    if optim_state_dict or (options is not None and options.broadcast_from_rank0):
        set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
