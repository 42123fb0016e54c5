"""ember.func: torch.func's transforms over ember's tape autograd.

vmap vectorizes by batching rules (_vmap.py, _batch_rules.py, _batch_rules_nn.py); grad/vjp/jacrev
(also in _vmap.py, so that they work inside vmap) differentiate with ember.autograd.grad,
building graphs so that transforms nest; jvp/jacfwd/hessian/linearize (_forward.py) use
forward-mode AD (ember.autograd.forward_ad); functional_call swaps a module's parameters and
buffers for the call."""

import contextlib

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
        if missing or unexpected:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}: missing "
                f"{sorted(missing)}, unexpected {sorted(unexpected)}"
            )
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _swapped(module, dicts):
        return module(*args, **(kwargs or {}))
