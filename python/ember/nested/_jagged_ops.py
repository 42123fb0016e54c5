"""Ops of jagged-layout nested tensors beyond the elementwise ones (see _tensor.py).

A jagged nested tensor of dims (B, ..., j, ...) keeps its components concatenated along the
ragged dim in ``values()``: nested dim d >= 1 is values dim d - 1, and the ragged dim (at
``_ragged_idx``, 1 until a transpose moves it) holds the concatenation. So an op over regular
dims (softmax, layer_norm, a reduction with keepdim, matmul or linear with a dense weight,
transpose, unflatten, ...) runs once on the values and keeps the offsets; an op over the
ragged dim runs per component. Errors are torch 2.13's for the same calls.
"""

import builtins
import sys

__all__ = ["JAGGED_OPS"]


def _ember():
    return sys.modules["ember"]


def _nested():
    from . import _tensor

    return _tensor


def _values(nt):
    return _nested()._plain(nt)


def _from_values(values, like, ragged_idx=None):
    """A jagged nested tensor over ``values`` with like's offsets and ragged size."""
    r = like._ragged_idx if ragged_idx is None else ragged_idx
    offsets = like._offsets
    shapes = []
    for i in range(len(offsets) - 1):
        s = list(values.shape)
        s[r - 1] = offsets[i + 1] - offsets[i]
        shapes.append(tuple(s))
    return _nested().make(values, shapes, offsets, like._layout, like._ragged, r)


def _dim(nt, dim):
    n = nt.dim()
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _per_component(nt, fn):
    return [fn(c) for c in nt.unbind()]


def _cat_components(parts, like):
    return _from_values(_ember().cat(parts, like._ragged_idx - 1), like)


# --- normalizations and reductions ---------------------------------------------------------


def _softmax_like(name):
    def op(nt, dim=None, *args, **kwargs):
        kwargs.pop("_stacklevel", None)
        if dim is None:
            dim = kwargs.pop("dim")
        d = _dim(nt, dim)
        if d == 0:
            raise RuntimeError(
                f"{name}(): not supported when reducing across the batch dimension for NestedTensor"
            )
        fn = getattr(_ember().nn.functional, name)
        if d == nt._ragged_idx:
            return _cat_components(_per_component(nt, lambda c: fn(c, d - 1, *args, **kwargs)), nt)
        return _from_values(fn(_values(nt), d - 1, *args, **kwargs), nt)

    return op


def _reduction(name):
    def op(nt, dim=None, keepdim=False, **kwargs):
        ember = _ember()
        fn = getattr(ember, name)
        values = _values(nt)
        if dim is None:  # all of it: a dense 0-d result
            return fn(values, **kwargs)
        dims = sorted({_dim(nt, d) for d in ((dim,) if isinstance(dim, int) else dim)})
        r = nt._ragged_idx
        if dims == [0, r]:
            return fn(values, r - 1, keepdim=keepdim, **kwargs)
        if 0 in dims:
            raise RuntimeError(
                f"{name}(): reducing along the batch dimension but not the ragged dimension is "
                "not supported for nested tensors"
            )
        if r in dims:
            if len(dims) > 1:
                raise RuntimeError(
                    f"{name}(): reducing along a ragged and non-batch dimension is not supported "
                    "for nested tensors"
                )
            return ember.stack(
                _per_component(nt, lambda c: fn(c, r - 1, keepdim=keepdim, **kwargs))
            )
        out = fn(values, [d - 1 for d in dims], keepdim=keepdim, **kwargs)
        shift = 0 if keepdim else builtins.sum(d < r for d in dims)
        return _from_values(out, nt, r - shift)

    return op


# --- products with dense operands ----------------------------------------------------------


def _matmul(a, b):
    nested = _nested().NestedTensor
    if isinstance(a, nested) and not isinstance(b, nested) and b.dim() <= 2:
        if a._ragged_idx == a.dim() - 1:
            raise RuntimeError("matmul(): the ragged dim cannot be the contracted dim")
        return _from_values(_ember().matmul(_values(a), b), a)
    if isinstance(a, nested) and isinstance(b, nested) and a._offsets == b._offsets:
        parts = [_ember().matmul(x, y) for x, y in zip(a.unbind(), b.unbind())]
        return _cat_components(parts, a)
    raise _nested()._not_supported("matmul")


def _linear(input, weight, bias=None):
    if input._ragged_idx == input.dim() - 1:
        raise RuntimeError("linear(): the ragged dim cannot be the last dim")
    return _from_values(_ember().nn.functional.linear(_values(input), weight, bias), input)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if input.dim() - len(normalized_shape) <= input._ragged_idx:
        raise RuntimeError(
            "layer_norm(): normalizing over ragged dim not supported for nested tensors"
        )
    out = _ember().nn.functional.layer_norm(_values(input), normalized_shape, weight, bias, eps)
    return _from_values(out, input)


