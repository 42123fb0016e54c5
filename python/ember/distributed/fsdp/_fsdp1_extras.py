"""FSDP1's LOCAL_STATE_DICT and its full-optimizer-state-dict functions
(FullyShardedDataParallel.full_optim_state_dict, shard_full_optim_state_dict,
scatter_full_optim_state_dict, rekey_optim_state_dict).

LOCAL_STATE_DICT: one `<unit prefix>_flat_param` entry per unit that manages parameters (the
wrapped model's names, as torch's), plus the buffers and unmanaged parameters under their own
names. torch's value is a ShardedTensor over its flat parameter; ember has no ShardedTensor, so
the value is the closest ember type, a DTensor sharded on dim 0 whose local tensor is this rank's
flat buffer in ember's layout (each parameter's row piece padded to the largest piece, see
_fully_sharded_data_parallel.py), so every rank holds the same number of elements. The layout is
ember's, not torch's: a local state dict loads back into the same model on the same number of
ranks, as torch's does."""

import contextlib

from .. import distributed_c10d as c10d
from ..tensor._api import DTensor, _lib
from . import _fsdp1_state_dict as _sd
from .api import (
    FullOptimStateDictConfig,
    FullStateDictConfig,
    OptimStateKeyType,
    StateDictSettings,
    StateDictType,
)


def _fsdp():
    from . import _fully_sharded_data_parallel as f

    return f


def _unit_prefixes(model):
    """[(clean prefix, unit)] for the units of model that manage parameters, in module order."""
    f = _fsdp()
    out = []
    for name, m in model.named_modules():
        if isinstance(m, f.FullyShardedDataParallel) and m._fsdp_state.group.entries:
            clean = ".".join(x for x in name.split(".") if x and x != f.FSDP_WRAPPED_MODULE)
            out.append((clean + "." if clean else "", m))
    return out


def _flat_local(unit):
    """This rank's flat buffer of unit (its flat parameter, or its pieces laid out as one)."""
    if unit._flat is not None:
        return unit._flat.detach()
    lib = _lib()
    group = unit._fsdp_state.group
    pieces = [unit._local(i).detach() for i in range(len(unit._shapes))]
    if len({p.dtype for p in pieces}) > 1:
        raise ValueError(
            "FullyShardedDataParallel: LOCAL_STATE_DICT needs one dtype for the parameters of a "
            f"unit; got {sorted({str(p.dtype) for p in pieces})}"
        )
    flat = lib.zeros(group.flat, dtype=pieces[0].dtype)
    for piece, off in zip(pieces, group.offsets):
        flat.narrow(0, off, piece.numel()).copy_(piece.reshape(-1))
    return flat


def local_state_dict(model):
    """model.state_dict() under LOCAL_STATE_DICT (see the module docstring)."""
    f = _fsdp()
    out = {}
    for prefix, u in _unit_prefixes(model):
        local = _flat_local(u)
        n = u._fsdp_state.group.n
        out[prefix + f.FLAT_PARAM] = DTensor.from_local(
            local, u._mesh, u._mesh_placements(), shape=(n * local.numel(),), stride=(1,)
        )
    for item in _sd._walk(model, "", None):
        if item[0] != "param":
            out[item[1]] = _sd._value(model, item, None)
    return out


def load_local_state_dict(model, state_dict):
    """Copies a LOCAL_STATE_DICT into model; returns (missing, unexpected)."""
    f = _fsdp()
    lib = _lib()
    flats = {prefix + f.FLAT_PARAM: u for prefix, u in _unit_prefixes(model)}
    others = [item for item in _sd._walk(model, "", None) if item[0] != "param"]
    names = set(flats) | {item[1] for item in others}
    missing = [k for k in list(flats) + [item[1] for item in others] if k not in state_dict]
    unexpected = [k for k in state_dict if k not in names]
    with lib.no_grad():
        for key, u in flats.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            local = value.to_local() if isinstance(value, DTensor) else value
            group = u._fsdp_state.group
            if local.numel() != group.flat:
                raise RuntimeError(
                    f"load_state_dict: expected {key} to hold {group.flat} elements on this rank "
                    f"(LOCAL_STATE_DICT of the same model on the same ranks); got {local.numel()}"
                )
            local = local.reshape(-1)
            if u._flat is not None:
                u._flat.copy_(local)
                continue
            for i, off in enumerate(group.offsets):
                piece = u._local(i)
                piece.copy_(local.narrow(0, off, piece.numel()).view(piece.shape))
    sub = {item[1]: state_dict[item[1]] for item in others if item[1] in state_dict}
    with _settings(
        model, model._sd_settings._replace(state_dict_type=StateDictType.FULL_STATE_DICT)
    ):
        _sd.load_model_state_dict(model, sub)
    return missing, unexpected


