"""ember.func: torch.func's transforms over ember's tape autograd.

vmap vectorizes by batching rules (_vmap.py, _batch_rules.py); grad/vjp/jacrev (also in _vmap.py,
so that they work inside vmap) and jacfwd/hessian/jvp differentiate with ember.autograd.grad,
building graphs so that transforms nest; functional_call swaps a module's parameters and buffers
for the call."""

import contextlib

from .. import autograd
from .._C import Tensor
from .._ops.creation import zeros_like
from ..autograd.grad_mode import enable_grad
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
    "functional_call",
]


def _tree_map(fn, tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(fn, t) for t in tree)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in _leaves(v)]
    return [tree]


def _argnums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not -n <= k < n:
            raise RuntimeError(f"Got argnums={argnums}, but only {n} positional inputs")
    return nums


def _prepare(args, nums):
    # Inputs that already carry a graph (an enclosing transform) stay connected to it.
    args = list(args)
    for k in nums:
        a = args[k]
        args[k] = _tree_map(lambda t: t if t.requires_grad else t.detach().requires_grad_(True), a)
    return args


def _nested(args, nums):
    return any(t.requires_grad for k in nums for t in _leaves(args[k]) if isinstance(t, Tensor))


def jvp(func, primals, tangents, *, has_aux=False):
    """(func(*primals), J @ tangents), by differentiating a vector-Jacobian product once more."""
    with enable_grad():
        call = [p.detach().requires_grad_(True) for p in primals]
        out = func(*call)
        aux = None
        if has_aux:
            out, aux = out
        u = zeros_like(out).requires_grad_(True)
        gs = autograd.grad(out, call, u, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, tangents) if g is not None]
        dot = sum((g * t).sum() for g, t in pairs)
        jv = autograd.grad(dot, u, allow_unused=True)[0] if pairs else None
    jv = zeros_like(out) if jv is None else jv.detach()
    return (out.detach(), jv, aux) if has_aux else (out.detach(), jv)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Same values as jacrev (computed in reverse mode: ember has no forward-mode AD)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    return jacrev(jacrev(func, argnums), argnums)


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
