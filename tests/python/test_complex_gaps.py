"""Complex paths that were missing: random draws, item assignment, triangles, scans, contractions,
norms and the linalg decompositions, against numpy, torch and complex gradcheck."""

import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck


def _c(shape, seed=0, dtype=ember.complex128):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape) + 1j * r.standard_normal(shape)
    return ember.tensor(a, dtype=dtype)


def _np(t):
    return t.detach().numpy()


def _close(a, b, tol=1e-9):
    np.testing.assert_allclose(_np(a) if isinstance(a, ember.Tensor) else a, b, rtol=tol, atol=tol)


def _torch():
    return pytest.importorskip("torch")


# --- random draws ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.complex64, ember.complex128])
def test_randn_complex_has_half_variance_per_part(dtype):
    ember.manual_seed(0)
    z = ember.randn(400, 500, dtype=dtype)
    assert z.dtype == dtype and tuple(z.shape) == (400, 500)
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    assert abs((z.abs() ** 2).mean().item() - 1.0) < 0.02


def test_rand_and_normal_complex():
    z = ember.rand(1000, dtype=ember.complex64)
    assert z.dtype == ember.complex64
    assert 0 <= z.real.min().item() and z.real.max().item() < 1 and 0 <= z.imag.min().item()
    e = ember.empty(20000, dtype=ember.complex64).normal_(mean=1 + 2j, std=2.0)
    assert abs(e.real.mean().item() - 1) < 0.05 and abs(e.imag.mean().item() - 2) < 0.05
    assert abs(((e - (1 + 2j)).abs() ** 2).mean().item() - 4.0) < 0.2
    u = ember.empty(100, dtype=ember.complex128).uniform_(2, 3)
    assert 2 <= u.imag.min().item() and u.imag.max().item() < 3
    assert ember.randn_like(u).dtype == ember.complex128
    m = ember.full((20000,), 1.0).to(ember.complex64) * (1 + 2j)
    n = ember.normal(m, 2.0)
    assert n.dtype == ember.complex64 and abs(((n - m).abs() ** 2).mean().item() - 4.0) < 0.2


def test_real_random_unchanged():
    ember.manual_seed(3)
    a = ember.randn(5)
    ember.manual_seed(3)
    b = ember.randn(5)
    assert a.dtype == ember.float32 and ember.equal(a, b)


# --- setitem, triangles, where ---------------------------------------------------------------


def test_setitem_complex_scalar():
    z = _c((3, 3))
    z[0, 0] = 1 + 2j
    z[1] = 3j
    assert complex(z[0, 0].item()) == 1 + 2j
    assert np.all(_np(z[1]) == 3j)


def test_triu_tril_where():
    z = _c((2, 4, 5))
    a = _np(z)
    _close(ember.triu(z, 1), np.triu(a, 1))
    _close(z.tril(-1), np.tril(a, -1))
    _close(ember.where(z.real > 0, z, 0), np.where(a.real > 0, a, 0))


# --- scans, contractions ---------------------------------------------------------------------


def test_cumsum_cumprod():
    z = _c((3, 6))
    a = _np(z)
    _close(ember.cumsum(z, 1), np.cumsum(a, 1))
    _close(z.cumsum(0), np.cumsum(a, 0))
    _close(z.cumprod(1), np.cumprod(a, 1))
    _close(ember.cumprod(z, -2), np.cumprod(a, 0))
    x = _c((5,), 1).requires_grad_()
    assert gradcheck(lambda t: t.cumprod(0), (x,))
    assert gradcheck(lambda t: t.cumsum(0), (x,))


