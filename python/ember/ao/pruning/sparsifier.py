"""Sparsifiers (torch.ao.pruning): a BaseSparsifier attaches a FakeSparsity parametrization
(weight = mask * weight) to each configured tensor; step() recomputes the masks; squash_mask()
folds them into the weights and removes the parametrizations. WeightNormSparsifier zeroes the
blocks of smallest mean squared (or absolute) weight up to a sparsity level, and within the
others the zeros_per_block smallest entries of each block."""

import abc
import copy
import operator
from collections import defaultdict
from functools import reduce

from ... import nn
from ...autograd.grad_mode import no_grad
from ...nn.utils import parametrize
from .. import _torch as T

__all__ = [
    "BaseSparsifier",
    "WeightNormSparsifier",
    "FakeSparsity",
    "module_to_fqn",
    "fqn_to_module",
    "get_arg_info_from_tensor_fqn",
]

SUPPORTED_MODULES = {nn.Linear}
KEYS_NOT_IN_STATE_DICT = ["module", "module_fqn", "tensor_name"]


class FakeSparsity(nn.Module):
    """FakeSparsity(mask)

    The parametrization a sparsifier attaches: returns mask * x."""

    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)

    def forward(self, x):
        if list(self.mask.shape) != list(x.shape):
            raise AssertionError(f"mask shape ({self.mask.shape}) must match x shape ({x.shape})")
        return self.mask * x

    def state_dict(self, *args, **kwargs):
        # The mask lives in the sparsifier's state, not the model's.
        return {}


def module_to_fqn(model, module, prefix=""):
    """module_to_fqn(model, module, prefix='')

    The qualified name of module inside model, or None."""
    if module is model:
        return ""
    for name, child in model.named_children():
        fqn = module_to_fqn(child, module, ".")
        if isinstance(fqn, str):
            return prefix + name + fqn
    return None


def fqn_to_module(model, path):
    """fqn_to_module(model, path)

    The submodule of model at the qualified name path, or None."""
    if path != "":
        for name in path.split("."):
            model = getattr(model, name, None)
    return model


def get_arg_info_from_tensor_fqn(model, tensor_fqn):
    """get_arg_info_from_tensor_fqn(model, tensor_fqn)

    {'module_fqn', 'module', 'tensor_name', 'tensor_fqn'} for a tensor's qualified name."""
    tensor_name = tensor_fqn.rsplit(".", maxsplit=1)[-1]
    module_fqn = tensor_fqn[: -len(tensor_name) - ("." in tensor_fqn)]
    return {
        "module_fqn": module_fqn,
        "module": fqn_to_module(model, module_fqn),
        "tensor_name": tensor_name,
        "tensor_fqn": tensor_fqn,
    }


