"""FSDP1's model and optimizer state dicts: keys are the wrapped model's own names (no
`_fsdp_wrapped_module.` parts, as torch's); values are whole tensors (FULL_STATE_DICT, gathered
with the unit's own all-gather) or DTensors over this rank's rows (SHARDED_STATE_DICT);
LOCAL_STATE_DICT and the full optimizer state dicts are in _fsdp1_extras.py.

Collectives run unit by unit in module order, which every rank shares, so every rank must call
these functions together."""

from .. import distributed_c10d as c10d
from ..tensor._api import DTensor, _lib
from .api import StateDictType


def _units(model):
    from ._fully_sharded_data_parallel import FullyShardedDataParallel

    return FullyShardedDataParallel.fsdp_modules(model)


def _walk(module, prefix, unit):
    """Yields ("param", name, unit, index), ("buffer", name, owner, buffer name) and
    ("plain", name, tensor) for module's state under its clean names, in registration order."""
    from ._fully_sharded_data_parallel import FLAT_PARAM, FullyShardedDataParallel

    if isinstance(module, FullyShardedDataParallel):
        yield from _walk(module._fsdp_wrapped_module, prefix, module)
        return
    owned = unit._owned.get(id(module), []) if unit is not None else []
    managed = {name for name, _ in owned}
    for name, i in owned:
        yield ("param", prefix + name, unit, i)
    for name, p in module._parameters.items():
        if p is not None and name not in managed and name != FLAT_PARAM:
            yield ("plain", prefix + name, p)
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            yield ("buffer", prefix + name, module, name)
    for name, child in module._modules.items():
        if child is not None:
            yield from _walk(child, prefix + name + ".", unit)


def _buffer_value(unit, owner, name):
    b = owner._buffers[name]
    dtype = unit._buffer_dtypes.get((id(owner), name)) if unit is not None else None
    return b.detach().to(dtype) if dtype is not None else b.detach()


def _owner_unit(model, owner):
    for u in _units(model):
        if any(o is owner for o in u._owners):
            return u
    return None


def model_state_dict(model):
    """model.state_dict() under the state-dict type set on it."""
    from ._fully_sharded_data_parallel import FullyShardedDataParallel

    settings = model._sd_settings
    out = {}
    if settings.state_dict_type is StateDictType.LOCAL_STATE_DICT:
        from ._fsdp1_extras import local_state_dict

        return local_state_dict(model)
    if settings.state_dict_type is StateDictType.FULL_STATE_DICT:
        with FullyShardedDataParallel.summon_full_params(model, writeback=False):
            for item in _walk(model, "", None):
                out[item[1]] = _value(model, item, lambda u, i: u._summoned[i].detach().clone())
        if getattr(settings.state_dict_config, "rank0_only", False) and c10d.get_rank() != 0:
            return {}
        return out
    for item in _walk(model, "", None):
        out[item[1]] = _value(model, item, lambda u, i: u._dtensor(i, u._local(i).detach()))
    return out


def _value(model, item, param_value):
    if item[0] == "param":
        return param_value(item[2], item[3])
    if item[0] == "buffer":
        return _buffer_value(_owner_unit(model, item[2]), item[2], item[3])
    return item[2].detach()


def _rows(unit, i, value):
    """This rank's rows of value for parameter i of unit (value whole, or a DTensor)."""
    if isinstance(value, DTensor):
        local = value.to_local()
        if tuple(local.shape) == tuple(unit._local(i).shape) and value.placements[-1].is_shard(0):
            return local
        value = value.full_tensor()
    return unit._rows_of(i, value)


def load_model_state_dict(model, state_dict):
    """Copies state_dict into model's shards and buffers; returns (missing, unexpected)."""
    if model._sd_settings.state_dict_type is StateDictType.LOCAL_STATE_DICT:
        from ._fsdp1_extras import load_local_state_dict

        return load_local_state_dict(model, state_dict)
    lib = _lib()
    expected = list(_walk(model, "", None))
    names = {item[1] for item in expected}
    missing = [item[1] for item in expected if item[1] not in state_dict]
    unexpected = [k for k in state_dict if k not in names]
    with lib.no_grad():
        for item in expected:
            if item[1] not in state_dict:
                continue
            value = state_dict[item[1]]
            if item[0] == "param":
                unit, i = item[2], item[3]
                unit._local(i).copy_(_rows(unit, i, value))
                continue
            if isinstance(value, DTensor):
                value = value.full_tensor()
            target = item[2]._buffers[item[3]] if item[0] == "buffer" else item[2]
            target.copy_(value)
    return missing, unexpected