def test_einsum_bmm_tensordot_addmm():
    a, b, c = _c((3, 4, 5), 1), _c((3, 5, 2), 2), _c((3, 2, 2), 3)
    na, nb, nc = _np(a), _np(b), _np(c)
    _close(ember.einsum("bij,bjk->bik", a, b), np.einsum("bij,bjk->bik", na, nb))
    _close(ember.einsum("bij,bjk,bkl", a, b, c), np.einsum("bij,bjk,bkl", na, nb, nc))
    _close(ember.einsum("ii", a[0, :4, :4]), np.einsum("ii", na[0, :4, :4]))
    _close(ember.einsum("bij,bjk->bik", a, b.real), np.einsum("bij,bjk->bik", na, nb.real))
    _close(ember.einsum(a, [0, 1, 2], b, [0, 2, 3], [0, 1, 3]), na @ nb)
    _close(ember.bmm(a, b), na @ nb)
    _close(ember.tensordot(a, b, ([0, 2], [0, 1])), np.tensordot(na, nb, ([0, 2], [0, 1])))
    e = _c((3, 4, 2), 8)
    ne = _np(e)
    _close(ember.addmm(e[0], a[0], b[0], beta=0.5, alpha=2j), 0.5 * ne[0] + 2j * (na[0] @ nb[0]))
    _close(ember.baddbmm(e, a, b), ne + na @ nb)
    _close(ember.addmm(e[0], a[0], b[0], beta=0), na[0] @ nb[0])
    d = _c((4, 2), 9)
    _close(d.addmm(a[0], b[0].real), _np(d) + na[0] @ nb[0].real)
    x, y = _c((2, 3), 4).requires_grad_(), _c((3, 2), 5).requires_grad_()
    assert gradcheck(lambda p, q: ember.einsum("ij,jk->ik", p, q), (x, y))


def test_mH_conjugates():
    z = _c((2, 3))
    _close(z.mH, _np(z).conj().T)
    _close(z.H, _np(z).conj().T)
    _close(ember.adjoint(z), _np(z).conj().T)
    r = ember.randn(2, 3)
    assert r.mH.data_ptr() == r.data_ptr()


# --- norms -----------------------------------------------------------------------------------


def test_norms():
    z = _c((4, 5))
    a = _np(z)
    _close(ember.linalg.vector_norm(z), np.linalg.norm(a.ravel()))
    _close(ember.linalg.vector_norm(z, 1, dim=0), np.abs(a).sum(0))
    _close(ember.linalg.vector_norm(z, math.inf), np.abs(a).max())
    _close(ember.linalg.norm(z), np.linalg.norm(a))
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf):
        _close(ember.linalg.matrix_norm(z, ord), np.linalg.norm(a, ord), 1e-8)
    _close(ember.norm(z), np.linalg.norm(a))
    _close(z.norm(dim=1), np.linalg.norm(a, axis=1))
    x = z.clone().requires_grad_()
    assert gradcheck(lambda t: ember.linalg.vector_norm(t), (x,))


# --- linalg ----------------------------------------------------------------------------------


def test_svdvals_eigvalsh_pinv_lstsq_matrix_exp():
    z = _c((2, 4, 3))
    a = _np(z)
    _close(ember.linalg.svdvals(z), np.linalg.svd(a, compute_uv=False), 1e-8)
    h = z[0, :3] @ z[0, :3].mH
    _close(ember.linalg.eigvalsh(h), np.linalg.eigvalsh(_np(h)), 1e-8)
    _close(ember.linalg.pinv(z), np.linalg.pinv(a), 1e-8)
    b = _c((2, 4, 2), 1)
    _close(ember.linalg.lstsq(z, b).solution, np.linalg.pinv(a) @ _np(b), 1e-8)
    m = _c((3, 3), 2) * 0.5
    torch = _torch()
    ref = torch.linalg.matrix_exp(torch.tensor(_np(m))).numpy()
    _close(ember.linalg.matrix_exp(m), ref, 1e-8)
    x = z[0].clone().requires_grad_()
    assert gradcheck(lambda t: ember.linalg.svdvals(t), (x,))
    assert gradcheck(lambda t: ember.linalg.pinv(t), (x,))