class BaseSparsifier(abc.ABC):
    """BaseSparsifier(defaults=None)

    The base of sparsifiers: prepare(model, config) attaches masks, step() updates them through
    update_mask (which subclasses define), squash_mask() makes them permanent."""

    def __init__(self, defaults=None):
        super().__init__()
        self.defaults = defaults or {}
        self.state = defaultdict(dict)
        self.groups = []
        self.enable_mask_update = True

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "groups": self.groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, args in enumerate(self.groups):
            out += f"\n\tGroup {i}\n\t    module: {args['module']}\n"
            for key in sorted(args):
                if key != "module":
                    out += f"\t    {key}: {args[key]}\n"
        return out + ")"

    def state_dict(self):
        """state_dict()

        {'state': per-tensor state (the masks), 'groups': the configs without module
        references}."""
        groups = [
            {k: v for k, v in g.items() if k not in KEYS_NOT_IN_STATE_DICT} for g in self.groups
        ]
        return {"state": self.state, "groups": groups}

    def load_state_dict(self, state_dict, strict=True):
        """load_state_dict(state_dict, strict=True)

        Restores masks and configs saved by state_dict into the prepared model."""
        groups = copy.deepcopy(state_dict["groups"])
        states = state_dict["state"]
        for tensor_fqn, s in states.items():
            info = get_arg_info_from_tensor_fqn(self.model, tensor_fqn)
            module, tensor_name = info["module"], info["tensor_name"]
            if strict and module is None:
                raise RuntimeError(f"Error loading {tensor_fqn} into the model")
            found = None
            if parametrize.is_parametrized(module, tensor_name):
                for p in module.parametrizations[tensor_name]:
                    if isinstance(p, FakeSparsity):
                        found = p
                        break
            if found is None:
                found = FakeSparsity(T.ones(list(getattr(module, tensor_name).shape)))
                parametrize.register_parametrization(module, tensor_name, found)
            if s.get("mask", None) is not None:
                found.mask = s.pop("mask")
            for g in groups:
                if g["tensor_fqn"] == tensor_fqn:
                    g.update(info)
        self.__setstate__({"state": states, "groups": groups})

    def make_config_from_model(self, model, SUPPORTED_MODULES=SUPPORTED_MODULES):
        """make_config_from_model(model, SUPPORTED_MODULES=SUPPORTED_MODULES)

        A config naming the weight of every supported module (Linear) in model."""
        self.config = []
        stack = [model]
        while stack:
            module = stack.pop()
            for _, child in module.named_children():
                if type(child) in SUPPORTED_MODULES:
                    self.config.append({"tensor_fqn": module_to_fqn(model, child) + ".weight"})
                else:
                    stack.append(child)

    def prepare(self, model, config):
        """prepare(model, config)

        Attaches a mask of ones to each tensor the config lists ([{'tensor_fqn': 'fc.weight',
        ...overrides of the defaults}], or None for every Linear's weight)."""
        self.model = model
        self.config = config
        if self.config is None:
            self.make_config_from_model(model)
        for module_config in self.config:
            if not isinstance(module_config, dict):
                raise AssertionError(
                    "config elements should be dicts not modules i.e.:[{`tensor_fqn`: "
                    "`foo.bar.weight`}, {`tensor_fqn`: ... }, ...]"
                )
            local_args = copy.deepcopy(self.defaults)
            local_args.update(module_config)
            tensor_fqn = local_args.get("tensor_fqn", None)
            if tensor_fqn is None:
                raise AssertionError(
                    "tensor_fqn is a required argument in the sparsity config which replaces "
                    "previous `module` and [module]`fqn` arguments"
                )
            info = get_arg_info_from_tensor_fqn(model, tensor_fqn)
            for key in info:
                if key in local_args and not (
                    info[key] == local_args[key]
                    or (key == "tensor_fqn" and "." + info[key] == local_args[key])
                ):
                    raise AssertionError(
                        f"Given both `{key}` and `tensor_fqn` in the config, it is expected "
                        "them to agree!"
                    )
            local_args.update(info)
            self.groups.append(local_args)
        self._prepare()

    def _prepare(self, *args, **kwargs):
        for config in self.groups:
            module = config["module"]
            tensor_name = config["tensor_name"]
            parametrization = config.get("parametrization", FakeSparsity)
            mask = config.get("mask", T.ones_like(getattr(module, tensor_name)).detach())
            self.state[config["tensor_fqn"]]["mask"] = mask
            parametrize.register_parametrization(module, tensor_name, parametrization(mask))

    def squash_mask(self, params_to_keep=None, params_to_keep_per_layer=None, *args, **kwargs):
        """squash_mask(params_to_keep=None, params_to_keep_per_layer=None, *args, **kwargs)

        Folds the masks into the weights and removes the parametrizations; the named config
        entries are kept on each module as module.sparse_params."""
        for config in self.groups:
            module = config["module"]
            tensor_name = config["tensor_name"]
            parametrize.remove_parametrizations(module, tensor_name, leave_parametrized=True)
            sparse_params = {}
            if params_to_keep is not None:
                sparse_params.update({k: config[k] for k in params_to_keep})
            if params_to_keep_per_layer is not None:
                keys = params_to_keep_per_layer.get(config["module_fqn"], None)
                if keys is not None:
                    sparse_params.update({k: config[k] for k in keys})
            if sparse_params:
                module.sparse_params = sparse_params

    def convert(self, module, mapping=None, inplace=False, parameterization=FakeSparsity):
        """convert(module, mapping=None, inplace=False, parameterization=FakeSparsity)

        Swaps sparsified modules for mapping[type].from_dense(module)."""
        if mapping is None:
            raise NotImplementedError("Need to auto generate mapping ")
        if not inplace:
            module = copy.deepcopy(module)
        reassign = {}
        for name, mod in module.named_children():
            has = parametrize.is_parametrized(mod) and any(
                isinstance(p, parameterization)
                for plist in mod.parametrizations.values()
                for p in plist
            )
            if has and parametrize.type_before_parametrizations(mod) in mapping:
                reassign[name] = mapping[parametrize.type_before_parametrizations(mod)].from_dense(
                    mod
                )
            else:
                reassign[name] = self.convert(mod, mapping, True, parameterization)
        for key, value in reassign.items():
            module._modules[key] = value
        return module

    def step(self, use_path=True):
        """step(use_path=True)

        Recomputes every mask (update_mask) unless mask updates are disabled."""
        if not self.enable_mask_update:
            return
        with no_grad():
            for config in self.groups:
                self.update_mask(**config)

    @abc.abstractmethod
    def update_mask(self, module, tensor_name, **kwargs):
        """update_mask(module, tensor_name, **kwargs)

        Recomputes the mask of module.tensor_name."""


