"""Fuzz families the classic and edge families never draw (session 12's widening, issue 19):
reductions over dim tuples with keepdim and dtype=, indexing writes (scatter_reduce,
index_put_, index_copy, masked_scatter, put_), the nn.functional losses nn_cases.py leaves out,
torch.linalg, torch.fft and sparse COO basics. Inputs come in every layout of strategies.py
(transposed, permuted, sliced, expanded), 0-d and zero-size shapes, with special values where
the op is elementwise enough for them to be compared.

Every case runs on both libraries through harness.call: `linalg.<fn>`, `fft.<fn>` and
`sparse.<fn>` name functions of those submodules; `prog:<name>` cases are programs in
WIDE_PROGRAMS (sparse tensors are built and densified inside them, so results compare as dense).
"""

from __future__ import annotations

import numpy as np
from edge_cases import special_tensors
from harness import Case
from hypothesis import strategies as st
from op_db import Dt, T
from strategies import chance, dim_of, index_tensor, shapes, tensors

# ----------------------------------------------------------------------------- reductions

DIMS_REDUCE = (
    "sum mean nansum nanmean amax amin std var logsumexp any all count_nonzero "
    "norm var_mean std_mean aminmax"
).split()


@st.composite
def dim_tuple(draw, nd):
    """A dims argument: a tuple or list of dims (negative, repeated, out of range, empty)."""
    n = draw(st.integers(0, max(nd, 1)))
    dims = [draw(st.integers(-max(nd, 1), max(nd, 1) - 1)) for _ in range(n)]
    if chance(draw, 10):
        dims.append(draw(st.sampled_from((nd, -nd - 1, 7))))  # out of range
    if chance(draw, 8) and dims:
        dims.append(dims[0])  # a repeated dim
    return tuple(dims) if chance(draw, 70) else list(dims)


@st.composite
def reduce_dims_cases(draw):
    """Reductions over several dims at once, keepdim, dtype= and the function/method forms."""
    op = draw(st.sampled_from(DIMS_REDUCE))
    float_only = op in (
        "mean",
        "nanmean",
        "std",
        "var",
        "logsumexp",
        "norm",
        "var_mean",
        "std_mean",
    )
    dt = draw(st.sampled_from(("float32", "float32", "float64", "int64", "int32", "bool")))
    if float_only and chance(draw, 80):
        dt = draw(st.sampled_from(("float32", "float64")))
    x = draw(special_tensors(dtype=dt, max_dims=4, summed=True))
    nd = x.ndim
    dims = draw(dim_tuple(nd))
    kw = {}
    if op == "aminmax":  # a single dim only
        kw = {"dim": dim_of(draw, nd)} if chance(draw, 70) else {}
    elif op == "count_nonzero":
        kw = {"dim": dims}
    elif op == "norm":
        kw = {"dim": dims, "p": draw(st.sampled_from((2, 1, float("inf"), "fro", 0, 3)))}
    else:
        kw = {"dim": dims}
    if op not in ("count_nonzero", "aminmax") and chance(draw, 50):
        kw["keepdim"] = draw(st.booleans())
    elif op == "aminmax" and chance(draw, 50):
        kw["keepdim"] = True
    if op in ("std", "var", "var_mean", "std_mean") and chance(draw, 50):
        kw["correction"] = draw(st.sampled_from((0, 1, 2)))
    if op in ("sum", "nansum", "mean", "nanmean") and chance(draw, 30):
        kw["dtype"] = Dt(draw(st.sampled_from(("float64", "float32", "int64"))))
    fn = draw(st.sampled_from((op, f"Tensor.{op}"))) if op != "aminmax" else op
    return Case(fn, (x,), kw)


# ----------------------------------------------------------------------------- indexing writes