def test_eigh_cholesky():
    z = _c((2, 4, 4))
    h = z @ z.mH + ember.eye(4)
    w, V = ember.linalg.eigh(h)
    nw, _ = np.linalg.eigh(_np(h))
    _close(w, nw, 1e-8)
    _close(h @ V, _np(V) * nw[..., None, :], 1e-8)
    _close(V.mH @ V, np.broadcast_to(np.eye(4) + 0j, (2, 4, 4)), 1e-8)
    L = ember.linalg.cholesky(h)
    _close(L, np.linalg.cholesky(_np(h)), 1e-8)
    _close(ember.linalg.cholesky(h, upper=True), np.linalg.cholesky(_np(h)).conj().swapaxes(-1, -2))
    x = z[0].clone().requires_grad_()

    def f(t):
        w, V = ember.linalg.eigh(t @ t.mH)
        return w, V.abs()  # |V| does not depend on the eigenvectors' phases

    assert gradcheck(f, (x,))
    assert gradcheck(lambda t: ember.linalg.cholesky(t @ t.mH + ember.eye(4)), (x,))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.cholesky(-h)


def test_eig_gradient_matches_torch():
    torch = _torch()
    z = _c((4, 4), 7)
    x = z.clone().requires_grad_()
    w = ember.linalg.eigvals(x)
    (w.abs().sum() + (w * w).real.sum()).backward()
    tx = torch.tensor(_np(z), requires_grad=True)
    tw = torch.linalg.eigvals(tx)
    (tw.abs().sum() + (tw * tw).real.sum()).backward()
    _close(x.grad, tx.grad.numpy(), 1e-8)
    r = ember.tensor(np.random.default_rng(1).standard_normal((4, 4)), requires_grad=True)
    assert gradcheck(lambda t: ember.linalg.eigvals(t), (r,))
    assert gradcheck(lambda t: ember.linalg.eigvals(t), (z.clone().requires_grad_(),))
    assert gradcheck(lambda t: ember.linalg.eig(t)[1].abs(), (z.clone().requires_grad_(),))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_torch(shape, mode):
    z = _c(shape, 11)
    Q, R = ember.linalg.qr(z, mode=mode)
    torch = _torch()
    tQ, tR = torch.linalg.qr(torch.tensor(_np(z)), mode=mode)
    _close(R, tR.numpy(), 1e-10)
    if mode != "r":
        _close(Q, tQ.numpy(), 1e-10)
        _close(Q @ R, _np(z), 1e-10)


def test_qr_gradcheck():
    x = _c((4, 3), 12).requires_grad_()
    assert gradcheck(lambda t: ember.linalg.qr(t), (x,))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_complex(shape, full):
    z = _c(shape, 13)
    U, S, Vh = ember.linalg.svd(z, full_matrices=full)
    a = _np(z)
    k = min(shape[-2:])
    _close(S, np.linalg.svd(a, compute_uv=False), 1e-10)
    rec = (_np(U)[..., :k] * _np(S)[..., None, :]) @ _np(Vh)[..., :k, :]
    _close(rec, a, 1e-10)
    for M in (U, Vh.mH):  # orthonormal columns
        eye = np.broadcast_to(np.eye(M.shape[-1]), M.shape[:-2] + (M.shape[-1],) * 2)
        _close(M.mH @ M, eye + 0j, 1e-10)
    torch = _torch()
    tU, tS, tVh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    # singular vectors agree up to a phase per pair
    _close(np.abs(_np(U)[..., :k]), tU.abs().numpy()[..., :k], 1e-8)
    _close(np.abs(_np(Vh)[..., :k, :]), tVh.abs().numpy()[..., :k, :], 1e-8)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_svd_complex_gradcheck(shape):
    x = _c(shape, 14).requires_grad_()

    def f(a):
        U, S, Vh = ember.linalg.svd(a, full_matrices=False)
        return U @ Vh, S, U.abs(), Vh.abs()  # phase-independent functions of the factors

    assert gradcheck(f, (x,))