def _param_owners(model):
    """id(tensor the optimizer holds) -> (unit, [(name, index)]): the flat parameter maps to
    all its unit's parameters, a use_orig_params piece to its own."""
    names = {}
    for item in _walk(model, "", None):
        if item[0] == "param":
            names.setdefault((id(item[2]), item[3]), item[1])
    out = {}
    for u in _units(model):
        slots = [(names[(id(u), i)], i) for i in range(len(u._shapes)) if (id(u), i) in names]
        if u._flat is not None:
            out[id(u._flat)] = (u, slots)
        else:
            for name, i in slots:
                out[id(u._params[i])] = (u, [(name, i)])
    return out


def _piece_of(unit, i, tensor):
    """Parameter i's piece of an optimizer-state tensor (flat, or shaped like the piece)."""
    if unit._flat is None:
        return tensor
    local = unit._local(i)
    return tensor.narrow(0, unit._fsdp_state.group.offsets[i], local.numel()).view(local.shape)


def optim_state_dict(model, optim, osd=None):
    """FSDP.optim_state_dict: optim's state under the model's parameter names."""
    settings = model._sd_settings
    full = settings.state_dict_type is StateDictType.FULL_STATE_DICT
    osd = osd if osd is not None else optim.state_dict()
    owners = _param_owners(model)
    params = [p for g in optim.param_groups for p in g["params"]]
    by_unit = {}  # id(unit) -> {index: state dict of the tensor holding it}
    fqns = []  # the names of each optimizer parameter
    for j, p in enumerate(params):
        unit, slots = owners.get(id(p), (None, []))
        fqns.append([name for name, _ in slots])
        state = osd["state"].get(j)
        if unit is not None and state is not None:
            for _, i in slots:
                by_unit.setdefault(id(unit), {})[i] = state
    out = {}
    lib = _lib()
    for u in _units(model):
        states = by_unit.get(id(u))
        if not states:
            continue
        names = {i: name for (unit, slots) in owners.values() if unit is u for name, i in slots}
        sample = next(iter(states.values()))
        for key in sorted(sample):
            value = sample[key]
            if not (isinstance(value, lib.Tensor) and value.dim() > 0):
                for i in states:
                    out.setdefault(names[i], {})[key] = states[i][key]
                continue
            order = range(len(u._shapes))
            pieces = [
                _piece_of(u, i, states[i][key])
                if i in states
                else u._local(i).new_zeros(u._local(i).shape)
                for i in order
            ]
            if full:
                with lib.no_grad():
                    values = u._fsdp_state.group.gather(pieces, dtype=value.dtype)
                values = [v.clone() for v in values]
            else:
                values = [u._dtensor(i, piece) for i, piece in zip(order, pieces)]
            for i in states:
                out.setdefault(names[i], {})[key] = values[i]
    groups = []
    for g in osd["param_groups"]:
        hyper = {k: v for k, v in g.items() if k != "params"}
        hyper["params"] = [name for j in g["params"] for name in fqns[j]]
        groups.append(hyper)
    cfg = settings.optim_state_dict_config
    if full and getattr(cfg, "rank0_only", False) and c10d.get_rank() != 0:
        return {}
    return {"state": out, "param_groups": groups}


def optim_state_dict_to_load(model, optim, osd, param_groups=None):
    """FSDP.optim_state_dict_to_load: osd (by names) in the form optim.load_state_dict takes.
    param_groups: the optimizer's tensors, a list per group (default optim's)."""
    lib = _lib()
    owners = _param_owners(model)
    state, groups, j = {}, [], 0
    saved = osd["param_groups"]
    if param_groups is None:
        param_groups = [g["params"] for g in optim.param_groups]
    if len(saved) != len(param_groups):
        raise ValueError(
            f"optim_state_dict_to_load: expected {len(param_groups)} param groups; got {len(saved)}"
        )
    with lib.no_grad():
        for params, saved_g in zip(param_groups, saved):
            indices = []
            for p in params:
                unit, slots = owners[id(p)]
                named = [(name, i) for name, i in slots if name in osd["state"]]
                if named:
                    state[j] = _load_state(unit, named, osd["state"], p)
                indices.append(j)
                j += 1
            groups.append(
                {**{k: v for k, v in saved_g.items() if k != "params"}, "params": indices}
            )
    return {"state": state, "param_groups": groups}


def _load_state(unit, named, states, param):
    lib = _lib()
    out = {}
    for key, value in states[named[0][0]].items():
        if not (isinstance(value, lib.Tensor) and value.dim() > 0):
            out[key] = value.clone() if isinstance(value, lib.Tensor) else value
            continue
        if unit._flat is None:
            out[key] = _rows(unit, named[0][1], value).clone()
            continue
        flat = lib.zeros(param.numel(), dtype=value.dtype)
        for name, i in named:
            _piece_of(unit, i, flat).copy_(_rows(unit, i, states[name][key]))
        out[key] = flat
    return out
