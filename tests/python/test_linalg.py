"""ember.linalg (LAPACK-backed) and the top-level linear-algebra names against torch 2.13:
values, dtypes and shapes, torch's error classes, gradients by gradcheck."""

import numpy as np
import pytest
from _breadth_util import check, check_raises, rand

import ember


def T(m, a, dt="float64"):
    return m.tensor(np.asarray(a).tolist(), dtype=getattr(m, dt))


SQ = rand(3, 4, 4, seed=11) + 4 * np.eye(4)  # well conditioned
SPD = SQ @ np.swapaxes(SQ, -1, -2) + np.eye(4)
RECT = rand(5, 3, seed=12)
WIDE = rand(2, 3, 5, seed=13)
RHS = rand(3, 4, 2, seed=14)


def _abs_cols(x):
    # Singular and eigen vectors are unique up to sign: compare magnitudes.
    return x.abs()


CASES = {
    "inv": lambda m: m.linalg.inv(T(m, SQ)),
    "inv_f32": lambda m: m.linalg.inv(T(m, SQ[0], "float32")),
    "inverse_top": lambda m: m.inverse(T(m, SQ[0])),
    "inv_ex": lambda m: tuple(m.linalg.inv_ex(T(m, SQ))),
    "det": lambda m: [
        m.linalg.det(T(m, SQ)),
        m.det(T(m, [[0.0, 1.0], [1.0, 0.0]])),
        m.linalg.det(m.zeros(2, 0, 0, dtype=m.float64)),
    ],
    "slogdet": lambda m: tuple(m.linalg.slogdet(T(m, -SQ))),
    "logdet": lambda m: [m.logdet(T(m, SPD)), m.logdet(T(m, [[0.0, 1.0], [1.0, 0.0]]))],
    "solve": lambda m: m.linalg.solve(T(m, SQ), T(m, RHS)),
    "solve_vector": lambda m: m.linalg.solve(T(m, SQ[0]), T(m, RHS[0, :, 0])),
    "solve_batched_vector": lambda m: m.linalg.solve(T(m, SQ), T(m, RHS[:, :, 0])),
    "solve_bcast": lambda m: m.linalg.solve(T(m, SQ[0]), T(m, rand(2, 4, 3))),
    "solve_right": lambda m: m.linalg.solve(T(m, SQ), T(m, rand(3, 2, 4)), left=False),
    "solve_triangular": lambda m: [
        m.linalg.solve_triangular(T(m, np.triu(SQ)), T(m, RHS), upper=True),
        m.linalg.solve_triangular(T(m, np.tril(SQ)), T(m, RHS), upper=False, unitriangular=True),
        m.linalg.solve_triangular(T(m, np.triu(SQ)), T(m, rand(3, 2, 4)), upper=True, left=False),
    ],
    "cholesky": lambda m: [
        m.linalg.cholesky(T(m, SPD)),
        m.linalg.cholesky(T(m, SPD), upper=True),
        m.cholesky(T(m, SPD[0])),
    ],
    "cholesky_ex_fail": lambda m: m.linalg.cholesky_ex(T(m, -SPD)).info,
    "cholesky_solve_inverse": lambda m: [
        m.cholesky_solve(T(m, RHS), m.linalg.cholesky(T(m, SPD))),
        m.cholesky_inverse(m.linalg.cholesky(T(m, SPD[0]), upper=True), upper=True),
    ],
    "qr_reduced": lambda m: [_abs_cols(x) for x in m.linalg.qr(T(m, RECT))],
    "qr_complete": lambda m: [_abs_cols(x) for x in m.linalg.qr(T(m, WIDE), mode="complete")],
    "qr_r": lambda m: _abs_cols(m.linalg.qr(T(m, RECT), mode="r").R),
    "svdvals": lambda m: [m.linalg.svdvals(T(m, WIDE)), m.linalg.svd(T(m, RECT)).S],
    "svd_shapes": lambda m: (
        [tuple(x.shape) for x in m.linalg.svd(T(m, WIDE))]
        + [tuple(x.shape) for x in m.linalg.svd(T(m, WIDE), full_matrices=False)]
    ),
    "svd_abs": lambda m: [_abs_cols(x) for x in m.linalg.svd(T(m, RECT), full_matrices=False)],
    "torch_svd": lambda m: [_abs_cols(x) for x in m.svd(T(m, RECT))],
    "torch_svd_no_uv": lambda m: list(m.svd(T(m, RECT), compute_uv=False)),
    "eigh": lambda m: [
        m.linalg.eigh(T(m, SPD)).eigenvalues,
        _abs_cols(m.linalg.eigh(T(m, SPD)).eigenvectors),
    ],
    "eigh_upper": lambda m: m.linalg.eigvalsh(T(m, np.triu(SPD)), UPLO="U"),
    "pinv": lambda m: [
        m.linalg.pinv(T(m, RECT)),
        m.linalg.pinv(T(m, WIDE)),
        m.linalg.pinv(T(m, SPD), hermitian=True),
        m.pinverse(T(m, RECT)),
    ],
    "pinv_rank_deficient": lambda m: m.linalg.pinv(T(m, [[1.0, 2.0], [2.0, 4.0]])),
    "matrix_rank": lambda m: [
        m.linalg.matrix_rank(T(m, [[1.0, 2.0], [2.0, 4.0]])),
        m.linalg.matrix_rank(T(m, WIDE)),
        m.linalg.matrix_rank(T(m, SPD), hermitian=True),
    ],
    "lstsq": lambda m: [
        m.linalg.lstsq(T(m, RECT), T(m, rand(5, 2))).solution,
        m.linalg.lstsq(T(m, RECT), T(m, rand(5, 2))).rank,
    ],
    "vector_norm": lambda m: [
        m.linalg.vector_norm(T(m, RECT)),
        m.linalg.vector_norm(T(m, RECT), 1, 0),
        m.linalg.vector_norm(T(m, RECT), float("inf"), 1, keepdim=True),
        m.linalg.vector_norm(T(m, RECT), 0),
        m.linalg.vector_norm(T(m, RECT), 3.5),
        m.linalg.vector_norm(T(m, RECT, "float32"), dtype=m.float64),
    ],
    "matrix_norm": lambda m: [
        m.linalg.matrix_norm(T(m, WIDE), o)
        for o in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf"))
    ],
    "matrix_norm_keepdim": lambda m: m.linalg.matrix_norm(T(m, WIDE), 1, dim=(0, 2), keepdim=True),
    "norm": lambda m: [
        m.linalg.norm(T(m, WIDE)),
        m.linalg.norm(T(m, RECT), "nuc"),
        m.linalg.norm(T(m, RECT), 2),
        m.linalg.norm(T(m, RECT[0]), 1),
        m.linalg.norm(T(m, WIDE), dim=(1, 2)),
        m.linalg.norm(T(m, WIDE), dim=2),
    ],
    "matrix_power": lambda m: (
        [m.linalg.matrix_power(T(m, SQ), k) for k in (0, 1, 3, -2)]
        + [m.matrix_power(T(m, SQ[0]), 2)]
    ),
    "matrix_exp": lambda m: [
        m.linalg.matrix_exp(T(m, SQ)),
        m.matrix_exp(T(m, SQ[0] / 10, "float32")),
    ],
    "multi_dot": lambda m: m.linalg.multi_dot([T(m, rand(3)), T(m, rand(3, 4)), T(m, rand(4, 2))]),
    "lu_factor": lambda m: list(m.linalg.lu_factor(T(m, SQ))),
    "cond": lambda m: m.linalg.cond(T(m, SQ)),
    "vecdot_diagonal": lambda m: [
        m.linalg.vecdot(T(m, RECT), T(m, RECT)),
        m.linalg.diagonal(T(m, WIDE)),
    ],
    "methods": lambda m: [
        T(m, SQ).det(),
        T(m, SQ).inverse(),
        T(m, SQ).logdet(),
        T(m, SPD).cholesky(),
        T(m, SQ).matrix_power(2),
        T(m, SQ).slogdet()[1],
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(torch, name):
    check(torch, CASES[name], rtol=1e-6, atol=1e-8)


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
ERRORS = {
    "inv_singular": lambda m: m.linalg.inv(T(m, SINGULAR)),
    "inv_not_square": lambda m: m.linalg.inv(T(m, RECT)),
    "inv_1d": lambda m: m.linalg.inv(T(m, [1.0, 2.0])),
    "inv_int": lambda m: m.linalg.inv(T(m, [[1, 2], [3, 4]], "int64")),
    "solve_singular": lambda m: m.linalg.solve(T(m, SINGULAR), T(m, [1.0, 2.0])),
    "solve_dtypes": lambda m: m.linalg.solve(T(m, SQ[0]), T(m, RHS[0], "float32")),
    "solve_shapes": lambda m: m.linalg.solve(T(m, SQ[0]), T(m, rand(3, 2))),
    "cholesky_not_pd": lambda m: m.linalg.cholesky(T(m, -SPD)),
    "det_not_square": lambda m: m.linalg.det(T(m, RECT)),
    "eigh_uplo": lambda m: m.linalg.eigh(T(m, SPD), UPLO="X"),
    "qr_mode": lambda m: m.linalg.qr(T(m, RECT), mode="bad"),
    "vector_norm_int": lambda m: m.linalg.vector_norm(T(m, [1, 2], "int64")),
    "norm_3d_ord": lambda m: m.linalg.norm(T(m, WIDE), 2),
    "matrix_power_rect": lambda m: m.linalg.matrix_power(T(m, RECT), 2),
    "multi_dot_one": lambda m: m.linalg.multi_dot([T(m, RECT)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check_raises(torch, ERRORS[name])


def test_linalg_error_is_runtime_error():
    with pytest.raises(RuntimeError, match="singular"):
        ember.linalg.inv(ember.tensor(SINGULAR))
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def _sym(x):
    return x @ x.mT + ember.eye(x.shape[-1], dtype=x.dtype)


GRADS = {
    "inv": lambda a, b: ember.linalg.inv(a),
    "det": lambda a, b: ember.linalg.det(a),
    "slogdet": lambda a, b: ember.linalg.slogdet(a).logabsdet,
    "solve": lambda a, b: ember.linalg.solve(a, b),
    "solve_triangular": lambda a, b: ember.linalg.solve_triangular(
        a.triu() + 3 * ember.eye(4, dtype=a.dtype), b, upper=True
    ),
    "cholesky": lambda a, b: ember.linalg.cholesky(_sym(a)),
    "cholesky_upper": lambda a, b: ember.linalg.cholesky(_sym(a), upper=True),
    "qr": lambda a, b: ember.linalg.qr(a[:, :3]),
    "eigh": lambda a, b: ember.linalg.eigh(_sym(a)),
    "eigvalsh": lambda a, b: ember.linalg.eigvalsh(_sym(a)),
    "svdvals": lambda a, b: ember.linalg.svdvals(a),
    "svd_reduced": lambda a, b: ember.linalg.svd(a[:, :3], full_matrices=False),
    "svd_wide": lambda a, b: ember.linalg.svd(a[:3], full_matrices=False),
    "pinv": lambda a, b: ember.linalg.pinv(a[:, :3]),
    "matrix_exp": lambda a, b: ember.linalg.matrix_exp(a / 4),
    "matrix_norm_nuc": lambda a, b: ember.linalg.matrix_norm(a, "nuc"),
    "vector_norm": lambda a, b: ember.linalg.vector_norm(a, 3),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    a = ember.tensor(SQ[0], requires_grad=True)
    b = ember.tensor(RHS[0], requires_grad=True)
    fn = GRADS[name]
    if name in ("svd_reduced", "svd_wide", "eigh", "qr"):
        # Vectors are defined up to sign: check a sign-invariant function of them.
        raw = fn

        def fn(a, b):
            outs = raw(a, b)
            return tuple(o * o for o in outs)

    assert ember.autograd.gradcheck(fn, (a, b))


def test_gradients_match_torch(torch):
    """Cholesky and eigh treat A as symmetric: their gradients must equal torch's exactly."""
    for fn in (
        lambda m, x: m.linalg.cholesky(x).sum(),
        lambda m, x: (
            (m.linalg.eigh(x).eigenvectors ** 2 * 3).sum() + m.linalg.eigvalsh(x).pow(2).sum()
        ),
    ):
        grads = []
        for m in (ember, torch):
            x = T(m, SPD[0])
            x.requires_grad_(True)
            fn(m, x).backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-8)


def test_double_backward_inv():
    a = ember.tensor(SQ[0], requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: ember.linalg.inv(x), (a,))


def test_inputs_are_not_overwritten():
    """LAPACK works in place: a column-major input (x.mT of a row-major x) must be copied first."""
    for fn in (
        ember.linalg.inv,
        ember.linalg.det,
        ember.linalg.cholesky,
        ember.linalg.eigvalsh,
        ember.linalg.svdvals,
        lambda a: ember.linalg.qr(a).Q,
    ):
        x = ember.tensor(SPD[0])
        a = x.mT
        before = a.clone()
        fn(a)
        assert ember.equal(a, before)
    b = ember.tensor(RHS[0]).mT.contiguous().mT
    before = b.clone()
    ember.linalg.solve(ember.tensor(SQ[0]), b)
    ember.linalg.solve_triangular(ember.tensor(np.triu(SQ[0])), b, upper=True)
    assert ember.equal(b, before)


LU_CASES = {
    "lu": lambda m: list(m.linalg.lu(T(m, SQ))),
    "lu_rect": lambda m: [list(m.linalg.lu(T(m, RECT))), list(m.linalg.lu(T(m, WIDE)))],
    "lu_unpack": lambda m: list(m.lu_unpack(*m.linalg.lu_factor(T(m, SQ)))),
    "lu_top": lambda m: list(m.lu(T(m, SQ[0]))),
    "lu_solve": lambda m: [
        m.linalg.lu_solve(*m.linalg.lu_factor(T(m, SQ)), T(m, RHS)),
        m.linalg.lu_solve(*m.linalg.lu_factor(T(m, SQ)), T(m, RHS), adjoint=True),
        m.linalg.lu_solve(*m.linalg.lu_factor(T(m, SQ)), T(m, rand(3, 2, 4)), left=False),
        m.lu_solve(T(m, RHS), *m.linalg.lu_factor(T(m, SQ))),
    ],
}


@pytest.mark.parametrize("name", sorted(LU_CASES))
def test_lu_against_torch(torch, name):
    check(torch, LU_CASES[name], rtol=1e-6, atol=1e-8)


def test_lu_solve_gradcheck():
    LU, piv = ember.linalg.lu_factor(ember.tensor(SQ[0]))
    b = ember.tensor(RHS[0], requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: ember.linalg.lu_solve(LU, piv, x), (b,))


def test_norm_nuclear_is_the_sum_of_singular_values():
    a = np.random.randn(3, 4)
    want = np.linalg.svd(a, compute_uv=False).sum()
    np.testing.assert_allclose(ember.norm(ember.tensor(a), p="nuc").item(), want, rtol=1e-10)
    b = np.random.randn(2, 3, 4)
    got = ember.norm(ember.tensor(b), p="nuc", dim=(1, 2), keepdim=True)
    assert got.shape == (2, 1, 1)
    np.testing.assert_allclose(
        got.numpy().ravel(), [np.linalg.svd(m, compute_uv=False).sum() for m in b], rtol=1e-10
    )
    x = ember.tensor(a, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.norm(t, p="nuc"), (x,))
    with pytest.raises(RuntimeError, match="2-tuple"):
        ember.norm(ember.tensor(b), p="nuc")


def test_lu_factor_and_lu_are_differentiable():
    # torch's lu_factor/lu record LinalgLuFactorExBackward0/LinalgLuBackward0; the solve through
    # a factorization then has solve's gradient
    a0 = ember.tensor([[0.5, 2.0, -1.0], [3.0, 0.2, 0.7], [-1.0, 1.5, 2.5]], dtype=ember.float64)
    a = a0.clone().requires_grad_()
    lu, piv = ember.linalg.lu_factor(a)
    assert type(lu.grad_fn).__name__ == "LinalgLuFactorExBackward0" and not piv.requires_grad
    p, lower, upper = ember.linalg.lu(a)
    assert type(lower.grad_fn).__name__ == "LinalgLuBackward0" and not p.requires_grad
    assert ember.autograd.gradcheck(lambda x: ember.linalg.lu_factor(x)[0], (a,))
    assert ember.autograd.gradcheck(lambda x: ember.linalg.lu(x)[1:], (a,))
    b = ember.tensor([[1.0], [2.0], [3.0]], dtype=ember.float64)
    (g_lu,) = ember.autograd.grad(ember.linalg.lu_solve(lu, piv, b).sum(), a)
    (g_solve,) = ember.autograd.grad(ember.linalg.solve(a, b).sum(), a)
    assert ember.allclose(g_lu, g_solve)
