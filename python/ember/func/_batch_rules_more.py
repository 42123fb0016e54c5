"""More batching rules of ember.func.vmap (Note [vmap levels] in _vmap.py): linear algebra that
is batched by nature, index_add/index_copy, transposed convolution, group and instance norm and
prelu with a batched weight. Importing this module registers them into _batch_rules.RULES.
"""

from .._C import bool as _bool
from .._ops.creation import arange as _arange
from ._batch_rules import (
    _MISSING,
    _arg,
    _batch_sizes,
    _dimop,
    _is_b,
    _is_t,
    _no_rule,
    inplace_refusal,
    op_name,
    register,
)
from ._vmap import BatchedTensor, align, levels_of, logical_dim, wrap

# -- linear algebra: ember's kernels treat every leading dimension as a batch dimension, so the
# batch dimensions of the vmap levels go in front (expanded where an argument is not batched)
# and the op runs once.


def _leading_batch(func, args, kwargs):
    tensors = [a for a in (*args, *kwargs.values()) if _is_t(a)]
    levels = levels_of(*tensors)

    def phys(a):
        return align(a, levels, expand=True) if _is_t(a) else a

    out = func(*(phys(a) for a in args), **{k: phys(v) for k, v in kwargs.items()})
    return wrap(out, levels)


_LINALG = (
    "solve inv inv_ex det slogdet cholesky cholesky_ex qr eigh eigvalsh svd svdvals matrix_exp "
    "pinv matrix_power lu_factor lu_factor_ex lu lu_unpack lu_solve solve_triangular "
    "cholesky_inverse cholesky_solve inverse logdet triangular_solve"
)
register(_LINALG, _leading_batch, ("linalg", "ember", "Tensor"))


def _linalg_solve(func, args, kwargs):
    """solve(A, B): B is a batch of vectors when its logical rank is one less than A's."""
    a, b = args[0], _arg(args, kwargs, 1, "B")
    if logical_dim(b) == 1 and logical_dim(a) > 2:
        return _no_rule(func)  # logical broadcasting of a vector against batched matrices
    return _leading_batch(func, args, kwargs)


register("solve", _linalg_solve, ("linalg",))


# -- in-place view methods (unsqueeze_, squeeze_, transpose_, t_): the same op on the physical
# tensor with the logical dims shifted past the batch dims; `self` is returned, as torch's are


def _inplace_view(func, args, kwargs):
    x = args[0]
    if not _is_b(x):
        return _no_rule(func)
    name = op_name(func).rsplit(".", 1)[-1]  # these originals' __name__ is a wrapper's
    name = {"swapaxes_": "transpose_", "swapdims_": "transpose_"}.get(name, name)
    if name == "t_":
        if x.dim() < 2:
            return x
        args, kwargs = (x, 0, 1), {}
        name = "transpose_"
    if name == "squeeze_" and _arg(args, kwargs, 1, "dim") is None:
        nb = len(x._lv)
        dims = tuple(i + nb for i, s in enumerate(x.shape) if s == 1)
        if dims:
            x._v.squeeze_(dims)
        return x
    spec = {
        "unsqueeze_": _dimop((1, "dim", _MISSING), extra=1),
        "squeeze_": _dimop((1, "dim", _MISSING)),
        "transpose_": _dimop((1, "dim0", _MISSING), (2, "dim1", _MISSING)),
    }[name]
    spec(lambda v, *a, **k: getattr(v, name)(*a, **k), args, kwargs)
    return x


register("unsqueeze_ squeeze_ transpose_ swapaxes_ swapdims_ t_", _inplace_view, ("Tensor",))


# -- index_add / index_copy (self, dim, index, source): the index must not be batched


def _index_into(inplace):
    def rule(func, args, kwargs):
        x = args[0]
        dim = _arg(args, kwargs, 1, "dim")
        index = _arg(args, kwargs, 2, "index")
        src = _arg(args, kwargs, 3, "source")
        if _is_b(index):
            return _batched_index(func, args, kwargs, inplace)
        levels = levels_of(x, src)
        if inplace and (not _is_b(x) or x._lv != levels):
            _inplace_error(func, x, (src,), levels)
        nd = logical_dim(x)
        nb = len(levels)
        d = (dim % nd if nd else 0) + nb
        px = x._v if inplace else align(x, levels, expand=True)
        ps = align(src, levels, rank=nd, expand=True)
        rest = {k: v for k, v in kwargs.items() if k not in ("dim", "index", "source")}
        out = func(px, d, index, ps, *args[4:], **rest)
        return x if inplace else BatchedTensor(out, levels)

    return rule


