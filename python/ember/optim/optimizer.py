"""Optimizer base class with torch.optim.Optimizer's API (param groups, state, state_dict)."""

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .. import _C
from .._C import (
    Tensor,
    bfloat16,
    float16,
    float32,
    float64,
    get_default_dtype,
    view_as_complex,
    view_as_real,
)
from .._ops.creation import tensor, zeros_like
from ..autograd.grad_mode import enable_grad, no_grad
from . import _mode_steps

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a default that each param group must provide."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


class _RemovableHandle:
    """Removes a hook from the dict it was registered in (torch.utils.hooks.RemovableHandle)."""

    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        """Unregisters the hook."""
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(hooks, hook, prepend=False):
    handle = _RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """Registers hook(optimizer, args, kwargs) run before every optimizer's step."""
    return _add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Registers hook(optimizer, args, kwargs) run after every optimizer's step."""
    return _add_hook(_global_step_post_hooks, hook)


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + {
            float64: "DoubleTensor",
            float16: "HalfTensor",
            bfloat16: "BFloat16Tensor",
        }.get(obj.dtype, "FloatTensor")
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _to_scalar(x):
    """A Python number for a float or one-element tensor hyper-parameter."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _get_scalar_dtype():
    return float64 if get_default_dtype() == float64 else float32


def _check_hparams(lr, **values):
    """Raises torch's errors for a bad lr, then for the first negative named hyper-parameter."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    for name, value in values.items():
        if not 0.0 <= value:
            label = "epsilon" if name == "eps" else name
            raise ValueError(f"Invalid {label} value: {value}")