def _dropout(input, p=0.5, training=True, inplace=False):
    out = _ember().nn.functional.dropout(_values(input), p, training, inplace)
    return input if inplace else _from_values(out, input)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
    """Attention of each component's queries on its keys (dims B, H, j, D, ragged at 2)."""
    nested = _nested().NestedTensor
    if not all(isinstance(t, nested) for t in (query, key, value)):
        raise RuntimeError("scaled_dot_product_attention(): expected nested query, key and value")
    if attn_mask is not None:
        raise RuntimeError(
            "scaled_dot_product_attention(): attn_mask is not supported for nested tensors"
        )
    if is_causal:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found.")
    if query.dim() != 4 or query._ragged_idx != 2:
        raise RuntimeError(
            "scaled_dot_product_attention(): expected query, key and value of dims (B, H, j, D) "
            f"with the ragged dim second; got {query.dim()} dims, ragged at {query._ragged_idx}"
        )
    sdpa = _ember().nn.functional.scaled_dot_product_attention
    parts = [
        sdpa(q, k, v, dropout_p=dropout_p, scale=scale, **kw)
        for q, k, v in zip(query.unbind(), key.unbind(), value.unbind())
    ]
    return _cat_components(parts, query)


# --- views ---------------------------------------------------------------------------------


def _transpose(nt, dim0, dim1):
    d0, d1 = sorted((_dim(nt, dim0), _dim(nt, dim1)))
    if d0 == 0:
        raise ValueError("Transpose is not supported on the batch dimension for jagged NT")
    r = nt._ragged_idx
    r = d1 if r == d0 else d0 if r == d1 else r
    return _from_values(_values(nt).transpose(d0 - 1, d1 - 1), nt, r)


def _regular_dim(nt, dim, op):
    d = _dim(nt, dim)
    if d == 0 or d == nt._ragged_idx:
        raise RuntimeError(f"{op}(): not supported for nested tensors on the batch or ragged dim")
    return d


def _unflatten(nt, dim, sizes):
    d = _regular_dim(nt, dim, "unflatten")
    shift = len(sizes) - 1 if d < nt._ragged_idx else 0
    return _from_values(_values(nt).unflatten(d - 1, sizes), nt, nt._ragged_idx + shift)


def _flatten(nt, start_dim=0, end_dim=-1):
    s, e = _dim(nt, start_dim), _dim(nt, end_dim)
    if s <= nt._ragged_idx <= e or s == 0:
        raise RuntimeError("flatten(): not supported for nested tensors on the batch or ragged dim")
    shift = e - s if e < nt._ragged_idx else 0
    return _from_values(_values(nt).flatten(s - 1, e - 1), nt, nt._ragged_idx - shift)


def _unsqueeze(nt, dim):
    d = dim % (nt.dim() + 1)
    if d == 0:
        raise RuntimeError("unsqueeze(): not supported for nested tensors on the batch dim")
    r = nt._ragged_idx + (1 if d <= nt._ragged_idx else 0)
    return _from_values(_values(nt).unsqueeze(d - 1), nt, r)


def _squeeze(nt, dim):
    d = _regular_dim(nt, dim, "squeeze")
    r = nt._ragged_idx - (1 if d < nt._ragged_idx else 0)
    return _from_values(_values(nt).squeeze(d - 1), nt, r)


def _view(nt, *shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    r = nt._ragged_idx
    keep = list(nt.shape[: r + 1])
    head = list(shape[: r + 1])
    ok = (
        len(shape) > r
        and head[0] == keep[0]
        and head[r] in (-1, keep[r])
        and head[1:r] == keep[1:r]
    )
    if not ok:
        raise RuntimeError(
            f"view(): cannot view shape ({', '.join(str(s) for s in nt.shape)}) as {list(shape)}"
        )
    values = _values(nt)
    return _from_values(values.reshape(*values.shape[:r], *shape[r + 1 :]), nt)


def _split_like(name):
    def op(nt, split, dim=0):
        d = _regular_dim(nt, dim, name)
        return tuple(_from_values(v, nt) for v in getattr(_values(nt), name)(split, d - 1))

    return op


def _cat(tensors, dim=0):
    nested = _nested().NestedTensor
    first = tensors[0]
    if not all(isinstance(t, nested) and t._offsets == first._offsets for t in tensors):
        raise RuntimeError("cat(): expected nested tensors of the same offsets")
    d = _regular_dim(first, dim, "cat")
    return _from_values(_ember().cat([_values(t) for t in tensors], d - 1), first)


JAGGED_OPS = {
    "softmax": _softmax_like("softmax"),
    "log_softmax": _softmax_like("log_softmax"),
    "softmin": _softmax_like("softmin"),
    "sum": _reduction("sum"),
    "mean": _reduction("mean"),
    "amax": _reduction("amax"),
    "amin": _reduction("amin"),
    "matmul": _matmul,
    "__matmul__": _matmul,
    "linear": _linear,
    "layer_norm": _layer_norm,
    "dropout": _dropout,
    "scaled_dot_product_attention": _sdpa,
    "transpose": _transpose,
    "unflatten": _unflatten,
    "flatten": _flatten,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "view": _view,
    "reshape": _view,
    "split": _split_like("split"),
    "chunk": _split_like("chunk"),
    "cat": _cat,
}
