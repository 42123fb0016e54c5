"""ember.func: torch.func's transforms over ember's tape autograd.

vmap vectorizes by batching rules (_vmap.py, _batch_rules.py, _batch_rules_nn.py); grad/vjp/jacrev
(also in _vmap.py, so that they work inside vmap) differentiate with ember.autograd.grad,
building graphs so that transforms nest; jvp/jacfwd/hessian/linearize (_forward.py) use
forward-mode AD (ember.autograd.forward_ad); functional_call swaps a module's parameters and
buffers for the call."""

import collections
import contextlib
import functools
import itertools

from .._C import stack
from ._forward import hessian, jacfwd, jvp, linearize
from ._jacrev import jacrev
from ._vmap import grad, grad_and_value, vjp, vmap

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


_MISSING = object()


@contextlib.contextmanager
def _swapped(module, tensors):
    """The module with `tensors` in place of its parameters and buffers of those names; a name
    that is neither becomes a plain attribute for the call (as torch's reparametrization does)."""
    saved = []
    try:
        for name, value in tensors.items():
            owner_path, _, leaf = name.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            if leaf in owner._parameters:
                table = owner._parameters
            elif leaf in owner._buffers:
                table = owner._buffers
            else:
                saved.append((owner, leaf, owner.__dict__.get(leaf, _MISSING)))
                object.__setattr__(owner, leaf, value)
                continue
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        yield
    finally:
        for table, leaf, old in reversed(saved):
            if isinstance(table, dict):
                table[leaf] = old
            elif old is _MISSING:
                object.__delattr__(table, leaf)
            else:
                object.__setattr__(table, leaf, old)


def _tied(module, tensors):
    """tensors extended to every name of a tied parameter or buffer one of whose names is given
    (tie_weights=True); different values for names of one tensor are an error, as torch's."""
    names_of = {}
    for name, t in itertools.chain(
        module.named_parameters(remove_duplicate=False),
        module.named_buffers(remove_duplicate=False),
    ):
        names_of.setdefault(id(t), []).append(name)
    out = dict(tensors)
    for names in names_of.values():
        given = [n for n in names if n in tensors]
        if len(names) < 2 or not given:
            continue
        if len({id(tensors[n]) for n in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                "Consider using tie_weights=False"
            )
        for n in names:
            out.setdefault(n, tensors[given[0]])
    return out


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """module(*args, **kwargs) with the named parameters and buffers replaced by the given ones."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        counts = collections.Counter(k for d in dicts for k in d)
        dup = [k for k, n in counts.items() if n > 1]
        if dup:
            raise ValueError(
                f"{dup} appeared in multiple dictionaries; behavior of functional call is ambiguous"
            )
        dicts = {k: v for d in dicts for k, v in d.items()}
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
    if tie_weights:
        dicts = _tied(module, dicts)
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
