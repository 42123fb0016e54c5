"""Pruning (torch.nn.utils.prune): a pruned parameter `name` becomes the parameter
`name + '_orig'` and the buffer `name + '_mask'`, and `name` itself is recomputed as
`mask * orig` by a forward pre-hook (the pruning method object) before every forward. Pruning
the same parameter again combines the methods in a PruningContainer: each new method only
chooses among the entries the earlier masks kept. `remove` makes the pruning permanent."""

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import _C
from ..._ops.creation import ones_like, zeros, zeros_like
from ..._ops.random import rand, rand_like
from ..._ops.sort import kthvalue, topk
from ...autograd.grad_mode import no_grad
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


class BasePruningMethod(ABC):
    """BasePruningMethod()

    The base of pruning methods: subclasses define compute_mask(t, default_mask) and
    PRUNING_TYPE ('unstructured', 'structured' or 'global'). An instance is the forward pre-hook
    that recomputes the pruned tensor from its _orig and _mask."""

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        The mask for tensor t, given the mask already in force (default_mask)."""

    def apply_mask(self, module):
        """apply_mask(module)

        The pruned tensor: the module's mask times its original parameter."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """apply(module, name, *args, importance_scores=None, **kwargs)

        Prunes module.name with this method (combined with earlier pruning of the same tensor)
        and installs the reparametrization and the forward pre-hook."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None and list(importance_scores.shape) != list(orig.shape):
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of {module}"
            )
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with no_grad():
                scores = importance_scores if importance_scores is not None else orig
                mask = method.compute_mask(scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """prune(t, default_mask=None, importance_scores=None)

        t times the mask this method computes for it (from importance_scores if given)."""
        if importance_scores is not None and list(importance_scores.shape) != list(t.shape):
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(scores, default_mask=mask)

    def remove(self, module):
        """remove(module)

        Makes the pruning permanent: name becomes a parameter again holding mask * orig, and
        name_orig and name_mask are deleted."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        with no_grad():
            orig.copy_(weight.detach())
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    old_method = None
    found = [
        k
        for k, hook in module._forward_pre_hooks.items()
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
    ]
    if len(found) > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
            "Use a PruningContainer."
        )
    for k in found:
        old_method = module._forward_pre_hooks.pop(k)
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old_method is not None:
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        else:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
    return method


class PruningContainer(BasePruningMethod):
    """PruningContainer(*args)

    The sequence of pruning methods applied to one tensor; its mask is the last method's
    applied to what the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1 and isinstance(args[0], Iterable):
            for method in args[0]:
                self.add_pruning_method(method)
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """add_pruning_method(method)

        Appends a pruning method (of the same tensor) to the container."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        The newest method's mask computed on the entries (or channels) default_mask keeps,
        written into a copy of default_mask."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.clone().to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            keep = default_mask == 1
            partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
            new_mask[keep] = partial.to(dtype=new_mask.dtype)
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    "Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim`"
                    " defined."
                )
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor of size {n_dims}")
            others = [d for d in range(n_dims) if d != dim]
            keep_channel = default_mask.sum(dim=others) != 0 if others else default_mask != 0
            idx = _C.nonzero(keep_channel).flatten()
            sub_t = t.index_select(dim, idx)
            sub_mask = default_mask.index_select(dim, idx)
            partial = method.compute_mask(sub_t, default_mask=sub_mask)
            new_mask.index_copy_(dim, idx, partial.to(dtype=new_mask.dtype))
        elif kind == "global":
            new_mask = method.compute_mask(t, default_mask=default_mask).to(dtype=new_mask.dtype)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        return new_mask


class Identity(BasePruningMethod):
    """Identity()

    Prunes nothing (the all-ones mask); installs the reparametrization."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        default_mask unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """apply(module, name)

        Installs the reparametrization of module.name with an all-ones mask."""
        return super().apply(module, name)


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _validate_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _nparams_to_prune(amount, tensor_size):
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_structured(t):
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {tuple(t.shape)} with {t.dim()} dims"
        )


def _validate_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _channel_mask(t, dim, indices):
    mask = zeros_like(t)
    shape = [1] * t.dim()
    shape[dim] = -1
    keep = zeros(t.shape[dim], dtype=t.dtype)
    keep[indices] = 1
    return mask + keep.reshape(shape)


class RandomUnstructured(BasePruningMethod):
    """RandomUnstructured(amount)

    Zeroes `amount` entries (a count, or a fraction of the tensor) chosen uniformly at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        default_mask with `amount` more entries, picked at random, set to zero."""
        size = t.numel()
        k = _nparams_to_prune(self.amount, size)
        _validate_amount(k, size)
        mask = default_mask.clone()
        if k != 0:
            prob = rand_like(t)
            idx = topk(prob.reshape(-1), k).indices
            flat = mask.reshape(-1)
            flat[idx] = 0
            mask = flat.reshape(list(mask.shape))
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """apply(module, name, amount)

        Prunes module.name at random."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """L1Unstructured(amount)

    Zeroes the `amount` entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        default_mask with the `amount` smallest-magnitude entries of t set to zero."""
        size = t.numel()
        k = _nparams_to_prune(self.amount, size)
        _validate_amount(k, size)
        mask = default_mask.clone()
        if k != 0:
            idx = topk(_C.abs(t).reshape(-1), k, largest=False).indices
            flat = mask.reshape(-1)
            flat[idx] = 0
            mask = flat.reshape(list(mask.shape))
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """apply(module, name, amount, importance_scores=None)

        Prunes module.name by magnitude (of importance_scores if given)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """RandomStructured(amount, dim=-1)

    Zeroes `amount` whole channels along dim, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        default_mask times a mask with `amount` random channels along dim zeroed."""
        _validate_structured(t)
        _validate_dim(t, self.dim)
        dim = self.dim % t.dim()
        size = t.shape[dim]
        k = _nparams_to_prune(self.amount, size)
        _validate_amount(k, size)
        if k == 0:
            return default_mask
        prob = rand(size)
        threshold = kthvalue(prob, k).values
        keep = _C.nonzero(prob > threshold).flatten()
        return _channel_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """apply(module, name, amount, dim=-1)

        Prunes random channels of module.name along dim."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """LnStructured(amount, n, dim=-1)

    Zeroes the `amount` channels along dim with the smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        default_mask times a mask keeping the channels of largest L-n norm."""
        _validate_structured(t)
        _validate_dim(t, self.dim)
        dim = self.dim % t.dim()
        size = t.shape[dim]
        k = _nparams_to_prune(self.amount, size)
        _validate_amount(k, size)
        if k == 0:
            return default_mask
        others = [d for d in range(t.dim()) if d != dim]
        norm = _norm(t, self.n, others)
        keep = topk(norm, size - k, largest=True).indices
        return _channel_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """apply(module, name, amount, n, dim, importance_scores=None)

        Prunes the lowest-norm channels of module.name along dim."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


def _norm(t, n, dims):
    from ...linalg import vector_norm

    if n == "fro":
        n = 2
    return vector_norm(t, n, dim=dims)


class CustomFromMask(BasePruningMethod):
    """CustomFromMask(mask)

    Prunes with a given mask (combined with any earlier one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        """compute_mask(t, default_mask)

        default_mask times the given mask."""
        if list(default_mask.shape) != list(self.mask.shape):
            raise AssertionError("the mask and the tensor must have the same shape")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """apply(module, name, mask)

        Prunes module.name with mask."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """identity(module, name)

    Installs pruning's reparametrization of module.name (name_orig, name_mask of ones, the
    pre-hook) without pruning anything; returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """random_unstructured(module, name, amount)

    Prunes `amount` (int: count, float: fraction) random entries of module.name; returns
    module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """l1_unstructured(module, name, amount, importance_scores=None)

    Prunes the `amount` entries of module.name with the smallest absolute value (of
    importance_scores if given); returns module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """random_structured(module, name, amount, dim)

    Prunes `amount` random channels of module.name along dim; returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """ln_structured(module, name, amount, n, dim, importance_scores=None)

    Prunes the `amount` channels of module.name along dim with the smallest L-n norm; returns
    module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs)

    Prunes the (module, name) pairs together: pruning_method(**kwargs) picks entries across all
    of them at once (e.g. the globally smallest magnitudes), and each gets its part of the
    mask."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    with no_grad():
        scores = parameters_to_vector(
            [
                importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1)
                for m, n in parameters
            ]
        )
        default_mask = parameters_to_vector(
            [getattr(m, n + "_mask", ones_like(getattr(m, n))).reshape(-1) for m, n in parameters]
        )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    with no_grad():
        final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        param_mask = final_mask[pointer : pointer + count].reshape(list(param.shape))
        custom_from_mask(module, name, mask=param_mask)
        pointer += count


def custom_from_mask(module, name, mask):
    """custom_from_mask(module, name, mask)

    Prunes module.name with the given mask; returns module."""
    CustomFromMask.apply(module, name, mask=mask)
    return module


def remove(module, name):
    """remove(module, name)

    Makes the pruning of module.name permanent: name is a plain parameter again (holding the
    pruned values); name_orig, name_mask and the pre-hook go away. Returns module."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module):
    """is_pruned(module) -> bool

    Whether any submodule of module carries a pruning pre-hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