def _batched_index(func, args, kwargs, inplace):
    """index_add with a batched index: index_put(accumulate=True) along `dim` moved to the
    front, which takes an index per example (index_copy's has no such form yet)."""
    from ._vmap import _VmapMode

    if not op_name(func).split(".")[-1].startswith("index_add"):
        return _no_rule(func)
    x, dim = args[0], _arg(args, kwargs, 1, "dim")
    index, src = _arg(args, kwargs, 2, "index"), _arg(args, kwargs, 3, "source")
    alpha = _arg(args, kwargs, 4, "alpha", 1)
    with _VmapMode():
        moved = x.movedim(dim, 0)
        added = src.movedim(dim, 0) if alpha == 1 else src.movedim(dim, 0) * alpha
        out = moved.index_put((index,), added, accumulate=True).movedim(0, dim)
        if inplace:
            levels = levels_of(x, index, src)
            if not _is_b(x) or x._lv != levels:
                _inplace_error(func, x, (src,), levels)
            return x.copy_(out)
    return out


register("index_add index_copy", _index_into(False), ("ember", "Tensor"))
register("index_add_ index_copy_", _index_into(True), ("Tensor",))


def _index_put(inplace):
    # index_put is indexed assignment (`out[indices] = values`), which __setitem__'s rule batches;
    # accumulate=True sums repeated positions, which assignment cannot express
    def rule(func, args, kwargs):
        from ._vmap import _VmapMode

        x, indices, values, accumulate = _bind_index_put(*args, **kwargs)
        if accumulate:
            return _index_put_accumulate(func, x, indices, values, inplace)
        out = x
        if not inplace:  # a copy batched over every level, so batched values can land in it
            levels = levels_of(x, values, *(i for i in indices if _is_t(i)))
            out = wrap(align(x, levels, expand=True).clone(), levels)
        with _VmapMode():
            out[tuple(indices)] = values
        return out

    return rule


def _bind_index_put(input, indices, values, accumulate=False):
    return input, indices, values, accumulate


def _index_put_accumulate(func, x, indices, values, inplace):
    """index_put(accumulate=True) on the physical tensor: each batch dimension is indexed by an
    arange of its size, broadcast against the (aligned) integer indices, so repeated positions
    of one example sum into that example only."""
    if any(not _is_t(i) or i.dtype.is_floating_point or i.dtype == _bool for i in indices):
        return _no_rule(func)  # None entries and boolean masks
    levels = levels_of(x, values, *indices)
    if inplace and (not _is_b(x) or x._lv != levels):
        _inplace_error(func, x, (values,), levels)
    nb = len(levels)
    rank = max(logical_dim(i) for i in indices)
    sizes = _batch_sizes(levels)
    batch = [
        _arange(n).reshape((1,) * k + (n,) + (1,) * (nb - 1 - k + rank))
        for k, n in enumerate(sizes)
    ]
    phys = tuple(batch) + tuple(align(i, levels, rank=rank) for i in indices)
    rest = logical_dim(x) - len(indices)
    pv = align(values, levels, rank=rank + rest)
    px = align(x, levels) if inplace else align(x, levels, expand=True).clone()
    px.index_put_(phys, pv, accumulate=True)
    return x if inplace else BatchedTensor(px, levels)


def _inplace_error(func, self, args, levels):
    raise inplace_refusal(op_name(func).rsplit(".", 1)[-1], self, args, levels)


def _index_fill(inplace):
    # index_fill(dim, index, value): the same op on the physical tensor at the shifted dim
    def rule(func, args, kwargs):
        x, dim = args[0], _arg(args, kwargs, 1, "dim")
        index, value = _arg(args, kwargs, 2, "index"), _arg(args, kwargs, 3, "value")
        if _is_b(index) or _is_b(value):
            return _no_rule(func)
        if inplace and not _is_b(x):
            _no_rule(func)  # an unbatched self, index and value: nothing of this call is batched
        nd = logical_dim(x)
        levels = levels_of(x)
        d = (dim % nd if nd else 0) + len(levels)
        if inplace:
            align(x, levels).index_fill_(d, index, value)
            return x
        return BatchedTensor(align(x, levels).index_fill(d, index, value), levels)

    return rule


register("index_fill", _index_fill(False), ("ember", "Tensor"))
register("index_fill_", _index_fill(True), ("Tensor",))


def _put(inplace):
    # put(index, source, accumulate): each example's flat positions, offset into its own row of
    # the physical tensor flattened to (batch, numel)
    def rule(func, args, kwargs):
        x, index = args[0], _arg(args, kwargs, 1, "index")
        source, accumulate = _arg(args, kwargs, 2, "source"), _arg(args, kwargs, 3, "accumulate")
        levels = levels_of(x, index, source)
        if inplace and (not _is_b(x) or x._lv != levels):
            _inplace_error(func, x, (source,), levels)
        n = 1
        for size in _batch_sizes(levels):
            n *= size
        px = align(x, levels) if inplace else align(x, levels, expand=True).clone()
        flat = px.reshape(n, -1)
        rows = _arange(n).reshape(n, 1)
        idx = align(index, levels, expand=True).reshape(n, -1)
        src = align(source, levels, expand=True).reshape(n, -1)
        flat.index_put_((rows, idx), src, accumulate=bool(accumulate))
        if inplace and flat.data_ptr() != px.data_ptr():
            px.copy_(flat.reshape(px.shape))
        return x if inplace else BatchedTensor(flat.reshape(px.shape), levels)

    return rule


register("put", _put(False), ("ember", "Tensor"))
register("put_", _put(True), ("Tensor",))


