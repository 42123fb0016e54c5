"""Forward-mode AD through ember.fft and a few special/linalg functions, against torch.func:
ember.fft is a routed namespace (function modes, forward levels and vmap see its calls), its
transforms carry complex tangents, complex ops without a forward rule raise torch's error rather
than give a zero tangent, and linalg.cholesky's tangent is torch's for a non-symmetric tangent.
Without torch, tangents are checked against the transform applied to the tangent (each
transform is real-linear) or central differences."""

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwad

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 6))
TX = RNG.standard_normal((4, 6))
Z = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))
TZ = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))

# name -> (complex input, keyword arguments)
FFT_CASES = [
    ("fft", False, {}),
    ("fft", True, {"n": 8, "dim": 0, "norm": "ortho"}),
    ("ifft", True, {}),
    ("rfft", False, {}),
    ("rfft", False, {"n": 5, "norm": "forward"}),
    ("irfft", True, {}),
    ("irfft", True, {"n": 7, "dim": 0}),
    ("hfft", True, {}),
    ("ihfft", False, {}),
    ("fft2", True, {}),
    ("ifft2", False, {"s": (3, 4)}),
    ("rfft2", False, {}),
    ("irfft2", True, {}),
    ("hfft2", True, {}),
    ("ihfft2", False, {}),
    ("fftn", True, {}),
    ("fftn", False, {"s": (5,)}),
    ("ifftn", True, {"dim": (0,)}),
    ("rfftn", False, {}),
    ("irfftn", True, {"s": (4, 10)}),
    ("hfftn", True, {}),
    ("ihfftn", False, {}),
    ("fftshift", True, {}),
    ("fftshift", False, {"dim": 1}),
    ("ifftshift", False, {}),
]


def _e(a):
    return ember.tensor(a, dtype=ember.complex128 if np.iscomplexobj(a) else ember.float64)


def _np(t):
    t = t.resolve_conj()
    return np.array(t.tolist(), dtype=complex if t.is_complex() else float)


def _data(cplx):
    return (Z, TZ) if cplx else (X, TX)


def _torch():
    return pytest.importorskip("torch")


def _t(torch, a):
    return torch.tensor(a, dtype=torch.complex128 if np.iscomplexobj(a) else torch.float64)


def _tnp(t):
    return t.detach().resolve_conj().numpy()


@pytest.mark.parametrize("name,cplx,kw", FFT_CASES)
def test_fft_jvp_matches_torch(name, cplx, kw):
    torch = _torch()
    x, tx = _data(cplx)
    pe, te = ember.func.jvp(lambda v: getattr(ember.fft, name)(v, **kw), (_e(x),), (_e(tx),))
    pt, tt = torch.func.jvp(
        lambda v: getattr(torch.fft, name)(v, **kw), (_t(torch, x),), (_t(torch, tx),)
    )
    np.testing.assert_allclose(_np(pe), _tnp(pt), atol=1e-12)
    np.testing.assert_allclose(_np(te), _tnp(tt), atol=1e-12)


@pytest.mark.parametrize("name,cplx,kw", FFT_CASES)
def test_fft_tangent_is_the_transform_of_the_tangent(name, cplx, kw):
    # every transform is real-linear, so its tangent is the transform of the tangent; before
    # ember.fft was routed the tangent was silently zero
    x, tx = _data(cplx)
    _, te = ember.func.jvp(lambda v: getattr(ember.fft, name)(v, **kw), (_e(x),), (_e(tx),))
    np.testing.assert_allclose(_np(te), _np(getattr(ember.fft, name)(_e(tx), **kw)), atol=1e-12)
    assert np.abs(_np(te)).max() > 0


def _spectral(M):
    def f(v):
        s = M.fft.rfft(v)
        return s.real * 2 + s.abs() + s.imag.sum(-1, keepdim=True)

    return f