def _check_betas(betas):
    """Raises torch's error for an Adam-family beta outside [0, 1)."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _check_fused(fused, differentiable, foreach):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _hooked_step(step):
    # Runs the global and per-optimizer step hooks around a subclass's step, once per call even
    # when a subclass's step calls its parent's.
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if getattr(self, "_in_step", False):
            return step(self, *args, **kwargs)
        if _C._profiler_enabled():  # torch's range around the hooks and the step
            from ..autograd.profiler import record_function

            with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                return hooked(self, args, kwargs)
        return hooked(self, args, kwargs)

    def hooked(self, args, kwargs):
        for hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}."
                    )
                args, kwargs = result
        self._in_step = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            self._in_step = False
        self._opt_called = True
        post_hooks = chain(
            self._optimizer_step_post_hooks.values(), _global_step_post_hooks.values()
        )
        for hook in post_hooks:
            hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Optimizer(params, defaults)

    Base class for all optimizers (torch.optim.Optimizer).

    Args:
        params: an iterable of tensors, of (name, tensor) pairs, or of dicts (param groups).
        defaults: default values of the optimization options, used where a group omits them.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got " + _typename(params)
            )
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            self.__dict__.setdefault(name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            # Each group after a newline of its own: a blank line between groups, as torch's.
            text += f"\nParameter Group {i}\n"
            text += "".join(
                f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params"
            )
        return text + ")"

    def add_param_group(self, param_group):
        """Adds a param group (a dict with 'params' and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. "
                    "Some param names are missing"
                )
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        param_set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {txt} to the optimizer"
                )
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors (to None by default)."""
        if _C._profiler_enabled():  # torch's range around the reset
            from ..autograd.profiler import record_function

            with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
                return self._zero_grad(set_to_none)
        return self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Performs a single optimization step; subclasses implement it."""
        raise NotImplementedError

    def register_step_pre_hook(self, hook):
        """Registers hook(optimizer, args, kwargs) run before this optimizer's step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Registers hook(optimizer, args, kwargs) run after this optimizer's step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Registers hook(optimizer) run before state_dict()."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Registers hook(optimizer, state_dict) run after state_dict(); may return a new dict."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Registers hook(optimizer, state_dict) run before load_state_dict()."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Registers hook(optimizer) run after load_state_dict()."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self):
        """The state as {'state': {index: {...}}, 'param_groups': [{..., 'params': [index]}]}."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _cast_state(param, value, fused_or_capturable, key=None):
        # Tensors take the param's dtype, except 'step' counters, which keep theirs.
        if isinstance(value, Tensor):
            if key == "step":
                return value.to(dtype=float32) if fused_or_capturable else value
            return value.to(dtype=param.dtype) if param.is_floating_point() else value
        if isinstance(value, dict):
            return {
                k: Optimizer._cast_state(param, v, fused_or_capturable, k) for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, v, fused_or_capturable) for v in value)
        return value

    def load_state_dict(self, state_dict):
        """Loads a state_dict() result, matching parameters by their order in the groups."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )
        policy = {}
        for g in state_dict["param_groups"]:
            for pid in g["params"]:
                policy.setdefault(pid, bool(g.get("fused") or g.get("capturable")))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v, policy.get(k, False))
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


def _as_real(t):
    return view_as_real(t) if isinstance(t, Tensor) and t.is_complex() else t


def _as_complex(t, param):
    """A state tensor made for param's real view, as a complex tensor of param's shape."""
    if isinstance(t, Tensor) and tuple(t.shape) == (*param.shape, 2) and t.is_floating_point():
        return view_as_complex(t if t.stride(-1) == 1 else t.contiguous())
    return t


class _FusedOptimizer(Optimizer):
    """Base of the optimizers over ember._C._optim kernels: each implements _update_group, and
    lists in _load_defaults the group options that pickles from older versions may lack."""

    _load_defaults = {}
    # (group, params, grads, to_scalar) -> None: the step as torch's per-parameter ops, taken
    # while a TorchDispatchMode is active so that it sees them (optim/_mode_steps.py)
    _mode_step = None

    # capturable=True is for CUDA-graph capture: torch refuses it at step() for parameters on
    # the CPU. Per (single-tensor, foreach) path: the state tensors its message names, and
    # whether that path accepts xla devices (torch's lists differ by optimizer and path).
    _capturable_paths = (("params and state_steps", True), ("params and state_steps", False))

    def _check_capturable(self, group, params):
        if not group.get("capturable"):
            return
        names, xla = self._capturable_paths[bool(group.get("foreach"))]
        supported = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
        if any(p.device.type not in supported for p in params):
            raise AssertionError(
                f"If capturable=True, {names} must be on supported devices: {supported}."
            )

    def __setstate__(self, state):
        super().__setstate__(state)
        # 'step' counters saved as numbers become tensors, as torch's optimizers keep them.
        for group in self.param_groups:
            for name, default in self._load_defaults.items():
                group.setdefault(name, default)
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and "step" in p_state and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = tensor(float(p_state["step"]), dtype=_get_scalar_dtype())

    def step(self, closure=None):
        """Performs one optimization step; `closure` re-evaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads, sparse = self._params_with_grad(group)
            self._check_capturable(group, params)
            if params and self._complex_as_real and any(p.is_complex() for p in params):
                self._update_complex_group(group, params, grads)
            elif params and self._mode_step is not None and _mode_steps.active():
                self._mode_step(group, params, grads, _to_scalar)
            elif params:
                self._update_group(group, params, grads)
            for p, g in sparse:
                self._update_sparse(group, p, g)
        return loss

    # Complex parameters are updated as their real views (real and imaginary parts as separate
    # coordinates), as torch's optimizers do; their state stays complex, as torch keeps it.
    _complex_as_real = True

    def _update_complex_group(self, group, params, grads):
        with no_grad():
            views = [view_as_real(p) if p.is_complex() else p for p in params]
            real_grads = [view_as_real(g) if g.is_complex() else g for g in grads]
            for p, v in zip(params, views):
                if v is not p:
                    self.state[v] = {k: _as_real(t) for k, t in self.state.pop(p, {}).items()}
            try:
                self._update_group(group, views, real_grads)
            finally:
                for p, v in zip(params, views):
                    if v is not p:
                        state = self.state.pop(v, {})
                        self.state[p] = {k: _as_complex(t, p) for k, t in state.items()}

    def _lazy_states(self, params, *buffers):
        """The params' state dicts; an empty one gets a zero 'step' and zero `buffers` first."""
        states = []
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
                for name in buffers:
                    # a DTensor parameter's state is a DTensor laid out alike
                    state[name] = p._zeros_like() if hasattr(p, "_placements") else zeros_like(p)
            states.append(state)
        return states

    # (group, param, sparse gradient) -> None: the update of a parameter whose gradient is
    # sparse, for the optimizers that take them (SGD, Adagrad); the others refuse them.
    _update_sparse = None
    _sparse_advice = ""

    def _params_with_grad(self, group):
        """The group's params that have a dense gradient, those gradients (torch skips the
        params without one), and (param, gradient) pairs of the sparse gradients."""
        params, grads, sparse = [], [], []
        for p in group["params"]:
            g = p.grad
            if g is not None:
                if getattr(g, "is_sparse", False):
                    if self._update_sparse is None:
                        raise RuntimeError(
                            f"{type(self).__name__} does not support sparse gradients"
                            + self._sparse_advice
                        )
                    sparse.append((p, g))
                    continue
                params.append(p)
                grads.append(g)
        return params, grads, sparse