register("index_put", _index_put(False), ("ember", "Tensor"))
register("index_put_", _index_put(True), ("ember", "Tensor"))


# -- nn.functional


def _flat_lead(v, keep):
    """v with all but its last `keep` dimensions folded into one; returns (flat, lead shape)."""
    lead = tuple(v.shape[: v.dim() - keep])
    return v.reshape((-1,) + tuple(v.shape[v.dim() - keep :])), lead


def _conv_transpose(func, args, kwargs):
    names = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
    defaults = (None, None, None, 1, 0, 0, 1, 1)
    a = {n: _arg(args, kwargs, i, n, d) for i, (n, d) in enumerate(zip(names, defaults))}
    x, w, bias = a["input"], a["weight"], a["bias"]
    k = logical_dim(w) - 2
    levels = levels_of(x, w, bias)
    nb = len(levels)
    rest = (a["stride"], a["padding"], a["output_padding"])
    if not _is_b(w) and not _is_b(bias):
        px = align(x, levels)
        flat, lead = _flat_lead(px, k + 1)
        out = func(flat, w, bias, *rest, a["groups"], a["dilation"])
        return BatchedTensor(out.reshape(lead + tuple(out.shape[1:])), levels)
    # Batched weight: one grouped transposed convolution with the batch folded into the channels
    # (weight [C_in, C_out / groups, *k]; groups * B groups).
    sizes = _batch_sizes(levels)
    B = 1
    for s in sizes:
        B *= s
    unbatched_input = logical_dim(x) == k + 1
    px = align(x, levels, expand=True)
    if unbatched_input:
        px = px.unsqueeze(nb)
    px = px.reshape((B,) + tuple(px.shape[nb:]))  # [B, N, C, *sp]
    N, C = px.shape[1], px.shape[2]
    px = px.transpose(0, 1).reshape((N, B * C) + tuple(px.shape[3:]))
    pw = align(w, levels, expand=True)
    pw = pw.reshape((B * pw.shape[nb],) + tuple(pw.shape[nb + 1 :]))
    O = pw.shape[1] * a["groups"]
    pb = None if bias is None else align(bias, levels, expand=True).reshape(B * O)
    out = func(px, pw, pb, *rest, a["groups"] * B, a["dilation"])
    out = out.reshape((N, B, O) + tuple(out.shape[2:])).transpose(0, 1)
    if unbatched_input:
        out = out.squeeze(1)
    return BatchedTensor(out.reshape(sizes + tuple(out.shape[1:])), levels)


register("conv_transpose1d conv_transpose2d conv_transpose3d", _conv_transpose, ("F", "ember"))


def _affine(out, w, b, channel_dim):
    """out * w + b with w, b (batched or not) of shape [C] broadcast along channel_dim."""
    nd = logical_dim(out)
    shape = (-1,) + (1,) * (nd - channel_dim - 1)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out


def _norm_rule(names, defaults, affine):
    """group_norm / instance_norm: the input's leading dimensions fold into N; a batched weight
    or bias is applied after normalizing without it."""

    def rule(func, args, kwargs):
        a = {n: _arg(args, kwargs, i, n, d) for i, (n, d) in enumerate(zip(names, defaults))}
        x = a["input"]
        others = [a[n] for n in names[1:] if n not in affine]
        if any(_is_b(o) for o in others):
            return _no_rule(func)
        w, b = (a[n] for n in affine)
        batched_affine = _is_b(w) or _is_b(b)
        call = dict(a)
        if batched_affine:
            call[affine[0]] = call[affine[1]] = None
        del call["input"]
        if _is_b(x):
            flat, lead = _flat_lead(x._v, logical_dim(x) - 1)  # [lead..., N] fold into N
            out = func(flat, **call)
            out = BatchedTensor(out.reshape(lead + tuple(out.shape[1:])), x._lv)
        else:
            out = func(x, **call)
        if batched_affine:
            out = _affine(out, w, b, 1 if logical_dim(x) > 1 else 0)
        return out

    return rule


register(
    "group_norm",
    _norm_rule(
        ("input", "num_groups", "weight", "bias", "eps"), (None,) * 4 + (1e-5,), ("weight", "bias")
    ),
    ("F", "ember"),
)
register(
    "instance_norm",
    _norm_rule(
        (
            "input",
            "running_mean",
            "running_var",
            "weight",
            "bias",
            "use_input_stats",
            "momentum",
            "eps",
        ),
        (None,) * 5 + (True, 0.1, 1e-5),
        ("weight", "bias"),
    ),
    ("F", "ember"),
)


def _prelu(func, args, kwargs):
    """max(0, x) + w * min(0, x), w along the channel dimension (1, or 0 for a 1-d input)."""
    x, w = args[0], _arg(args, kwargs, 1, "weight")
    nd = logical_dim(x)
    if w.numel() == 1 or nd < 2:
        wv = w.reshape(()) if w.numel() == 1 else w
    else:
        wv = w.reshape((-1,) + (1,) * (nd - 2))
    return x.clamp(min=0) + wv * x.clamp(max=0)


register("prelu", _prelu, ("F", "ember"))
