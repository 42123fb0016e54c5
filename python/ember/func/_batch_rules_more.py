"""More batching rules of ember.func.vmap (Note [vmap levels] in _vmap.py): linear algebra that
is batched by nature, index_add/index_copy, transposed convolution, group and instance norm and
prelu with a batched weight. Importing this module registers them into _batch_rules.RULES.
"""

from ._batch_rules import (
    _MISSING,
    _arg,
    _batch_sizes,
    _dimop,
    _is_b,
    _is_t,
    _no_rule,
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
            return _no_rule(func)
        levels = levels_of(x, src)
        if inplace and (not _is_b(x) or x._lv != levels):
            raise RuntimeError(
                f"vmap: {func.__name__}(self, *extra_args) is not possible because there exists a "
                "Tensor `other` in extra_args that has more elements than `self`. This happened "
                "due to `other` being vmapped over but `self` not being vmapped over in a vmap."
            )
        nd = logical_dim(x)
        nb = len(levels)
        d = (dim % nd if nd else 0) + nb
        px = x._v if inplace else align(x, levels, expand=True)
        ps = align(src, levels, rank=nd, expand=True)
        rest = {k: v for k, v in kwargs.items() if k not in ("dim", "index", "source")}
        out = func(px, d, index, ps, *args[4:], **rest)
        return x if inplace else BatchedTensor(out, levels)

    return rule


register("index_add index_copy", _index_into(False), ("ember", "Tensor"))
register("index_add_ index_copy_", _index_into(True), ("Tensor",))


def _index_put(inplace):
    # index_put is indexed assignment (`out[indices] = values`), which __setitem__'s rule batches;
    # accumulate=True sums repeated positions, which assignment cannot express
    def rule(func, args, kwargs):
        from ._vmap import _VmapMode

        x, indices, values, accumulate = _bind_index_put(*args, **kwargs)
        if accumulate:
            return _no_rule(func)
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
