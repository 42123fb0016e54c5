"""ember.func.vmap by batching rules: each rule against the Python loop over the batch (and against
torch.func.vmap where torch is installed), in_dims/out_dims, nesting, chunk_size, randomness,
errors, and per-example gradients (vmap of grad) against the loop."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _to(m, a):
    if isinstance(a, np.ndarray):
        return m.tensor(a)
    if isinstance(a, (tuple, list)):
        return type(a)(_to(m, x) for x in a)
    if isinstance(a, dict):
        return {k: _to(m, v) for k, v in a.items()}
    return a


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(t) for t in x]
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _slice(a, d, i):
    if d is None:
        return a
    if isinstance(d, (tuple, list)):
        return type(a)(_slice(x, dd, i) for x, dd in zip(a, d))
    if isinstance(d, dict):
        return {k: _slice(a[k], d[k], i) for k in a}
    if isinstance(a, (tuple, list)):
        return type(a)(_slice(x, d, i) for x in a)
    if isinstance(a, dict):
        return {k: _slice(v, d, i) for k, v in a.items()}
    return a.select(d, i)


def _batch(args, in_dims):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    for a, d in zip(args, dims):
        if d is not None:
            leaf = a
            while isinstance(leaf, (tuple, list, dict)):
                leaf = leaf[0] if not isinstance(leaf, dict) else next(iter(leaf.values()))
            dd = d
            while isinstance(dd, (tuple, list, dict)):
                dd = dd[0] if not isinstance(dd, dict) else next(iter(dd.values()))
            return leaf.shape[dd]
    raise AssertionError


def loop(fn, in_dims, args, out_dim=0):
    """The reference: fn on each example, stacked (what vmap replaces)."""
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    outs = [fn(*[_slice(a, d, i) for a, d in zip(args, dims)]) for i in range(_batch(args, dims))]
    if isinstance(outs[0], dict):
        return None  # compared with torch only
    if isinstance(outs[0], (tuple, list)):
        od = out_dim if isinstance(out_dim, tuple) else (out_dim,) * len(outs[0])
        return [ember.stack([o[k] for o in outs], od[k]) for k in range(len(outs[0]))]
    return ember.stack(outs, out_dim)


def close(a, b, rtol, atol):
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            close(a[k], b[k], rtol, atol)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, rtol, atol)
    else:
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def check(make, args, in_dims=0, out_dims=0, rtol=1e-5, atol=1e-5):
    """make(m) -> the function (m is ember or torch); compares vmap with the loop and torch."""
    e_args = _to(ember, args)
    got = ember.func.vmap(make(ember), in_dims, out_dims)(*e_args)
    ref = loop(make(ember), in_dims, e_args, out_dims)
    if ref is not None:
        close(got, ref, rtol, atol)
    torch = _torch()
    if torch is not None:
        want = torch.func.vmap(make(torch), in_dims, out_dims)(*_to(torch, args))
        close(got, want, 1e-4, 1e-4)
    return got


X = rand(4, 3, 5)
Y = rand(4, 3, 5)
V = rand(4, 5)
M = rand(5, 6)

RULES = {
    # elementwise, with broadcasting between batched and unbatched
    "sin": (lambda m: lambda x: x.sin() + m.exp(x) * 2, (X,), 0),
    "add_broadcast": (lambda m: lambda x, y: x + y, (X, rand(3, 5)), (0, None)),
    "mul_rank": (lambda m: lambda x, y: x * y, (V, rand(3, 5)), (0, None)),
    "radd_unbatched": (lambda m: lambda x, y: y - x, (V, rand(2, 5)), (0, None)),
    "pow_div": (lambda m: lambda x, y: (x.abs() + 1) ** y / (y.abs() + 1), (X, Y), 0),
    "where_clamp": (lambda m: lambda x, y: m.where(x > y, x, y).clamp(-0.5, 0.5), (X, Y), 0),
    "compare_float": (lambda m: lambda x: (x > 0).float() * x.ne(0), (X,), 0),
    "masked_fill": (lambda m: lambda x: x.masked_fill(x < 0, 3.0), (X,), 0),
    "activations": (
        lambda m: (
            lambda x: (
                m.nn.functional.relu(x)
                + m.nn.functional.gelu(x)
                + m.sigmoid(x)
                + m.nn.functional.silu(x)
                + m.tanh(x)
                + m.nn.functional.leaky_relu(x, 0.1)
            )
        ),
        (X,),
        0,
    ),
    # reductions
    "sum_all": (lambda m: lambda x: x.sum(), (X,), 0),
    "sum_dims": (
        lambda m: lambda x: x.sum((0, 1), keepdim=True) + m.sum(x, -1, keepdim=True),
        (X,),
        0,
    ),
    "mean_amax": (lambda m: lambda x: x.mean(-1) + x.amax(0).sum(), (X,), 0),
    "max_dim": (lambda m: lambda x: tuple(x.max(1)), (X,), 0),
    "max_all": (lambda m: lambda x: x.max() - x.min(), (X,), 0),
    "argmax": (lambda m: lambda x: (x.argmax(), x.argmax(1), m.argmin(x, 0)), (X,), 0),
    "std_var": (lambda m: lambda x: x.std(1) + x.var() + x.var(0, keepdim=True).sum(), (X,), 0),
    "logsumexp_norm": (lambda m: lambda x: m.logsumexp(x, 1) + x.norm() + x.prod(0).sum(), (X,), 0),
    "any_all": (lambda m: lambda x: ((x > 0).any(1), (x > -5).all()), (X,), 0),
    "cumsum_softmax": (
        lambda m: lambda x: x.cumsum(1) + m.softmax(x, -1) + m.nn.functional.log_softmax(x, 0),
        (X,),
        0,
    ),
    "zero_dim_examples": (
        lambda m: lambda v: (v @ v).softmax(-1) + (v @ v).sum(0) + (v @ v).unsqueeze(0).sum(),
        (V,),
        0,
    ),
    "sort_topk": (lambda m: lambda x: (x.sort(-1)[0], x.topk(2, 0)[1]), (X,), 0),
    # matmul family
    "matmul_both": (lambda m: lambda a, b: a @ b, (rand(4, 3, 5), rand(4, 5, 2)), 0),
    "matmul_right": (lambda m: lambda a, b: a @ b, (X, M), (0, None)),
    "matmul_left": (lambda m: lambda a, b: a @ b, (rand(2, 3), rand(4, 3, 6)), (None, 0)),
    "matmul_1d": (lambda m: lambda a, b: (a @ b, b @ a), (V, rand(4, 5)), 0),
    "mm_mv_dot": (
        lambda m: lambda a, v: (m.mm(a, a.t()), m.mv(a, v), m.dot(v, v)),
        (rand(4, 3, 5), V),
        0,
    ),
    "bmm": (lambda m: lambda a, b: m.bmm(a, b), (rand(4, 2, 3, 5), rand(2, 5, 4)), (0, None)),
    "linear": (
        lambda m: lambda x, w, b: m.nn.functional.linear(x, w, b),
        (X, rand(6, 5), rand(6)),
        (0, None, None),
    ),
    "linear_batched_weight": (
        lambda m: lambda x, w, b: m.nn.functional.linear(x, w, b),
        (rand(3, 5), rand(4, 6, 5), rand(4, 6)),
        (None, 0, 0),
    ),
    "addmm_outer": (
        lambda m: lambda c, a, v: m.addmm(c, a, a.t(), beta=0.5, alpha=2) + m.outer(v, v)[:3, :3],
        (rand(3, 3), rand(4, 3, 5), V),
        (None, 0, 0),
    ),
    "einsum": (lambda m: lambda a, b: m.einsum("ij,jk->ik", a, b), (X, M), (0, None)),
    # views
    "view_reshape": (lambda m: lambda x: x.view(-1) + x.reshape(5, 3).t().reshape(15), (X,), 0),
    "permute_transpose": (lambda m: lambda x: x.permute(1, 0) + x.transpose(0, 1) + x.T, (X,), 0),
    "unsqueeze_squeeze": (
        lambda m: lambda x: x.unsqueeze(0).unsqueeze(-1).squeeze(0).squeeze() + x[None].squeeze(0),
        (X,),
        0,
    ),
    "expand": (lambda m: lambda v, y: v.expand(3, 5) + v.expand_as(y), (V, rand(3, 5)), (0, None)),
    "select_narrow": (lambda m: lambda x: x.select(1, 2) + x.narrow(1, 1, 1).squeeze(1), (X,), 0),
    "slicing": (lambda m: lambda x: x[:, 1:4] * x[0, 1:4] + x[..., 0:3] - x[-1, 1:4], (X,), 0),
    "flatten_movedim": (lambda m: lambda x: x.flatten() + x.movedim(0, 1).flatten(), (X,), 0),
    "chunk_split_unbind": (
        lambda m: lambda x: x.chunk(3, 1)[1] + x.split(2, 1)[0][:, :1] + x.unbind(0)[1][:1],
        (X,),
        0,
    ),
    "cat_stack": (
        lambda m: lambda x, y: (m.cat([x, y], 0), m.stack([x, y], 1), m.cat([x, x], -1)),
        (X, rand(3, 5)),
        (0, None),
    ),
    "repeat_flip_roll": (
        lambda m: lambda x: x.repeat(2, 1) + x.flip(0).roll(1, 1).repeat(2, 1),
        (X,),
        0,
    ),
    # indexing, gather/scatter
    "index_unbatched": (
        lambda m: lambda x, i: x[i] + x[:, i[:2]].sum(),
        (X, np.array([2, 0, 1])),
        (0, None),
    ),
    "index_batched": (
        lambda m: lambda x, i: x[i],
        (X, np.array([[0, 1], [2, 2], [1, 0], [0, 0]])),
        0,
    ),
    "index_batched_col": (
        lambda m: lambda x, i: x[:, i],
        (X, np.array([[0, 4], [2, 2], [1, 3], [0, 0]])),
        0,
    ),
    "gather": (
        lambda m: lambda x, i: m.gather(x, 1, i),
        (X, RNG.integers(0, 5, (4, 3, 2))),
        (0, 0),
    ),
    "gather_unbatched_index": (
        lambda m: lambda x, i: x.gather(1, i),
        (X, RNG.integers(0, 5, (3, 2))),
        (0, None),
    ),
    "scatter": (
        lambda m: lambda x, i, s: x.scatter(1, i, s) + m.scatter_add(x, 1, i, s),
        (X, RNG.integers(0, 5, (4, 3, 2)), rand(4, 3, 2)),
        0,
    ),
    "index_select": (
        lambda m: lambda x, i: m.index_select(x, 1, i),
        (X, RNG.integers(0, 5, (4, 3))),
        0,
    ),
    "index_select_unbatched": (
        lambda m: lambda x, i: x.index_select(0, i),
        (X, np.array([2, 2, 0])),
        (0, None),
    ),
    # nn.functional
    "cross_entropy": (
        lambda m: (
            lambda x, t: (
                m.nn.functional.cross_entropy(x, t),
                m.nn.functional.cross_entropy(x, t, reduction="sum"),
                m.nn.functional.cross_entropy(x, t, reduction="none"),
            )
        ),
        (rand(4, 3, 5), RNG.integers(0, 5, (4, 3))),
        0,
    ),
    "cross_entropy_weight_ignore": (
        lambda m: lambda x, t, w: m.nn.functional.cross_entropy(x, t, w, ignore_index=1),
        (rand(4, 3, 5), RNG.integers(0, 5, (4, 3)), np.abs(rand(5)) + 0.1),
        (0, 0, None),
    ),
    "cross_entropy_single": (
        lambda m: lambda x, t: m.nn.functional.cross_entropy(x, t),
        (rand(4, 5), RNG.integers(0, 5, (4,))),
        0,
    ),
    "nll_mse": (
        lambda m: (
            lambda x, t, y: (
                m.nn.functional.nll_loss(x.log_softmax(-1), t)
                + m.nn.functional.mse_loss(x, y)
                + m.nn.functional.l1_loss(x, y, reduction="sum")
            )
        ),
        (rand(4, 3, 5), RNG.integers(0, 5, (4, 3)), rand(4, 3, 5)),
        0,
    ),
    "conv2d": (
        lambda m: lambda x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
        (rand(4, 2, 3, 6, 6), rand(5, 3, 3, 3), rand(5)),
        (0, None, None),
    ),
    "conv2d_batched_weight": (
        lambda m: lambda x, w, b: m.nn.functional.conv2d(x, w, b, stride=2),
        (rand(2, 3, 7, 7), rand(4, 5, 3, 3, 3), rand(4, 5)),
        (None, 0, 0),
    ),
    "conv2d_unbatched_input": (
        lambda m: lambda x, w: m.nn.functional.conv2d(x, w),
        (rand(4, 3, 6, 6), rand(4, 2, 3, 3, 3)),
        0,
    ),
    "pools": (
        lambda m: (
            lambda x: (
                m.nn.functional.max_pool2d(x, 2)
                + m.nn.functional.avg_pool2d(x, 2)
                + m.nn.functional.adaptive_avg_pool2d(x, 3)
            )
        ),
        (rand(4, 2, 3, 6, 6),),
        0,
    ),
    "layer_norm": (
        lambda m: lambda x, w, b: m.nn.functional.layer_norm(x, (5,), w, b),
        (X, rand(5), rand(5)),
        (0, None, None),
    ),
    "layer_norm_batched_weight": (
        lambda m: lambda x, w: m.nn.functional.layer_norm(x, (3, 5), w),
        (X, rand(4, 3, 5)),
        0,
    ),
    "embedding": (
        lambda m: lambda i, w: m.nn.functional.embedding(i, w),
        (RNG.integers(0, 7, (4, 3)), rand(7, 5)),
        (0, None),
    ),
    "embedding_batched_weight": (
        lambda m: lambda i, w: m.nn.functional.embedding(i, w),
        (RNG.integers(0, 7, (3,)), rand(4, 7, 5)),
        (None, 0),
    ),
    "dropout_eval": (lambda m: lambda x: m.nn.functional.dropout(x, 0.5, training=False), (X,), 0),
    # creation-like
    "like": (
        lambda m: (
            lambda x: m.zeros_like(x) + m.ones_like(x) + m.full_like(x, 2.0) + x.new_zeros(3, 5)
        ),
        (X,),
        0,
    ),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_against_loop_and_torch(name):
    make, args, in_dims = RULES[name]
    check(make, args, in_dims)


MORE_RULES = {
    "take_along_dim": (
        lambda m: lambda x, i: m.take_along_dim(x, i, 1),
        (X, RNG.integers(0, 5, (4, 3, 2))),
        0,
    ),
    "scatter_inplace": (
        lambda m: lambda x, i, s: x.clone().scatter_(1, i, s),
        (X, RNG.integers(0, 5, (4, 3, 2)), rand(4, 3, 2)),
        0,
    ),
    "setitem_batched_index": (
        lambda m: lambda x, i: _setitem_copy(x, i),
        (X, RNG.integers(0, 3, (4, 2))),
        0,
    ),
    "einsum_implicit": (lambda m: lambda a, b: m.einsum("ij,kj", a, b), (X, rand(4, 2, 5)), 0),
    "einsum_ellipsis": (lambda m: lambda a: m.einsum("...j->...", a), (X,), 0),
    "tile_diagonal_trace": (
        lambda m: (
            lambda x: x[:, :3].tile((2, 1)).sum() + x[:, :3].diagonal().sum() + x[:, :3].trace()
        ),
        (X,),
        0,
    ),
    "tril_diff": (lambda m: lambda x: m.tril(x).sum(0) + m.diff(x, dim=1).sum(1).sum(), (X,), 0),
    "cosine_normalize": (
        lambda m: (
            lambda x, y: (
                m.nn.functional.cosine_similarity(x, y, dim=1)
                + m.nn.functional.normalize(x, dim=0).sum(1)
            )
        ),
        (X, Y),
        0,
    ),
    "one_hot_pad": (
        lambda m: (
            lambda i, x: (
                m.nn.functional.one_hot(i, 5),
                m.nn.functional.pad(x, (1, 2)),
                m.nn.functional.pad(x.unsqueeze(0), (1, 1), mode="reflect"),
            )
        ),
        (RNG.integers(0, 5, (4, 3)), X),
        0,
    ),
    "more_losses": (
        lambda m: (
            lambda x, y: (
                m.nn.functional.smooth_l1_loss(x, y)
                + m.nn.functional.huber_loss(x, y, reduction="sum")
                + m.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid())
                + m.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction="sum")
                + m.nn.functional.kl_div(x.log_softmax(-1), y.softmax(-1), reduction="batchmean")
            )
        ),
        (X, Y),
        0,
    ),
    "batch_norm_eval_and_stats_free": (
        lambda m: (
            lambda x, mean, var: (
                m.nn.functional.batch_norm(x, mean, var, training=False)
                + m.nn.functional.batch_norm(x, None, None, training=True)
            )
        ),
        (rand(4, 3, 2, 5), rand(2), np.abs(rand(2)) + 0.5),
        (0, None, None),
    ),
    "conv1d_pool_indices": (
        lambda m: (
            lambda x, w: m.nn.functional.max_pool1d(
                m.nn.functional.conv1d(x, w, padding=1), 2, return_indices=True
            )
        ),
        (rand(4, 2, 3, 8), rand(5, 3, 3)),
        (0, None),
    ),
    "pixel_shuffle_adaptive_max": (
        lambda m: (
            lambda x: (
                m.nn.functional.pixel_shuffle(x, 2).sum()
                + m.nn.functional.adaptive_max_pool2d(x, 2).sum()
            )
        ),
        (rand(4, 2, 4, 4, 4),),
        0,
    ),
    "unflatten_tensor_split_swap": (
        lambda m: (
            lambda x: (
                x.unflatten(1, (5, 1)),
                x.tensor_split(2, 1)[1],
                x.swapaxes(0, 1),
                x.movedim((0, 1), (1, 0)),
            )
        ),
        (X,),
        0,
    ),
    "sdpa": (
        lambda m: lambda q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v),
        (rand(4, 2, 3, 8), rand(4, 2, 5, 8), rand(2, 5, 8)),
        (0, 0, None),
    ),
}


def _setitem_copy(x, i):
    y = x.clone()
    y[i] = 0.0
    return y


def test_setitem_batched_index_after_a_slice_matches_the_loop():
    # torch 2.13's vmap rejects this one (its value keeps the unmoved layout); the loop decides.
    def f(x, i):
        y = x.clone()
        y[:, i] = y[:, i] * 2 + 1
        return y

    x, i = ember.tensor(X), ember.tensor(RNG.integers(0, 3, (4, 2)))
    got = ember.func.vmap(f)(x, i)
    np.testing.assert_allclose(got.numpy(), loop(f, 0, (x, i)).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(MORE_RULES))
def test_more_rules_against_loop_and_torch(name):
    make, args, in_dims = MORE_RULES[name]
    check(make, args, in_dims)


@pytest.mark.parametrize(
    "in_dims,out_dims",
    [(1, 0), (-1, 1), ((1, None), -1), ((0, None), (1, 0))],
)
def test_in_dims_out_dims(in_dims, out_dims):
    x = rand(3, 4, 5)
    y = rand(3, 4, 5) if isinstance(in_dims, int) else rand(5)
    if isinstance(out_dims, tuple):
        check(lambda m: lambda a, b: (a * b, a + b), (x, y), in_dims, out_dims)
    else:
        check(lambda m: lambda a, b: a * b + a.sum(), (x, y), in_dims, out_dims)


def test_pytree_in_dims_and_outputs():
    x, y, z = rand(4, 3), rand(3), rand(3, 4)
    got = check(
        lambda m: lambda d, t: {"a": d["x"] * t[0], "b": d["y"] + t[1]},
        ({"x": x, "y": y}, (z, y)),
        ({"x": 0, "y": None}, (1, None)),
    )
    assert got["a"].shape == (4, 3)


def test_ember_functions_passed_directly():
    a, b = rand(4, 5), rand(4, 5)
    check(lambda m: m.dot, (a, b))
    check(lambda m: m.sum, (a,))
    check(lambda m: m.nn.functional.relu, (a,))
    check(lambda m: m.Tensor.exp, (a,))


def test_out_dims_none_for_unbatched_output():
    x = ember.tensor(rand(4, 3))
    c = ember.ones(2)
    a, b = ember.func.vmap(lambda t: (t * 2, c), out_dims=(0, None))(x)
    assert a.shape == (4, 3) and b is c


def test_unbatched_output_is_expanded():
    got = ember.func.vmap(lambda t: ember.ones(2))(ember.tensor(rand(4, 3)))
    np.testing.assert_allclose(got.numpy(), np.ones((4, 2)))


def test_nested_vmap():
    x, y = rand(2, 3, 5), rand(3, 5)
    check(lambda m: m.func.vmap(lambda a, b: a @ b.unsqueeze(-1)), (x, y), (0, None))
    check(
        lambda m: m.func.vmap(lambda a, b: (a * b).sum(), in_dims=(1, None)),
        (x, rand(3)),
        (0, None),
    )
    # Inner batched over its own dim, outer over another, with both mixing in one op.
    got = ember.func.vmap(
        ember.func.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None)
    )(ember.tensor(rand(3, 5)), ember.tensor(rand(4, 5)))
    assert got.shape == (3, 4, 5)


def test_nested_three_levels_matches_loop():
    x = ember.tensor(rand(2, 3, 4, 5))
    f = ember.func.vmap(ember.func.vmap(ember.func.vmap(lambda r: r.softmax(0) * r.sum())))
    ref = ember.stack(
        [ember.stack([ember.stack([r.softmax(0) * r.sum() for r in b]) for b in a]) for a in x]
    )
    np.testing.assert_allclose(f(x).numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_chunk_size_gives_the_same_result():
    x = ember.tensor(rand(7, 3))
    f = lambda t: (t.exp().sum(), t * 2)  # noqa: E731
    full = ember.func.vmap(f)(x)
    for chunk in (1, 2, 3, 7, 100):
        got = ember.func.vmap(f, chunk_size=chunk)(x)
        for g, r in zip(got, full):
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-6)


def test_inplace_on_batched_tensor():
    x, y = ember.tensor(rand(4, 3)), ember.tensor(rand(3))

    def f(a, b):
        a = a.clone()
        a.add_(b)
        a.mul_(2)
        a[0] = 5.0
        return a

    got = ember.func.vmap(f, in_dims=(0, None))(x, y)
    ref = (x + y) * 2
    ref[:, 0] = 5.0
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)


def test_inplace_on_unbatched_tensor_with_batched_argument_raises():
    x, y = ember.tensor(rand(3)), ember.tensor(rand(4, 3))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ember.func.vmap(lambda a, b: a.add_(b), in_dims=(None, 0))(x, y)
    torch = _torch()
    if torch is not None:
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            torch.func.vmap(lambda a, b: a.add_(b), in_dims=(None, 0))(
                torch.tensor(x.numpy()), torch.tensor(y.numpy())
            )


def test_randomness_error_different_same():
    x = ember.tensor(np.zeros((5, 3), np.float32))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ember.func.vmap(lambda t: t + ember.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ember.func.vmap(lambda t: F.dropout(t + 1, 0.5))(x)
    diff = ember.func.vmap(lambda t: t + ember.rand(3), randomness="different")(x).numpy()
    same = ember.func.vmap(lambda t: t + ember.rand(3), randomness="same")(x).numpy()
    assert not np.allclose(diff[0], diff[1])
    assert np.allclose(same, same[0])
    like = ember.func.vmap(lambda t: ember.randn_like(t), randomness="different")(x).numpy()
    assert not np.allclose(like[0], like[1])
    drop_d = ember.func.vmap(lambda t: F.dropout(t + 1, 0.5), randomness="different")(
        ember.zeros(64, 50)
    ).numpy()
    drop_s = ember.func.vmap(lambda t: F.dropout(t + 1, 0.5), randomness="same")(
        ember.zeros(64, 50)
    ).numpy()
    assert set(np.unique(drop_d)) <= {0.0, 2.0} and not np.allclose(drop_d[0], drop_d[1])
    assert np.allclose(drop_s, drop_s[0])
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ember.func.vmap(lambda t: t, randomness="bad")


ERRORS = {
    "item": (lambda m: m.func.vmap(lambda t: t.item()), RuntimeError, "item"),
    "control_flow": (
        lambda m: m.func.vmap(lambda t: 1 if t.sum() > 0 else 0),
        RuntimeError,
        "control flow",
    ),
    "nonzero": (lambda m: m.func.vmap(lambda t: t.nonzero()), RuntimeError, "dynamic shape"),
    "sizes": (
        lambda m: lambda t: m.func.vmap(lambda a, b: a + b)(t, t[:2]),
        ValueError,
        "same size",
    ),
    "in_dims_structure": (
        lambda m: m.func.vmap(lambda t: t, in_dims=(0, 0)),
        ValueError,
        "in_dims",
    ),
    "in_dim_range": (lambda m: m.func.vmap(lambda t: t, in_dims=3), ValueError, "in_dim"),
    "in_dims_type": (lambda m: m.func.vmap(lambda t: t, in_dims=0.5), ValueError, "in_dims"),
    "not_tensor_output": (
        lambda m: m.func.vmap(lambda t: 3),
        ValueError,
        "must only return Tensors",
    ),
    "out_dims_structure": (
        lambda m: m.func.vmap(lambda t: t, out_dims=(0, 1)),
        ValueError,
        "out_dims",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    make, exc, text = ERRORS[name]
    with pytest.raises(exc, match=text):
        make(ember)(ember.tensor(rand(3, 4)))
    torch = _torch()
    if torch is not None:
        with pytest.raises(exc):
            make(torch)(torch.tensor(rand(3, 4)))


def test_op_without_rule_names_it():
    with pytest.raises(RuntimeError, match=r"Batching rule not implemented for ember\.linalg\.eig"):
        ember.func.vmap(lambda t: ember.linalg.eig(t))(ember.tensor(rand(3, 4, 4)))


def test_batched_tensor_looks_like_a_tensor():
    def f(t):
        assert isinstance(t, ember.Tensor)
        assert t.shape == (3,) and t.dim() == 1 and len(t) == 3 and t.size(0) == 3
        return t

    ember.func.vmap(f)(ember.tensor(rand(4, 3)))


# -- transforms on top: per-example gradients, jacrev, vjp


def _mlp_and_cnn(m):
    m.manual_seed(0)
    mlp = m.nn.Sequential(m.nn.Linear(6, 8), m.nn.ReLU(), m.nn.Linear(8, 3))
    cnn = m.nn.Sequential(
        m.nn.Conv2d(2, 4, 3),
        m.nn.ReLU(),
        m.nn.MaxPool2d(2),
        m.nn.Flatten(),
        m.nn.Linear(4 * 3 * 3, 3),
    )
    return mlp, cnn


@pytest.mark.parametrize("which,shape", [(0, (6,)), (1, (2, 8, 8))])
def test_per_example_gradients_match_the_loop_and_torch(which, shape):
    model = _mlp_and_cnn(ember)[which]
    x, y = rand(5, *shape), RNG.integers(0, 3, (5,))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xb, yb):
        out = ember.func.functional_call(model, p, (xb.unsqueeze(0),))
        return F.cross_entropy(out, yb.unsqueeze(0))

    ex, ey = ember.tensor(x), ember.tensor(y)
    got = ember.func.vmap(ember.func.grad(loss), in_dims=(None, 0, 0))(params, ex, ey)
    ref = [ember.func.grad(loss)(params, ex[i], ey[i]) for i in range(5)]
    for k in params:
        assert got[k].shape == (5, *params[k].shape)
        np.testing.assert_allclose(
            got[k].numpy(), np.stack([r[k].numpy() for r in ref]), rtol=1e-4, atol=1e-6
        )
    torch = _torch()
    if torch is not None:
        tmodel = _mlp_and_cnn(torch)[which]
        tparams = {k: torch.tensor(v.numpy()) for k, v in params.items()}

        def tloss(p, xb, yb):
            out = torch.func.functional_call(tmodel, p, (xb.unsqueeze(0),))
            return torch.nn.functional.cross_entropy(out, yb.unsqueeze(0))

        want = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(
            tparams, torch.tensor(x), torch.tensor(y)
        )
        for k in params:
            np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-5)


def test_grad_and_value_and_vjp_inside_vmap():
    w, x = ember.tensor(rand(3)), ember.tensor(rand(4, 3))

    def f(w, x):
        return (w * x).sin().sum()

    g, v = ember.func.vmap(ember.func.grad_and_value(f), in_dims=(None, 0))(w, x)
    for i in range(4):
        gi, vi = ember.func.grad_and_value(f)(w, x[i])
        np.testing.assert_allclose(g[i].numpy(), gi.numpy(), rtol=1e-5)
        np.testing.assert_allclose(v[i].numpy(), vi.numpy(), rtol=1e-5)

    def pull(x):
        _, fn = ember.func.vjp(lambda t: t.exp() * w, x)
        return fn(ember.ones(3))[0]

    np.testing.assert_allclose(ember.func.vmap(pull)(x).numpy(), (x.exp() * w).numpy(), rtol=1e-5)


def test_jacrev_vectorized_rows_and_vmap_of_jacrev():
    a = rand(3, 3)

    def make(m):
        A = m.tensor(a)
        return lambda x: (A @ x).tanh() * x.sum()

    x = rand(3)
    got = ember.func.jacrev(make(ember))(ember.tensor(x))
    xs = rand(4, 3)
    batched = ember.func.vmap(ember.func.jacrev(make(ember)))(ember.tensor(xs))
    loop_ref = ember.stack([ember.func.jacrev(make(ember))(ember.tensor(r)) for r in xs])
    np.testing.assert_allclose(batched.numpy(), loop_ref.numpy(), rtol=1e-5, atol=1e-6)
    chunked = ember.func.jacrev(make(ember), chunk_size=2)(ember.tensor(x))
    np.testing.assert_allclose(chunked.numpy(), got.numpy(), rtol=1e-6)
    torch = _torch()
    if torch is not None:
        want = torch.func.jacrev(make(torch))(torch.tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        want_b = torch.func.vmap(torch.func.jacrev(make(torch)))(torch.tensor(xs))
        np.testing.assert_allclose(batched.numpy(), want_b.numpy(), rtol=1e-5, atol=1e-6)


def test_second_order_through_conv_inside_vmap_matches_the_loop():
    # The inner grad's result is differentiated again, so the conv must keep its full graph
    # (first_order() is False there); the outer one alone may take the first-order route.
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(2, 3, 3)
    params = {k: v.detach() for k, v in conv.named_parameters()}

    def loss(p, xb):
        return ember.func.functional_call(conv, p, (xb.unsqueeze(0),)).tanh().sum()

    def penalty(p, xb):
        g = ember.func.grad(loss)(p, xb)
        gx = ember.func.grad(loss, argnums=1)(p, xb)  # mixed second derivatives
        return (g["weight"] ** 2).sum() + (gx**2).sum() + loss(p, xb)

    x = ember.tensor(rand(3, 2, 5, 5))
    got = ember.func.vmap(ember.func.grad(penalty), in_dims=(None, 0))(params, x)
    ref = [ember.func.grad(penalty)(params, x[i]) for i in range(3)]
    for k in params:
        np.testing.assert_allclose(
            got[k].numpy(), np.stack([r[k].numpy() for r in ref]), rtol=1e-4, atol=1e-5
        )


def test_inplace_functional_forms():
    x = ember.tensor(rand(4, 3))

    def f(t):
        t = t.clone()
        out = F.relu(t, inplace=True)
        t.sigmoid_()
        return out, t

    out, t = ember.func.vmap(f)(x)
    ref = x.relu().sigmoid()
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    np.testing.assert_allclose(t.numpy(), ref.numpy(), rtol=1e-6)


def test_batch_norm_with_running_stats_in_training_raises():
    bn = ember.nn.BatchNorm1d(3)
    with pytest.raises(RuntimeError, match="running statistics"):
        ember.func.vmap(lambda t: bn(t.unsqueeze(0)))(ember.tensor(rand(4, 3)))
    bn.eval()
    got = ember.func.vmap(lambda t: bn(t.unsqueeze(0)))(ember.tensor(rand(4, 3)))
    assert got.shape == (4, 1, 3)


def test_method_without_rule_names_it():
    x = ember.tensor(rand(4, 3))
    with pytest.raises(
        RuntimeError, match=r"Batching rule not implemented for ember\.Tensor\.histc"
    ):
        ember.func.vmap(lambda t: t.histc())(x)