def _blocks(data, block_shape, pad_value):
    """data (h, w) padded with pad_value to whole blocks, as (num_blocks, values_per_block) in
    row-major block order, plus the padded size."""
    h, w = data.shape[-2:]
    bh, bw = block_shape
    dh = (bh - h % bh) % bh
    dw = (bw - w % bw) % bw
    padded = T.full([h + dh, w + dw], pad_value, dtype=data.dtype)
    padded[:h, :w] = data
    nbh, nbw = (h + dh) // bh, (w + dw) // bw
    blocks = padded.reshape(nbh, bh, nbw, bw).permute(0, 2, 1, 3).reshape(nbh * nbw, bh * bw)
    return blocks, (nbh, nbw)


def _unblocks(blocks, grid, block_shape):
    nbh, nbw = grid
    bh, bw = block_shape
    return blocks.reshape(nbh, nbw, bh, bw).permute(0, 2, 1, 3).reshape(nbh * bh, nbw * bw)


class WeightNormSparsifier(BaseSparsifier):
    """WeightNormSparsifier(sparsity_level=0.5, sparse_block_shape=(1, 4), zeros_per_block=None,
        norm=None)

    Zeroes the fraction sparsity_level of blocks (sparse_block_shape) with the smallest mean
    norm (norm=2: squares, 1: absolute values, or a callable), and in every block the
    zeros_per_block smallest entries (all of them by default)."""

    def __init__(
        self, sparsity_level=0.5, sparse_block_shape=(1, 4), zeros_per_block=None, norm=None
    ):
        if zeros_per_block is None:
            zeros_per_block = reduce(operator.mul, sparse_block_shape)
        defaults = {
            "sparsity_level": sparsity_level,
            "sparse_block_shape": sparse_block_shape,
            "zeros_per_block": zeros_per_block,
        }
        if norm is None:
            norm = 2
        if callable(norm):
            self.norm_fn = norm
        elif norm == 1:
            self.norm_fn = lambda t: t.abs()
        elif norm == 2:
            self.norm_fn = lambda t: t * t
        else:
            raise NotImplementedError(f"L-{norm} is not yet implemented.")
        super().__init__(defaults=defaults)

    def _make_tensor_mask(self, data, sparsity_level, sparse_block_shape):
        h, w = data.shape[-2:]
        if sparsity_level >= 1.0:
            return T.zeros([h, w])
        if sparsity_level <= 0.0:
            return T.ones([h, w])
        # avg_pool2d with ceil_mode: partial edge blocks average only their real entries.
        blocks, grid = _blocks(data, sparse_block_shape, float("nan"))
        valid = ~T.isnan(blocks)
        means = T.where(valid, blocks, T.zeros_like(blocks)).sum(1) / valid.sum(1)
        num_blocks = means.numel()
        k = max(0, min(num_blocks - 1, round(sparsity_level * num_blocks)))
        keep = T.ones([num_blocks])
        if k > 0:
            idx = T.topk(means, k, largest=False).indices
            keep[idx] = 0
        per_value = keep.reshape(-1, 1).expand(num_blocks, blocks.shape[1])
        return _unblocks(per_value, grid, sparse_block_shape)[:h, :w].contiguous()

    def _make_block_mask(self, data, sparse_block_shape, zeros_per_block):
        values_per_block = reduce(operator.mul, sparse_block_shape)
        blocks, grid = _blocks(data, sparse_block_shape, float("inf"))
        if values_per_block == zeros_per_block:
            return T.zeros(list(_unblocks(blocks, grid, sparse_block_shape).shape))
        mask = T.ones(list(blocks.shape))
        idx = T.topk(blocks, zeros_per_block, dim=1, largest=False).indices
        mask = mask.scatter(1, idx, 0.0)
        return _unblocks(mask, grid, sparse_block_shape)

    def update_mask(
        self, module, tensor_name, sparsity_level, sparse_block_shape, zeros_per_block, **kwargs
    ):
        """update_mask(module, tensor_name, sparsity_level, sparse_block_shape, zeros_per_block,
            **kwargs)

        Recomputes module.tensor_name's mask from its current (masked) weight."""
        values_per_block = reduce(operator.mul, sparse_block_shape)
        if zeros_per_block > values_per_block:
            raise ValueError(
                "Number of zeros per block cannot be more than the total number of elements in "
                "that block."
            )
        if zeros_per_block < 0:
            raise ValueError("Number of zeros per block should be positive.")
        mask = getattr(module.parametrizations, tensor_name)[0].mask
        if sparsity_level <= 0 or zeros_per_block == 0:
            new = T.ones_like(mask)
        elif sparsity_level >= 1.0 and zeros_per_block == values_per_block:
            new = T.zeros_like(mask)
        else:
            ww = self.norm_fn(getattr(module, tensor_name)).detach()
            new = self._make_tensor_mask(ww, sparsity_level, sparse_block_shape)
            if values_per_block != zeros_per_block:
                block = self._make_block_mask(ww, sparse_block_shape, zeros_per_block)
                new = T.logical_or(new, block)
        mask.copy_(new.to(mask.dtype))