@st.composite
def index_write_cases(draw):
    """scatter_reduce, index_put_ (accumulate), index_copy, masked_scatter, put_, index_reduce
    with in-range, negative and out-of-range indices."""
    x = draw(
        tensors(
            min_dims=1, max_dims=3, dtype=draw(st.sampled_from(("float32", "float64", "int64")))
        )
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nd, d = x.ndim, dim_of(draw, x.ndim)
    size = x.shape[d] if -nd <= d < nd else 2
    oob = chance(draw, 10)
    how = draw(
        st.sampled_from(
            ("scatter_reduce", "index_put", "index_copy", "masked_scatter", "put", "index_reduce")
        )
    )
    if how == "scatter_reduce":
        idx_shape = tuple(min(s, draw(st.integers(0, 3))) for s in x.shape)
        idx = index_tensor(idx_shape, size + oob, rng, low=-oob)
        src = draw(tensors(shape=idx.shape, dtype=x.dtype))
        reduce = draw(st.sampled_from(("sum", "prod", "mean", "amax", "amin", "bogus")))
        kw = {"include_self": draw(st.booleans())} if chance(draw, 50) else {}
        return Case("scatter_reduce", (x, d, idx, src, reduce), kw)
    if how == "index_put":
        n = draw(st.integers(0, 4))
        idx = index_tensor((n,), x.shape[0] + oob, rng, low=-x.shape[0] if chance(draw, 30) else 0)
        vshape = (n,) + x.shape[1:] if chance(draw, 70) else ()
        v = draw(tensors(shape=vshape, dtype=x.dtype))
        acc = draw(st.booleans())
        # repeated indices without accumulate write in an unspecified order
        return Case(
            "Tensor.index_put_",
            (x, (idx,), v),
            {"accumulate": acc},
            compare="values" if acc else "shape",
        )
    if how in ("index_copy", "index_reduce"):
        flat = index_tensor((min(size, draw(st.integers(0, 3))),), size + oob, rng)
        src_shape = tuple(
            flat.values.size if i == d % max(nd, 1) else s for i, s in enumerate(x.shape)
        )
        src = draw(tensors(shape=src_shape, dtype=x.dtype))
        if how == "index_copy":
            return Case("index_copy", (x, d, flat, src), compare="shape")
        reduce = draw(st.sampled_from(("prod", "mean", "amax", "amin")))
        return Case(
            "Tensor.index_reduce", (x, d, flat, src, reduce), {"include_self": draw(st.booleans())}
        )
    if how == "masked_scatter":
        mask = T(rng.random(x.shape if chance(draw, 85) else x.shape[-1:]) < 0.5, "bool")
        src = draw(
            tensors(shape=(max(0, x.values.size + draw(st.integers(-1, 2))),), dtype=x.dtype)
        )
        return Case("Tensor.masked_scatter", (x, mask, src))
    idx = index_tensor(draw(shapes(0, 2)), x.values.size + oob, rng, low=-oob)
    src = draw(tensors(shape=idx.shape, dtype=x.dtype))
    acc = chance(draw, 50)  # without accumulate, repeated indices write in any order
    return Case(
        "Tensor.put_", (x, idx, src), {"accumulate": acc}, compare="values" if acc else "shape"
    )


# ----------------------------------------------------------------------------- losses

LOSSES = (
    "kl_div poisson_nll_loss gaussian_nll_loss cosine_embedding_loss margin_ranking_loss "
    "hinge_embedding_loss multilabel_margin_loss multi_margin_loss triplet_margin_loss "
    "multilabel_soft_margin_loss binary_cross_entropy"
).split()


@st.composite
def more_loss_cases(draw):
    """The losses nn_cases.py never draws, with every reduction (and a bad one), mismatched
    shapes now and then, and special values in the input."""
    name = draw(st.sampled_from(LOSSES))
    dt = draw(st.sampled_from(("float32", "float32", "float64")))
    n, c = draw(st.integers(0, 3)), draw(st.integers(1, 4))
    red = draw(st.sampled_from(("mean", "sum", "none", "batchmean", "bogus")))
    if red == "batchmean" and name != "kl_div":
        red = "mean"
    kw = {"reduction": red}
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = (n, c)
    bad = chance(draw, 8)
    x = (
        draw(special_tensors(shape=shape, dtype=dt, summed=True))
        if chance(draw, 30)
        else draw(tensors(shape=shape, dtype=dt))
    )
    y = draw(tensors(shape=(n, c + 1) if bad else shape, dtype=dt))
    if name == "kl_div":
        kw["log_target"] = draw(st.booleans())
        return Case("F.kl_div", (x, y), kw)
    if name == "poisson_nll_loss":
        kw["log_input"] = draw(st.booleans())
        kw["full"] = draw(st.booleans())
        return Case(
            "F.poisson_nll_loss", (x, draw(tensors(shape=shape, dtype=dt, low=0, high=4))), kw
        )
    if name == "gaussian_nll_loss":
        var = draw(tensors(shape=shape if chance(draw, 70) else (n, 1), dtype=dt, low=-0.5, high=2))
        kw["full"] = draw(st.booleans())
        return Case("F.gaussian_nll_loss", (x, y, var), kw)
    if name in ("cosine_embedding_loss", "margin_ranking_loss"):
        t = T(
            rng.choice([-1, 1], size=(n,) if name == "cosine_embedding_loss" else shape).astype(
                np.float64
            ),
            dt,
        )
        kw["margin"] = draw(st.sampled_from((0.0, 0.5, -1.0)))
        return Case(f"F.{name}", (x, y, t), kw)
    if name == "hinge_embedding_loss":
        t = T(rng.choice([-1, 1], size=shape).astype(np.float64), dt)
        return Case("F.hinge_embedding_loss", (x, t), kw)
    if name == "multilabel_margin_loss":
        t = index_tensor(shape, c, rng, low=-1)
        return Case("F.multilabel_margin_loss", (x, t), kw)
    if name == "multi_margin_loss":
        t = index_tensor((n,), c + bad, rng)
        kw["p"] = draw(st.sampled_from((1, 2, 3)))
        return Case("F.multi_margin_loss", (x, t), kw)
    if name == "triplet_margin_loss":
        z = draw(tensors(shape=shape, dtype=dt))
        kw["swap"] = draw(st.booleans())
        return Case("F.triplet_margin_loss", (x, y, z), kw)
    if name == "multilabel_soft_margin_loss":
        t = T((rng.random(shape) < 0.5).astype(np.float64), dt)
        return Case("F.multilabel_soft_margin_loss", (x, t), kw)
    p = draw(tensors(shape=shape, dtype=dt, low=0, high=1))
    t = draw(tensors(shape=shape, dtype=dt, low=0, high=1))
    w = {"weight": draw(tensors(shape=(c,), dtype=dt, low=0, high=2))} if chance(draw, 30) else {}
    return Case("F.binary_cross_entropy", (p, t), {**kw, **w})


# ----------------------------------------------------------------------------- linalg


@st.composite
def linalg_cases(draw):
    """torch.linalg's functions whose results are unique (norms, det, solve, inverses,
    eigenvalues of symmetric matrices, singular values), batched and unbatched, singular and
    non-square inputs included."""
    dt = draw(st.sampled_from(("float32", "float64", "float64", "int64")))
    n = draw(st.integers(0, 4))
    batch = draw(st.sampled_from(((), (), (2,), (0,))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    square = chance(draw, 85)
    shape = batch + ((n, n) if square else (n, n + 1))
    vals = rng.uniform(-2, 2, size=shape).round(2)
    if square and n and chance(draw, 60):  # well conditioned: diagonally dominant
        vals = vals + np.eye(n) * 4
    a = T(
        vals if dt != "int64" else vals.round(),
        dt,
        draw(st.sampled_from(("contiguous", "transposed"))),
    )
    fn = draw(
        st.sampled_from(
            (
                "vector_norm",
                "matrix_norm",
                "norm",
                "det",
                "slogdet",
                "inv",
                "solve",
                "eigvalsh",
                "svdvals",
                "matrix_rank",
                "pinv",
                "cholesky",
                "cross",
                "matrix_power",
                "vecdot",
                "multi_dot",
                "cond",
                "tensorinv",
                "lstsq",
            )
        )
    )
    if fn == "vector_norm":
        kw = {"ord": draw(st.sampled_from((2, 1, 0, float("inf"), -float("inf"), 3.5)))}
        if chance(draw, 50):
            kw["dim"] = draw(dim_tuple(a.ndim))
            kw["keepdim"] = draw(st.booleans())
        return Case("linalg.vector_norm", (a,), kw)
    if fn == "matrix_norm":
        return Case(
            "linalg.matrix_norm",
            (a,),
            {"ord": draw(st.sampled_from(("fro", "nuc", 1, -1, 2, float("inf"))))},
        )
    if fn == "norm":
        return Case("linalg.norm", (a,), {"ord": draw(st.sampled_from((None, "fro", 2, 1)))})
    if fn == "slogdet":
        return Case("linalg.slogdet", (a,))
    if fn in ("det", "inv", "svdvals", "pinv", "matrix_rank", "cond"):
        return Case(f"linalg.{fn}", (a,))
    if fn == "eigvalsh":  # symmetric input
        sym = (vals + np.swapaxes(vals, -1, -2)) / 2 if square else vals
        return Case("linalg.eigvalsh", (T(sym, dt),), {"UPLO": draw(st.sampled_from(("L", "U")))})
    if fn == "cholesky":
        if square and n:
            spd = vals @ np.swapaxes(vals, -1, -2) + np.eye(n) * (n + 1)
            return Case("linalg.cholesky", (T(spd.round(4), dt),))
        return Case("linalg.cholesky", (a,))
    if fn == "solve":
        b = T(rng.uniform(-2, 2, size=batch + (n, draw(st.integers(1, 2)))).round(2), dt)
        return Case("linalg.solve", (a, b))
    if fn == "lstsq":
        b = T(rng.uniform(-2, 2, size=batch + (n, 1)).round(2), dt)
        return Case("prog:lstsq_solution", (a, b))
    if fn == "cross":
        u = draw(tensors(shape=batch + (3,), dtype=dt))
        v = draw(tensors(shape=batch + (3 if chance(draw, 90) else 2,), dtype=dt))
        return Case("linalg.cross", (u, v))
    if fn == "matrix_power":
        return Case("linalg.matrix_power", (a, draw(st.sampled_from((0, 1, 2, 3, -1)))))
    if fn == "vecdot":
        return Case("linalg.vecdot", (a, a), {"dim": -1})
    mat = T(rng.uniform(-2, 2, size=(n, n)).round(2) + np.eye(n) * 4, dt)
    if fn == "multi_dot":
        m2 = T(rng.uniform(-2, 2, size=(n, 2)).round(2), dt)
        return Case("linalg.multi_dot", ([mat, m2, T(np.ones((2, 1)), dt)],))
    return Case("linalg.tensorinv", (mat,), {"ind": 1})


# ----------------------------------------------------------------------------- fft


@st.composite
def fft_cases(draw):
    """torch.fft transforms with n / s, dim, norm (a bad one too), real and complex inputs, odd
    and zero lengths, plus the helper functions (fftfreq, fftshift)."""
    dt = draw(st.sampled_from(("float32", "float64", "float32", "int64")))
    x = draw(tensors(dtype=dt, min_dims=1, max_dims=3))
    fn = draw(
        st.sampled_from(
            (
                "fft",
                "ifft",
                "rfft",
                "irfft",
                "hfft",
                "ihfft",
                "fft2",
                "rfft2",
                "fftn",
                "rfftn",
                "irfftn",
                "fftshift",
                "ifftshift",
                "fftfreq",
                "rfftfreq",
            )
        )
    )
    norm = draw(st.sampled_from((None, None, "ortho", "forward", "backward", "bogus")))
    kw = {} if norm is None else {"norm": norm}
    if fn in ("fftfreq", "rfftfreq"):
        return Case(
            f"fft.{fn}", (draw(st.integers(-1, 6)),), {"d": draw(st.sampled_from((1.0, 0.5, 0.0)))}
        )
    if fn in ("fftshift", "ifftshift"):
        return Case(f"fft.{fn}", (x,), {"dim": draw(dim_tuple(x.ndim))} if chance(draw, 50) else {})
    if fn in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        if chance(draw, 40):
            kw["n"] = draw(st.sampled_from((0, 1, 2, 3, 5, -1)))
        if chance(draw, 40):
            kw["dim"] = dim_of(draw, x.ndim)
        return Case(f"fft.{fn}", (x,), kw)
    if chance(draw, 40):
        k = draw(st.integers(1, x.ndim))
        kw["s"] = tuple(draw(st.sampled_from((1, 2, 3, 4))) for _ in range(k))
        kw["dim"] = tuple(range(-k, 0))
    elif chance(draw, 30):
        kw["dim"] = draw(dim_tuple(x.ndim))
    return Case(f"fft.{fn}", (x,), kw)


# ----------------------------------------------------------------------------- sparse


def to_sparse_dense(m, x, how):
    """A sparse COO tensor built from x, an op on it, the dense result."""
    s = x.to_sparse()
    if how == "roundtrip":
        return s.to_dense()
    if how == "coalesce":
        return (s + s).coalesce().to_dense()
    if how == "sum":
        return m.sparse.sum(s)
    if how == "mm":
        return m.sparse.mm(s, x.t().contiguous())
    if how == "mul":
        return (s * 2).to_dense()
    if how == "indices":
        c = s.coalesce()
        return c.indices(), c.values(), c._nnz()
    return s.t().to_dense()


def coo_tensor(m, indices, values, size):
    """torch.sparse_coo_tensor from index/value lists, its invariants checked (torch reads out of
    bounds on an out-of-range index otherwise)."""
    return m.sparse_coo_tensor(indices, values, size, check_invariants=True).to_dense()


def lstsq_solution(m, a, b):
    """linalg.lstsq's solution (its residuals and rank depend on the driver)."""
    return m.linalg.lstsq(a, b).solution


WIDE_PROGRAMS = {
    "to_sparse_dense": to_sparse_dense,
    "coo_tensor": coo_tensor,
    "lstsq_solution": lstsq_solution,
}


@st.composite
def sparse_cases(draw):
    """Sparse COO basics: to_sparse and back, coalescing duplicates, sparse.sum, sparse.mm,
    scalar multiplication, transposition, and sparse_coo_tensor with bad indices."""
    dt = draw(st.sampled_from(("float32", "float64", "int64")))
    if chance(draw, 30):
        n = draw(st.integers(0, 4))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        size = (3, 3)
        idx = rng.integers(-1 if chance(draw, 10) else 0, 4 if chance(draw, 10) else 3, size=(2, n))
        vals = T(rng.uniform(-2, 2, size=(n,)).round(2), dt)
        return Case("prog:coo_tensor", (idx.tolist(), vals, size))
    x = draw(tensors(shape=draw(shapes(2, 2)), dtype=dt))
    x = T(np.where(np.abs(x.values) < 1, 0, x.values), dt, x.layout) if dt != "int64" else x
    how = draw(st.sampled_from(("roundtrip", "coalesce", "sum", "mm", "mul", "indices", "t")))
    if how == "mm" and dt == "int64":
        how = "roundtrip"
    return Case("prog:to_sparse_dense", (x, how))


WIDE_STRATEGIES = (
    reduce_dims_cases(),
    reduce_dims_cases(),
    index_write_cases(),
    more_loss_cases(),
    linalg_cases(),
    fft_cases(),
    sparse_cases(),
)