def test_real_output_through_complex_spectrum():
    # the properties .real/.imag and abs of a complex dual tensor carry its tangent
    torch = _torch()
    pe, te = ember.func.jvp(_spectral(ember), (_e(X),), (_e(TX),))
    pt, tt = torch.func.jvp(_spectral(torch), (_t(torch, X),), (_t(torch, TX),))
    np.testing.assert_allclose(_np(pe), _tnp(pt), atol=1e-12)
    np.testing.assert_allclose(_np(te), _tnp(tt), atol=1e-12)


def test_spectral_filter_jacfwd_matches_torch():
    torch = _torch()
    w = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    x = RNG.standard_normal(6)

    def filt(M, wt):
        return lambda v: M.fft.irfft(M.fft.rfft(v) * wt, n=6) ** 2

    je = ember.func.jacfwd(filt(ember, _e(w)))(_e(x))
    jt = torch.func.jacfwd(filt(torch, _t(torch, w)))(_t(torch, x))
    np.testing.assert_allclose(_np(je), _tnp(jt), atol=1e-12)
    jr = ember.func.jacrev(filt(ember, _e(w)))(_e(x))
    np.testing.assert_allclose(_np(je), _np(jr), atol=1e-12)


def test_dual_level_fft_matches_central_difference():
    x, t, h = _e(X), _e(TX), 1e-6
    f = _spectral(ember)
    with fwad.dual_level():
        tangent = fwad.unpack_dual(f(fwad.make_dual(x, t))).tangent
    fd = (_np(f(_e(X + h * TX))) - _np(f(_e(X - h * TX)))) / (2 * h)
    np.testing.assert_allclose(_np(tangent), fd, atol=1e-6)


def test_complex_op_without_rule_raises_not_zero():
    # ember gives no tangent for exp of a complex dual tensor: torch's error, never a zero
    x, t = _e(X), _e(TX)
    with pytest.raises(NotImplementedError, match="Trying to use forward AD with exp"):
        ember.func.jvp(lambda v: ember.fft.rfft(v).exp().real, (x,), (t,))


@pytest.mark.parametrize("name,cplx,kw", FFT_CASES)
def test_fft_vmap_matches_loop(name, cplx, kw):
    x, _ = _data(cplx)
    batch = np.stack([x, 2 * x, x[::-1]])
    out = ember.func.vmap(lambda v: getattr(ember.fft, name)(v, **kw))(_e(batch))
    ref = np.stack([_np(getattr(ember.fft, name)(_e(b), **kw)) for b in batch])
    np.testing.assert_allclose(_np(out), ref, atol=1e-12)