@contextlib.contextmanager
def _settings(model, settings):
    """Every unit of model uses settings inside the block."""
    units = _fsdp().FullyShardedDataParallel.fsdp_modules(model)
    before = [u._sd_settings for u in units]
    for u in units:
        u._sd_settings = settings
    try:
        yield
    finally:
        for u, s in zip(units, before):
            u._sd_settings = s


def full_optim_state_dict(model, optim, rank0_only=True):
    """FSDP.full_optim_state_dict: whole tensors keyed by parameter names."""
    settings = StateDictSettings(
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(),
        FullOptimStateDictConfig(rank0_only=rank0_only),
    )
    with _settings(model, settings):
        return _sd.optim_state_dict(model, optim)


def _tensors_by_name(model):
    """name -> the tensor an optimizer holds for it (a flat parameter, or the piece)."""
    tensors = {id(p): p for p in model.parameters()}
    return {
        name: tensors[tid]
        for tid, (_, slots) in _sd._param_owners(model).items()
        if tid in tensors
        for name, _ in slots
    }


def shard_full_optim_state_dict(full, model, optim=None):
    """FSDP.shard_full_optim_state_dict: this rank's part of a full optimizer state dict, in
    the form optim.load_state_dict takes (the groups follow full's names without optim)."""
    if optim is not None:
        return _sd.optim_state_dict_to_load(model, optim, full)
    by_name = _tensors_by_name(model)
    groups = []
    for g in full["param_groups"]:
        seen, params = set(), []
        for name in g["params"]:
            t = by_name.get(name)
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                params.append(t)
        groups.append(params)
    return _sd.optim_state_dict_to_load(model, None, full, param_groups=groups)


def scatter_full_optim_state_dict(full, model, optim=None, group=None):
    """FSDP.scatter_full_optim_state_dict: rank 0's full dict sent to every rank, sharded."""
    obj = [full if c10d.get_rank() == 0 else None]
    c10d.broadcast_object_list(obj, src=0, group=group)
    if obj[0] is None:
        raise ValueError("scatter_full_optim_state_dict: rank 0 passed no full_optim_state_dict")
    return shard_full_optim_state_dict(obj[0], model, optim=optim)


def _names(model):
    """id(parameter) -> its names (several for a flat parameter)."""
    f = _fsdp()
    out = {}
    for name, p in model.named_parameters():
        clean = ".".join(x for x in name.split(".") if x != f.FSDP_WRAPPED_MODULE)
        out.setdefault(id(p), [clean])
    for tid, (_, slots) in _sd._param_owners(model).items():
        out[tid] = [name for name, _ in slots]
    return out


def rekey_optim_state_dict(osd, key_type, model, optim=None):
    """FSDP.rekey_optim_state_dict: osd keyed by parameter names (PARAM_NAME) or by the
    parameters' indices in optim (or model.parameters()) (PARAM_ID)."""
    params = (
        [p for g in optim.param_groups for p in g["params"]]
        if optim is not None
        else list(model.parameters())
    )
    names = _names(model)
    fqns = [names.get(id(p), []) for p in params]
    if key_type is OptimStateKeyType.PARAM_ID:
        index = {name: j for j, fs in enumerate(fqns) for name in fs}

        def convert(k):
            if not isinstance(k, str):
                return k
            if k not in index:
                raise KeyError(f"rekey_optim_state_dict: no parameter named {k!r} in the model")
            return index[k]
    elif key_type is OptimStateKeyType.PARAM_NAME:

        def convert(k):
            if isinstance(k, str):
                return k
            if len(fqns[k]) != 1:
                raise ValueError(
                    f"rekey_optim_state_dict: parameter {k} holds {len(fqns[k])} parameters "
                    "(a flat parameter); use the model with use_orig_params=True or unwrapped"
                )
            return fqns[k][0]
    else:
        raise ValueError(f"rekey_optim_state_dict: expected an OptimStateKeyType; got {key_type}")
    groups = []
    for g in osd["param_groups"]:
        keys = []
        for k in g["params"]:
            c = convert(k)
            if c not in keys:
                keys.append(c)
        groups.append({**g, "params": keys})
    return {"state": {convert(k): v for k, v in osd["state"].items()}, "param_groups": groups}
