"""ember.func: torch.func's transforms over ember's tape autograd.

vmap runs the function once per slice and stacks the results (same values as torch's batching
rule, without its speed); grad/jacrev/vjp differentiate with ember.autograd.grad, building graphs
so that transforms nest; jvp/jacfwd/hessian/linearize (func/_forward.py) use forward-mode AD
(ember.autograd.forward_ad); functional_call swaps a module's
parameters and buffers for the call."""

import contextlib

from .. import autograd
from .._C import Tensor, stack
from .._ops.creation import zeros, zeros_like
from ..autograd.forward_ad import _tangent
from ..autograd.grad_mode import enable_grad
from ..overrides import routed
from ._forward import _requires_grad_alias, hessian, jacfwd, jvp, linearize  # noqa: F401

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


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None)

    func mapped over dimension in_dims of its inputs; results stacked at out_dims."""

    def wrapped(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap(...): in_dims is not compatible with the structure of `inputs`. "
                f"in_dims has {len(dims)} elements, but inputs has {len(args)}"
            )
        sizes = set()
        for a, d in zip(args, dims):
            if d is not None:
                sizes.update(t.shape[d] for t in _leaves(a) if isinstance(t, Tensor))
        if not sizes:
            raise ValueError(
                "vmap(...): at least one input must be a Tensor mapped over a "
                "dimension (in_dims not None)"
            )
        if len(sizes) > 1:
            raise ValueError(
                f"vmap: Expected all tensors to have the same size in the mapped "
                f"dimension, got sizes {sorted(sizes)} for the mapped dimension"
            )
        n = sizes.pop()
        results = []
        for i in range(n):
            call = [
                a
                if d is None
                else _tree_map(lambda t: t.select(d, i) if isinstance(t, Tensor) else t, a)
                for a, d in zip(args, dims)
            ]
            results.append(func(*call, **kwargs))
        first = results[0]
        if isinstance(first, (tuple, list)):
            od = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
            return type(first)(stack([r[k] for r in results], od[k]) for k in range(len(first)))
        return stack(results, out_dims)

    return wrapped


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
        # (_requires_grad_alias keeps a forward-mode tangent, so jvp/jacfwd/hessian of these work)
        args[k] = _tree_map(_requires_grad_alias, a)
    return args


def _nested(args, nums):
    # inputs with a graph or a forward-mode tangent belong to an enclosing transform
    return any(
        t.requires_grad or _tangent(t) is not None
        for k in nums
        for t in _leaves(args[k])
        if isinstance(t, Tensor)
    )


def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        outer = _nested(args, nums)
        with enable_grad():
            call = _prepare(args, nums)
            out = func(*call, **kwargs)
            aux = None
            if has_aux:
                out, aux = out
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor"
                )
            inputs = [t for k in nums for t in _leaves(call[k])]
            grads = autograd.grad(out, inputs, create_graph=True, allow_unused=True)
        grads = [zeros_like(i) if g is None else g for g, i in zip(grads, inputs)]
        if not outer:
            grads = [g.detach() for g in grads]
            out = out.detach()
        it = iter(grads)
        per_arg = tuple(_tree_map(lambda _: next(it), call[k]) for k in nums)
        g = per_arg[0] if isinstance(argnums, int) else per_arg
        return (g, (out, aux)) if has_aux else (g, out)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued func with respect to the argnums inputs."""
    inner = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the cotangents' pullbacks."""
    outer = any(
        p.requires_grad or _tangent(p) is not None for p in primals if isinstance(p, Tensor)
    )
    with enable_grad():
        call = [_requires_grad_alias(p) for p in primals]
        out = func(*call)
        aux = None
        if has_aux:
            out, aux = out

    def vjp_fn(*cotangents):
        outs = _leaves(out)
        cots = _leaves(cotangents[0] if len(cotangents) == 1 else cotangents)
        with enable_grad():
            gs = autograd.grad(
                outs, call, cots, retain_graph=True, create_graph=True, allow_unused=True
            )
        gs = [zeros_like(c) if g is None else g for g, c in zip(gs, call)]
        return tuple(gs if outer else [g.detach() for g in gs])

    value = out if outer else _tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, out)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of func: output shape followed by input shape, one backward per output."""

    def wrapper(*args):
        nums = _argnums(argnums, len(args))
        outer = _nested(args, nums)
        with enable_grad():
            call = _prepare(args, nums)
            out = func(*call)
            aux = None
            if has_aux:
                out, aux = out
            inputs = [call[k] for k in nums]
            flat = out.reshape(-1)
            rows = [[] for _ in inputs]
            for i in range(flat.numel()):
                gs = autograd.grad(
                    flat[i], inputs, retain_graph=True, create_graph=True, allow_unused=True
                )
                for r, g, x in zip(rows, gs, inputs):
                    r.append(zeros_like(x) if g is None else g)
        jacs = []
        for r, x in zip(rows, inputs):
            j = routed(stack)(r, 0) if r else zeros(0, *x.shape, dtype=x.dtype)
            j = j.reshape(tuple(out.shape) + tuple(x.shape))
            jacs.append(j if outer else j.detach())
        result = jacs[0] if isinstance(argnums, int) else tuple(jacs)
        return (result, aux) if has_aux else result

    return wrapper


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