def test_eigh_repeated_eigenvalues_and_diag():
    q = ember.linalg.qr(_c((5, 5), 15))[0]
    d = ember.diag(ember.tensor([1.0, 1.0, 2.0, 3.0, 3.0], dtype=ember.float64).to(q.dtype))
    _close(ember.diag(d), np.array([1, 1, 2, 3, 3]) + 0j)
    A = ember.stack([q @ d @ q.mH, ember.eye(5, dtype=ember.complex128)])
    w, V = ember.linalg.eigh(A)
    _close(w, np.array([[1, 1, 2, 3, 3], [1, 1, 1, 1, 1]], dtype=float), 1e-10)
    _close(A @ V, _np(V) * _np(w)[..., None, :], 1e-10)
    _close(V.mH @ V, np.broadcast_to(np.eye(5) + 0j, (2, 5, 5)), 1e-10)


def test_det_complex_gradient():
    z = _c((2, 3, 3), 16)
    _close(ember.linalg.det(z), np.linalg.det(_np(z)), 1e-10)
    assert gradcheck(lambda t: ember.linalg.det(t), (z.clone().requires_grad_(),))


def test_var_std_masked_select_index_add():
    torch = _torch()
    z = _c((4, 5), 17)
    tz = torch.tensor(_np(z))
    _close(z.var(), tz.var().item(), 1e-10)
    _close(z.std(0), tz.std(0).numpy(), 1e-10)
    _close(ember.var(z, 1, keepdim=True, correction=0), tz.var(1, keepdim=True, correction=0))
    m = z.real > 0
    _close(z.masked_select(m), _np(z)[_np(m)])
    idx = ember.tensor([0, 1, 0, 1])
    got = ember.zeros(2, 5, dtype=z.dtype).index_add_(0, idx, z, alpha=2)
    want = torch.zeros(2, 5, dtype=tz.dtype).index_add_(0, torch.tensor([0, 1, 0, 1]), tz, alpha=2)
    _close(got, want.numpy())


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_and_slogdet(upper, left, unit):
    torch = _torch()
    A = _c((3, 3), 18) + 3 * ember.eye(3)
    B = _c((3, 3), 19)
    X = ember.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    tX = torch.linalg.solve_triangular(
        torch.tensor(_np(A)), torch.tensor(_np(B)), upper=upper, left=left, unitriangular=unit
    )
    _close(X, tX.numpy(), 1e-10)
    sign, logabs = ember.linalg.slogdet(A)
    ns, nl = np.linalg.slogdet(_np(A))
    _close(sign, ns, 1e-10)
    _close(logabs, nl, 1e-10)
    x = A.clone().requires_grad_()
    assert gradcheck(lambda a: ember.linalg.slogdet(a), (x,))
    assert gradcheck(lambda a: ember.linalg.solve_triangular(a, B, upper=upper, left=left), (x,))


def test_linear_complex():
    x, w, b = _c((2, 4), 20), _c((3, 4), 21), _c((3,), 22)
    F = ember.nn.functional
    _close(F.linear(x, w, b), _np(x) @ _np(w).T + _np(b))
    _close(F.linear(x, w.real), _np(x) @ _np(w).real.T)
    wg = w.clone().requires_grad_()
    assert gradcheck(lambda t: F.linear(x, t, b), (wg,))


@pytest.mark.parametrize("which", ["low_rank", "identity", "zeros", "batch"])
def test_svd_repeated_singular_values(which):
    x = _np(_c((4, 4), 23))
    a = {
        "low_rank": x[:, :2] @ x[:2, :],
        "identity": np.eye(3) + 0j,
        "zeros": np.zeros((2, 3)) + 0j,
        "batch": np.stack([x[:, :2] @ x[:2, :3], x[:, :3]]),
    }[which]
    for full in (False, True):
        U, S, Vh = ember.linalg.svd(ember.tensor(a), full_matrices=full)
        k = min(a.shape[-2:])
        _close(S, np.linalg.svd(a, compute_uv=False), 1e-10)
        _close((_np(U)[..., :k] * _np(S)[..., None, :]) @ _np(Vh)[..., :k, :], a, 1e-10)
        for M in (U, Vh.mH):
            eye = np.broadcast_to(np.eye(M.shape[-1]), M.shape[:-2] + (M.shape[-1],) * 2)
            _close(M.mH @ M, eye + 0j, 1e-10)