def test_function_mode_sees_fft_calls():
    seen = []

    class Mode(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(ember.overrides.resolve_name(func))
            return func(*args, **(kwargs or {}))

    x = _e(X)
    with Mode():
        ember.fft.fftshift(ember.fft.rfft(x))
    assert seen == ["torch.fft.rfft", "torch.fft.fftshift"]
    overridable = ember.overrides.get_overridable_functions()
    assert ember.fft in overridable and ember.fft.rfft in overridable[ember.fft]


SPECIAL_CASES = [
    ("special", "erf", ()),
    ("special", "i0e", ()),
    ("special", "log_ndtr", ()),
    ("special", "entr", ()),
    ("special", "logsumexp", (1,)),
    ("special", "log_softmax", (1,)),
    ("linalg", "det", ()),
    ("linalg", "inv", ()),
    ("linalg", "matrix_norm", ()),
    ("linalg", "vector_norm", ()),
    ("linalg", "svdvals", ()),
    ("linalg", "matrix_exp", ()),
]


@pytest.mark.parametrize("ns,name,extra", SPECIAL_CASES)
def test_special_linalg_jvp_matches_torch(ns, name, extra):
    torch = _torch()
    a = RNG.random((4, 4)) + 0.2 * np.eye(4)
    ta = RNG.standard_normal((4, 4))
    # looked up inside the function, as a program calls them (see the report on references taken
    # before the transform)
    _, te = ember.func.jvp(
        lambda v: getattr(getattr(ember, ns), name)(v, *extra), (_e(a),), (_e(ta),)
    )
    _, tt = torch.func.jvp(
        lambda v: getattr(getattr(torch, ns), name)(v, *extra), (_t(torch, a),), (_t(torch, ta),)
    )
    np.testing.assert_allclose(_np(te), _tnp(tt), atol=1e-10)


def _spd():
    a = RNG.standard_normal((4, 4))
    return a @ a.T + 4 * np.eye(4), RNG.standard_normal((4, 4))  # a non-symmetric tangent


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_nonsymmetric_tangent_matches_torch(upper):
    torch = _torch()
    a, ta = _spd()
    _, te = ember.func.jvp(lambda v: ember.linalg.cholesky(v, upper=upper), (_e(a),), (_e(ta),))
    _, tt = torch.func.jvp(
        lambda v: torch.linalg.cholesky(v, upper=upper), (_t(torch, a),), (_t(torch, ta),)
    )
    np.testing.assert_allclose(_np(te), _tnp(tt), atol=1e-12)
    _, te = ember.func.jvp(
        lambda v: ember.linalg.cholesky_ex(v, upper=upper)[0], (_e(a),), (_e(ta),)
    )
    np.testing.assert_allclose(_np(te), _tnp(tt), atol=1e-12)


def test_cholesky_tangent_formula_without_torch():
    # dL = L·Φ(L⁻¹·dA·L⁻ᵀ): Φ takes the lower triangle and halves the diagonal, dA as given
    a, ta = _spd()
    _, te = ember.func.jvp(ember.linalg.cholesky, (_e(a),), (_e(ta),))
    L = np.linalg.cholesky(a)
    inner = np.linalg.solve(L, np.linalg.solve(L, ta.T).T)
    phi = np.tril(inner) - np.diag(np.diag(inner)) / 2
    np.testing.assert_allclose(_np(te), L @ phi, atol=1e-12)


def test_cholesky_jacfwd_matches_jacrev_on_symmetric_directions():
    a, _ = _spd()
    sym = lambda v: ember.linalg.cholesky((v + v.mT) / 2)  # noqa: E731
    jf = ember.func.jacfwd(sym)(_e(a))
    jr = ember.func.jacrev(sym)(_e(a))
    np.testing.assert_allclose(_np(jf), _np(jr), atol=1e-10)


def test_jacfwd_rejects_complex_like_torch():
    x = _e(X[0])
    with pytest.raises(RuntimeError, match="Expected all outputs to be real .* idx: 1"):
        ember.func.jacfwd(lambda v: (v, ember.fft.rfft(v)))(x)
    with pytest.raises(RuntimeError, match="Expected all inputs to be real .* idx: 0"):
        ember.func.jacfwd(lambda v: v * 2)(_e(Z[0]))


def _complex_views(M):
    def f(a, b):
        z = M.complex(a, b)
        s = M.stft(
            a.reshape(-1),
            8,
            hop_length=2,
            window=M.hann_window(8, dtype=a.dtype),
            return_complex=True,
        )
        return M.view_as_real(z.conj() * z[0]).sum(-1) + M.view_as_real(s).sum()

    return f


def test_complex_real_linear_ops_match_torch():
    torch = _torch()
    ye = ember.func.jvp(_complex_views(ember), (_e(X), _e(TX)), (_e(TX), _e(X)))
    yt = torch.func.jvp(
        _complex_views(torch), (_t(torch, X), _t(torch, TX)), (_t(torch, TX), _t(torch, X))
    )
    np.testing.assert_allclose(_np(ye[0]), _tnp(yt[0]), atol=1e-10)
    np.testing.assert_allclose(_np(ye[1]), _tnp(yt[1]), atol=1e-10)
