"""ember.func: torch.func's transforms over ember's tape autograd.

vmap vectorizes by batching rules (_vmap.py, _batch_rules.py, _batch_rules_nn.py); grad/vjp/jacrev
(also in _vmap.py, so that they work inside vmap) differentiate with ember.autograd.grad,
building graphs so that transforms nest; jvp/jacfwd/hessian/linearize (_forward.py) use
forward-mode AD (ember.autograd.forward_ad); functional_call swaps a module's parameters and
buffers for the call."""

import contextlib
import functools

from .._C import stack
from ._forward import hessian, jacfwd, jvp, linearize
from ._vmap import grad, grad_and_value, jacrev, vjp, vmap

__all__ = [
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "linearize",
    "functional_call",
    "stack_module_state",
    "replace_all_batch_norm_modules_",
    "functionalize",
]


@contextlib.contextmanager
def _swapped(module, tensors):
    saved = []
    try:
        for name, value in tensors.items():
            owner_path, _, leaf = name.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            table = owner._parameters if leaf in owner._parameters else owner._buffers
            if leaf not in table:
                raise AttributeError(f"{type(owner).__name__} has no parameter or buffer `{leaf}`")
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        yield
    finally:
        for table, leaf, old in reversed(saved):
            table[leaf] = old


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """module(*args, **kwargs) with the named parameters and buffers replaced by the given ones."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged = {}
        for d in dicts:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(
                    f"{sorted(dup)} appeared in multiple dictionaries; behavior of "
                    "functional call is ambiguous"
                )
            merged.update(d)
        dicts = merged
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {
            n for n, _ in module.named_buffers()
        }
        missing, unexpected = expected - set(dicts), set(dicts) - expected
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, sorted(unexpected)))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, sorted(missing)))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _swapped(module, dicts):
        return module(*args, **(kwargs or {}))


def _stacked_leaf(tensors, name):
    flags = [t.requires_grad for t in tensors]
    if any(flags) and not all(flags):
        raise RuntimeError(
            f"Expected {name} from each model to have the same .requires_grad; got a mix"
        )
    out = stack(tensors)
    return out.detach().requires_grad_() if all(flags) else out


def stack_module_state(models):
    """stack_module_state(models) -> params, buffers

    Stacks the parameters and buffers of several models of one class along a new leading
    dimension, for calling them all at once with vmap over functional_call. Stacked parameters
    are new leaves (requires_grad as the models' parameters)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    kind = type(models[0])
    if not all(type(m) is kind for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """replace_all_batch_norm_modules_(root) -> Module

    Makes every batch norm module under root stop tracking running statistics in place (so that
    it can run under vmap), and returns root."""
    from ..nn.modules.batchnorm import _BatchNorm

    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def functionalize(func, *, remove="mutations"):
    """functionalize(func, *, remove='mutations') -> Callable

    Returns a function with func's observable behaviour. ember's transforms already handle
    in-place operations (no functionalization pass is needed), so func runs as it is."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations'\n     remove='mutations_and_views'"
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped
